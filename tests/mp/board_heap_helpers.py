# Runs in MicroPython: tests/test_board_heap.py (which construction
# modules are imported when the arena is allocated, or with arena= laid
# out; see the test for its arguments).
import sys
sys.path.insert(0, sys.argv[1])
import tflm
from tflm.interpreter import CONSTRUCTION
with open(sys.argv[2], 'rb') as f:
    buf = f.read()
seen = []
at_softmax = []  # the same at each SOFTMAX prepare (sizing, real pass)


def spy(module, name, out):
    real = getattr(module, name)

    def f(*args):
        out.append([n for n in CONSTRUCTION if n in sys.modules])
        return real(*args)
    setattr(module, name, f)


import tflm.kernels.softmax  # noqa: E402
spy(tflm.kernels.softmax, 'prepare', at_softmax)

if sys.argv[3] == 'arena':
    import tflm.static_arena
    spy(tflm.static_arena, 'place', seen)
    arena = bytearray(int(sys.argv[4]))
    it = tflm.Interpreter(buf, arena=arena)
else:
    import tflm.source
    spy(tflm.source, 'allocate', seen)
    it = tflm.Interpreter(buf)
it.invoke()
print(seen)
print(at_softmax)
print(bytes(it.output(0).data).hex())
