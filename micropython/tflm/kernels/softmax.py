"""SOFTMAX, int8 input -> int8 output (scale 1/256, zero point -128) or
int16 output (scale 1/65536 within 0.1%, zero point -32768).

Follows tensorflow/lite/micro/kernels/softmax.cc, softmax_common.cc
(CalculateSoftmaxParams), tensorflow/lite/kernels/internal/
quantization_util.cc (PreprocessSoftmaxScaling, CalculateInputRadius) and
reference/softmax.h with gemmlowp's fixedpoint.h (exp_on_negative_values,
one_over_one_plus_x_for_x_in_0_1) and common.h (GetReciprocal).

Everything TFLM computes per element depends only on the difference
d = max_in_row - x in [0, 255], so prepare tabulates, with exact integer
code, E[d] = exp_on_negative_values(rescaled -d) (a Q0.31 raw value, 0 when
-d < diff_min) and R[d] = Rescale<12>(E[d]). Per row, eval finds the max,
sums R[d], takes GetReciprocal of the sum (gemmlowp Newton-Raphson, in
word-size independent viper), and writes
    clamp(RoundingDivideByPOT(SRDHM(E[d], reciprocal), exponent) - 128)
through fixedpoint.requant_i8b (int16: exponent 8 lower, minus 32768,
rescale.scale_i32 then quantize.store_i16). Excluded elements have E[d] = 0
and so give -128, as TFLM's explicit branch does.
"""

from array import array

import micropython
from micropython import const

from . import check_int8
from ..errors import ModelError, PrepareError
from ..fixedpoint import requant_i8b

_INT16 = const(7)
_INT8 = const(9)
_SOFTMAX_OPTIONS = const(9)
_SCALED_DIFF_INTEGER_BITS = const(5)
_ACCUM_INTEGER_BITS = const(12)
_INT32_MAX = const((1 << 31) - 1)
_INT32_MIN = const(-(1 << 31))
_ONE_OVER_256 = const(0x3B800000)  # float32 bits of 1 / 256


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


def _beta_multiplier(op, beta, in_scale):
    """PreprocessSoftmaxScaling(beta, in_scale, 5), exactly:
    (multiplier, left_shift, diff_min)."""
    from .. import quant
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


def prepare(op, ins, outs, ctx):
    """Check an int8 SOFTMAX op and bind its eval.

    ins: [int8, rank >= 1]; outs: [int8 of the same shape, scale exactly
    1/256, zero point -128, or int16, scale 1/65536 within 0.1%, zero point
    -32768] (TFLM's checks). Option: beta (float, > 0).
    Softmax runs over the last dimension. Raises PrepareError.
    """
    from .. import quant
    if ins and ins[0] is not None and ins[0].type == 0:  # float32
        from . import float_ops
        return float_ops.prepare(op, ins, outs, ctx)
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
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
    beta = op.opt_float(0, 0.0) if op.options_type == _SOFTMAX_OPTIONS \
        else 0.0
    mult, shift, diff_min = _beta_multiplier(op, beta, x.scale)
    e_tab, r_tab = _tables(mult, shift, diff_min, ctx)
    depth = x.shape[-1]
    if wide and depth > 4095:
        # each exp term is at most 2**19: a longer row can overflow the
        # int32 sum (undefined in TFLM's C)
        raise PrepareError("%s: an int16 SOFTMAX over %d values can "
                           "overflow TFLM's int32 sum (at most 4095)"
                           % (label, depth))
    # Row state: [sum, max, 48/17 and -32/17 in Q2.29 (raw constants that
    # viper cannot hold as literals), 12 + 31 - output bits, the sum's
    # cap: 2**28 for int8 (TFLM's exponent check aborts beyond), none
    # for int16 (its exponent stays in range)].
    st = array("i", [0, 0, 1515870810, -1010580540, 27 if wide else 35,
                     0x7FFFFFFF if wide else 0x10000000])
    m = array("i", [0])
    s = array("i", [0])
    qp = array("i", [-32768, -32768, 32767] if wide else [-128, -128, 127])
    state = (x.data, y.data, x.size // depth if depth else 0, depth,
             st, e_tab, r_tab, ctx.scratch, ctx.scratch_len, m, s, qp)
    if wide:  # int16 stores live with QUANTIZE's (declared in _LAZY)
        from .quantize import scale_i32, store_i16
        return _eval16, state + (scale_i32, store_i16)
    return _eval, state


def _eval(state):
    """int8 output: requant_i8b(wide=1: s holds an int32 shift) is
    rescale's scale_i32 then store_i8 in one pass, so int8 models do not
    import rescale."""
    xd, yd, rows, depth, st, e_tab, r_tab, buf, step, m, s, qp = state
    off = 0
    r = 0
    while r < rows:
        _row_sum(xd, off, depth, r_tab, st)
        _reciprocal(st, m, s)
        c = 0
        while c < depth:
            n = depth - c
            if n > step:
                n = step
            _gather_exp(buf, n, xd, off + c, e_tab, st)
            requant_i8b(0, 0, 0, buf, n, 1, m, s, qp, yd, off + c, 1)
            c += n
        off += depth
        r += 1


