"""MUL, int16 -> int16 (16x8 models), with NumPy-style broadcasting (rank
up to 6), imported only for models whose MUL operators have int16
tensors (kernels._LAZY).

Follows tensorflow/lite/micro/kernels/mul.cc, mul_common.cc
(CalculateOpDataMul, EvalMulQuantizedReference for kTfLiteInt16: input
and output zero points must be 0) and reference/integer_ops/mul.h
(MulElementwise<int16_t, int16_t>, BroadcastMul6DSlow), per element:

    out = clamp(MultiplyByQuantizedMultiplier(x1 * x2, m, shift), lo, hi)

with QuantizeMultiplier((double)s1 * (double)s2 / (double)out_scale)
(quant.conv_multiplier) and the fused activation's int16 range. |x1 *
x2| <= 2**30; a shift above 30 is refused, as for int8 (mul.py). Eval
gathers chunks of both inputs (broadcast.gather, int16 elements read
byte by byte) into the halves of the shared scratch array, then one viper
pass multiplies, requantizes (16-bit limbs, x << shift wrapped to int32
as C does: mul._mul_flat's arithmetic), clamps and stores.
"""

import micropython

from ..errors import ModelError, PrepareError
from ..heap import keep
from . import broadcast


def prepare(op, ins, outs, ctx, act):
    """Check an int16 MUL op (fused activation act) and bind its eval.

    ins: two int16 tensors whose shapes broadcast to the int16 output's;
    every zero point 0 and one scale per tensor. Raises PrepareError.
    """
    from . import broadcast_prep as bp
    from array import array
    from .conv_util import scratch_halves
    from .. import quant
    x1, x2, y = bp.binary_io(op, ins, outs)
    for t in (x1, x2, y):
        if len(t.scales) != 1 or t.zero_point:
            raise PrepareError("%s: int16 %s needs one scale and zero "
                               "point 0" % (op.label(), t.label()))
    bc = bp.check(op, x1, x2, y)
    lo, hi = bp.activation_range(op, act, y, -32768, 32767)
    try:
        m, s = quant.conv_multiplier(x1.scale, x2.scale, y.scale)
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    if s > 30:
        raise PrepareError("%s: output multiplier shift %d is too large "
                           "(scales %r * %r / %r)" % (op.label(), s, x1.scale,
                                                      x2.scale, y.scale))
    st = bp.walker(x1, x2, y, bc, 0, 0, 0, 2)
    sa, sb, half = scratch_halves(ctx)
    return _eval, (x1.data, x2.data, y.data, y.size, sa, sb, half,
                   keep(ctx, st), keep(ctx, array("i", [m, s, lo, hi])))


def _eval(state):
    d1, d2, yd, total, sa, sb, half, st, prm = state
    broadcast.reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, st)
        _mul16(sa, sb, n, yd, off, prm)
        off += n


@micropython.viper
def _mul16(a, b, n: int, out, off: int, prm):
    """The int16 out[off + i] = clamp(MultiplyByQuantizedMultiplier(a[i] *
    b[i], m, sh), lo, hi) for i < n, prm = [m, sh, lo, hi]; a, b: int32
    (|a[i] * b[i]| <= 2**30); byte pairs, any alignment."""
    pa = ptr32(a)
    pb = ptr32(b)
    po = ptr8(out)
    q = ptr32(prm)
    one: int = 1
    S: int = one << 31
    R: int = one << 30
    m: int = q[0]
    mh: int = m >> 16
    ml: int = m & 0xFFFF
    sh: int = (q[1] ^ S) - S
    ls: int = 0
    e: int = 0
    if sh > 0:
        ls = sh
    else:
        e = 0 - sh
    mask: int = (one << e) - 1
    half: int = mask >> 1
    lo: int = (q[2] ^ S) - S
    hi: int = (q[3] ^ S) - S
    i: int = 0
    j: int = 2 * off
    while i < n:
        x: int = ((pa[i] ^ S) - S) * ((pb[i] ^ S) - S)
        if ls:
            x = x << ls  # wrapped to int32, as C computes x * (1 << ls)
            x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (x & 0xFFFF))
        xh: int = x >> 16
        xl: int = x & 0xFFFF
        t: int = (xl & 0xFF) * ml + R
        t = (xl >> 8) * ml + (t >> 8)
        hb: int = xh * ml
        hc: int = xl * mh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        if (x & mask) > half - (x >> 31):
            x = (x >> e) + 1
        else:
            x = x >> e
        if x < lo:
            x = lo
        elif x > hi:
            x = hi
        po[j] = x
        po[j + 1] = x >> 8
        i += 1
        j += 2
