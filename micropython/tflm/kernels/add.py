"""ADD, int8, with NumPy-style broadcasting (any rank up to 8).

Follows tensorflow/lite/micro/kernels/add.cc, add_common.cc
(CalculateOpDataAdd), tensorflow/lite/kernels/internal/reference/
integer_ops/add.h (AddFunc) and reference/broadcast_loop.h
(BroadcastBinaryOpSimple). Per element:

    a = MultiplyByQuantizedMultiplierSmallerThanOneExp(
            (x1 - zp1) * 2**20, m1, s1)
    b = (same for x2 with m2, s2)
    out = clamp(MultiplyByQuantizedMultiplierSmallerThanOneExp(a + b, mo, so)
                + out_zp)

with twice_max = 2 * max(scale1, scale2) and the double multipliers
scale1 / twice_max, scale2 / twice_max and twice_max / (2**20 * out_scale),
reproduced exactly by quant's integer double arithmetic. Eval gathers chunks
of both operands into the two halves of the shared scratch array and
requantizes them with fixedpoint.scale_i32 (MultiplyByQuantizedMultiplier
with a shift <= 0 is exactly the SmallerThanOneExp variant).

Inputs of equal shape with at least LUT_MIN elements take a faster path
(_add_lut): a and b depend only on the input byte, so each eval first
tabulates them for all 256 bytes (in the interpreter's shared work
array, conv_util.work_buffer), then one loop does two table lookups, the
output requantization and the store per element. Same integers, so the
same bits.
"""

from array import array

import micropython

from .. import quant, schema
from ..errors import ModelError, PrepareError
from ..fixedpoint import scale_i32, store_i8
from .conv_util import work_buffer

ADD_OPTIONS = 11
LEFT_SHIFT = 20
# Element count from which equal-shape ADDs use the lookup-table path:
# filling the tables costs about as much as 170 elements of the other.
LUT_MIN = 256


def _smaller_than_one(op, what, d):
    """QuantizeMultiplierSmallerThanOneExp: TFLM aborts unless 0 < d < 1."""
    if not d[0] or quant.cmp(d, (1, 0)) >= 0:
        raise PrepareError("%s: %s multiplier must be in (0, 1)"
                           % (op.label(), what))
    m, s = quant.quantize_multiplier(d)
    return array("i", [m]), array("i", [s])


def _multipliers(op, x1, x2, y):
    """The three (mults, shifts) array pairs of CalculateOpDataAdd."""
    f1, f2, fo = (quant.from_f32(x1.scale), quant.from_f32(x2.scale),
                  quant.from_f32(y.scale))
    twice_max = quant.ldexp(f1 if quant.cmp(f1, f2) >= 0 else f2, 1)
    out_den = quant.ldexp(fo, LEFT_SHIFT)
    if not out_den[0]:
        raise ModelError("output scale is zero")
    return (_smaller_than_one(op, "input 1", quant.div(f1, twice_max)),
            _smaller_than_one(op, "input 2", quant.div(f2, twice_max)),
            _smaller_than_one(op, "output", quant.div(twice_max, out_den)))


def _can_fuse(out_dim, stride, expected, inner_stride):
    """broadcast_loop.h CanFuseLoops: can this dimension extend the loop
    inside it?"""
    if out_dim == 1:
        return True
    if inner_stride == 0:
        return stride == 0
    return stride == expected


def _loops(s1, s2, so):
    """Fused broadcast loops, innermost first: a list of
    [size, stride1, stride2], as BroadcastBinaryOpSimple builds them
    (a stride is 0 where that input is broadcast)."""
    n = max(len(s1), len(s2), len(so))
    e1 = [1] * (n - len(s1)) + list(s1)
    e2 = [1] * (n - len(s2)) + list(s2)
    eo = [1] * (n - len(so)) + list(so)
    loops = []
    a_acc = b_acc = 1
    for i in range(n - 1, -1, -1):
        d1, d2, do = e1[i], e2[i], eo[i]
        a = 0 if d1 == 1 and do != 1 else a_acc
        b = 0 if d2 == 1 and do != 1 else b_acc
        if (loops and _can_fuse(do, a, a_acc, loops[-1][1])
                and _can_fuse(do, b, b_acc, loops[-1][2])):
            loops[-1][0] *= do
        else:
            loops.append([do, a, b])
        a_acc *= d1
        b_acc *= d2
    return loops or [[1, 0, 0]]


