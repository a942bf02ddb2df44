# Runs in MicroPython: tests/test_cores.py, which prepends ROOT (the
# repository); argv[1]: a manifest, one "name model input output" a line.
# Per model: outputs with cores=1 and cores=2 (every CONV_2D /
# DEPTHWISE_CONV_2D that can be split is: MIN_MACS 0), the number of
# operators split, whether cores=2's invoke allocated (heap_lock); the
# cores=2 output written to `output`. Then the error cases, one line each.
import sys
sys.path.insert(0, ROOT + '/micropython')  # noqa: F821 (prepended)
import micropython
import tflm
from tflm import cores
from tflm.errors import InvokeError

cores.MIN_MACS = 0


def run(it, x):
    it.input(0).data[:] = x
    it.invoke()
    return bytes(it.output(0).data)


with open(sys.argv[1]) as f:
    lines = f.read().split('\n')
for line in lines:
    if not line:
        continue
    name, path, ipath, opath = line.split()
    with open(ipath, 'rb') as f:
        x = f.read()
    one = run(tflm.Interpreter(path), x)
    it = tflm.Interpreter(path, cores=2)
    two = run(it, x)
    n = 0
    for k in range(0, len(it._steps), 2):
        if it._steps[k] is cores._split:
            n += 1
    it.input(0).data[:] = x
    micropython.heap_lock()
    try:
        it.invoke()
        locked = 'ok'
    except MemoryError:
        locked = 'allocates'
    finally:
        micropython.heap_unlock()
    again = bytes(it.output(0).data)
    with open(opath, 'wb') as f:
        f.write(two)
    print('CASE', name, n, one == two == again, locked)
    it = None

# an exception on the second core: InvokeError from invoke(), and the
# worker serves the next invoke
it = tflm.Interpreter(path, cores=2)
k = 0
while it._steps[k] is not cores._split:
    k += 2
s = it._steps[k + 1]
it._steps[k + 1] = (s[0], s[1], None, s[3], s[4])
try:
    it.invoke()
    print('WORKER no error')
except InvokeError as e:
    print('WORKER InvokeError', e)
it._steps[k + 1] = s
print('AFTER', run(it, x) == two)
cores.SPIN = 100  # the polling handover
print('SPIN', run(it, x) == two)
cores.SPIN = 0
print('REPR', [ln.strip() for ln in repr(it).split('\n') if 'cores=2' in ln])
# no _thread: CoresError (while no worker runs yet: simulated)
saved = cores._thread, cores._go
cores._thread = cores._go = None
try:
    tflm.Interpreter(path, cores=2)
    print('NOTHREAD built')
except cores.CoresError as e:
    print('NOTHREAD CoresError', isinstance(e, tflm.TFLMError))
cores._thread, cores._go = saved
for bad in (3, 0, '2'):
    try:
        tflm.Interpreter(path, cores=bad)
        print('BAD built')
    except (ValueError, TypeError) as e:
        print('BAD', type(e).__name__)
print('DONE')
