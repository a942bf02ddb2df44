# Runs in MicroPython with ulab: tests/test_board.py (outputs shaped like
# the tensor).
import tflm
from ulab import numpy as np
for name in ('r3', 'f3', 'r1', 'hello'):
    it = tflm.Interpreter(name + '.tflite')
    t = it.inputs[0]
    y = it.predict([0.5 * (i % 5) for i in range(t.size)])[0]
    d = it.outputs[0].dequantize()
    z = it.predict(y)[0]  # a shaped output goes back in (flattened)
    print(name, tuple(it.outputs[0].shape), y.shape, d.shape, len(d),
          it.top(1)[0][0], z.shape == y.shape and
          list(z.flatten()) == list(y.flatten()))
    try:
        it.outputs[0].dequantize(np.array([0.0] * t.size).reshape(
            (1, t.size)))
    except tflm.InvokeError:  # out is filled in place: it must be flat
        print('refused')
