# Constructs one model on a squeezed heap (host_tools/fit.py).
# Run as a module (-m board_heap) in the package's directory, so that no
# path of the host's shows in the heap: fit.run.
# argv: package dir ('': the current one), model path, mode (bytes: the
# model is read into a bytearray before the heap is measured, as a buffer
# in RAM or in flash
# would be; file: Interpreter(path) reads it), modules to import first
# (a file, one a line: the package's import cost is not the model's),
# and the free heap to leave for construction (0: all of it; at least the
# holes that imports left): a ballast block takes the rest, so that the
# free heap is those holes plus one block, as on a board.
# Optional 6th: bytes of an arena= buffer (interpreter's static arena),
# made first, before any import, as a board's boot script makes it.
# Prints one JSON line: free heap before construction, then ok / kept /
# head / tail / ram, or the error.
import gc
import json
import sys

# (gc, json and sys are built in: importing them allocates nothing)
arena = bytearray(int(sys.argv[6])) if len(sys.argv) > 6 else None
sys.path.insert(0, sys.argv[1])
path, mode = sys.argv[2], sys.argv[3]
with open(sys.argv[4]) as f:
    for name in f.read().split():
        __import__(name)
        gc.collect()  # as the interpreter's own imports (kernels.preload)
import tflm  # noqa: E402


def read():
    with open(path, "rb") as f:
        n = f.seek(0, 2)
        f.seek(0)
        b = bytearray(n)
        f.readinto(b)
    return b


def largest():
    """The largest block the heap can give now (bisection, 16 bytes)."""
    lo, hi = 0, gc.mem_free()
    while hi - lo > 16:
        mid = (lo + hi) // 2
        try:
            bytearray(mid)  # freed at once: only the attempt counts
            lo = mid
        except MemoryError:
            hi = mid
    return lo


data = read() if mode == "bytes" else path
target = int(sys.argv[5])
gc.collect()
# holes: free heap outside the largest block (what imports left)
holes = gc.mem_free() - largest()
gc.collect()  # largest()'s last block
# (a global either way: the globals dict then grows at the same points)
ballast = None
if target:
    ballast = bytearray(max(0, gc.mem_free() - max(target, holes)))
# the parser's modules, imported before and dropped by construction
# (interpreter.PARSE), are the package's, not what the model keeps: held
# here, they stay
parser = [sys.modules[n] for n in tflm.interpreter.PARSE]
gc.collect()
free0 = gc.mem_free()
rec = {"free": free0, "holes": holes}
try:
    # (a call with a keyword argument makes garbage of its own: not in
    # the plain case, whose figures the ratchets hold)
    it = (tflm.Interpreter(data) if arena is None else
          tflm.Interpreter(data, arena=arena))
    it.invoke()
    gc.collect()
    rec.update(ok=1, kept=free0 - gc.mem_free(), head=it.arena_size,
               tail=it.persistent_size, ram=it.ram,
               need=it.arena_size + it.persistent_size)
except Exception as e:  # a TFLMError; anything else is a bug
    rec.update(ok=0, error="%s: %s" % (type(e).__name__, e))
print(json.dumps(rec))
