# Runs in MicroPython: tests/test_board_heap.py (construction interns no
# new qstr; see the test for its arguments).
import sys
import micropython
sys.path.insert(0, sys.argv[1])
with open(sys.argv[3]) as f:
    for name in f.read().split():
        __import__(name)
import tflm
with open(sys.argv[2], 'rb') as f:
    buf = f.read()
micropython.qstr_info()
it = tflm.Interpreter(buf)
it.invoke()
micropython.qstr_info()
