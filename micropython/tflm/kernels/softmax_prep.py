"""SOFTMAX: prepare and its exact integer tables (see softmax.py for the
semantics and the eval that invoke() runs). Construction only: imported
by softmax.prepare, and dropped once an interpreter is built
(interpreter.CONSTRUCTION).
"""

from array import array

from micropython import const

from . import check_int8
from ..errors import ModelError, PrepareError
from .softmax import _eval

_INT16 = const(7)
_INT8 = const(9)
_SOFTMAX_OPTIONS = const(9)
_SCALED_DIFF_INTEGER_BITS = const(5)
_ACCUM_INTEGER_BITS = const(12)
_ONE_OVER_256 = const(0x3B800000)  # float32 bits of 1 / 256
_SOFTMAX_BETA = const(0)
_FLOAT32 = const(0)


# gemmlowp fixed point, plain Python (prepare time only): gemmlowp.py.


def exp_on_negative_values(a):
    """gemmlowp exp_on_negative_values for a Q5.26 raw a <= 0; Q0.31 raw."""
    from .gemmlowp import exp_neg
    return exp_neg(a, _SCALED_DIFF_INTEGER_BITS)


def _tables(mult, shift, diff_min, ctx=None):
    """E[d], R[d] for d = max - x in 0..255 (256 int32 each, in the
    arena's persistent part when ctx is given: conv_util.persistent).
    In the sizing pass (ctx.sizing) only their space is asked for: the
    256 fixed-point exponentials cost a board tens of millions of
    instructions."""
    from .gemmlowp import rdbpot as _rdbpot, srdhm as _srdhm
    from . import conv_util
    sizing = getattr(ctx, "sizing", False)
    e_tab = conv_util.persistent(ctx, "i", 256, sizing)
    r_tab = conv_util.persistent(ctx, "i", 256, sizing)
    for d in range(0 if sizing else 256):
        if -d < diff_min:
            break
        # MultiplyByQuantizedMultiplierGreaterThanOne(-d, mult, shift);
        # d << shift stays below 31 * 2**26 when -d >= diff_min.
        e = exp_on_negative_values(_srdhm(-(d << shift), mult))
        e_tab[d] = e
        r_tab[d] = _rdbpot(e, _ACCUM_INTEGER_BITS)
    return e_tab, r_tab


def prepare(op, ins, outs, ctx):
    """Check an int8 SOFTMAX op and bind its eval.

    ins: [int8, rank >= 1]; outs: [int8 of the same shape, scale exactly
    1/256, zero point -128, or int16, scale 1/65536 within 0.1%, zero point
    -32768] (TFLM's checks); int16 inputs: softmax16_prep. Option: beta
    (float, > 0). Softmax runs over the last dimension. Raises
    PrepareError.
    """
    from .. import quant
    if ins and ins[0] is not None and ins[0].type == _FLOAT32:
        from . import float_ops
        return float_ops.prepare(op, ins, outs, ctx)
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    if x.type == _INT16:  # int16 -> int16 (declared in kernels._LAZY)
        from .softmax16_prep import prepare as prepare16
        return prepare16(op, ins, outs, ctx)
    wide = y.type == _INT16 and x.type == _INT8
    check_int8(op, (x,) if wide else (x, y), "int8, float32")
    # TFLM only DCHECKs that the shapes match (and computes garbage when
    # the ranks differ), so they must be equal.
    if not x.shape or tuple(x.shape) != tuple(y.shape):
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    if wide:
        # TF_LITE_ENSURE_NEAR(scale, 1.f / 65536, 0.001f / 65536): the
        # float32 difference is exact there; 0.001f is 0x83126F * 2**-33
        try:
            sc = quant.from_f32(y.scale)
        except ModelError:
            sc = (0, 0)
        near = sc[0] and abs((sc[0] << (sc[1] + 49)) - (1 << 33)) \
            <= 0x83126F if sc[1] + 49 >= 0 else False
        if y.zero_point != -32768 or not near:
            raise PrepareError("%s: int16 output %s must have scale 1/65536 "
                               "and zero point -32768" % (label, y.label()))
    else:
        try:
            one_over_256 = quant.from_f32(y.scale) == (0x800000, -31)
        except ModelError:
            one_over_256 = False
        if y.zero_point != -128 or not one_over_256:
            raise PrepareError("%s: output %s must have scale 1/256 and "
                               "zero point -128" % (label, y.label()))
    beta = (op.opt_float(_SOFTMAX_BETA, 0.0)
            if op.options_type == _SOFTMAX_OPTIONS else 0.0)
    from .gemmlowp import beta_multiplier
    mult, shift, diff_min = beta_multiplier(op, beta, x.scale)
    e_tab, r_tab = _tables(mult, shift, diff_min, ctx)
    depth = x.shape[-1]
    if wide and depth > 4095:
        # each exp term is at most 2**19: a longer row can overflow the
        # int32 sum (undefined in TFLM's C)
        raise PrepareError("%s: an int16 SOFTMAX over %d values can "
                           "overflow TFLM's int32 sum (at most 4095)"
                           % (label, depth))
    # Row state (thumb_softmax.py's SM_BLOCK): [sum, max, 48/17 and
    # -32/17 in Q2.29 (raw constants that viper cannot hold as
    # literals), 12 + 31 - output bits, the sum's cap: 2**28 for int8
    # (TFLM's exponent check aborts beyond), none for int16 (its exponent
    # stays in range); the row's offset, depth, the chunk's length].
    st = array("i", [0, 0, 1515870810, -1010580540, 27 if wide else 35,
                     0x7FFFFFFF if wide else 0x10000000, 0, depth, 0])
    m = array("i", [0])
    s = array("i", [0])
    from ..heap import keep
    qp = keep(ctx, array("i", [-32768, -32768, 32767] if wide
                         else [-128, -128, 127]))
    # in the order of softmax._eval's state (softmax.ADDRESSES)
    state = (x.data, y.data, x.size // depth if depth else 0, depth,
             st, e_tab, r_tab, ctx.scratch, ctx.scratch_len, m, s, qp)
    if wide:  # int16 stores live with QUANTIZE's (declared in _LAZY)
        from .quantize import scale_i32, store_i16
        return _eval, state + (scale_i32, store_i16)
    return _eval, state + (None, None)
