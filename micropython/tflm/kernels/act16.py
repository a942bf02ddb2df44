"""LEAKY_RELU, int16 -> int16 (16x8 models), imported only for models
whose LEAKY_RELU operators have int16 tensors (kernels._LAZY).

Follows tensorflow/lite/micro/kernels/leaky_relu.cc, leaky_relu_common.cc
(CalculateOpDataLeakyRelu: the same multipliers for int8 and int16) and
reference/leaky_relu.h (QuantizeLeakyRelu<int16_t>), per element:

    v = x - zp_in
    out = zp_out + MultiplyByQuantizedMultiplier(v, m_id, s_id)  if v >= 0
    out = zp_out +/- MultiplyByQuantizedMultiplier(v, |m_a|, s_a)  else
    clamped to int16

with m_id = QuantizeMultiplier(in_scale / out_scale) and m_a that of
in_scale * alpha / out_scale (negative alpha: the magnitude, the result
negated), computed as activations.py does for int8 (_ratio,
_alpha_multiplier; a shift above 30 is refused: check_shift). TFLM puts
no condition on the zero points. An int16 input has 65536 values, so
eval computes each element (viper, the multiply in 16-bit limbs as
mul._mul_flat, x << shift wrapped to int32 as C does) instead of a table.
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from ..heap import keep
from .activations import _alpha_multiplier, _ratio, check_shift

_INT16 = const(7)
_LEAKY_RELU_OPTIONS = const(75)
_LEAKY_RELU_ALPHA = const(0)


def prepare(op, ins, outs, ctx):
    """Check an int16 LEAKY_RELU op and bind its eval.

    ins: [int16]; outs: [int16, as many elements]; per-tensor scales,
    option alpha (float). Raises PrepareError (types, shapes, missing
    quantization, a multiplier shift above 30, a NaN / infinite alpha).
    """
    from .. import quant
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    if y.type != _INT16:
        raise PrepareError("%s: input %s is int16 but output %s is %s"
                           % (label, x.label(), y.label(), y.dtype))
    if x.size != y.size:
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    for t in (x, y):
        if not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
    alpha = op.opt_float(_LEAKY_RELU_ALPHA, 0.0) \
        if op.options_type == _LEAKY_RELU_OPTIONS else 0.0
    try:
        mi, si = _ratio(x.scale, y.scale)
        neg = 1 if alpha < 0 else 0
        ma, sa = _alpha_multiplier(x.scale, quant.from_f32(abs(alpha)),
                                   y.scale, neg)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    check_shift(op, si, x, y)
    check_shift(op, sa, x, y)
    # ma = INT32_MIN (a negative multiplier that rounds to -2**31):
    # SaturatingRoundingDoublingHighMul(v, INT32_MIN) is -v (flag sp)
    sp = 1 if ma < 0 else 0
    prm = array("i", [x.size, x.zero_point, y.zero_point, mi, si,
                      0 if sp else ma, sa, neg, sp])
    return _eval, (x.data, y.data, keep(ctx, prm))


def _eval(state):
    x, y, prm = state
    _leaky16(x, y, prm)


@micropython.viper
def _leaky16(x, y, prm):
    """int16 y[i] = QuantizeLeakyRelu of int16 x[i] for i < prm[0], with
    prm = [n, zp_in, zp_out, m_id, s_id, |m_a|, s_a, neg, sp] (see
    prepare); byte pairs, any alignment; same bits on 32- and 64-bit
    ports."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(prm)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    R: int = one << 30
    end: int = 2 * q[0]
    zi: int = (q[1] ^ S) - S
    zo: int = (q[2] ^ S) - S
    neg: int = q[7]
    sp: int = q[8]
    j: int = 0
    while j < end:
        v: int = (((px[j] | (px[j + 1] << 8)) ^ 0x8000) - 0x8000) - zi
        alpha: int = 0
        if v < 0:
            alpha = 1
        m: int = q[3 + 2 * alpha]
        sh: int = (q[4 + 2 * alpha] ^ S) - S
        e: int = 0
        if sh > 0:
            v = v << sh  # wrapped to int32, as C computes v * (1 << sh)
            v = ((((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (v & 0xFFFF))
        else:
            e = 0 - sh
        if alpha and sp:
            if v == 0 - S:  # INT32_MIN saturates
                v = S - 1
            else:
                v = 0 - v
        else:
            # SaturatingRoundingDoublingHighMul(v, m), 0 <= m < 2**31
            mh: int = m >> 16
            ml: int = m & 0xFFFF
            xh: int = v >> 16
            xl: int = v & 0xFFFF
            t: int = (xl & 0xFF) * ml + R
            t = (xl >> 8) * ml + (t >> 8)
            hb: int = xh * ml
            hc: int = xl * mh
            t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
            v = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        # RoundingDivideByPOT(v, e)
        mask: int = (one << e) - 1
        if (v & mask) > (mask >> 1) - (v >> 31):
            v = (v >> e) + 1
        else:
            v = v >> e
        if alpha and neg:
            v = zo - v
        else:
            v = zo + v
        if v < -32768 or v > 32767:
            v = ((v + S) & M) - S  # C's int32 wrap of the sum (64-bit)
            if v < -32768:
                v = -32768
            elif v > 32767:
                v = 32767
        py[j] = v
        py[j + 1] = v >> 8
        j += 2
