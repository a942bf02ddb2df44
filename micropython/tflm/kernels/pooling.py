"""AVERAGE_POOL_2D (and the checks MAX_POOL_2D shares), int8 NHWC.

MAX_POOL_2D's loop is in max_pool.py, so that a model with average
pooling only (person_detect, KWS, ResNet-8) does not load its machine code
into RAM, and the reverse.

Follows tensorflow/lite/micro/kernels/pooling.cc, pooling_common.cc
(PoolingPrepare: input and output share scale within 1e-6 and zero point)
and tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h:
the window is clipped to the input, the average divides the int32 sum by
the number of in-bounds taps, rounding half away from zero with C
truncating division, and both results are clamped to the fused activation
range of the output. Padding and output size follow
tensorflow/lite/kernels/padding.h (ComputePaddingHeightWidth).
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError

_INT8 = const(9)
_PADDING_SAME = const(0)
_PADDING_VALID = const(1)

_POOL2D_OPTIONS = const(5)

# The double 1e-6 of PoolingPrepare's scale check, as m * 2**e.
_ONE_E_MINUS_6 = (0x10C6F7A0B5ED8D, -72)


def _options(op):
    """(padding, stride_w, stride_h, filter_w, filter_h, activation);
    zeros (rejected later) when the Pool2DOptions table is missing."""
    if op.options_type != _POOL2D_OPTIONS:
        return 0, 0, 0, 0, 0, 0
    return (op.opt_byte(0, 0), op.opt_int(1, 0), op.opt_int(2, 0),
            op.opt_int(3, 0), op.opt_int(4, 0), op.opt_byte(5, 0))


def _out_size(padding, size, filt, stride):
    """ComputeOutSize (padding.h), dilation 1."""
    if padding == _PADDING_SAME:
        return (size + stride - 1) // stride
    return (size + stride - filt) // stride


def _pad(size, filt, stride, out):
    """ComputePaddingWithOffset: the leading (top / left) padding."""
    total = (out - 1) * stride + filt - size
    return total // 2 if total > 0 else 0


def _same_scale(a, b):
    """|(float32)(a - b)| <= 1e-6 (double), decided exactly."""
    from .. import quant
    x, y = quant.from_f32(a), quant.from_f32(b)
    e = min(x[1], y[1])
    d = abs((x[0] << (x[1] - e)) - (y[0] << (y[1] - e)))
    if d == 0:
        return True
    m, k = quant.round_bits(d, 1, 24)  # the float32 subtraction rounds
    return quant.cmp((m, k + e), _ONE_E_MINUS_6) <= 0


def _check(op, ins, outs):
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    for t in (x, y):
        if t.type != _INT8:
            raise PrepareError("%s: %s is %s; only int8 is supported"
                               % (label, t.label(), t.dtype))
        if len(t.shape) != 4:
            raise PrepareError("%s: %s shape %s is not NHWC"
                               % (label, t.label(), t.shape))
        if not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
    try:
        same = _same_scale(x.scale, y.scale)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    if not same or x.zero_point != y.zero_point:
        raise PrepareError("%s: input %s and output %s must share scale and "
                           "zero point" % (label, x.label(), y.label()))
    if not -128 <= y.zero_point <= 127:
        raise PrepareError("%s: zero point %d is outside int8"
                           % (label, y.zero_point))
    return x, y


def prepare(op, ins, outs, ctx):
    """Check an AVERAGE_POOL_2D op and bind its eval (prepare_with)."""
    return prepare_with(op, ins, outs, ctx, _avg_pool)


def prepare_with(op, ins, outs, ctx, fn):
    """Check an AVERAGE_POOL_2D / MAX_POOL_2D op and bind its eval; fn:
    the int8 loop (_avg_pool here, max_pool._max_pool).

    ins: [input int8 NHWC]; outs: [int8 NHWC], same batch and channels,
    height and width as the padding rule gives, same scale (within 1e-6)
    and zero point. Options: padding, strides, filter size (all >= 1),
    fused activation. Raises PrepareError.
    """
    from .conv_util import keep
    from .. import quant
    if ins and ins[0] is not None and ins[0].type == 0:  # float32
        from .pool_f32 import prepare_pool
        return prepare_pool(op, ins, outs, ctx)
    label = op.label()
    x, y = _check(op, ins, outs)
    padding, sw, sh, fw, fh, act = _options(op)
    if padding not in (_PADDING_SAME, _PADDING_VALID):
        raise PrepareError("%s: unknown padding %d" % (label, padding))
    if min(sw, sh, fw, fh) < 1:
        raise PrepareError("%s: strides %dx%d and filter %dx%d must be >= 1"
                           % (label, sh, sw, fh, fw))
    n, h, w, c = x.shape
    oh = _out_size(padding, h, fh, sh)
    ow = _out_size(padding, w, fw, sw)
    if oh < 1 or ow < 1 or tuple(y.shape) != (n, oh, ow, c):
        raise PrepareError("%s: output %s shape %s, expected %s"
                           % (label, y.label(), y.shape, [n, oh, ow, c]))
    try:
        lo, hi = quant.activation_range(act, y.scale, y.zero_point)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    ph, pw = _pad(h, fh, sh, oh), _pad(w, fw, sw, ow)
    if max(ph, pw) > 32767:  # TFLM's PaddingValues are int16_t
        raise PrepareError("%s: padding (%d, %d) exceeds 32767"
                           % (label, ph, pw))
    p = array("i", [n, h, w, c, oh, ow, sh, sw, fh, fw, ph, pw, lo, hi])
    step = ctx.scratch_len
    return _eval, (fn, ctx.scratch, x.data, y.data, keep(ctx, p), c, step)


def _eval(state):
    fn, acc, xd, yd, p, c, step = state
    c0 = 0
    while c0 < c:
        cn = c - c0
        if cn > step:
            cn = step
        fn(xd, yd, acc, p, c0, cn)
        c0 += cn


@micropython.viper
def _avg_pool(x, y, acc, p, c0: int, cn: int):
    """Average pool of channels [c0, c0 + cn), acc: int32 scratch >= cn."""
    px = ptr8(x)
    py = ptr8(y)
    pa = ptr32(acc)
    q = ptr32(p)
    h: int = q[1]
    w: int = q[2]
    c: int = q[3]
    one: int = 1
    S: int = one << 31
    lo: int = (q[12] ^ S) - S
    hi: int = (q[13] ^ S) - S
    nb: int = q[0]
    oh: int = q[4]
    ow: int = q[5]
    b: int = 0
    o: int = c0  # output offset of the current pixel's first channel
    while b < nb:
        oy: int = 0
        while oy < oh:
            iy0: int = oy * q[6] - q[10]
            fy0: int = 0 if iy0 >= 0 else 0 - iy0
            fy1: int = q[8] if q[8] < h - iy0 else h - iy0
            ox: int = 0
            while ox < ow:
                ix0: int = ox * q[7] - q[11]
                fx0: int = 0 if ix0 >= 0 else 0 - ix0
                fx1: int = q[9] if q[9] < w - ix0 else w - ix0
                k: int = 0
                while k < cn:
                    pa[k] = 0
                    k += 1
                fy: int = fy0
                while fy < fy1:
                    r: int = ((b * h + iy0 + fy) * w + ix0 + fx0) * c + c0
                    fx: int = fx0
                    while fx < fx1:
                        k = 0
                        while k < cn:
                            pa[k] = pa[k] + (px[r + k] ^ 0x80) - 0x80
                            k += 1
                        r += c
                        fx += 1
                    fy += 1
                # Rounded division by the in-bounds tap count, as TFLM:
                # (acc > 0) ? (acc + n/2) / n : (acc - n/2) / n, truncating.
                count: int = (fy1 - fy0) * (fx1 - fx0)
                half: int = count >> 1
                k = 0
                while k < cn:
                    v: int = (pa[k] ^ S) - S
                    if v > 0:
                        v = (v + half) // count
                    else:
                        v = 0 - (half - v) // count
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    py[o + k] = v
                    k += 1
                o += c
                ox += 1
            oy += 1
        b += 1
