"""SIN and COS (float32): sinf / cosf on float32 words, in integer viper
code (no allocation, no Python floats).

Follows tensorflow/lite/micro/kernels/elementwise.cc (GenericPrepare with
IsNumericSupportedType, SinEval / CosEval: EvalNumeric with std::sin /
std::cos on float, i.e. the C library's sinf / cosf). Input and output:
float32, the same element count (int8 and other types are refused, as
TFLM's IsNumericSupportedType does).

The results are within 1 ulp of the exact value (and so of TFLM's, the
C library's, which is within 1 ulp too: both are one of the two floats
around the exact value), the same bits on every port and word size:

- |x| < 2**-12: sin(x) = x, cos(x) = 1 (the correctly rounded values).
- x = m * 2**e (m the 24-bit significand). |x| < pi/4: r = x. Otherwise
  Payne-Hanek: the 105 bits of 2/pi from bit e - 2 on (_TWO_OVER_PI,
  15-bit chunks; the bits before make multiples of 4) times m give
  x * 2/pi mod 4 with 103 fraction bits (truncation below 2**-79), the
  quadrant q and the fraction f in [-1/2, 1/2); r = f * pi/2 from the
  normalized 30-bit f. Every float32 has |f| above 2**-40 or so, so r
  keeps 29 or more correct bits whatever the size of x (up to 3.4e38).
- sin(r) = r * S(r**2), cos(r) = C(r**2), S and C the Taylor series to
  r**12 / 13! and r**14 / 14! in Q30 (truncation below 2**-37 for
  |r| <= pi/4), chosen and signed by quadrant, and rounded once to
  float32 (f32_math.round_put).
- +-inf gives x86's default NaN (0xFFC00000), a NaN itself made quiet
  (its payload and sign kept): what glibc gives TFLM.

Every product is formed from 15-bit limbs (f32_math.mulhi30), so no
intermediate exceeds 31 bits; values that cross a call stay below 2**30.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from . import f32
from .f32_math import horner30, mulhi30, round_put

_FLOAT32 = const(0)
_COS = const(108)

# 2/pi in 15-bit chunks, after 30 zero bits: chunk j holds bits
# 15 j .. 15 j + 14 of the string 0**30 b1 b2 b3 ... (2/pi = 0.b1b2b3...).
_TWO_OVER_PI = array("i", [0, 0, 20860, 24795, 18888, 16722, 20449, 7519,
                           9194, 13533, 24685, 22693, 13095, 17465, 527,
                           31045, 18263, 24251])
# Taylor coefficients in Q30: sin r / r = sum S_k u**k, cos r = sum C_k
# u**k (u = r**2), k = 0 ..; (-1)**k 2**30 / (2k+1)! and / (2k)!, the
# first (2**30) left out (f32_math.horner30 adds it).
_SIN_Q30 = array("i", [-178956971, 8947849, -213044, 2959, -27, 0])
_COS_Q30 = array("i", [-536870912, 44739243, -1491308, 26630, -296, 2, 0])


def prepare(op, ins, outs, ctx):
    """SIN or COS.

    ins: [float32 tensor]; outs: [float32, the same element count].
    Raises PrepareError naming the op and tensor for another number of
    tensors, another type or another size. Semantics: see the module
    docstring (TFLM kernels/elementwise.cc SinEval / CosEval).
    """
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1 or outs[0] is None:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    for t in (x, y):
        if t.type != _FLOAT32:
            raise PrepareError("%s: %s is %s; supported: float32"
                               % (label, t.label(), t.dtype))
    if x.size != y.size:
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    from ..heap import persistent
    w = persistent(ctx, "i", 16)
    return _eval, (f32.words(x, ctx), y.data, x.size,
                   1 if op.code == _COS else 0, w)


def _eval(st):
    x, y, n, cosine, w = st
    vsincos(x, y, n, cosine, _TWO_OVER_PI, w)


@micropython.viper
def vsincos(x, y, n: int, cosine: int, tab, w):
    """y[i] = sinf(x[i]) (cosine 0) or cosf(x[i]) (cosine 1) for i < n,
    float32 words (ptr32: x and y 4-byte aligned; y may be x). tab:
    _TWO_OVER_PI; w: 16 int32 words of scratch (W in w[0..6], the
    product's limbs in w[8..14])."""
    px = ptr32(x)
    py = ptr32(y)
    pt = ptr32(tab)
    pw = ptr32(w)
    one: int = 1
    SGN: int = one << 31
    MAG: int = SGN - 1
    H23: int = one << 23
    M23: int = H23 - 1
    INF: int = 0xFF * H23
    H29: int = one << 29
    PIO2: int = 843314857  # pi/2 in Q29
    i: int = 0
    while i < n:
        u: int = px[i]
        a: int = u & MAG
        sx: int = (u >> 31) & 1
        r: int = 0
        if a > INF:
            r = u | (one << 22)  # quiet NaN
        elif a == INF:
            r = SGN | INF | (one << 22)  # x86's default NaN
        elif a < 115 * H23:  # |x| < 2**-12
            r = 0x3F800000 if cosine else u
        else:
            E: int = a >> 23
            m: int = (a & M23) | H23
            e: int = E - 150
            q: int = 0
            rneg: int = 0
            rm: int = 0  # |r| = rm * 2**er, 2**29 <= rm < 2**30
            er: int = 0
            if a < 0x3F490FDB:  # |x| < pi/4: r = x
                rm = m << 6
                er = e - 6
            else:
                # W: 105 bits of 2/pi from bit e - 2 (7 limbs, pw[0] the
                # most significant); bit position in _TWO_OVER_PI: e + 28
                bp: int = e + 28
                qq: int = bp // 15
                rr: int = bp - qq * 15
                j: int = 0
                while j < 7:
                    pw[j] = ((pt[qq + j] << rr) |
                             (pt[qq + j + 1] >> (15 - rr))) & 0x7FFF
                    j += 1
                # P = m * W in 15-bit limbs, least significant first in
                # pw[8..14]: only limbs 0..6 matter (bits >= 105 make
                # multiples of 4); P * 2**-103 = x * 2/pi mod 4
                a0: int = m & 0x7FFF
                a1: int = m >> 15
                carry: int = 0
                j = 0
                while j < 7:
                    c: int = a0 * pw[6 - j] + carry
                    if j:
                        c += a1 * pw[7 - j]
                    pw[j + 8] = c & 0x7FFF  # limb j (pw[8 .. 14])
                    carry = c >> 15
                    j += 1
                top: int = pw[14]
                q = (top >> 13) & 3
                pw[14] = top & 0x1FFF
                if top & 0x1000:  # f >= 1/2: f - 1, next quadrant
                    q = (q + 1) & 3
                    rneg = 1
                    # |f| = 2**103 - F, limb by limb
                    bw: int = 0
                    j = 8
                    while j < 15:
                        v: int = 0 - pw[j] - bw
                        bw = 0
                        if v < 0:
                            v += 0x8000
                            bw = 1
                        pw[j] = v
                        j += 1
                    pw[14] = pw[14] & 0x1FFF
                # normalize |f| to fm in [2**29, 2**30): fm * 2**ef
                j = 14
                while j > 10 and pw[j] == 0:
                    j -= 1
                hi: int = (pw[j] << 15) | pw[j - 1]
                nb: int = 0
                t: int = hi
                while t:
                    nb += 1
                    t = t >> 1
                sh: int = 30 - nb
                if sh > 15:  # (|f| < 2**-60: no float32 comes close)
                    sh = 15
                fm: int = (hi << sh) | (pw[j - 2] >> (15 - sh))
                ef: int = 15 * (j - 9) - sh - 103
                # r = f * pi / 2
                rm = int(mulhi30(fm, PIO2))  # * 2**(ef - 29 + 30)
                er = ef + 1
                if rm < H29:
                    rm = rm << 1
                    er -= 1
            # quadrant: sin(q pi/2 + r), cos = sin with q + 1
            q = q + cosine
            neg: int = (q >> 1) & 1
            if cosine == 0:
                neg ^= sx
            # u = r**2 in Q30
            r2: int = int(mulhi30(rm, rm))  # * 2**(2 er + 30), < 2**30
            s2: int = 0 - (2 * er + 60)
            uq: int = 0
            if s2 < 30:
                uq = r2 >> s2
            M: int = 0
            ex: int = 0
            if q & 1:  # cos r
                M = int(horner30(_COS_Q30, uq))
                ex = -30
            else:  # sin r
                neg ^= rneg
                M = int(mulhi30(rm, int(horner30(_SIN_Q30, uq))))
                ex = er
            round_put(y, i, neg, M >> 10, M & 1023, 10, ex)
            r = py[i]
        py[i] = r
        i += 1
