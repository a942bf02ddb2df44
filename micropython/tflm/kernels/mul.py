"""MUL: int8 with NumPy-style broadcasting; float32 via float_ops, int32
via binary_i32, int16 via mul16.

Follows tensorflow/lite/micro/kernels/mul.cc, mul_common.cc
(CalculateOpDataMul) and reference/integer_ops/mul.h (MulElementwise,
BroadcastMul6DSlow). Per element:

    out = clamp(MultiplyByQuantizedMultiplier((x1 - zp1) * (x2 - zp2),
                                              m, shift) + out_zp, lo, hi)

with QuantizeMultiplier((double)s1 * (double)s2 / (double)out_scale)
(quant.conv_multiplier: the same double arithmetic in integers) and the
fused activation's range. |product| <= 255 * 255 fits any viper int;
fixedpoint.requant_i8b wraps x << shift to int32 as the C code does.
Equal shapes (and broadcasts that are one loop, e.g. times a scalar) run
in one fused viper pass (_mul_flat); other broadcasts walk the output in
chunks of half the shared scratch array (broadcast.gather), multiply,
requantize and store.
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from ..fixedpoint import requant_i8b
from . import broadcast

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)

_MUL_OPTIONS = const(21)
_MUL_FUSED_ACTIVATION_FUNCTION = const(0)


def prepare(op, ins, outs, ctx):
    """Check a MUL op and bind its eval.

    float32: float_ops; int32: binary_i32; int16: mul16. int8: two int8
    inputs (int8 zero points) whose shapes broadcast to the int8 output's;
    MulOptions fused activation. Raises PrepareError for other types, bad
    shapes, or a multiplier shift above 30 (x * (1 << shift) would
    overflow in TFLM).
    """
    act = (op.opt_byte(_MUL_FUSED_ACTIVATION_FUNCTION, 0)
           if op.options_type == _MUL_OPTIONS else 0)
    t = ins[0].type if ins and ins[0] is not None else None
    if t == _FLOAT32:
        from . import float_ops
        return float_ops.prepare(op, ins, outs, ctx)
    if t == _INT32:
        from . import binary_i32
        return binary_i32.prepare(op, ins, outs, ctx, act)
    if t == _INT16:
        from . import mul16
        return mul16.prepare(op, ins, outs, ctx, act)
    return _prepare_int8(op, ins, outs, ctx, act)


def _prepare_int8(op, ins, outs, ctx, act):
    from . import broadcast_prep as bp
    from .conv_util import keep, scratch_halves
    from .. import quant
    x1, x2, y = bp.int8_io(op, ins, outs,
                          "int8, int16, int32, float32")
    bc = bp.check(op, x1, x2, y)
    lo, hi = bp.activation_range(op, act, y)
    try:
        m, s = quant.conv_multiplier(x1.scale, x2.scale, y.scale)
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    if s > 30:
        raise PrepareError("%s: output multiplier shift %d is too large "
                           "(scales %r * %r / %r)" % (op.label(), s, x1.scale,
                                                      x2.scale, y.scale))
    lps = bp.loops(x1.shape, x2.shape, y.shape) if bc else None
    if lps is None or len(lps) == 1:
        # equal shapes, or one loop with strides 0 / 1: one fused pass
        a, b = (1, 1) if lps is None else (lps[0][1], lps[0][2])
        prm = array("i", [y.size, -x1.zero_point, -x2.zero_point, m, s,
                          y.zero_point, lo, hi, a, b])
        return _eval_flat, (x1.data, x2.data, y.data, keep(ctx, prm))
    st = bp.walker(x1, x2, y, bc, -x1.zero_point, -x2.zero_point)
    sa, sb, half = scratch_halves(ctx)
    return _eval, (x1.data, x2.data, y.data, y.size, ctx.scratch, sb, half,
                   keep(ctx, st), keep(ctx, array("i", [m])),
                   keep(ctx, array("i", [s])),
                   keep(ctx, array("i", [y.zero_point, lo, hi])))


def _eval(state):
    d1, d2, yd, total, sa, sb, half, st, mult, shift, qp = state
    broadcast.reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, st)
        _mul_into(sa, sb, n)
        requant_i8b(0, 0, 0, sa, n, 1, mult, shift, qp, yd, off, 1)
        off += n


@micropython.viper
def _mul_into(a, b, n: int):
    """a[i] *= b[i] for i < n (|a|, |b| <= 255: no overflow)."""
    pa = ptr32(a)
    pb = ptr32(b)
    i: int = 0
    while i < n:
        pa[i] = pa[i] * pb[i]
        i += 1


def _eval_flat(state):
    _mul_flat(0, 0, 0, state)


@micropython.viper
def _mul_flat(x: int, i: int, t: int, st):
    """out[i] = clamp(MBQM((x1[i * a] - zp1) * (x2[i * b] - zp2), m, sh)
    + zp) for i < n, with st = (x1, x2, out, prm) and prm = [n, -zp1,
    -zp2, m, sh, zp, lo, hi, a, b] (a, b: input strides, 0 or 1).
    MBQM as fixedpoint.requant_i8b (x << sh wrapped to int32, then
    16-bit limbs): same bits on 32- and 64-bit ports. x, i, t are the
    hot locals; callers pass 0.
    """
    p1 = ptr8(st[0])
    p2 = ptr8(st[1])
    po = ptr8(st[2])
    q = ptr32(st[3])
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    R: int = one << 30
    n: int = q[0]
    z1: int = (q[1] ^ S) - S
    z2: int = (q[2] ^ S) - S
    m: int = q[3]
    mh: int = m >> 16
    ml: int = m & 0xFFFF
    sh: int = (q[4] ^ S) - S
    ls: int = 0
    e: int = 0
    if sh > 0:
        ls = sh
    else:
        e = 0 - sh
    mask: int = (one << e) - 1
    half: int = mask >> 1
    zp: int = (q[5] ^ S) - S
    lo: int = (q[6] ^ S) - S
    hi: int = (q[7] ^ S) - S
    sa: int = q[8]
    sb: int = q[9]
    j1: int = 0
    j2: int = 0
    while i < n:
        x = ((((p1[j1] ^ 0x80) - 0x80) + z1)
             * (((p2[j2] ^ 0x80) - 0x80) + z2))
        j1 += sa
        j2 += sb
        if ls:
            x = x << ls  # wrapped to int32, as C computes x * (1 << ls)
            x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (x & 0xFFFF))
        xh: int = x >> 16
        xl: int = x & 0xFFFF
        t = (xl & 0xFF) * ml + R
        t = (xl >> 8) * ml + (t >> 8)
        hb: int = xh * ml
        hc: int = xl * mh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        t = x & mask
        if t > half - (x >> 31):
            x = (x >> e) + 1
        else:
            x = x >> e
        x += zp
        if x < lo or x > hi:
            x = ((x + S) & M) - S  # C's int32 wrap of the sum (64-bit)
            if x < lo:
                x = lo
            else:
                x = hi
        po[i] = x
        i += 1
