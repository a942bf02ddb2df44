"""float32 ABS, NEG, CEIL, FLOOR, ROUND, SQRT, SQUARE and EXP on float32
words, in integer viper code (elementwise.py's float32 half).

Follows tensorflow/lite/micro/kernels/elementwise.cc (AbsEval: std::abs,
SqrtEval: std::sqrt, SquareEval: f * f), neg.cc (reference_ops::Negate:
-x), ceil.cc / floor.cc (std::ceil, std::floor), round.cc
(reference_ops::RoundToNearest) and exp.cc (reference_ops::Exp:
std::exp), bit for bit as TFLM's x86-64 build gives them:

    ABS    clears the sign bit, NEG flips it (NaNs included, as andps /
           xorps do)
    CEIL, FLOOR   exact; -0.0 stays -0.0, ceil(-0.5) = -0.0, floor(0.5)
           = +0.0; a NaN passes unchanged (glibc's ceilf / floorf work
           on the bits: a signaling NaN stays signaling)
    ROUND  RoundToNearest: f = floor(x), d = x - f; d < 0.5, or d == 0.5
           and f even, gives f, else f + 1.0f: halves to even, and every
           x in [-0.5, 0) gives +0.0 (f + 1.0f = -1 + 1), -0.0 stays -0.0,
           a NaN comes out quiet (f + 1.0f), its payload kept
    SQRT   correctly rounded (IEEE 754 sqrt, as sqrtss): the root is formed
           to 25 bits plus a sticky remainder and rounded once; -0.0 gives
           -0.0, x < 0 x86's default NaN (0xFFC00000), NaN a quiet NaN
    SQUARE one float32 product (f32.vec)
    EXP    f32_math.vexp: within 1 ulp of the exact value (the C library's
           expf, which TFLM calls, is within 0.502 ulp in glibc: about
           0.3% of the results differ by 1 ulp from TFLM's)

Nothing allocates in invoke(), nothing uses Python floats; the same bits
on 32- and 64-bit viper (float32 patterns are masked before compares and
never cross a call).
"""

import micropython
from micropython import const

from . import f32, f32_math
from .f32 import vec
from .f32_math import vexp

_ABS = const(101)
_CEIL = const(104)
_EXP = const(47)
_FLOOR = const(8)
_NEG = const(59)
_ROUND = const(116)
_SQRT = const(75)
_SQUARE = const(92)

# _unary kinds
_K_ABS = const(0)
_K_NEG = const(1)
_K_CEIL = const(2)
_K_FLOOR = const(3)
_K_ROUND = const(4)
_K_SQRT = const(5)


def prepare(op, x, y, ctx):
    """Bind the float32 eval of an ABS, NEG, CEIL, FLOOR, ROUND, SQRT,
    SQUARE or EXP op whose input x and output y elementwise.prepare has
    checked (float32, as many elements). Raises nothing itself."""
    code = op.code
    xw = f32.words(x, ctx)
    n = x.size
    if code == _SQUARE:
        p = f32.slots(f32.VEC_SLOTS)
        p[1] = 1
        p[3] = 1
        p[7] = n
        return _eval_square, (p, f32.consts(f32.NEG_INF, f32.INF), xw,
                              y.data, f32.consts(f32.NEG_ZERO))
    if code == _EXP:
        p = f32.slots(f32_math.SLOTS)
        p[1] = 1
        p[3] = n
        from array import array
        return _eval_exp, (p, xw, y.data, array("i", [0, 0, 0]))
    kind = (_K_ABS if code == _ABS else _K_NEG if code == _NEG else
            _K_CEIL if code == _CEIL else _K_FLOOR if code == _FLOOR else
            _K_ROUND if code == _ROUND else _K_SQRT)
    return _eval, (xw, y.data, n, kind)


def _eval(st):
    x, y, n, kind = st
    unary(x, y, n, kind)


def _eval_square(st):
    p, q, x, y, c = st
    vec(p, q, x, x, c, y)


