# Runs in MicroPython: the device side of tests/mp_batch.py (which
# documents the files it reads and what it prints). argv: pkg_dir, the
# case folder, the number of cases[, a forced scratch length].
import sys
import micropython
sys.path.insert(0, sys.argv[1])
import tflm
from tflm.interpreter import Interpreter
from tflm.interpreter import CONSTRUCTION
# imported once, the construction modules stay (compiled from source on
# the unix port, they would be compiled again for every model; that they
# come and go is tests/test_board_heap.py's)
for m in CONSTRUCTION:
    __import__(m)
d, n = sys.argv[2], int(sys.argv[3])
calls = [0]  # of the forced scratch length, checked after each build
if len(sys.argv) > 4:
    import tflm.allocator
    def forced(ts):
        calls[0] += 1
        return int(sys.argv[4])
    tflm.allocator._scratch_len = forced

def rd(p):
    with open(p, 'rb') as f:
        return f.read()

def exists(p):
    try:
        open(p, 'rb').close()
        return True
    except OSError:
        return False

def invoke(it, ins):
    for rep in range(2):
        for t, x in zip(it.inputs, ins):
            t.data[:] = x
        micropython.heap_lock()
        try:
            it.invoke()
        finally:
            micropython.heap_unlock()

def run(k):
    pre = '%s/%d' % (d, k)
    raw = rd(pre + '.tflite')
    buf = bytearray(k % 4 + len(raw))
    buf[k % 4:] = raw
    try:
        it = Interpreter(memoryview(buf)[k % 4:])
    except tflm.TFLMError as e:
        print('ERR', k, type(e).__name__, e)
        return
    if len(sys.argv) > 4 and not calls[0]:
        raise SystemExit('the forced scratch length was not used')
    calls[0] = 0
    j = 0
    while exists('%s.set%d' % (pre, j)):
        ins = [rd('%s.in%d_%d' % (pre, j, i)) for i in range(len(it.inputs))]
        try:
            invoke(it, ins)
        except tflm.TFLMError as e:
            print('IERR', k, type(e).__name__, e)
            return
        for i, t in enumerate(it.outputs):
            with open('%s.out%d_%d' % (pre, j, i), 'wb') as f:
                f.write(t.data)
        j += 1
    print('OK', k, j)

for k in range(n):
    run(k)
