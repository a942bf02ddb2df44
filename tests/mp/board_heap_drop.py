# Runs in MicroPython: tests/test_board_heap.py (construction modules are
# dropped once an interpreter is built; see the test for its arguments).
import gc
import sys
sys.path.insert(0, sys.argv[1])
import tflm
from tflm.interpreter import CONSTRUCTION
with open(sys.argv[2], 'rb') as f:
    buf = f.read()
def held():
    return [n for n in CONSTRUCTION if n in sys.modules]
print('import', held())
it = tflm.Interpreter(buf)
it.invoke()
out = bytes(it.output(0).data)
it = None
gc.collect()
print('built', held())
a0 = gc.mem_alloc()
for n in CONSTRUCTION:
    __import__(n)
gc.collect()
print('cost', gc.mem_alloc() - a0)
it = tflm.Interpreter(buf)  # they were imported before: they stay
it.invoke()
print('kept', held(), bytes(it.output(0).data) == out)
it = None
for n in CONSTRUCTION[1:]:
    del sys.modules[n]
    pkg, _, attr = n.rpartition('.')
    if pkg in sys.modules:  # tflm.kernels goes with each construction
        delattr(sys.modules[pkg], attr)
try:
    tflm.Interpreter(b'TFL3' * 8)
except tflm.TFLMError as e:
    print('error', type(e).__name__, held())
