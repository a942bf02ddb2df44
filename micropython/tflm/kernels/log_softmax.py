"""LOG_SOFTMAX over the last dimension: int8 (bit-exact) and float32
(log_softmax_f32.py).

Follows tensorflow/lite/micro/kernels/log_softmax.cc (CalculateOpData,
LogSoftmaxEval) and reference/log_softmax.h (LogSoftmaxQuantized, the
float LogSoftmax). int8, per row of the last dimension:

    d = x - max (<= 0); kept when d >= diff_min
    sum = sum of Rescale<12>(exp_on_negative_values(MBQM(d, mult, ls)))
    L = log_x_for_x_greater_than_or_equal_to_1<5>(sum)       (Q5.26)
    adj = max(diff_min - 1, MBQM(L + INT32_MIN, rdiv, rshift))
    out = d > adj ? clamp(RoundingDivideByPOT(MBQM(d, mult, ls) - L, 22)
                          + 127) : -128

with Prepare's PreprocessLogSoftmaxScalingExp(1.0, in_scale, 5): mult,
ls as SOFTMAX's beta multiplier (softmax_prep._beta_multiplier), rdiv /
rshift = QuantizeMultiplierSmallerThanOneExp(2**(31 - ls) / mult) and
diff_min = -CalculateInputRadius(5, ls). Prepare tabulates, for d = 0..
255, R[d] (the exponential term, 0 below diff_min) and Q[d] = MBQM(-d,
mult, ls) (gemmlowp.py, exactly); eval takes the row's max and sum
(_row), the logarithm and adj in gemmlowp fixed point (log_q5: the
SaturatingRoundingDoublingHighMul on 16-bit limbs, _srdhm, so that 32-
and 64-bit ports agree) and stores the outputs (_store).

Checks (TFLM's): one input, one output of its type and shape; int8 or
float32; int8 output scale exactly 16/256 and zero point 127, input
scale * 2**26 above 1 (QuantizeMultiplierGreaterThanOne); also refused
here: a last dimension above 4095 (the int32 sum of exponentials could
overflow in TFLM's C) and a reverse multiplier of 1 (TFLM aborts). Each
raises PrepareError naming the op and tensor.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError

_FLOAT32 = const(0)
_INT8 = const(9)
_SCALED_DIFF_INTEGER_BITS = const(5)
_ACCUM_INTEGER_BITS = const(12)
_OUTPUT_SCALE = const(0x3D800000)  # float32 bits of 16 / 256

# log_q5's slots (array('i') v): the input sum, the result L and adj,
# gemmlowp's constants (viper cannot hold them as literals), the reverse
# multiplier, shift and diff_min - 1, and temporaries.
_V_SUM = const(0)
_V_LOG = const(1)
_V_ADJ = const(2)
_V_RDIV = const(10)
_V_RSHIFT = const(11)
_V_DMIN1 = const(12)
_V_T = const(13)  # three temporaries: 13, 14, 15
_V_LEN = const(16)
_CONSTS = (1488522236, 1805811301, 1518500250, 117049297, 127690142,
           1057819769, 638450708)  # v[3..9]

# state slots
_S_X = const(0)
_S_Y = const(1)
_S_ROWS = const(2)
_S_DEPTH = const(3)
_S_R = const(4)
_S_Q = const(5)
_S_V = const(6)


def prepare(op, ins, outs, ctx):
    """LOG_SOFTMAX.

    ins: [int8 (per-tensor quantized) or float32 tensor, rank >= 1];
    outs: [the same type and shape; int8: scale 16/256, zero point 127].
    Raises PrepareError (see the module docstring). Semantics: TFLM
    kernels/log_softmax.cc.
    """
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1 or outs[0] is None:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    if y.type != x.type:
        raise PrepareError("%s: output %s is %s but input %s is %s"
                           % (label, y.label(), y.dtype, x.label(), x.dtype))
    if not x.shape or tuple(x.shape) != tuple(y.shape):
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    depth = x.shape[-1]
    rows = x.size // depth if depth else 0
    if x.type == _FLOAT32:
        from . import log_softmax_f32
        return log_softmax_f32.prepare(op, x, y, ctx, rows, depth)
    from . import check_int8
    check_int8(op, (x, y), "int8, float32")
    return _prepare8(op, x, y, ctx, rows, depth)


def _prepare8(op, x, y, ctx, rows, depth):
    from .. import quant
    from ..heap import keep, persistent
    from ..errors import ModelError
    from .gemmlowp import beta_multiplier, exp_neg, rdbpot, srdhm
    label = op.label()
    try:
        ok = quant.from_f32(y.scale) == quant.from_f32(0.0625)
    except ModelError:
        ok = False
    if not ok or y.zero_point != 127:
        raise PrepareError("%s: output %s must have scale 16/256 and zero "
                           "point 127" % (label, y.label()))
    if depth > 4095:
        raise PrepareError("%s: a last dimension of %d can overflow TFLM's "
                           "int32 sum of exponentials (at most 4095)"
                           % (label, depth))
    mult, ls, diff_min = beta_multiplier(op, 1.0, x.scale)
    rdiv, rsh = quant.quantize_multiplier(quant.div((1, 31 - ls), (mult, 0)))
    if rsh > 0 or rdiv >= 1 << 31:  # TFLITE_CHECK_LT(multiplier, 1.)
        raise PrepareError("%s: input scale %r gives a reverse multiplier "
                           "of 1 (TFLM aborts)" % (label, x.scale))
    # the sizing pass only asks for the tables' room (softmax_prep._tables)
    sizing = getattr(ctx, "sizing", False)
    r_tab = persistent(ctx, "i", 256, sizing)
    q_tab = persistent(ctx, "i", 256, sizing)
    for d in range(0 if sizing else 256):
        if -d < diff_min:
            break
        q = srdhm(-(d << ls), mult)  # MBQM(-d, mult, ls)
        q_tab[d] = q
        r_tab[d] = rdbpot(exp_neg(q, _SCALED_DIFF_INTEGER_BITS),
                          _ACCUM_INTEGER_BITS)
    v = array("i", [0] * _V_LEN)
    for k, c in enumerate(_CONSTS):
        v[3 + k] = c
    v[_V_RDIV] = rdiv
    v[_V_RSHIFT] = -rsh
    v[_V_DMIN1] = diff_min - 1
    return _eval, (x.data, y.data, rows, depth, r_tab, q_tab, keep(ctx, v))


def _eval(st):
    x = st[_S_X]
    y = st[_S_Y]
    depth = st[_S_DEPTH]
    v = st[_S_V]
    off = 0
    r = st[_S_ROWS]
    while r > 0:
        mx = _row(x, st[_S_R], off, depth, v)
        log_q5(v)
        _store(x, y, off, depth, mx, st[_S_Q], v)
        off += depth
        r -= 1


@micropython.viper
def _row(x, r_tab, off: int, n: int, v) -> int:
    """v[_V_SUM] = the sum of R[max - x] over row x[off:off + n] (int8);
    returns the row's max + 128."""
    px = ptr8(x)
    pr = ptr32(r_tab)
    mx: int = 0
    i: int = off
    end: int = off + n
    while i < end:
        b: int = px[i] ^ 0x80  # int8 -> 0..255, order kept
        if b > mx:
            mx = b
        i += 1
    total: int = 0
    i = off
    while i < end:
        total += pr[mx - (px[i] ^ 0x80)]
        i += 1
    ptr32(v)[_V_SUM] = total
    return mx