def _eval16(state):
    xd, yd, rows, depth, st, e_tab, r_tab, buf, step, m, s, qp, scale, \
        store = state
    off = 0
    r = 0
    while r < rows:
        _row_sum(xd, off, depth, r_tab, st)
        _reciprocal(st, m, s)
        c = 0
        while c < depth:
            n = depth - c
            if n > step:
                n = step
            _gather_exp(buf, n, xd, off + c, e_tab, st)
            scale(buf, n, m, s, 0)
            store(buf, n, yd, off + c, qp)
            c += n
        off += depth
        r += 1


@micropython.viper
def _row_sum(x, off: int, depth: int, r_tab, st):
    """st[1] = max of the row (biased by +128), st[0] = sum of R[max - x],
    capped at st[5] (2**28 for an int8 output, beyond which TFLM's
    exponent check aborts)."""
    px = ptr8(x)
    pr = ptr32(r_tab)
    s = ptr32(st)
    mx: int = 0
    i: int = off
    end: int = off + depth
    while i < end:
        v: int = px[i] ^ 0x80  # int8 -> 0..255, order preserved
        if v > mx:
            mx = v
        i += 1
    total: int = 0
    cap: int = s[5]
    i = off
    while i < end:
        total += pr[mx - (px[i] ^ 0x80)]
        if total > cap:
            total = cap
        i += 1
    s[0] = total
    s[1] = mx


@micropython.viper
def _gather_exp(buf, n: int, x, off: int, e_tab, st):
    """buf[i] = E[max - x[off + i]] for i < n."""
    pb = ptr32(buf)
    px = ptr8(x)
    pe = ptr32(e_tab)
    mx: int = ptr32(st)[1]
    i: int = 0
    while i < n:
        pb[i] = pe[mx - (px[off + i] ^ 0x80)]
        i += 1


@micropython.viper
def _reciprocal(st, m, s):
    """GetReciprocal(sum, 12) (common.h): m[0] = the Q0.31 reciprocal,
    s[0] = -exponent, exponent = num_bits_over_unit + 31 - 8.

    gemmlowp one_over_one_plus_x_for_x_in_0_1 with its
    SaturatingRoundingDoublingHighMul done on 16-bit limbs, so that 32-
    and 64-bit ports agree.
    """
    p = ptr32(st)
    one: int = 1
    S: int = one << 31
    imax: int = S - 1  # _INT32_MAX on either word size after the wrap
    imin: int = 0 - S
    h30: int = one << 30
    x: int = p[0]  # 2**19 <= sum <= 2**28
    clz: int = 1  # CountLeadingZeros(sum) = headroom_plus_one
    while x < h30:
        x = x << 1
        clz += 1
    a: int = (x - h30) * 2  # (sum << clz) - 2**31, in [0, 2**31)
    hd: int = (a >> 1) + h30  # RoundingHalfSum(a, One)
    c48: int = (p[2] ^ S) - S
    xr: int = 0
    u: int = 0
    k: int = 0
    while k < 7:
        # Step 0: x = 48/17 + hd * (-32/17); odd steps: u = 1 - hd * x;
        # even steps: x = x + Rescale<2>(x * u).
        if k == 0:
            f: int = hd
            g: int = (p[3] ^ S) - S
        elif k & 1:
            f = hd
            g = xr
        else:
            f = xr
            g = u
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
        t: int = (fl & 0xFF) * gl + (one << 30) - neg
        t = (fl >> 8) * gl + (t >> 8)
        hb: int = fh * gl
        hc: int = fl * gh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        r: int = (fh * gh + (hb >> 16) + (hc >> 16) + (t >> 16)) * 2
        r += (t & 0xFFFF) >> 15
        if neg:
            r = 0 - r
        if k == 0:
            xr = c48 + r
        elif k & 1:
            u = (one << 29) - r
        else:
            if r > 0x1FFFFFFF:  # saturating r << 2
                r = imax
            elif r < 0 - 0x1FFFFFFF:
                r = imin
            else:
                r = r << 2
            xr = xr + r
        k += 1
    # Rescale<0>(ExactMulByPot<-1>(x)): saturating x << 1.
    if xr > 0x3FFFFFFF:
        xr = imax
    elif xr < 0 - 0x3FFFFFFF:
        xr = imin
    else:
        xr = xr << 1
    ptr32(m)[0] = xr
    e: int = p[4] - clz  # 12 - clz + 31 - output bits
    if e > 31:  # TFLM's TFLITE_CHECK(exponent <= 31) aborts here
        e = 31
    ptr32(s)[0] = 0 - e
