# Runs in MicroPython: tests/test_verifier.py, which prepends SMALL and
# HUGE (model paths).
import tflm
from tflm.kernels import add
raw = open(SMALL, 'rb').read()  # noqa: F821 (prepended)
real = add.prepare
for exc in (IndexError('boom'), TypeError('boom'), MemoryError()):
    def broken(op, ins, outs, ctx, exc=exc):
        raise exc
    add.prepare = broken
    try:
        tflm.Interpreter(raw)
    except tflm.TFLMError as e:
        print(type(e).__name__ + ': ' + str(e))
add.prepare = real
try:
    tflm.Interpreter(open(HUGE, 'rb').read())  # noqa: F821 (prepended)
except tflm.TFLMError as e:
    print(type(e).__name__ + ': ' + str(e))
