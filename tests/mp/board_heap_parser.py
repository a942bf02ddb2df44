# Runs in MicroPython: tests/test_board_heap.py (the parser's modules,
# interpreter.PARSE, are dropped once an interpreter is built).
# argv: package dir, model path, modules file (one a line: the model's
# kernel modules are imported first, so that the heap measured below is
# the package's and the interpreter's).
import gc
import sys
sys.path.insert(0, sys.argv[1])
import tflm
from tflm.interpreter import CONSTRUCTION, PARSE
with open(sys.argv[3]) as f:
    for n in f.read().split():
        if n.startswith('tflm.kernels.') and n not in CONSTRUCTION:
            __import__(n)
with open(sys.argv[2], 'rb') as f:
    buf = f.read()


def held():
    return [n for n in PARSE + ('tflm.verify',) if n in sys.modules]


print('import', held())
gc.collect()
a0 = gc.mem_alloc()
it = tflm.Interpreter(buf)
gc.collect()
print('built', held(), a0 - (gc.mem_alloc() - it.ram))
t = it.inputs[0]
print('input', repr((t.name, t.scale, t.zero_point, t.scales,
                     t.zero_points, t.quantized_dimension, t.buffer,
                     t.is_variable, t._fb is None)))
m = it.model
print('model', m.version, len(m.operators), m.fb is not None, held())
m = None
print('tensors', len(it.tensors), held())
# the model's buffer changed under a built interpreter: the parse fails
# (bounds-checked), and still leaves no module imported
ba = bytearray(buf)
it2 = tflm.Interpreter(ba)
ba[0:4] = b'\xf0\xff\xff\x7f'
try:
    it2.model
    print('bad model parsed')
except tflm.TFLMError as e:
    print('bad model', type(e).__name__, held())