def _eval_exp(st):
    p, x, y, est = st
    vexp(p, f32_math.EXP_Q31, est, x, y)


@micropython.viper
def unary(x, y, n: int, kind: int):
    """y[i] = f(x[i]) for i < n, float32 words (ptr32: x and y 4-byte
    aligned; y may be x). kind: 0 abs, 1 neg, 2 ceil, 3 floor, 4 round
    (RoundToNearest), 5 sqrt; see the module docstring."""
    px = ptr32(x)
    py = ptr32(y)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    H23: int = one << 23
    M23: int = H23 - 1
    INF: int = 0xFF * H23
    QUIET: int = one << 22
    H25: int = one << 25
    ONE: int = 127 * H23
    i: int = 0
    while i < n:
        u: int = px[i]
        a: int = u & MAG
        neg: int = (u >> 31) & 1
        r: int = u
        if kind == 0:
            r = a
        elif kind == 1:
            r = u ^ S
        elif a > INF:  # NaN: as it is (ceil, floor), quiet (round, sqrt)
            if kind >= 4:
                r = u | QUIET
        elif kind == 5:  # sqrt
            if a == 0 or a == INF and neg == 0:
                r = u
            elif neg:
                r = S | INF | QUIET  # x86's default NaN
            else:  # the root to 25 or 26 bits plus a sticky bit
                e: int = a >> 23
                m: int = a & M23
                ex: int = e - 150
                if e == 0:  # subnormal: normalize
                    ex = -149
                    while m < H23:
                        m = m << 1
                        ex -= 1
                else:
                    m = m | H23
                if ex & 1:  # make the exponent even
                    m = m << 1
                    ex -= 1
                # q = floor(sqrt(m * 2**26)), rem the remainder: 26 bit
                # pairs, the top 13 from m
                q: int = 0
                rem: int = 0
                k: int = 25
                while k >= 0:
                    pair: int = 0
                    if k >= 13:
                        pair = (m >> (2 * (k - 13))) & 3
                    rem = (rem << 2) | pair
                    t: int = (q << 2) | 1
                    if rem >= t:
                        rem -= t
                        q = (q << 1) | 1
                    else:
                        q = q << 1
                    k -= 1
                drop: int = 1
                if q >= H25:
                    drop = 2
                rb: int = (q >> (drop - 1)) & 1
                sticky: int = rem | (q & ((one << (drop - 1)) - 1))
                mant: int = q >> drop
                he: int = ((ex + 400) >> 1) - 200  # ex / 2
                r = ((he + drop + 137) << 23) + (mant - H23)
                if rb and (sticky or (mant & 1)):
                    r += 1
        elif a >= 150 * H23:  # |x| >= 2**23 (or inf): an integer
            r = u
        elif a < ONE:  # |x| < 1
            if kind == 2:  # ceil
                r = (S if neg else ONE) if a else u
            elif kind == 3:  # floor
                r = (S | ONE if a else u) if neg else 0
            elif neg:  # round: [-0.5, 0) gives +0.0, -0.0 stays
                r = S | ONE if a > 126 * H23 else (0 if a else u)
            else:  # round: (0.5, 1) gives 1.0, [0, 0.5] gives +0.0
                r = ONE if a > 126 * H23 else 0
        else:  # 1 <= |x| < 2**23: fb fraction bits
            fb: int = 150 - (a >> 23)
            unit: int = one << fb
            frac: int = a & (unit - 1)
            tr: int = u - frac  # truncated toward zero
            if frac:
                up: int = 0  # magnitude up to the next integer
                if kind == 2:
                    up = 1 - neg
                elif kind == 3:
                    up = neg
                else:
                    half: int = unit >> 1
                    m: int = (a & M23) | H23
                    if frac > half or (frac == half and (m >> fb) & 1):
                        up = 1
                r = tr + unit if up else tr
        py[i] = r
        i += 1
