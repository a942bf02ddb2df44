# Runs in MicroPython: tests/test_verifier.py, which prepends MODEL (a
# path). Bad API calls on a built interpreter.
import tflm
raw = open(MODEL, 'rb').read()  # noqa: F821 (prepended)
it = tflm.Interpreter(raw)
def err(f):
    try:
        f()
    except tflm.TFLMError as e:
        return type(e).__name__ + ': ' + str(e)
    return 'no error'
print(err(lambda: it.input(0).set(b'\x00' * 3)))
print(err(lambda: it.input(2)))
print(err(lambda: it.input(-1)))
print(err(lambda: it.input('x')))
print(err(lambda: it.output(1)))
it.input(0).set(bytes(range(4)))
it.input(1).set(bytes(4))
it.invoke()
print('usable', it.output(0).get())
need = it.arena_size
print(err(lambda: tflm.Interpreter(raw, arena_size=need - 1)))
print('exact arena', tflm.Interpreter(raw, arena_size=need).arena_size)

class Careless(tflm.Interpreter):
    def __init__(self, model):
        try:
            super().__init__(model)
        except tflm.TFLMError:
            pass
bad = Careless(raw[:40])
print(err(bad.invoke))
print(err(lambda: bad.input(0)))