@micropython.viper
def _srdhm(v, i: int, j: int, k: int):
    """v[k] = SaturatingRoundingDoublingHighMul(v[i], v[j]) (int32, any
    signs), from 16-bit limbs."""
    p = ptr32(v)
    one: int = 1
    S: int = one << 31
    f: int = (p[i] ^ S) - S
    g: int = (p[j] ^ S) - S
    if f == 0 - S or g == 0 - S:  # a 2**31 magnitude: -g or -f exactly
        if f == g:
            p[k] = S - 1
        elif f == 0 - S:
            p[k] = 0 - g
        else:
            p[k] = 0 - f
        return
    neg: int = 0
    if f < 0:
        neg = 1
        f = 0 - f
    if g < 0:
        neg ^= 1
        g = 0 - g
    fh: int = f >> 16
    fl: int = f & 0xFFFF
    gh: int = g >> 16
    gl: int = g & 0xFFFF
    # (|f g| + 2**30 - neg) >> 31: C's (ab + nudge) / 2**31
    t: int = (fl & 0xFF) * gl + (one << 30) - neg
    t = (fl >> 8) * gl + (t >> 8)
    hb: int = fh * gl
    hc: int = fl * gh
    t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
    r: int = (fh * gh + (hb >> 16) + (hc >> 16) + (t >> 16)) * 2
    r += (t & 0xFFFF) >> 15
    if neg:
        r = 0 - r
    p[k] = r


