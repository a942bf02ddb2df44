# Runs in MicroPython: tests/test_ops_movement.py (see the test).
import sys
import gc
import micropython
sys.path.insert(0, sys.argv[1])
import tflm
for path in sys.argv[2:]:
    it = tflm.Interpreter(path)
    for t in it.inputs:
        t.data[:] = bytes(len(t.data))
    it.inputs[1].data[:] = b'\xff' * len(it.inputs[1].data)  # -1 values
    free = []
    for k in range(300):
        if k in (100, 299):
            gc.collect()
            free.append(gc.mem_free())
        try:
            if k & 1:  # also under heap_lock: still an InvokeError
                micropython.heap_lock()
            try:
                it.invoke()
            finally:
                if k & 1:
                    micropython.heap_unlock()
        except tflm.InvokeError:
            pass
    print('LEAK', free[0] - free[1])
