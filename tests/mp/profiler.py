# Runs in MicroPython: tests/test_profiler.py, which prepends MODEL and
# INP (paths).
import json
import micropython
import tflm
from tflm.errors import InvokeError
it = tflm.Interpreter(MODEL)  # noqa: F821 (prepended)
try:
    it.profile()
    early = 'none'
except InvokeError:
    early = 'InvokeError'
data = open(INP, 'rb').read()  # noqa: F821 (prepended)
res = {'early': early}
it.inputs[0].set(data)
micropython.heap_lock()
it.invoke()
micropython.heap_unlock()
res['plain'] = list(bytes(it.outputs[0].data))
it.inputs[0].set(data)
micropython.heap_lock()
it.invoke(profile=True)   # the first profiled run must not allocate
micropython.heap_unlock()
res['profiled'] = list(bytes(it.outputs[0].data))
res['rows'] = [list(r) for r in it.profile()]
res['total'] = it._prof_us[len(res['rows'])]
print('TABLE')
it.profile(table=True)
print(json.dumps(res))
