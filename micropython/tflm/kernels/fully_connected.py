"""FULLY_CONNECTED, int8 input / weights / output, int32 bias.

Follows tensorflow/lite/micro/kernels/fully_connected.cc,
fully_connected_common.cc (CalculateOpDataFullyConnected) and
tensorflow/lite/kernels/internal/reference/integer_ops/fully_connected.h:

    acc = bias[u] + sum_d w[u, d] * (x[b, d] - input_zp)
    out[b, u] = clamp(MultiplyByQuantizedMultiplier(acc, m, shift) + out_zp)

The input may have any rank: it is read as batches x depth rows, depth being
the weights' last dimension. The per-tensor multiplier is
(double)(float)(in_scale * w_scale) / out_scale; per-channel weights
(more than one scale) get (double)in * (double)w[u] / out per unit.

Since int32 arithmetic wraps, acc = (bias[u] - input_zp * sum_d w[u, d])
+ sum_d w[u, d] * x[b, d] exactly (mod 2**32): the first term is folded into
one int32 per unit at prepare, so the inner loop is a plain int8 dot product.
"""

from array import array

import micropython

from .. import quant, schema
from ..errors import ModelError, PrepareError
from ..fixedpoint import scale_i32, store_i8

FULLY_CONNECTED_OPTIONS = 8


def _wrap32(v):
    """v as a C int32 (two's complement wrap)."""
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def _options(op):
    """(activation, weights_format, keep_num_dims); TFLM defaults when the
    options table is absent or of another type."""
    if op.options_type != FULLY_CONNECTED_OPTIONS:
        return 0, 0, 0
    return op.opt_byte(0, 0), op.opt_byte(1, 0), op.opt_byte(2, 0)


def _check(op, ins, outs):
    """Type, shape and quantization checks; returns (x, w, bias, y)."""
    label = op.label()
    if len(ins) < 2 or ins[0] is None or ins[1] is None or len(outs) != 1:
        raise PrepareError("%s needs input, weights, optional bias and one "
                           "output" % label)
    x, w, y = ins[0], ins[1], outs[0]
    bias = ins[2] if len(ins) > 2 else None
    for t in (x, w, y):
        if t.type != schema.INT8:
            raise PrepareError("%s: %s is %s; only int8 input, weights and "
                               "output are supported" % (label, t.label(),
                                                         t.dtype))
        if not t.scales:
            raise PrepareError("%s: %s has no quantization" % (label,
                                                              t.label()))
    for t in (x, y):
        if not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s zero point %d is outside int8"
                               % (label, t.label(), t.zero_point))
    if not w.is_const:
        raise PrepareError("%s: weights %s must be constant"
                           % (label, w.label()))
    if bias is not None:
        if bias.type != schema.INT32 or not bias.is_const:
            raise PrepareError("%s: bias %s must be a constant int32 tensor"
                               % (label, bias.label()))
    if any(zp != 0 for zp in w.zero_points):
        raise PrepareError("%s: weights %s have a non-zero zero point "
                           "(TFLM requires symmetric weights)"
                           % (label, w.label()))
    return x, w, bias, y


def _shapes(op, x, w, bias, y):
    """(batches, units, depth) after checking every shape."""
    label = op.label()
    if len(w.shape) < 2 or len(y.shape) < 1:
        raise PrepareError("%s: weights %s must have rank >= 2, shape %s"
                           % (label, w.label(), w.shape))
    units, depth = w.shape[-2], w.shape[-1]
    if depth <= 0 or x.size % depth:
        raise PrepareError("%s: input %s shape %s is not a whole number of "
                           "rows of depth %d" % (label, x.label(), x.shape,
                                                 depth))
    batches = x.size // depth
    if y.shape[-1] != units or y.size != batches * units:
        raise PrepareError("%s: output %s shape %s, expected %d rows of %d "
                           "units" % (label, y.label(), y.shape, batches,
                                      units))
    if w.size != units * depth:
        raise PrepareError("%s: weights %s shape %s must be [units, depth]"
                           % (label, w.label(), w.shape))
    if bias is not None and bias.size != units:
        raise PrepareError("%s: bias %s has %d elements, expected %d"
                           % (label, bias.label(), bias.size, units))
    return batches, units, depth


def _multipliers(op, x, w, bias, y, units):
    """(mults, shifts, per_channel) as array('i')s, like TFLM's
    CalculateOpDataFullyConnected."""
    label = op.label()
    scales = w.scales
    try:
        if len(scales) > 1:
            qd = w.quantized_dimension
            if (not 0 <= qd < len(w.shape) or len(scales) != w.shape[qd]
                    or len(scales) != units):
                raise PrepareError("%s: weights %s have %d scales for shape "
                                   "%s" % (label, w.label(), len(scales),
                                           w.shape))
            pairs = [quant.conv_multiplier(x.scale, s, y.scale)
                     for s in scales]
            per_channel = 1
        else:
            _check_bias_scale(op, x, w, bias, y)
            pairs = [quant.fc_multiplier(x.scale, w.scale, y.scale)]
            per_channel = 0
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    for m, s in pairs:
        if s > 30:
            raise PrepareError("%s: requantization multiplier too large "
                               "(shift %d)" % (label, s))
    mults = array("i", [m for m, _ in pairs])
    shifts = array("i", [s for _, s in pairs])
    return mults, shifts, per_channel


