"""TFLM's int8 fixed-point functions in plain Python ints (prepare only).

Each *_table function returns a 256-byte table indexed by the input's raw
byte (q & 0xFF for the int8 value q) whose entries are the int8 outputs
TFLM computes for that input, so eval is a viper table lookup
(kernels/lut.py). The arithmetic follows, step by step, with C's int32 /
int16 wrap-around and truncating division:

  gemmlowp fixedpoint.h: SaturatingRoundingDoublingHighMul,
      RoundingDivideByPOT, SaturatingRoundingMultiplyByPOT, RoundingHalfSum,
      exp_on_negative_values, one_over_one_plus_x_for_x_in_0_1,
      one_minus_x_over_one_plus_x_for_x_in_0_1, logistic, tanh;
  kernels/internal/common.h: MultiplyByQuantizedMultiplier (double
      rounding), GetInvSqrtQuantizedMultiplierExp;
  reference/integer_ops/logistic.h, tanh.h, reference/hard_swish.h and
      micro/kernels/elementwise.cc (RsqrtEvalQuantized, AbsEvalQuantized).

The float32 / double scale arithmetic of the kernels' Prepare functions is
done exactly with integers (f32_* below and tflm.quant): never with the
board's floats. Nothing here runs in invoke().
"""

from micropython import const

from ..errors import ModelError
from .gemmlowp import _tdiv, exp_neg, mbqm_ref, pot, rdbpot, srdhm, w16, w32

_INT32_MAX = const((1 << 31) - 1)


def _newton(a):
    """The Newton-Raphson division shared by gemmlowp's
    one_over_one_plus_x and one_minus_x_over_one_plus_x (Q2.29 raw)."""
    s = a + _INT32_MAX
    half = w32(_tdiv(s + (1 if s >= 0 else -1), 2))  # RoundingHalfSum
    x = w32(1515870810 + srdhm(half, -1010580540))  # 48/17 - 32/17 * d
    for _ in range(3):
        t = w32((1 << 29) - srdhm(half, x))
        x = w32(x + pot(srdhm(x, t), 2))
    return x


def logistic(a, ib):
    """gemmlowp::logistic of a raw int32 with ib integer bits (Q0.31)."""
    if a == 0:
        return 1 << 30
    pos = _newton(exp_neg(w32(-a) if a > 0 else a, ib))
    pos = pot(pos, 1)  # Rescale<0>(ExactMulByPot<-1>(x))
    return pos if a > 0 else w32(_INT32_MAX - pos)


def tanh(a, ib):
    """gemmlowp::tanh of a raw int32 with ib integer bits (Q0.31)."""
    if a == 0:
        return 0
    n = a if a < 0 else w32(-a)
    t = pot(w32(_newton(exp_neg(n, ib + 1)) - (1 << 29)), 2)
    return w32(-t) if a < 0 else t


def inv_sqrt(x):
    """GetInvSqrtQuantizedMultiplierExp(x, kReverseShift = -1):
    (multiplier, shift) for an int32 x >= 0."""
    from .. import quant
    if x <= 1:
        return _INT32_MAX, 0
    shift = 11
    while x >= 1 << 29:
        x //= 4
        shift += 1
    left = (32 - quant.bitlen(x) - 1) // 2 - 1
    shift -= left
    x <<= 2 * left
    half_x = rdbpot(x >> 1, 1)
    r = 1 << 28  # F3 one
    for _ in range(5):
        r3 = pot(srdhm(srdhm(r, r), r), 6)
        r = pot(w32(srdhm(402653184, r) - srdhm(half_x, r3)), 3)  # 1.5
    r = srdhm(r, 1518500250)  # sqrt(2) / 2
    if shift < 0:
        r = w32(r << -shift)
        shift = 0
    return r, -shift


# --- float32 arithmetic of Prepare, exact --------------------------------

def f32_bits(v):
    """(sign, (m, e)) of a Python float taken as float32: |v| = m * 2**e.
    Raises ModelError for NaN or infinity."""
    from .. import quant
    import struct
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    return bits >> 31, quant.from_f32(abs(v))


def f32_round(num, den, e0):
    """num / den * 2**e0 (num >= 0, den > 0) rounded to float32 (nearest,
    ties to even, subnormals kept) as (m, e). Raises ModelError on
    overflow to infinity."""
    from .. import quant
    if not num:
        return quant.ZERO
    m, e = quant.round_bits(num, den, 24)
    e += e0
    if e < -149:  # subnormal: round at 2**-149 instead
        k = e0 + 149
        n2, d2 = (num << k, den) if k >= 0 else (num, den << -k)
        m, r = divmod(n2, d2)
        if 2 * r > d2 or (2 * r == d2 and m & 1):
            m += 1
        e = -149
    if m and quant.bitlen(m) + e > 128:
        raise ModelError("float32 overflow in scale arithmetic")
    return m, e


def f32_mul(a, b):
    """float32 product of (m, e) numbers a and b, rounded (a * b)."""
    return f32_round(a[0] * b[0], 1, a[1] + b[1])


