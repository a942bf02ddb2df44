# Runs in MicroPython: tests/test_float_ops.py, which prepends DIR.
# ruff: noqa: F821 (DIR is prepended)
from array import array
from tflm.kernels import f32, f32_math
def rd(n):
    with open(DIR + '/' + n, 'rb') as f:
        return f.read()
a, b, c = rd('a'), rd('b'), rd('c')
n = len(a) // 4
o = bytearray(4 * n)
none = f32.consts(f32.NEG_INF, f32.INF)
f32.vec(array('i', [0, 1, 0, 1, 0, 1, 0, n, 1]), none, a, b, c, o)
open(DIR + '/vec', 'wb').write(o)
f32.vdiv(array('i', [0, 1, 0, 1, 0, n]), none, a, b, o)
open(DIR + '/div', 'wb').write(o)
# dot over rows of 7: acc = 0; acc += a[k] * b[k]; + bias c[r + 1]
p = f32.slots(f32.DOT_SLOTS)
q = f32.consts(0, f32.NEG_INF, f32.INF, f32.ONE)
r = 0
p[2] = p[5] = 1
p[8] = 7
p[9] = p[10] = 1
while r + 7 <= n:
    p[0] = p[1] = r
    p[11] = r + 1
    p[12] = r // 7
    f32.dot(p, q, a, b, c, o)
    r += 7
open(DIR + '/dot', 'wb').write(o)
st = array('i', [0, 0, 0])
pe = array('i', [0, 1, 0, n])
f32_math.vexp(pe, f32_math.EXP_Q31, st, a, o)
open(DIR + '/exp', 'wb').write(o)
f32_math.vtanh(pe, f32_math.EXP_Q31, f32_math.TANH_Q30, st, a, o)
open(DIR + '/tanh', 'wb').write(o)
print('done')
