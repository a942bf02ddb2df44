"""SQUARED_DIFFERENCE: int8, float32 and int32 (binary_i32.py), with
NumPy-style broadcasting.

Follows tensorflow/lite/micro/kernels/squared_difference.cc
(PrepareQuantized with left_shift 7, SquaredDifference<int8_t>). Per
element, with MBQM = MultiplyByQuantizedMultiplier:

    a = MBQM((x1 - zp1) << 7, m1, s1)       b = MBQM((x2 - zp2) << 7, m2, s2)
    out = clamp(MBQM((a - b) * (a - b), mo, so) + out_zp, -128, 127)

twice_max = 2.0 * (double)max(s1, s2); m1, m2 = QuantizeMultiplierSmaller-
ThanOneExp(s / twice_max); mo = QuantizeMultiplier(twice_max * twice_max
/ (double)((1 << 14) * out_scale)), the last product in float32 (exact:
a power of two). All in quant's integer double arithmetic. |a - b| < 2**15,
so the square fits int32 (and any viper int).

Outputs of at least add.LUT_MIN elements take _sqdiff_lut: a and b depend
only on the input byte, so eval first tabulates them for all 256 bytes
(in the shared work array, as ADD does), then one pass does two lookups,
the square, the requantization and the store (add.bind_lut: directly on
the inputs, or on broadcast chunks). Smaller ones walk the output in
chunks (broadcast.gather) and requantize each step in a pass of its own.

float32: d = x1 - x2; out = d * d (SquaredDifference<float>, no clamp),
each rounded to float32: float_ops' SUB writes d into the output (its
clamp to +-FLT_MAX cannot change the result: FLT_MAX**2 is inf too), then
f32.vec squares it in place, fl(-0.0 + fl(d * d)).
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from ..fixedpoint import requant_i8b
from .rescale import scale_i32
from . import add, broadcast

_FLOAT32 = const(0)
_INT32 = const(2)
_SUB = const(41)

_LEFT_SHIFT = const(7)


def _multipliers(op, x1, x2, y):
    """((m1, s1), (m2, s2), (mo, so)) as array('i') pairs."""
    from .. import quant
    f1, f2, fo = (quant.from_f32(x1.scale), quant.from_f32(x2.scale),
                  quant.from_f32(y.scale))
    twice_max = quant.ldexp(f1 if quant.cmp(f1, f2) >= 0 else f2, 1)
    den = quant.ldexp(fo, 2 * _LEFT_SHIFT)
    if not den[0] or not twice_max[0]:
        raise ModelError("zero scale")
    if quant.bitlen(den[0]) + den[1] > 128:
        raise ModelError("float32 overflow of (1 << 14) * output scale")
    mo, so = quant.quantize_multiplier(
        quant.div(quant.mul(twice_max, twice_max), den))
    if so > 30:
        raise PrepareError("%s: output multiplier shift %d is too large"
                           % (op.label(), so))
    return (add.smaller_than_one(op, "input 1", quant.div(f1, twice_max)),
            add.smaller_than_one(op, "input 2", quant.div(f2, twice_max)),
            (array("i", [mo]), array("i", [so])))


def prepare(op, ins, outs, ctx):
    """Check a SQUARED_DIFFERENCE op and bind its eval.

    ins: two int8 tensors (int8 zero points) whose shapes broadcast to the
    int8 output's; or all three tensors float32, or int32 (binary_i32).
    Raises PrepareError for other types and shapes, and where TFLM's
    multipliers would abort or overflow.
    """
    t = ins[0].type if ins and ins[0] is not None else None
    if t == _FLOAT32:
        return _prepare_float(op, ins, outs, ctx)
    if t == _INT32:
        from . import binary_i32
        return binary_i32.prepare(op, ins, outs, ctx)
    return _prepare_int8(op, ins, outs, ctx)


def _prepare_int8(op, ins, outs, ctx):
    from . import broadcast_prep as bp
    from .conv_util import keep, scratch_halves
    x1, x2, y = bp.int8_io(op, ins, outs,
                          "int8, int32, float32")
    bc = bp.check(op, x1, x2, y)
    try:
        q1, q2, qo = _multipliers(op, x1, x2, y)
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    if y.size >= add.LUT_MIN:
        head = [y.size, -x1.zero_point, -x2.zero_point, q1[0][0], q1[1][0],
                q2[0][0], q2[1][0], qo[0][0], qo[1][0], y.zero_point, -128,
                127, 0]
        return add.bind_lut(_eval_lut, _sqdiff_lut, x1, x2, y, ctx, bc,
                            head, 7)
    st = bp.walker(x1, x2, y, bc, -x1.zero_point, -x2.zero_point,
                   _LEFT_SHIFT)
    sa, sb, half = scratch_halves(ctx)
    return _eval, (x1.data, x2.data, y.data, y.size, ctx.scratch, sb, half,
                   keep(ctx, st), q1[0], q1[1], q2[0], q2[1], qo[0], qo[1],
                   keep(ctx, array("i", [y.zero_point, -128, 127])))


def _eval(state):
    (d1, d2, yd, total, sa, sb, half, st, m1, s1, m2, s2, mo, so,
     qp) = state
    broadcast.reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, st)
        scale_i32(sa, n, m1, s1, 0)
        scale_i32(sb, n, m2, s2, 0)
        _square_diff(sa, sb, n)
        requant_i8b(0, 0, 0, sa, n, 1, mo, so, qp, yd, off, 1)
        off += n


@micropython.viper
def _square_diff(a, b, n: int):
    """a[i] = (a[i] - b[i]) ** 2 for i < n (|a[i] - b[i]| < 2**15)."""
    pa = ptr32(a)
    pb = ptr32(b)
    one: int = 1
    S: int = one << 31
    i: int = 0
    while i < n:
        d: int = ((pa[i] ^ S) - S) - ((pb[i] ^ S) - S)
        pa[i] = d * d
        i += 1


def _eval_lut(state):
    """add.bind_lut's one-pass step: the state is _sqdiff_lut's st."""
    _sqdiff_lut(0, 0, 0, state)


# _eval_lut's state slots that _sqdiff_lut only casts to pointers (see
# add.ADDRESSES)
ADDRESSES = (0, 1, 2, 3, 4, 5)


@micropython.viper
def _sqdiff_lut(x: int, i: int, t: int, st):
    """tab[q] = MBQM((int8(q) - zp1) << 7, m1, s1), tab[256 + q] = the same
    for input 2 (shifts <= 0), then out[i] = clamp(MBQM(d * d, mo, so) +
    zp, -128, 127) with d = tab[x1[i * a]] - tab[256 + x2[i * b]], into
    out[off + i] for i < n. st = (x1, x2, out, prm, tables, ...); prm = [n,
    -zp1, -zp2, m1, s1, m2, s2, mo, so, zp, -128, 127, 0, a, b, off,
    built], as add._add_lut's (see add.bind_lut). MBQM as
    fixedpoint.requant_i8b (16-bit limbs; x << so wrapped to int32): same
    bits on 32- and 64-bit ports. x, i, t are the hot locals; callers
    pass 0.
    """
    p1 = ptr8(st[0])
    p2 = ptr8(st[1])
    po = ptr8(st[2])
    q = ptr32(st[3])
    tab = ptr32(st[4])
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    R: int = one << 30
    add.fill_tables(st[3], st[4], 7)  # |x| < 2**15 before MBQM
    n: int = q[0]
    m = q[7]
    mh = m >> 16
    ml = m & 0xFFFF
    sh: int = (q[8] ^ S) - S
    ls: int = 0
    e = 0
    if sh > 0:
        ls = sh
    else:
        e = 0 - sh
    mask = (one << e) - 1
    half: int = mask >> 1
    zp: int = (q[9] ^ S) - S
    sa: int = q[13]
    sb: int = q[14]
    k1: int = 0
    k2: int = 0
    off: int = q[15]
    i = 0
    while i < n:
        x = ((tab[p1[k1]] ^ S) - S) - ((tab[256 + p2[k2]] ^ S) - S)
        k1 += sa
        k2 += sb
        x = x * x  # below 2**30
        if ls:
            x = x << ls  # wrapped to int32, as C computes x * (1 << ls)
            x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (x & 0xFFFF))
        xh = x >> 16
        xl = x & 0xFFFF
        t = (xl & 0xFF) * ml + R
        t = (xl >> 8) * ml + (t >> 8)
        hb = xh * ml
        hc = xl * mh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        t = x & mask
        if t > half - (x >> 31):
            x = (x >> e) + 1
        else:
            x = x >> e
        x += zp
        if x < -128 or x > 127:
            x = ((x + S) & M) - S  # C's int32 wrap of the sum (64-bit)
            if x < -128:
                x = -128
            else:
                x = 127
        po[off + i] = x
        i += 1


def _prepare_float(op, ins, outs, ctx):
    """float32: a SUB into the output, then an in-place square."""
    from . import broadcast_prep as bp
    from . import f32, float_ops
    x1, x2, y = bp.binary_io(op, ins, outs)
    bp.check(op, x1, x2, y)
    from ..model import Operator  # construction only (PARSE)
    sub = Operator()  # made by hand: no options, so no activation
    sub.index, sub.name, sub.code = op.index, op.name, _SUB
    sub_eval, sub_state = float_ops.prepare(sub, ins, outs, ctx)
    p = f32.slots(f32.VEC_SLOTS)
    p[1] = p[3] = 1  # strides of a and b (both d); c is the constant -0.0
    p[7] = y.size
    sq = (p, f32.consts(f32.NEG_INF, f32.INF), y.data,
          f32.consts(f32.NEG_ZERO))
    return _eval_float, (sub_eval, sub_state, f32.vec, sq)


def _eval_float(state):
    sub_eval, sub_state, vec, (p, q, d, neg_zero) = state
    sub_eval(sub_state)
    vec(p, q, d, d, neg_zero, d)
