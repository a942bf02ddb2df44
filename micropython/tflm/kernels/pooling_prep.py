"""AVERAGE_POOL_2D and MAX_POOL_2D: prepare, the checks and geometry both
share (see pooling.py for the semantics and the eval that invoke() runs).
Construction only: imported by pooling.prepare and max_pool.prepare, and
dropped once an interpreter is built (interpreter.CONSTRUCTION).
"""

from array import array

from micropython import const

from ..errors import ModelError, PrepareError

_INT16 = const(7)
_INT8 = const(9)
_PADDING_SAME = const(0)
_PADDING_VALID = const(1)

_POOL2D_OPTIONS = const(5)
_POOL2D_FILTER_HEIGHT = const(4)
_POOL2D_FILTER_WIDTH = const(3)
_POOL2D_FUSED_ACTIVATION_FUNCTION = const(5)
_POOL2D_PADDING = const(0)
_POOL2D_STRIDE_H = const(2)
_POOL2D_STRIDE_W = const(1)
_FLOAT32 = const(0)

# The double 1e-6 of PoolingPrepare's scale check, as m * 2**e.
_ONE_E_MINUS_6 = (0x10C6F7A0B5ED8D, -72)


def _options(op):
    """(padding, stride_w, stride_h, filter_w, filter_h, activation);
    zeros (rejected later) when the Pool2DOptions table is missing."""
    if op.options_type != _POOL2D_OPTIONS:
        return 0, 0, 0, 0, 0, 0
    return (op.opt_byte(_POOL2D_PADDING, 0),
            op.opt_int(_POOL2D_STRIDE_W, 0), op.opt_int(_POOL2D_STRIDE_H, 0),
            op.opt_int(_POOL2D_FILTER_WIDTH, 0),
            op.opt_int(_POOL2D_FILTER_HEIGHT, 0),
            op.opt_byte(_POOL2D_FUSED_ACTIVATION_FUNCTION, 0))


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
        if t.type != x.type or t.type not in (_INT8, _INT16):
            raise PrepareError("%s: %s is %s; supported: int8, int16, "
                               "float32 (input and output alike)"
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
    lim = 127 if y.type == _INT8 else 32767
    if not -lim - 1 <= y.zero_point <= lim:
        raise PrepareError("%s: zero point %d is outside %s"
                           % (label, y.zero_point, y.dtype))
    return x, y


def prepare_with(op, ins, outs, ctx, fn, ev, avg):
    """Check an AVERAGE_POOL_2D (avg True) / MAX_POOL_2D op and bind its
    eval ev, which calls the int8 loop fn (pooling.avg_pool,
    max_pool._max_pool; for int16 tensors pool16's avg16 / max16 and
    eval16 run instead) once over all channels, with a work buffer
    (planned in the arena's head, as scratch) of a word per channel, and
    at least 16 for the Thumb average loop's counters.

    ins: [input int8 or int16 NHWC]; outs: [the same type, NHWC], same
    batch and channels, height and width as the padding rule gives, same
    scale (within 1e-6) and zero point. Options: padding, strides, filter
    size (all >= 1; an int16 average pool at most 65535 taps within
    the input, beyond which TFLM's int32 sum +- taps / 2 can overflow),
    fused activation. Raises PrepareError.
    """
    from .conv_util import keep
    from .. import quant
    if ins and ins[0] is not None and ins[0].type == _FLOAT32:
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
    if x.type == _INT16:  # (declared in kernels._LAZY)
        from .pool16 import avg16, eval16, max16
        taps = min(fh, x.shape[1]) * min(fw, x.shape[2])  # in bounds
        if avg and taps > 65535:
            raise PrepareError("%s: an int16 average over %d taps can "
                               "overflow TFLM's int32 rounding (at most "
                               "65535)" % (label, taps))
        fn, ev = (avg16 if avg else max16), eval16
    lim = 127 if x.type == _INT8 else 32767
    try:
        lo, hi = quant.activation_range(act, y.scale, y.zero_point,
                                        -lim - 1, lim)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    ph, pw = _pad(h, fh, sh, oh), _pad(w, fw, sw, ow)
    if max(ph, pw) > 32767:  # TFLM's PaddingValues are int16_t
        raise PrepareError("%s: padding (%d, %d) exceeds 32767"
                           % (label, ph, pw))
    # thumb_pool.py's POOL_BLOCK (the loops' _P_* slots)
    p = array("i", [n, h, w, c, oh, ow, sh, sw, fh, fw, ph, pw, lo, hi])
    acc = ctx.work(max(c, 16), untouched=True)
    return ev, (fn, acc, x.data, y.data, keep(ctx, p), c)
