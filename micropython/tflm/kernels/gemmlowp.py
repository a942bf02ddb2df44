"""gemmlowp's int32 fixed-point arithmetic in plain Python ints.

Prepare-time helpers (never run in invoke()) shared by SOFTMAX's tables
(kernels/softmax.py) and the activation tables (kernels/lut_math.py),
following gemmlowp fixedpoint.h step by step, with C's int32 wrap-around
and truncating division: SaturatingRoundingDoublingHighMul,
RoundingDivideByPOT, SaturatingRoundingMultiplyByPOT and
exp_on_negative_values.
"""

from micropython import const

_INT32_MAX = const((1 << 31) - 1)
_INT32_MIN = const(-(1 << 31))
_SCALED_DIFF_INTEGER_BITS = const(5)


def w32(x):
    """x wrapped to int32, as C's two's-complement arithmetic does."""
    return ((x + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def w16(x):
    """x wrapped to int16 (static_cast<int16_t>)."""
    return ((x + 0x8000) & 0xFFFF) - 0x8000


def _tdiv(a, d):
    """C integer division a / d (d > 0), truncating toward zero."""
    return a // d if a >= 0 else -((-a) // d)


# --- gemmlowp fixedpoint.h, int32 ----------------------------------------

def srdhm(a, b):
    """SaturatingRoundingDoublingHighMul(int32 a, int32 b)."""
    if a == b == _INT32_MIN:
        return _INT32_MAX
    ab = a * b
    return w32(_tdiv(ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30)),
                     1 << 31))


def rdbpot(x, e):
    """RoundingDivideByPOT(int32 x, 0 <= e <= 31)."""
    mask = w32((1 << e) - 1)
    thr = (mask >> 1) + (1 if x < 0 else 0)
    return w32((x >> e) + (1 if (x & mask) > thr else 0))


def mbqm_ref(x, m, shift):
    """Reference MultiplyByQuantizedMultiplier (common.cc, double
    rounding) in plain Python ints: x int32, m multiplier in [0, 2**31),
    shift in [-31, 30]. Returns int32. Prepare time and tests only;
    invoke() uses fixedpoint.requant_i8b / rescale.scale_i32."""
    return rdbpot(srdhm(w32(x << max(shift, 0)), m), max(-shift, 0))


def pot(x, e):
    """SaturatingRoundingMultiplyByPOT<e>(int32 x)."""
    if e < 0:
        return rdbpot(x, -e)
    if e == 0:
        return x
    thr = (1 << (31 - e)) - 1
    if x > thr:
        return _INT32_MAX
    if x < -thr:
        return _INT32_MIN
    return x << e


def _exp_quarter(a):
    """exp_on_interval_between_negative_one_quarter_and_0_excl (Q0.31)."""
    c = 1895147668  # exp(-1/8)
    x = w32(a + (1 << 28))
    x2 = srdhm(x, x)
    x3 = srdhm(x2, x)
    x4 = srdhm(x2, x2)
    t = srdhm(w32(rdbpot(x4, 2) + x3), 715827883)  # 1/3
    t = rdbpot(w32(t + x2), 1)
    return w32(c + srdhm(c, w32(x + t)))


_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084),
           (1, 290630308), (2, 39332535), (3, 720401), (4, 242))


def exp_neg(a, ib):
    """exp_on_negative_values of a raw int32 a <= 0 with ib integer bits;
    returns a Q0.31 raw value."""
    frac = 31 - ib
    quarter = 1 << (frac - 2)
    a_mod = w32((a & (quarter - 1)) - quarter)
    result = _exp_quarter(pot(a_mod, ib))
    rem = w32(a_mod - a)
    for e, m in _BARREL:
        if ib > e and rem & (1 << (frac + e)):
            result = srdhm(result, m)
    if ib > 5 and a < -(1 << (36 - ib)):
        result = 0
    return _INT32_MAX if a == 0 else result


def beta_multiplier(op, beta, in_scale):
    """PreprocessSoftmaxScaling(beta, in_scale, 5), exactly:
    (multiplier, left_shift, diff_min) of SOFTMAX and LOG_SOFTMAX (op: for
    the PrepareError raised when beta * in_scale * 2**26 <= 1)."""
    from .. import quant
    from ..errors import ModelError, PrepareError
    try:
        prod = quant.mul(quant.from_f32(beta), quant.from_f32(in_scale))
    except ModelError as e:
        raise PrepareError("%s: beta %r / input scale: %s"
                           % (op.label(), beta, e))
    real = quant.ldexp(prod, 31 - _SCALED_DIFF_INTEGER_BITS)
    if quant.cmp(real, (_INT32_MAX, 0)) > 0:
        real = (_INT32_MAX, 0)
    if quant.cmp(real, (1, 0)) <= 0:  # QuantizeMultiplierGreaterThanOne
        raise PrepareError("%s: beta * input scale %r * %r is too small"
                           % (op.label(), beta, in_scale))
    mult, shift = quant.quantize_multiplier(real)
    # -CalculateInputRadius(5, shift, 31): floor(31 * 2**26 / 2**shift).
    radius = (((1 << _SCALED_DIFF_INTEGER_BITS) - 1)
              << (31 - _SCALED_DIFF_INTEGER_BITS)) >> shift
    return mult, shift, -radius
