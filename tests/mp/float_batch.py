# Runs in MicroPython: the device side of tests/float_cases.py (see
# run_cases there for its arguments and output).
import sys
import micropython
sys.path.insert(0, sys.argv[1])
import tflm
from tflm.interpreter import Interpreter
d, n = sys.argv[2], int(sys.argv[3])

def rd(p):
    with open(p, 'rb') as f:
        return f.read()

for k in range(n):
    pre = '%s/%d' % (d, k)
    try:
        it = Interpreter(rd(pre + '.tflite'))
    except tflm.TFLMError as e:
        print('ERR', k, type(e).__name__, e)
        continue
    j = 0
    while True:
        try:
            rd(pre + '.in%d' % j)
        except OSError:
            break
        for i in range(len(it.inputs)):
            it.inputs[i].data[:] = rd(pre + '.in%d_%d' % (j, i))
        micropython.heap_lock()
        try:
            it.invoke()
        finally:
            micropython.heap_unlock()
        for i in range(len(it.outputs)):
            with open(pre + '.out%d_%d' % (j, i), 'wb') as f:
                f.write(it.outputs[i].data)
        j += 1
    print('OK', k)
