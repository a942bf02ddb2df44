# Runs in MicroPython: tests/test_custom_ops.py appends the cases to this
# set of registered custom kernels.
import micropython
import tflm
from array import array
from tflm import custom, flexbuffers  # noqa: F401 (the appended cases use them)
from tflm.errors import TFLMError

def ac_prepare(op, ins, outs, o):
    x, y = ins[0], outs[0]
    if x.dtype != 'int8' or y.shape != x.shape:
        raise ValueError('AffineClip wants int8 and equal shapes')
    assert o['mode'] == 'clip' and o['enabled'] is True
    assert abs(o['gain'] - 0.25) < 1e-6 and o['nested']['k'][1] == 'a'
    lo, hi = o['range']
    return (x.data, y.data, array('i', [o['mul'], o['add'], o['shift'],
                                        lo, hi]), x.size)

def ac_eval(st):
    src, dst, p, n = st
    mul, add, sh, lo, hi = p
    for i in range(n):
        v = src[i]
        r = ((v - 256 if v > 127 else v) * mul + add) >> sh
        dst[i] = (lo if r < lo else hi if r > hi else r) & 0xff

@micropython.viper
def _neg(src, dst, n: int):
    s = ptr8(src)
    d = ptr8(dst)
    for i in range(n):
        r = 0 - ((s[i] ^ 0x80) - 0x80)
        if r > 127:
            r = 127
        d[i] = r

def neg_prepare(op, ins, outs, o):
    return (ins[0].data, outs[0].data, ins[0].size)

def neg_eval(st):
    _neg(st[0], st[1], st[2])

def bad_prepare(op, ins, outs, o):
    raise ValueError('no thanks')

tflm.register_op('AffineClip', ac_prepare, ac_eval)
tflm.register_op('Negate', neg_prepare, neg_eval)
tflm.register_op('Bad', bad_prepare, neg_eval)

def run(raw, inputs, lock, shift=1):
    buf = bytearray(shift + len(raw))
    buf[shift:] = raw
    try:
        it = tflm.Interpreter(memoryview(buf)[shift:])
    except TFLMError as e:
        return {'error': type(e).__name__, 'message': str(e)}
    for t, x in zip(it.inputs, inputs):
        t.data[:] = x
    if lock:
        micropython.heap_lock()
    try:
        it.invoke()
    finally:
        if lock:
            micropython.heap_unlock()
    return {'out': [bytes(t.data).hex() for t in it.outputs]}