def _check_shapes(op, x1, x2, y):
    """Inputs must broadcast (NumPy rules) to the output's shape; equal
    input shapes only need the output's element count."""
    n = max(len(x1.shape), len(x2.shape), len(y.shape))
    e1 = [1] * (n - len(x1.shape)) + list(x1.shape)
    e2 = [1] * (n - len(x2.shape)) + list(x2.shape)
    eo = [1] * (n - len(y.shape)) + list(y.shape)
    if e1 == e2 and x1.size == y.size:
        return False
    for a, b, o in zip(e1, e2, eo):
        if (a != b and a != 1 and b != 1) or o != (b if a == 1 else a):
            raise PrepareError("%s: inputs %s %s and %s %s do not "
                               "broadcast to output %s %s"
                               % (op.label(), x1.label(), x1.shape,
                                  x2.label(), x2.shape, y.label(), y.shape))
    return True


def prepare(op, ins, outs, ctx):
    """Check an int8 ADD op and bind its eval.

    ins: two int8 tensors (zero points in int8) whose shapes broadcast to
    the output's; outs: one int8 tensor. Option: fused activation.
    Raises PrepareError (types, shapes, multipliers TFLM would abort on).
    """
    if ins and ins[0] is not None and ins[0].type == 0:  # float32
        from . import float_ops
        return float_ops.prepare(op, ins, outs, ctx)
    label = op.label()
    if len(ins) != 2 or None in ins or len(outs) != 1:
        raise PrepareError("%s needs two inputs and one output" % label)
    x1, x2, y = ins[0], ins[1], outs[0]
    for t in (x1, x2, y):
        if t.type != schema.INT8:
            raise PrepareError("%s: %s is %s; only int8 is supported"
                               % (label, t.label(), t.dtype))
        if not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
        if not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s zero point %d is outside int8"
                               % (label, t.label(), t.zero_point))
    broadcast = _check_shapes(op, x1, x2, y)
    act = op.opt_byte(0, 0) if op.options_type == ADD_OPTIONS else 0
    try:
        q1, q2, qo = _multipliers(op, x1, x2, y)
        lo, hi = quant.activation_range(act, y.scale, y.zero_point)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    loops = _loops(x1.shape, x2.shape, y.shape) if broadcast \
        else [[y.size, 1, 1]]
    # Odometer state: [n_loops, off1, off2, -zp1, -zp2], then per loop
    # [size, counter, stride1, stride2].
    st = [len(loops), 0, 0, -x1.zero_point, -x2.zero_point]
    for size, a, b in loops:
        st += [size, 0, a, b]
    st = array("i", st)
    if not broadcast and y.size >= LUT_MIN:
        prm = array("i", [y.size, -x1.zero_point, -x2.zero_point,
                          q1[0][0], q1[1][0], q2[0][0], q2[1][0],
                          qo[0][0], qo[1][0], y.zero_point, lo, hi])
        return _eval_lut, (x1.data, x2.data, y.data, prm,
                           work_buffer(ctx, 512))
    half = ctx.scratch_len // 2
    sa = ctx.scratch
    sb = memoryview(ctx.scratch)[half:]
    qp = array("i", [y.zero_point, lo, hi])
    return _eval, (x1.data, x2.data, y.data, y.size, sa, sb, half, st,
                   q1[0], q1[1], q2[0], q2[1], qo[0], qo[1], qp)


def _eval(state):
    (d1, d2, yd, total, sa, sb, half, st, m1, s1, m2, s2, mo, so,
     qp) = state
    _reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        _gather(sa, sb, n, d1, d2, st)
        scale_i32(sa, n, m1, s1, 0)
        scale_i32(sb, n, m2, s2, 0)
        _sum_into(sa, sb, n)
        scale_i32(sa, n, mo, so, 0)
        store_i8(sa, n, yd, off, qp)
        off += n


@micropython.viper
def _reset(st):
    """Zero the odometer: offsets and every loop counter."""
    s = ptr32(st)
    s[1] = 0
    s[2] = 0
    k: int = 0
    nd: int = s[0]
    while k < nd:
        s[6 + 4 * k] = 0
        k += 1


