# Runs in MicroPython with ulab: tests/test_board.py (predict and
# dequantize give ulab arrays).
import tflm
from ulab import numpy as np
it = tflm.Interpreter('hello.tflite')
t = it.inputs[0]
t.set(np.array([5], dtype=np.int8))
print(list(t.get()))
t.set_float(np.array([1.5]))
q = t.get()[0]
it.invoke()
d = it.outputs[0].dequantize()
print(type(d).__name__, len(d))
p = it.predict(np.array([1.5]))
print(type(p[0]).__name__, p[0][0] == d[0])
p2 = it.predict([np.array([q], dtype=np.int8)])
print(p2[0][0] == d[0])
try:
    t.set(np.array([1.5]))
except tflm.InvokeError:
    print('InvokeError')
