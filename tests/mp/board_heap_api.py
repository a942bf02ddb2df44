# Runs in MicroPython: tests/test_board_heap.py (a built interpreter's
# attributes and print() on a heap with no block left for their modules
# raise ArenaError; see the test for its arguments).
import gc
import sys
sys.path.insert(0, sys.argv[1])
import tflm
with open(sys.argv[2], 'rb') as f:
    buf = f.read()
it = tflm.Interpreter(buf)
it.invoke()


def attempt(what):
    # (locals only: a new global would grow the module's dict)
    for m in ('tflm.api', 'tflm.repl'):
        if m in sys.modules:
            del sys.modules[m]
    gc.collect()
    # the heap filled with 128-byte blocks, then one in 8 freed: what is
    # left are holes of 128 bytes and less, too small for a module's code
    fill = [None] * 4096
    n = 0
    err = None
    try:
        while n < len(fill):
            fill[n] = bytearray(128)
            n += 1
    except MemoryError:
        pass
    for k in range(0, n, 8):  # holes for small objects, as a used heap has
        fill[k] = None
    gc.collect()
    try:
        if what == 'compiled':
            it.compiled
        else:
            repr(it)
    except Exception as e:
        err = e
    fill = None  # room to look at what was raised
    gc.collect()
    if n == 4096:
        return 'heap not filled'
    if err is None:
        return 'ok'
    if isinstance(err, tflm.ArenaError):
        return 'ArenaError' if 'importing tflm.' in str(err) or \
            str(err) == 'out of memory' else 'ArenaError: %s' % err
    return type(err).__name__


out = [attempt('compiled'), attempt('repr')]
it.compiled  # with room again (plain: why it is not compiled)
out.append(len(repr(it)) > 0)
print(out)
