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
and so give -128, as TFLM's explicit branch does. Prepare and the tables
are in softmax_prep.py (construction only); this module keeps eval.
"""

import micropython

from ..fixedpoint import requant_i8b


def prepare(op, ins, outs, ctx):
    """Check an int8 SOFTMAX op and bind its eval (softmax_prep, which is
    construction only: dropped once an interpreter is built,
    interpreter.CONSTRUCTION)."""
    from .softmax_prep import prepare
    return prepare(op, ins, outs, ctx)


def _eval(state):
    """Per row: max, sum, reciprocal, then the outputs chunk by chunk.
    int8 output (scale None): requant_i8b (wide=1: s holds an int32
    shift) is rescale's scale_i32 then store_i8 in one pass, so int8
    models do not import rescale; int16: scale_i32, then store_i16."""
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
            if scale is None:
                requant_i8b(0, 0, 0, buf, n, 1, m, s, qp, yd, off + c, 1)
            else:
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
