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


def spy(module, name):
    real = getattr(module, name)

    def f(*args):
        seen.append([n for n in CONSTRUCTION if n in sys.modules])
        return real(*args)
    setattr(module, name, f)


if sys.argv[3] == 'arena':
    import tflm.static_arena
    spy(tflm.static_arena, 'place')
    arena = bytearray(int(sys.argv[4]))
    it = tflm.Interpreter(buf, arena=arena)
else:
    import tflm.source
    spy(tflm.source, 'allocate')
    it = tflm.Interpreter(buf)
it.invoke()
print(seen)
print(bytes(it.output(0).data).hex())
