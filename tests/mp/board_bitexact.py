# Runs in MicroPython: tests/test_board.py (a model through the .mpy
# build; the test prepends its sys.path line).
import sys
import tflm
assert tflm.__file__.endswith('.mpy'), tflm.__file__
model, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
it = tflm.Interpreter(model)
for k in range(n):
    for i, t in enumerate(it.inputs):
        with open('%s/in_%d_%d.bin' % (work, k, i), 'rb') as f:
            t.set(f.read())
    it.invoke()
    for j, t in enumerate(it.outputs):
        with open('%s/out_%d_%d.bin' % (work, k, j), 'wb') as f:
            f.write(bytes(t.data))
print('ok')
