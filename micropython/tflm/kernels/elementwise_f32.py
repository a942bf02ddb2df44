"""float32 ABS, NEG, CEIL, FLOOR, ROUND, SQRT, SQUARE, EXP and LOG on
float32 words, in integer viper code (elementwise.py's float32 half).

Follows tensorflow/lite/micro/kernels/elementwise.cc (AbsEval: std::abs,
SqrtEval: std::sqrt, SquareEval: f * f), neg.cc (reference_ops::Negate:
-x), ceil.cc / floor.cc (std::ceil, std::floor), round.cc
(reference_ops::RoundToNearest) and exp.cc (reference_ops::Exp:
std::exp), bit for bit as TFLM's x86-64 build gives them (EXP and LOG
within 1 ulp):

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
    LOG    logf (elementwise.cc LogEval: std::log) within 1 ulp of the
           exact value (glibc's logf is correctly rounded in nearly all
           cases): x = r 2**k with r in [0.707, 1.414), s = (r - 1) /
           (r + 1) to 30 bits by long division, log r = 2 s T(s**2) with
           T = 1 + w/3 + ... + w**6/13 in Q30 (truncation below 2**-38),
           plus k ln 2 to 2**-36, rounded once (error below 0.1 ulp
           before that rounding); +-0 gives -inf, x < 0 0xFFC00000,
           +inf itself, a NaN quiet

Nothing allocates in invoke(), nothing uses Python floats; the same bits
on 32- and 64-bit viper (float32 patterns are masked before compares and
never cross a call).
"""

import micropython
from micropython import const

from . import f32, f32_math
from .f32 import vec
from .f32_math import round_put, sqrt_word, unpack_e, unpack_m, vexp

_ABS = const(101)
_CEIL = const(104)
_EXP = const(47)
_FLOOR = const(8)
_LOG = const(73)
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
    if code == _LOG:
        return _eval_log, (xw, y.data, n)
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


def _eval_log(st):
    x, y, n = st
    vlog(x, y, n)


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
            else:  # correctly rounded (y may be x: u is read)
                py[i] = u
                sqrt_word(y, i)
                r = py[i]
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


@micropython.viper
def vlog(x, y, n: int):
    """y[i] = logf(x[i]) for i < n, float32 words (ptr32: 4-byte
    aligned; y may be x), within 1 ulp of the exact logarithm (see the
    module docstring). +-0 gives -inf, x < 0 x86's default NaN
    (0xFFC00000), +inf itself, NaN a quiet NaN (payload kept)."""
    px = ptr32(x)
    py = ptr32(y)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    H23: int = one << 23
    H24: int = one << 24
    H22: int = one << 22
    M22: int = H22 - 1
    M15: int = (one << 15) - 1
    INF: int = 0xFF * H23
    # 2**30 / (2j + 1), j = 1..6: log((1 + s) / (1 - s)) = 2 s T(s**2)
    C1: int = 357913941
    C2: int = 214748365
    C3: int = 153391689
    C4: int = 119304647
    C5: int = 97612893
    C6: int = 82595525
    # ln 2 * 2**36 = LN2H * 2**22 + LN2L
    LN2H: int = 11356
    LN2L: int = 2195325
    i: int = 0
    while i < n:
        u: int = px[i]
        a: int = u & MAG
        r: int = 0
        if a > INF:
            r = u | H22  # quiet NaN
        elif a == 0:
            r = S | INF
        elif (u >> 31) & 1:
            r = S | INF | H22
        elif a == INF:
            r = u
        else:
            mm: int = int(unpack_m(x, i))  # y may be x: not written yet
            k: int = int(unpack_e(x, i)) + 23
            # r = mm / 2**(23 + j) in [0.707, 1.414): s = (r - 1) / (r + 1)
            base: int = H23
            if mm > 11863283:  # sqrt(2) * 2**23
                base = H24
                k += 1
            num: int = mm - base
            neg: int = 0
            if num < 0:
                neg = 1
                num = 0 - num
            den: int = mm + base
            # |s| = q * 2**(es - 29), q in [2**29, 2**30)
            q: int = 0
            es: int = 0
            if num:
                rem: int = num
                while rem < den:
                    rem = rem << 1
                    es -= 1
                j: int = 0
                while j < 30:
                    q = q << 1
                    if rem >= den:
                        rem -= den
                        q = q | 1
                    rem = rem << 1
                    j += 1
            # A = q * T >> 30 with T = T(s**2) in Q30: log r = A 2**(es-28)
            A: int = 0
            if q:
                qh: int = q >> 15
                ql: int = q & M15
                t: int = qh * ql
                hh: int = qh * qh + (t >> 14) + \
                    ((((t & 0x3FFF) << 16) + ql * ql) >> 30)
                w: int = 0  # s**2 in units 2**-34
                if es > -18:  # (no shift by 30 or more: x86 masks it)
                    w = hh >> (0 - 2 * es - 6)
                wh: int = w >> 15
                wl: int = w & M15
                p: int = C6
                c: int = 5
                while c >= 0:
                    ph: int = p >> 15
                    pl: int = p & M15
                    pw: int = ((ph * wh) >> 4) + ((ph * wl) >> 19) + \
                        ((pl * wh) >> 19)
                    if c == 5:
                        p = C5 + pw
                    elif c == 4:
                        p = C4 + pw
                    elif c == 3:
                        p = C3 + pw
                    elif c == 2:
                        p = C2 + pw
                    elif c == 1:
                        p = C1 + pw
                    else:
                        p = (one << 30) + pw
                    c -= 1
                th: int = p >> 15
                tl: int = p & M15
                A = qh * th + ((qh * tl) >> 15) + ((ql * th) >> 15)
            # total = k ln 2 + (-1)**neg A 2**(es-28) in units 2**ex, as
            # hi * 2**22 + lo: ex = -36 (|total| >= 0.34), or es - 28 when
            # k = 0 (no addition: A keeps its 29 or more bits)
            ex: int = -36
            hi: int = 0
            lo: int = 0
            sg: int = 0
            if k == 0:
                ex = es - 28
                hi = A >> 22
                lo = A & M22
                sg = neg
            else:
                sft: int = es + 8
                ahi: int = 0
                alo: int = 0
                if sft >= 0:
                    ahi = A >> (22 - sft)
                    alo = (A & ((one << (22 - sft)) - 1)) << sft
                else:
                    av: int = A >> (0 - sft)
                    ahi = av >> 22
                    alo = av & M22
                if neg:
                    ahi = 0 - ahi
                    alo = 0 - alo
                hi = k * LN2H + ahi
                lo = k * LN2L + alo
                # normalize lo into [0, 2**22)
                if lo < 0:
                    bw: int = ((0 - lo) + M22) >> 22
                    lo += bw << 22
                    hi -= bw
                hi += lo >> 22
                lo = lo & M22
                if hi < 0:
                    sg = 1
                    if lo:
                        hi = -1 - hi
                        lo = H22 - lo
                    else:
                        hi = 0 - hi
            if hi == 0 and lo == 0:
                r = 0
            else:  # |log x| >= 2**-24: a normal float32
                round_put(y, i, sg, hi, lo, 22, ex)
                r = py[i]
        py[i] = r
        i += 1
