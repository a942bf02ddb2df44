# Runs in MicroPython: the device side of tests/sequences.py (invoke /
# reset sequences; see run_ours there for its arguments and output).
import sys
import micropython
sys.path.insert(0, sys.argv[1])
import tflm
d, n = sys.argv[2], int(sys.argv[3])

def rd(p):
    with open(p, 'rb') as f:
        return f.read()

def exists(p):
    try:
        open(p, 'rb').close()
        return True
    except OSError:
        return False

def one(s):
    return str(s).replace('\n', ' ')

def run(k):
    pre = '%s/%d' % (d, k)
    raw = rd(pre + '.tflite')
    buf = bytearray(k % 4 + len(raw))
    buf[k % 4:] = raw
    try:
        it = tflm.Interpreter(memoryview(buf)[k % 4:])
    except tflm.TFLMError as e:
        print('ERR', k, type(e).__name__, one(e))
        return
    j = 0
    while True:
        s = '%s.s%d' % (pre, j)
        if exists(s + '.reset'):
            it.reset()
        elif exists(s + '.set'):
            for i, t in enumerate(it.inputs):
                t.data[:] = rd('%s.in%d' % (s, i))
            micropython.heap_lock()
            try:
                it.invoke()
            finally:
                micropython.heap_unlock()
            for i, t in enumerate(it.outputs):
                with open('%s.out%d' % (s, i), 'wb') as f:
                    f.write(t.data)
        else:
            break
        j += 1
    print('OK', k, j)

for k in range(n):
    try:
        run(k)
    except tflm.TFLMError as e:
        print('IERR', k, type(e).__name__, one(e))
    except Exception as e:
        print('BUG', k, type(e).__name__, one(e))