def _check_bias_scale(op, x, w, bias, y):
    """GetQuantizedConvolutionMultipler's check that the bias scale matches
    in_scale * w_scale: |in * w - bias| / out <= 0.02, decided exactly."""
    if bias is None:
        return
    p = quant.mul(quant.from_f32(x.scale), quant.from_f32(w.scale))
    b = quant.from_f32(bias.scale) if bias.scales else quant.ZERO
    o = quant.from_f32(y.scale)
    # Compare |p - b| * 50 <= o exactly, all as integers times 2**e.
    e = min(p[1], b[1], o[1])
    diff = abs((p[0] << (p[1] - e)) - (b[0] << (b[1] - e)))
    if diff * 50 > o[0] << (o[1] - e):
        raise PrepareError("%s: bias %s scale %r does not match input scale "
                           "* weights scale" % (op.label(), bias.label(),
                                                bias.scale))


def _folded_bias(w, bias, units, depth, input_zp, ctx):
    """array('i'): bias[u] - input_zp * sum_d w[u, d], wrapped to int32."""
    if bias is not None:
        b = ctx.int32_array(bias)
    else:
        b = array("i", bytes(4 * units))
    sums = array("i", bytes(4 * units))
    _row_sums(w.data, units, depth, sums)
    for u in range(units):
        b[u] = _wrap32(b[u] - input_zp * sums[u])
    return b


@micropython.viper
def _row_sums(w, units: int, depth: int, out):
    """out[u] = sum_d w[u*depth + d] (int8 data at any address)."""
    pw = ptr8(w)
    po = ptr32(out)
    k: int = 0
    u: int = 0
    while u < units:
        s: int = 0
        end: int = k + depth
        while k < end:
            s += (pw[k] ^ 0x80) - 0x80
            k += 1
        po[u] = s
        u += 1


def prepare(op, ins, outs, ctx):
    """Check a FULLY_CONNECTED op and bind its eval.

    ins: input (int8, any rank), weights (int8 [units, depth], constant,
    zero point 0, per-tensor or per-unit scales), optional bias (constant
    int32 [units]). outs: int8 with batches * units elements, last dim
    units. Options: fused activation, weights_format (DEFAULT only),
    keep_num_dims (only shapes matter). Raises PrepareError.
    """
    label = op.label()
    act, fmt, _ = _options(op)
    if fmt != 0:
        raise PrepareError("%s: weights_format %d is not supported"
                           % (label, fmt))
    x, w, bias, y = _check(op, ins, outs)
    batches, units, depth = _shapes(op, x, w, bias, y)
    mults, shifts, per_channel = _multipliers(op, x, w, bias, y, units)
    try:
        lo, hi = quant.activation_range(act, y.scale, y.zero_point)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    qp = array("i", [y.zero_point, lo, hi])
    fbias = _folded_bias(w, bias, units, depth, x.zero_point, ctx)
    # Units are processed in chunks that fit the shared scratch array.
    n = ctx.scratch_len
    chunks = []
    for u0 in range(0, units, n):
        mv = memoryview(mults)[u0:] if per_channel else mults
        sv = memoryview(shifts)[u0:] if per_channel else shifts
        chunks.append((u0, min(n, units - u0), mv, sv))
    state = (ctx.scratch, x.data, w.data, y.data, fbias, batches, units,
             depth, qp, per_channel, chunks, len(chunks))
    return _eval, state


def _eval(state):
    (acc, xd, wd, yd, fbias, batches, units, depth, qp, per_channel,
     chunks, nchunks) = state
    b = 0
    while b < batches:
        k = 0
        while k < nchunks:
            u0, n, mv, sv = chunks[k]
            _dot_rows(acc, n, wd, u0 * depth, xd, b * depth, depth, fbias,
                      u0)
            scale_i32(acc, n, mv, sv, per_channel)
            store_i8(acc, n, yd, b * units + u0, qp)
            k += 1
        b += 1


@micropython.viper
def _dot_rows(acc, n: int, w, woff: int, x, xoff: int, depth: int, bias,
              boff: int):
    """acc[u] = bias[boff + u] + sum_d w[woff + u*depth + d] * x[xoff + d]
    for u < n (int8 data at any address, int32 wrap-around)."""
    pa = ptr32(acc)
    pw = ptr8(w)
    px = ptr8(x)
    pb = ptr32(bias)
    wp: int = woff
    xend: int = xoff + depth
    x4: int = xoff + (depth & ~3)
    u: int = 0
    while u < n:
        s: int = pb[boff + u]
        i: int = xoff
        while i < x4:
            s += ((pw[wp] ^ 0x80) - 0x80) * ((px[i] ^ 0x80) - 0x80)
            s += ((pw[wp + 1] ^ 0x80) - 0x80) * ((px[i + 1] ^ 0x80) - 0x80)
            s += ((pw[wp + 2] ^ 0x80) - 0x80) * ((px[i + 2] ^ 0x80) - 0x80)
            s += ((pw[wp + 3] ^ 0x80) - 0x80) * ((px[i + 3] ^ 0x80) - 0x80)
            wp += 4
            i += 4
        while i < xend:
            s += ((pw[wp] ^ 0x80) - 0x80) * ((px[i] ^ 0x80) - 0x80)
            wp += 1
            i += 1
        pa[u] = s  # the store keeps the low 32 bits: C's int32 wrap
        u += 1