def f32_div(a, b):
    """float32 quotient a / b of (m, e) numbers; b must be non-zero."""
    if not b[0]:
        raise ModelError("division by a zero scale")
    return f32_round(a[0], b[0], a[1] - b[1])


def _isqrt(n):
    """floor(sqrt(n)) for an int n >= 0 (MicroPython has no math.isqrt)."""
    from .. import quant
    if n < 2:
        return n
    x = 1 << ((quant.bitlen(n) + 1) // 2)
    while True:
        y = (x + n // x) // 2
        if y >= x:
            return x
        x = y


def f32_sqrt(a):
    """Correctly rounded float32 sqrt of a normal or subnormal (m, e)."""
    from .. import quant
    m, e = a
    if not m:
        return quant.ZERO
    if e & 1:
        m <<= 1
        e -= 1
    k = 30  # 2**30 * m has a square root of at least 30 bits
    n = m << (2 * k)
    r = _isqrt(n)
    sticky = 1 if r * r != n else 0
    # r * 2**(e/2 - k) plus a sticky bit: round to 24 bits.
    return f32_round(2 * r + sticky, 2, e // 2 - k)


# --- the tables ------------------------------------------------------------

def _table(fn):
    """bytearray(256): entry b = fn(int8 value of byte b) & 0xFF."""
    t = bytearray(256)
    for q in range(-128, 128):
        t[q & 0xFF] = fn(q) & 0xFF
    return t


def _clamp8(v):
    return -128 if v < -128 else 127 if v > 127 else v


def sigmoid_params(scale):
    """input_multiplier, input_left_shift, input_range_radius of TFLM's
    LOGISTIC / TANH Prepare (4 input integer bits), or None when the
    shift leaves the range where TFLM's double / shift arithmetic is
    defined (input scale below 2**-28 or above 2**35)."""
    from .. import quant
    m, e = quant.from_f32(scale)
    if not m:
        return 0, 0, 15 << 27
    n = quant.bitlen(m)
    shift = n + e + 27  # frexp(scale * 2**27)
    if not 0 <= shift <= 62:
        return None
    return m << (31 - n), shift, (15 << 27) >> shift


def logistic_table(zp, mult, shift, radius):
    """reference_integer_ops::Logistic (int8) for every input byte."""
    def f(q):
        v = q - zp
        if v <= -radius:
            return -128
        if v >= radius:
            return 127
        r = logistic(mbqm_ref(v, mult, shift), 4)
        return _clamp8(rdbpot(r, 23) - 128)
    return _table(f)


def tanh_table(zp, mult, shift, radius):
    """reference_integer_ops::Tanh (int8) for every input byte."""
    def f(q):
        v = q - zp
        if v <= -radius:
            return -128
        if v >= radius:
            return 127
        return _clamp8(rdbpot(tanh(mbqm_ref(v, mult, shift), 4), 24))
    return _table(f)


# --- HARD_SWISH: int16 arithmetic of reference/hard_swish.h ---------------

def _srdhm16(a, b):
    if a == b == -32768:
        return 32767
    ab = a * b
    return w16(_tdiv(ab + ((1 << 14) if ab >= 0 else 1 - (1 << 14)), 1 << 15))


def _sdhm16(a, b):
    """hard_swish.h SaturatingDoublingHighMul (no rounding nudge)."""
    if a == b == -32768:
        return 32767
    return w16(_tdiv(a * b, 1 << 15))


def _sat_shl16(v, amount):
    v *= 1 << amount
    return -32768 if v < -32768 else 32767 if v > 32767 else v


def _rdbpot16(x, e):
    """gemmlowp RoundingDivideByPOT on int16_t: the mask is
    (1ll << e) - 1 cut to 16 bits (all ones from e = 16 on)."""
    mask = w16((1 << e) - 1)
    thr = w16((mask >> 1) + (1 if x < 0 else 0))
    return w16((x >> e) + (1 if w16(x & mask) > thr else 0))


def _down16(m):
    """DownScaleInt32ToInt16Multiplier."""
    if m >= _INT32_MAX - (1 << 15):
        return 32767
    return (m + (1 << 15)) >> 16


def hard_swish_params(in_scale, out_scale):
    """HardSwishPrepare's (out_m16, out_exp, relu_m16, relu_exp).

    The source divides in float32 (hires_input_scale / output_scale), but
    the TFLM build we test against (PyPI tflite-micro, x86-64) gives the
    double quotient's multipliers, so the divisions are done in double
    (input_scale / 128 is exact either way). Raises ModelError for a zero
    output scale."""
    from .. import quant
    s_in = quant.from_f32(in_scale)
    s_out = quant.from_f32(out_scale)
    hires = quant.ldexp(s_in, -7)
    out_m, out_e = quant.quantize_multiplier(quant.div(hires, s_out))
    rel_m, rel_e = quant.quantize_multiplier(quant.div(hires, (3, -15)))
    return _down16(out_m), out_e, _down16(rel_m), rel_e


def hard_swish_table(in_zp, out_zp, out_m, out_e, rel_m, rel_e):
    """reference_ops::HardSwish (quantized, int8) for every input byte;
    out_e <= 0 (TFLM's Prepare checks it)."""
    def f(q):
        hires = w16((q - in_zp) * 128)
        pre_out = _srdhm16(hires, out_m)
        r = hires
        if rel_e > 0:
            r = _sat_shl16(r, rel_e - 1)
        r = _srdhm16(r, rel_m)
        if rel_e > 0:
            r = _sat_shl16(r, 1)
        if rel_e < 0:
            r = _rdbpot16(r, -rel_e)
        r = w16((r + (1 << 15)) >> 1)
        v = _rdbpot16(_sdhm16(r, pre_out), -out_e)
        return _clamp8(w16(v + out_zp))
    return _table(f)


# --- RSQRT (micro/kernels/elementwise.cc) ----------------------------------

def rsqrt_params(in_scale, out_scale):
    """SetRsqrtOutputMultiplier: QuantizeMultiplier(1 / (double)(
    sqrtf(in_scale) * out_scale)) as (multiplier, shift)."""
    from .. import quant
    prod = f32_mul(f32_sqrt(quant.from_f32(in_scale)),
                   quant.from_f32(out_scale))
    return quant.quantize_multiplier(quant.div((1, 0), prod))


def rsqrt_table(in_zp, out_zp, mult, shift):
    """RsqrtEvalQuantized (int8) for every input byte; inputs below the
    zero point (an invoke error in TFLM) get 0 here (callers check)."""
    def f(q):
        v = q - in_zp
        if v < 0:
            return 0
        if v == 0:
            return 127
        im, ish = inv_sqrt(v)
        data = mbqm_ref(1, im, ish + 20)
        return _clamp8(mbqm_ref(data, mult, shift - 20) + out_zp)
    return _table(f)


# --- ABS (micro/kernels/elementwise.cc) ------------------------------------

def abs_params(in_scale, out_scale):
    """PrepareAbsRsqrt's rescale of ABS: None when the two scales are equal
    (needs_rescale false), else QuantizeMultiplier((double)(in_scale /
    out_scale)) with the quotient rounded to float32 first, as
    (multiplier, shift). Raises ModelError for a zero output scale or a
    quotient beyond float32."""
    from .. import quant
    a, b = quant.from_f32(in_scale), quant.from_f32(out_scale)
    if quant.cmp(a, b) == 0:
        return None
    return quant.quantize_multiplier(f32_div(a, b))


def abs_table(in_zp, out_zp, rescale):
    """AbsEvalQuantized (int8) for every input byte: |q - in_zp|, rescaled
    by rescale = (multiplier, shift) unless None, plus out_zp (an int32
    sum), clamped to int8."""
    def f(q):
        v = abs(q - in_zp)
        if rescale is not None:
            v = w32(mbqm_ref(v, rescale[0], rescale[1]) + out_zp)
        else:
            v += out_zp
        return _clamp8(v)
    return _table(f)


def log_x_ge1(x, ib_in, ib_out):
    """log_x_for_x_greater_than_or_equal_to_1<ib_out>(FixedPoint<int32,
    ib_in>::FromRaw(x)) of TFLM's internal/common.h (gemmlowp fixed
    point, x > 0): the raw int32 of the result with ib_out integer bits.
    Plain Python (the reference of log_softmax.log_q5, its viper twin)."""
    acc = ib_out + 1
    quarter = rdbpot(536870912, acc)  # Rescale<acc>(1/4)
    sqrt_half = 1518500250
    ssh = 1805811301  # sqrt(sqrt(1/2))

    def clz(v):
        return 32 - len(bin(v)) + 2 if v > 0 else 32 - (v < 0) * 32

    def sat(v):
        return max(-(1 << 31), min(_INT32_MAX, v))

    ha = clz(x)
    r_a = pot(srdhm(pot(x, ha - 1), sqrt_half), 1)
    za_adj = sat(pot(ib_in - ha, 31 - acc) + quarter)
    zb = srdhm(x, sqrt_half)
    hb = clz(zb) - 1
    r_b = pot(x, hb)
    zb_adj = sat(pot(ib_in - hb, 31 - acc) - quarter)
    r = min(r_a, r_b)
    z = max(za_adj, zb_adj)
    s = r + ssh
    p = _tdiv(s + (1 if s >= 0 else -1), 2)  # RoundingHalfSum
    q = w32(2 * w32(r - ssh))
    sq = srdhm(q, q)
    num = w32(srdhm(q, r) + srdhm(srdhm(q, sq), 117049297))
    den = w32(srdhm(p, w32(w32(1057819769 + q) + srdhm(127690142, sq)))
              + srdhm(638450708, q))
    recip = pot(_newton(den), 1)  # one_over_one_plus_x_for_x_in_0_1
    res = w32(srdhm(z, 1488522236) + srdhm(rdbpot(num, acc), recip))
    return pot(res, acc - ib_out)
