"""L2_NORMALIZATION, int8, over the last dimension.

Follows tensorflow/lite/micro/kernels/l2norm.cc (rank <= 4, fused
activation NONE) and reference/integer_ops/l2normalization.h: per row,
acc = sum((x - zp_in)**2); (m, s) = GetInvSqrtQuantizedMultiplierExp(acc,
kReverseShift) (kernels/internal/common.h: gemmlowp fixed-point
Newton-Raphson); out = clamp(MBQM(x - zp_in, m, s + 7), -128, 127). The
output's quantization is not read (TFLM assumes scale 1/128, zero point
0). The inverse square root runs per row in word-size independent viper
(_inv_sqrt, 16-bit limb products); lut_math.inv_sqrt is the same
algorithm in Python ints, used by the tests.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .rescale import scale_i32, store_i8

_L2NORM_OPTIONS = const(12)
_L2NORM_FUSED_ACTIVATION_FUNCTION = const(0)


def prepare(op, ins, outs, ctx):
    """Check an int8 L2_NORMALIZATION op and bind its eval.

    ins: [int8, rank 1..4]; outs: [int8, same shape]. Option: fused
    activation, which must be NONE. The row length must keep the sum of
    squares below 2**31. Raises PrepareError.
    """
    from .conv_util import keep
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    from . import check_int8  # the package: construction only (PARSE)
    check_int8(op, (x, y), quantized=False)
    if not x.scales or not -128 <= x.zero_point <= 127:
        raise PrepareError("%s: input %s needs an int8 zero point"
                           % (label, x.label()))
    if not 1 <= len(x.shape) <= 4 or tuple(x.shape) != tuple(y.shape):
        raise PrepareError("%s: input %s shape %s (rank 1..4) and output "
                           "%s shape %s must match" % (label, x.label(),
                                                       x.shape, y.label(),
                                                       y.shape))
    act = (op.opt_byte(_L2NORM_FUSED_ACTIVATION_FUNCTION, 0)
           if op.options_type == _L2NORM_OPTIONS else 0)
    if act != 0:
        raise PrepareError("%s: fused activation must be NONE" % label)
    depth = x.shape[-1]
    big = max(128 + x.zero_point, 127 - x.zero_point)
    if depth * big * big >= 1 << 31:
        raise PrepareError("%s: rows of %d elements overflow TFLM's int32 "
                           "sum of squares" % (label, depth))
    rows = x.size // depth if depth else 0
    # st: [acc, sqrt(2) / 2 in Q0.31 (too big for a viper literal)];
    # m / s: scale_i32's multiplier / shift arrays.
    st = keep(ctx, array("i", [0, 1518500250]))
    return _eval, (x.data, y.data, rows, depth, x.zero_point, st,
                   keep(ctx, array("i", [0])), keep(ctx, array("i", [0])),
                   ctx.scratch, ctx.scratch_len,
                   keep(ctx, array("i", [0, -128, 127])))


def _eval(state):
    xd, yd, rows, depth, zp, st, m, s, buf, step, qp = state
    off = 0
    r = 0
    while r < rows:
        _row_acc(xd, off, depth, zp, st)
        _inv_sqrt(st, m, s)
        c = 0
        while c < depth:
            n = depth - c
            if n > step:
                n = step
            _centered(buf, n, xd, off + c, zp)
            scale_i32(buf, n, m, s, 0)
            store_i8(buf, n, yd, off + c, qp)
            c += n
        off += depth
        r += 1


@micropython.viper
def _row_acc(x, off: int, depth: int, zp: int, st):
    """st[0] = sum of (x[i] - zp)**2 over one row (below 2**31)."""
    px = ptr8(x)
    acc: int = 0
    i: int = off
    end: int = off + depth
    while i < end:
        v: int = ((px[i] ^ 0x80) - 0x80) - zp
        acc += v * v
        i += 1
    ptr32(st)[0] = acc


@micropython.viper
def _centered(buf, n: int, x, off: int, zp: int):
    """buf[i] = x[off + i] - zp for i < n."""
    pb = ptr32(buf)
    px = ptr8(x)
    i: int = 0
    while i < n:
        pb[i] = ((px[off + i] ^ 0x80) - 0x80) - zp
        i += 1


@micropython.viper
def _inv_sqrt(st, mo, so):
    """GetInvSqrtQuantizedMultiplierExp(st[0], -1) (st[1] holds the
    constant sqrt(2) / 2), then the output
    shift: mo[0] = multiplier, so[0] = shift + 7 (kOutputScale).

    Five Newton-Raphson steps x = Rescale<3>(1.5 * x - (in / 2) * x**3)
    in gemmlowp Q3.28, from x = 1; SaturatingRoundingDoublingHighMul on
    16-bit limbs (the same bits on 32- and 64-bit ports). Step k of the
    product loop: k % 5 == 0: t = x * x; 1: t = t * x (then x3 = t << 6,
    saturating); 2: u = 1.5 * x; 3: t = half_in * x3; 4: x = (u - t) << 3
    (saturating); step 25: x * sqrt(2) / 2.
    """
    p = ptr32(st)
    one: int = 1
    S: int = one << 31
    imax: int = S - 1  # INT32_MAX on either word size after the wrap
    imin: int = 0 - S
    acc: int = p[0]
    if acc <= 1:
        ptr32(mo)[0] = imax
        ptr32(so)[0] = 7
        return
    shift: int = 11
    while acc >= (one << 29):
        acc = acc >> 2
        shift += 1
    bits: int = 0  # bit length of acc (< 29)
    while (acc >> bits) != 0:
        bits += 1
    left: int = ((31 - bits) >> 1) - 1  # (CountLeadingZeros - 1) / 2 - 1
    shift -= left
    acc = acc << (2 * left)
    hx: int = acc >> 1  # F3 input
    hx = (hx >> 1) + (hx & 1)  # RoundingDivideByPOT(., 1), hx > 0
    x: int = one << 28
    t: int = 0
    u: int = 0
    x3: int = 0
    k: int = 0
    step: int = 0  # k % 5
    while k < 26:
        if k == 25:
            f: int = x
            g: int = p[1]  # sqrt(2) / 2 in Q0.31
        elif step == 0:
            f = x
            g = x
        elif step == 1:
            f = t
            g = x
        elif step == 2:
            f = 402653184  # 1.5 in Q3.28
            g = x
        elif step == 3:
            f = hx
            g = x3
        else:
            f = 0
            g = 0
        # r = SaturatingRoundingDoublingHighMul(f, g)
        r: int = 0
        if step != 4 or k == 25:
            neg: int = 0
            if f < 0:
                neg = 1
                f = 0 - f
            if g < 0:
                neg ^= 1
                g = 0 - g
            if f < 0 or g < 0:  # an INT32_MIN operand (32-bit port):
                if f < 0 and g < 0:  # SRDHM(MIN, MIN) saturates
                    r = imax
                elif f < 0:  # SRDHM(MIN, b) = -b exactly
                    r = 0 - g if neg else g
                else:
                    r = 0 - f if neg else f
            else:
                fh: int = f >> 16
                fl: int = f & 0xFFFF
                gh: int = g >> 16
                gl: int = g & 0xFFFF
                w: int = (fl & 0xFF) * gl + (one << 30) - neg
                w = (fl >> 8) * gl + (w >> 8)
                hb: int = fh * gl
                hc: int = fl * gh
                w = (w >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
                r = (fh * gh + (hb >> 16) + (hc >> 16) + (w >> 16)) * 2
                r += (w & 0xFFFF) >> 15
                if neg:
                    r = 0 - r
        if k == 25:
            x = r
        elif step == 0:
            t = r
        elif step == 1:  # Rescale<3> from Q9: saturating << 6
            if r > 0x1FFFFFF:
                x3 = imax
            elif r < 0 - 0x1FFFFFF:
                x3 = imin
            else:
                x3 = r << 6
        elif step == 2:
            u = r
        elif step == 3:
            t = r
        else:  # Rescale<3> from Q6: saturating << 3 of u - t (int32)
            d: int = u - t
            d = (((d >> 16) & 0xFFFF) ^ 0x8000) - 0x8000
            d = (d << 16) | ((u - t) & 0xFFFF)  # wrapped to int32
            if d > 0xFFFFFFF:
                x = imax
            elif d < 0 - 0xFFFFFFF:
                x = imin
            else:
                x = d << 3
        k += 1
        step += 1
        if step == 5:
            step = 0
    if shift < 0:
        x = x << (0 - shift)  # stays below 2**31 (see lut_math.inv_sqrt)
        shift = 0
    ptr32(mo)[0] = x
    ptr32(so)[0] = 7 - shift
