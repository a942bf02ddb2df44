"""float32 ELU: x < 0 ? expm1f(x) : x, in integer viper code (elu.py's
float32 half, imported by its prepare for a float32 input only).

Follows tensorflow/lite/micro/kernels/elu.cc (EluEval, kTfLiteFloat32:
reference_ops::Elu, TfLiteExpm1 = std::expm1 on float, i.e. the C
library's expm1f). The results are within 1 ulp of the exact value (and
so of TFLM's: both are one of the two floats around it); the same bits on
every port and word size:

    x >= 0, -0.0, NaN   x itself (val < 0.0f is false; a NaN is not made
                        quiet, as TFLM returns it)
    -2**-25 < x < 0     x (the correctly rounded expm1)
    -0.5 <= x           x * T(x), T(x) = sum x**k / (k+1)!, k <= 11, in
                        Q30 (f32_math.horner30; truncation below 2**-35)
    -17.5 < x < -0.5    -(1 - exp(x)), exp(x) from f32_math's exp core
                        (about 33 bits) to 2**-46, rounded once
    x <= -17.5, -inf    -1.0
"""

from array import array

import micropython

from . import f32
from .f32_math import EXP_Q31, _expk, horner30, mulhi30, round_put

# T(-t) - 1 = sum c[k] t**(k+1): (-1)**(k+1) 2**30 / (k+2)!, k = 0..10
_EXPM1_Q30 = array("i", [-536870912, 178956971, -44739243, 8947849,
                         -1491308, 213044, -26630, 2959, -296, 27, -2, 0])


def prepare(op, x, y, ctx):
    """Bind the float32 ELU of input x to output y (elu.prepare has
    checked both: float32, as many elements). Raises nothing itself."""
    from ..heap import persistent
    return _eval, (f32.words(x, ctx), y.data, x.size,
                   persistent(ctx, "i", 3))


def _eval(st):
    x, y, n, est = st
    velu(x, y, n, est)


@micropython.viper
def velu(x, y, n: int, st):
    """y[i] = ELU(x[i]) for i < n, float32 words (ptr32: 4-byte aligned;
    y may be x); st: 3 int32 words of scratch for f32_math._expk. See the
    module docstring."""
    px = ptr32(x)
    py = ptr32(y)
    ps = ptr32(st)
    one: int = 1
    H23: int = one << 23
    M23: int = H23 - 1
    S31: int = one << 31
    MAG: int = S31 - 1
    i: int = 0
    while i < n:
        u: int = px[i]
        a: int = u & MAG
        r: int = u
        if ((u >> 31) & 1) == 0 or a == 0 or a > 0xFF * H23:
            r = u  # x >= 0, -0.0, NaN
        elif a >= 0x20C6 * (one << 17):  # x <= -17.5 (and -inf)
            r = S31 | 0x3F800000  # -1.0
        elif a < 102 * H23:  # |x| < 2**-25
            r = u
        else:
            E: int = a >> 23
            m: int = (a & M23) | H23
            if a <= 0x3F000000:  # |x| <= 0.5: x * T(x), T in Q30
                t: int = m << (E - 120)  # |x| in Q30 (truncated)
                if E < 120:
                    t = m >> (120 - E)
                T: int = int(horner30(_EXPM1_Q30, t))
                M: int = int(mulhi30(m << 6, T))  # |x| T 2**(156 - E)
                round_put(y, i, 1, M >> 10, M & 1023, 10, E - 156)
            else:  # -(1 - exp(x)); X = x * 2**46 = -(m * 2**(E - 104))
                sh: int = E - 104  # 22 .. 26
                h: int = m << (sh - 23)
                lo: int = 0
                if sh <= 23:
                    h = m >> (23 - sh)
                    lo = (m << sh) & M23
                h = 0 - h
                lo = 0 - lo
                if lo < 0:
                    lo += H23
                    h -= 1
                _expk(h, lo, EXP_Q31, st)
                # exp(x) = (st[1] 2**23 + st[2]) 2**(k - 46)
                k: int = (ps[0] ^ S31) - S31
                s: int = 0 - k  # 1 .. 26
                if k > 0:
                    s = 0
                eh: int = ps[1]
                el: int = ps[2]
                hi: int = 0
                lw: int = 0
                if s >= 23:
                    lw = eh >> (s - 23)
                else:
                    hi = eh >> s
                    lw = ((eh & ((one << s) - 1)) << (23 - s)) | (el >> s)
                hi += lw >> 23  # (eh may pass 2**23)
                lw = lw & M23
                # 1 - exp(x) = 2**46 - (hi 2**23 + lw), in units 2**-46
                dh: int = H23 - hi
                if lw:
                    dh -= 1
                    lw = H23 - lw
                round_put(y, i, 1, dh, lw, 23, -46)
            r = py[i]
        py[i] = r
        i += 1