@micropython.viper
def _gather(a, b, n: int, x1, x2, st):
    """a[i] = (x1[..] - zp1) << 20, b[i] = (x2[..] - zp2) << 20 for the
    next n output elements, walking the broadcast odometer in st."""
    pa = ptr32(a)
    pb = ptr32(b)
    p1 = ptr8(x1)
    p2 = ptr8(x2)
    s = ptr32(st)
    one: int = 1
    S: int = one << 31
    nd: int = s[0]
    o1: int = s[1]
    o2: int = s[2]
    z1: int = (s[3] ^ S) - S
    z2: int = (s[4] ^ S) - S
    d0: int = s[5]
    c0: int = s[6]
    a0: int = s[7]
    b0: int = s[8]
    i: int = 0
    while i < n:
        pa[i] = (((p1[o1] ^ 0x80) - 0x80) + z1) << 20
        pb[i] = (((p2[o2] ^ 0x80) - 0x80) + z2) << 20
        i += 1
        o1 += a0
        o2 += b0
        c0 += 1
        if c0 == d0:  # carry into the outer loops
            c0 = 0
            o1 -= d0 * a0
            o2 -= d0 * b0
            k: int = 9
            end: int = 5 + 4 * nd
            while k < end:
                o1 += s[k + 2]
                o2 += s[k + 3]
                ck: int = s[k + 1] + 1
                if ck < s[k]:
                    s[k + 1] = ck
                    break
                s[k + 1] = 0
                o1 -= s[k] * s[k + 2]
                o2 -= s[k] * s[k + 3]
                k += 4
    s[1] = o1
    s[2] = o2
    s[6] = c0


@micropython.viper
def _sum_into(a, b, n: int):
    """a[i] += b[i] (int32, wrapping like C)."""
    pa = ptr32(a)
    pb = ptr32(b)
    i: int = 0
    while i < n:
        pa[i] = pa[i] + pb[i]
        i += 1


def _eval_lut(state):
    _add_lut(0, 0, 0, state)


@micropython.viper
def _add_lut(x: int, i: int, t: int, st):
    """Equal shapes: tab[q] = MBQM((int8(q) - zp1) << 20, m1, s1) and
    tab[256 + q] = the same for input 2, for every byte q; then
    out[i] = clamp(MBQM(tab[x1[i]] + tab[256 + x2[i]], mo, so) + zp).
    st = (x1, x2, out, prm, work box); prm = [n, -zp1, -zp2, m1, s1, m2,
    s2, mo, so, zp, lo, hi]; every shift is <= 0 (SmallerThanOneExp).
    MBQM as in fixedpoint.requant_i8b (16-bit limbs: same bits on 32- and
    64-bit ports). x, i, t are the hot locals; callers pass 0.
    """
    p1 = ptr8(st[0])
    p2 = ptr8(st[1])
    po = ptr8(st[2])
    q = ptr32(st[3])
    tab = ptr32(st[4][0])
    one: int = 1
    S: int = one << 31
    R: int = one << 30
    # Tables: entries 0..255 for input 1, 256..511 for input 2.
    j: int = 0
    z: int = (q[1] ^ S) - S
    m: int = q[3]
    e: int = 0 - ((q[4] ^ S) - S)
    while j < 512:
        if j == 256:
            z = (q[2] ^ S) - S
            m = q[5]
            e = 0 - ((q[6] ^ S) - S)
        mh: int = m >> 16
        ml: int = m & 0xFFFF
        mask: int = (one << e) - 1
        x = ((((j & 0xFF) ^ 0x80) - 0x80) + z) << 20  # |x| < 2**28
        xh: int = x >> 16
        xl: int = x & 0xFFFF
        t = (xl & 0xFF) * ml + R
        t = (xl >> 8) * ml + (t >> 8)
        hb: int = xh * ml
        hc: int = xl * mh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        t = x & mask
        if t > (mask >> 1) - (x >> 31):
            x = (x >> e) + 1
        else:
            x = x >> e
        tab[j] = x
        j += 1
    n: int = q[0]
    m = q[7]
    mh = m >> 16
    ml = m & 0xFFFF
    e = 0 - ((q[8] ^ S) - S)
    mask = (one << e) - 1
    half: int = mask >> 1
    zp: int = (q[9] ^ S) - S
    lo: int = (q[10] ^ S) - S
    hi: int = (q[11] ^ S) - S
    i = 0
    while i < n:
        # each table value is below 2**28 in magnitude: no int32 overflow
        x = ((tab[p1[i]] ^ S) - S) + ((tab[256 + p2[i]] ^ S) - S)
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
        if x < lo:
            x = lo
        if x > hi:
            x = hi
        po[i] = x
        i += 1
