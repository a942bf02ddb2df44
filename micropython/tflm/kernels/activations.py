"""int8 RELU, RELU6 and LEAKY_RELU as 256-entry lookup tables.

Each output byte depends only on the input byte: prepare tabulates TFLM's
integer arithmetic for all 256 inputs and eval is lut.lookup.

RELU follows micro/kernels/activations_common.cc (CalculateReluOpData) and
activations.h (ReluQuantized): out = clamp(zp_out + MBQM(x - zp_in, m, s),
zp_out, 127) with (m, s) = QuantizeMultiplier(in_scale / out_scale).
RELU6 follows Relu6Prepare / Relu6Quantized: the input is clamped to
[zp_in, six], six = clamp(round(6.0f / in_scale) + zp_in) (the output's
quantization is not read). LEAKY_RELU follows leaky_relu_common.cc and
reference/leaky_relu.h (QuantizeLeakyRelu): x - zp_in >= 0 uses the
identity multiplier in_scale / out_scale, below zero the alpha multiplier
in_scale * alpha / out_scale (negative alpha: the multiplier's magnitude,
result negated). float32 RELU / RELU6 run in float_ops.py, int16
LEAKY_RELU in act16.py.
"""

from micropython import const

from ..errors import ModelError, PrepareError
from . import lut

_FLOAT32 = const(0)
_INT16 = const(7)
_LEAKY_RELU = const(98)
_RELU = const(19)
_RELU6 = const(21)

_LEAKY_RELU_OPTIONS = const(75)
_LEAKY_RELU_ALPHA = const(0)


def _table(fn):
    t = bytearray(256)
    for q in range(-128, 128):
        v = fn(q)
        t[q & 0xFF] = (-128 if v < -128 else 127 if v > 127 else v) & 0xFF
    return t


def check_shift(op, shift, x, y):
    """Raise PrepareError for a multiplier shift above 30: TFLM's
    MultiplyByQuantizedMultiplier computes x * (1 << shift) in int32, which
    is undefined from shift 31 on (x86 masks the shift count, Arm does
    not: the two builds disagree). Only scale ratios of 2**30 or more get
    there."""
    if shift > 30:
        raise PrepareError("%s: multiplier shift %d is too large (input %s "
                           "scale %r, output %s scale %r)" % (
                               op.label(), shift, x.label(), x.scale,
                               y.label(), y.scale))


def _ratio(a, b):
    """(multiplier, shift) of QuantizeMultiplier(a / b) for scales a, b.
    The source divides in float32; the TFLM build we test against (PyPI
    tflite-micro) gives the double quotient's multiplier."""
    from .. import quant
    return quant.quantize_multiplier(quant.div(quant.from_f32(a),
                                               quant.from_f32(b)))


def prepare(op, ins, outs, ctx):
    """Check an int8 RELU / RELU6 / LEAKY_RELU op, build its table and
    bind its eval.

    ins: [int8]; outs: [int8, as many elements]. LEAKY_RELU option:
    alpha (float). float32 RELU / RELU6 run in float_ops, int16
    LEAKY_RELU in act16. Raises
    PrepareError (types, shapes, zero output scale, scale ratios whose
    TFLM arithmetic overflows int32: see check_shift and _six).
    """
    from .lut_math import mbqm_ref  # (gemmlowp's)
    code = op.code
    t = ins[0].type if ins and ins[0] is not None else None
    if code == _LEAKY_RELU and t == _INT16:
        from . import act16
        return act16.prepare(op, ins, outs, ctx)
    if code in (_RELU, _RELU6) and t == _FLOAT32:
        from . import float_ops
        return float_ops.prepare(op, ins, outs, ctx)
    x, y = lut.unary_io(op, ins, outs, "int8, int16" if code == _LEAKY_RELU
                        else "int8 and float32")
    zi, zo = x.zero_point, y.zero_point
    try:
        if code == _RELU6:
            six = _six(op, x, zi)
            table = _table(lambda q: six if q > six else zi if q < zi else q)
        elif code == _RELU:
            m, s = _ratio(x.scale, y.scale)
            check_shift(op, s, x, y)
            table = _table(lambda q: max(zo, zo + mbqm_ref(q - zi, m, s)))
        elif code == _LEAKY_RELU:
            alpha = op.opt_float(_LEAKY_RELU_ALPHA, 0.0) \
                if op.options_type == _LEAKY_RELU_OPTIONS else 0.0
            table = _leaky_table(op, x, y, alpha)
        else:
            raise PrepareError("%s: not an activation op" % op.label())
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    return lut.bind(ctx, table, x, y)


def _six(op, x, zp):
    """FloatToQuantizedType<int8_t>(6.0f, scale, zp): round(6.0f / scale)
    (float32 quotient, halves away from zero) + zp, clamped to int8.
    Raises PrepareError when round(6.0f / scale) + zp does not fit int32
    (input scale below about 2.8e-9): TFLM's conversion to int32_t is
    then undefined (x86 gives INT32_MIN, Arm saturates)."""
    from .lut_math import f32_div
    from .. import quant
    m, e = f32_div((3, 1), quant.from_f32(x.scale))
    if e >= 0:
        r = m << e
    else:
        r = (m + (1 << (-e - 1))) >> -e
    r += zp
    # near 2**31 the float sum may round up: keep a float32 ulp of margin
    if r >= (1 << 31) - 128:
        raise PrepareError("%s: 6 / input %s scale %r overflows int32"
                           % (op.label(), x.label(), x.scale))
    return -128 if r < -128 else 127 if r > 127 else r


def _alpha_multiplier(in_scale, alpha, out_scale, neg):
    """QuantizeMultiplier(input_scale * alpha / output_scale) as
    (|multiplier|, shift); alpha = (m, e) is |alpha|, neg its sign. The
    source computes in float32, the TFLM build under test in double (as
    for RELU). A negative value gives the same shift and the negated
    multiplier, except that a q rounding to -2**31 is kept as is (TFLM
    halves only +2**31): the multiplier is then INT32_MIN, whose negation
    in QuantizeLeakyRelu wraps back to INT32_MIN."""
    from .. import quant
    d = quant.div(quant.mul(quant.from_f32(in_scale), alpha),
                  quant.from_f32(out_scale))
    m, e = d
    if not m:
        return 0, 0
    n = quant.bitlen(m)
    if neg and n > 31 and (m + (1 << (n - 32))) >> (n - 31) == 1 << 31:
        return (-(1 << 31), e + n) if e + n >= -31 else (0, 0)
    return quant.quantize_multiplier(d)


def _leaky_table(op, x, y, alpha):
    """QuantizeLeakyRelu for every input byte. Raises PrepareError for a
    multiplier shift above 30 (check_shift)."""
    from .lut_math import f32_bits, mbqm_ref
    zi, zo = x.zero_point, y.zero_point
    mi, si = _ratio(x.scale, y.scale)
    neg, a = f32_bits(alpha)
    ma, sa = _alpha_multiplier(x.scale, a, y.scale, neg)
    check_shift(op, si, x, y)
    check_shift(op, sa, x, y)

    def f(q):
        v = q - zi
        if v >= 0:
            return zo + mbqm_ref(v, mi, si)
        r = mbqm_ref(v, ma, sa)
        return zo - r if neg else zo + r
    return _table(f)