@micropython.viper
def log_q5(v):
    """v[_V_LOG] = log_x_for_x_greater_than_or_equal_to_1<5> of the Q12
    raw v[_V_SUM] (> 0; common.h, gemmlowp fixed point, C's int32
    wrap-around; lut_math.log_x_ge1 is its plain Python twin), and
    v[_V_ADJ] = max(v[_V_DMIN1], MBQM(L + INT32_MIN, v[_V_RDIV],
    -v[_V_RSHIFT]))."""
    p = ptr32(v)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    IMAX: int = S - 1
    ssh: int = p[4]
    x: int = p[_V_SUM]
    nb: int = 0
    t: int = x
    while t:
        nb += 1
        t = t >> 1
    ha: int = 32 - nb  # CountLeadingZeros
    # r_a = SRMByPOT(SRDHM(x << (ha - 1), sqrt_half), 1)
    p[13] = x << (ha - 1)
    _srdhm(v, 13, 5, 14)
    ra: int = p[14]
    if ra > 0x3FFFFFFF:
        ra = IMAX
    else:
        ra = ra << 1
    za: int = ((12 - ha) << 25) + (one << 23)
    # z_b = SRDHM(x, sqrt_half); r_b = SRMByPOT(x, headroom(z_b))
    _srdhm(v, 0, 5, 14)
    zb: int = p[14]
    nb = 0
    t = zb
    while t:
        nb += 1
        t = t >> 1
    hb: int = 31 - nb  # CountLeadingZeros - 1
    rb: int = x
    if hb > 0:
        if x > (one << (31 - hb)) - 1:
            rb = IMAX
        else:
            rb = x << hb
    zbadj: int = ((12 - hb) << 25) - (one << 23)
    r: int = ra
    if rb < r:
        r = rb
    z: int = za
    if zbadj > z:
        z = zbadj
    # p = RoundingHalfSum(r, ssh) (both positive); q = 2 (r - ssh)
    ph: int = (r >> 1) + (ssh >> 1) + (((r & 1) + (ssh & 1) + 1) >> 1)
    q: int = ((((r - ssh) * 2) + S) & M) - S
    p[13] = q
    p[15] = r
    _srdhm(v, 13, 13, 14)  # common_sq, kept in v[14]
    _srdhm(v, 13, 15, 15)  # q r
    qr: int = (p[15] ^ S) - S
    _srdhm(v, 13, 14, 15)  # q sq
    _srdhm(v, 15, 6, 15)  # * alpha_n
    num: int = ((qr + ((p[15] ^ S) - S) + S) & M) - S
    _srdhm(v, 7, 14, 15)  # alpha_d sq
    p[15] = (p[8] + q + ((p[15] ^ S) - S) + S) & M  # alpha_i + q + ...
    p[15] = p[15] - S
    p[14] = ph
    _srdhm(v, 14, 15, 15)  # p (...)
    dp: int = (p[15] ^ S) - S
    _srdhm(v, 9, 13, 15)  # alpha_f q
    den: int = ((dp + ((p[15] ^ S) - S) + S) & M) - S
    # one_over_one_plus_x_for_x_in_0_1(den): Newton-Raphson in Q2.29
    half: int = (den >> 1) + (one << 30)  # RoundingHalfSum(den, One)
    if den == 0 - S:
        half = -1
    p[13] = half
    p[14] = 0 - 1010580540
    _srdhm(v, 13, 14, 15)
    xr: int = 0x2D2D2D2D * (one << 1) + ((p[15] ^ S) - S)  # 48/17, Q2.29
    k: int = 0
    while k < 3:
        p[14] = xr
        _srdhm(v, 13, 14, 15)
        u: int = ((((one << 29) - ((p[15] ^ S) - S)) + S) & M) - S
        p[15] = u
        _srdhm(v, 14, 15, 15)
        w: int = (p[15] ^ S) - S
        if w > 0x1FFFFFFF:
            w = IMAX
        elif w < 0 - 0x1FFFFFFF:
            w = 0 - S
        else:
            w = w << 2
        xr = (((xr + w) + S) & M) - S
        k += 1
    if xr > 0x3FFFFFFF:  # Rescale<0>(ExactMulByPot<-1>(x))
        xr = IMAX
    elif xr < 0 - 0x3FFFFFFF:
        xr = 0 - S
    else:
        xr = xr << 1
    # L6 = z log2 + RDBPOT(num, 6) recip (Q6.25); L = SRMByPOT(L6, 1)
    ns: int = (num >> 6)
    if (num & 63) > 31 + ((num >> 31) & 1):
        ns += 1
    p[13] = z
    _srdhm(v, 13, 3, 14)
    p[13] = ns
    p[15] = xr
    _srdhm(v, 13, 15, 15)
    res: int = ((((p[14] ^ S) - S) + ((p[15] ^ S) - S) + S) & M) - S
    if res > 0x3FFFFFFF:
        res = IMAX
    elif res < 0 - 0x3FFFFFFF:
        res = 0 - S
    else:
        res = res << 1
    p[_V_LOG] = res
    # adj = max(diff_min - 1, MBQM(L + INT32_MIN, rdiv, -rshift))
    p[13] = res - S
    _srdhm(v, 13, _V_RDIV, 14)
    a: int = (p[14] ^ S) - S
    e: int = p[_V_RSHIFT]
    mask: int = (one << e) - 1
    if (a & mask) > (mask >> 1) + ((a >> 31) & 1):
        a = (a >> e) + 1
    else:
        a = a >> e
    dm: int = (p[_V_DMIN1] ^ S) - S
    if dm > a:
        a = dm
    p[_V_ADJ] = a


@micropython.viper
def _store(x, y, off: int, n: int, mx: int, q_tab, v):
    """y[off + i] for the row x[off:off + n] (see the module docstring);
    mx: its max + 128."""
    px = ptr8(x)
    py = ptr8(y)
    pq = ptr32(q_tab)
    pv = ptr32(v)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1
    L: int = (pv[_V_LOG] ^ S) - S
    adj: int = (pv[_V_ADJ] ^ S) - S
    i: int = off
    end: int = off + n
    while i < end:
        d: int = mx - (px[i] ^ 0x80)
        o: int = -128
        if 0 - d > adj:
            a: int = ((((pq[d] ^ S) - S) - L + S) & M) - S
            # RoundingDivideByPOT(a, 22) + 127, clamped
            o = a >> 22
            if (a & 0x3FFFFF) > 0x1FFFFF + ((a >> 31) & 1):
                o += 1
            o += 127
            if o > 127:
                o = 127
            elif o < -128:
                o = -128
        py[i] = o
        i += 1
