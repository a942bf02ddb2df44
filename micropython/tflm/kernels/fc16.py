"""FULLY_CONNECTED 16x8: int16 input and output, int8 weights, int64 or
int32 bias (TFLM's int16 activations / int8 weights quantization).

Follows tensorflow/lite/micro/kernels/fully_connected.cc (kTfLiteInt16
input with kTfLiteInt8 weights), fully_connected_common.cc
(CalculateOpDataFullyConnected) and
tensorflow/lite/kernels/internal/reference/integer_ops/fully_connected.h:

    acc = bias[u] + sum_d w[u, d] * (x[b, d] - input_zp)
    out[b, u] = clamp(MultiplyByQuantizedMultiplier(acc, m, shift) + out_zp)

TFLM picks the accumulator by the bias: an int32 bias (or, with none,
the options' quantized_bias_type INT32) sums in int32, wrapping as C's
int32 arithmetic does, and uses the int32 MultiplyByQuantizedMultiplier
(rescale.scale_i32); an int64 bias (or none, quantized_bias_type left
FLOAT32) sums in int64 and uses the int64 one (wide.finish). The
multipliers, the activation range and the checks are the int8 kernel's
(fully_connected.py), with int16 bounds. A unit's scale may be zero or
negative (per-channel weights, as in TFLM): its multiplier is then
(0, 0) or negative and used as TFLM uses it (int64: a negative reduced
multiplier, wide.finish; int32: the state's rescale function is
requant_neg.scale_any, imported only then, in place of scale_i32); a
negative per-tensor scale is refused as TFLM refuses it. Imported by
fully_connected's prepare for int16 inputs only (kernels._LAZY).
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from .fully_connected import _multipliers, _options, _shapes
from .quantize import store_i16
from .rescale import scale_i32
from .wide import finish, reduced

_INT8 = const(9)
_INT16 = const(7)
_INT32 = const(2)
_FULLY_CONNECTED_OPTIONS = const(8)
_INT64 = const(4)
_UNIT_CHUNK = const(128)  # units whose results are kept at once (scratch)
# products summed in one word before it is added to the int64 limbs:
# |sum| < 64 * 128 * 65536 = 2**29
_DCHUNK = const(64)
_FULLY_CONNECTED_QUANTIZED_BIAS_TYPE = const(4)


def _check(op, ins, outs):
    """(x, w, bias, y) after the type and quantization checks."""
    label = op.label()
    if len(ins) < 2 or ins[0] is None or ins[1] is None or len(outs) != 1:
        raise PrepareError("%s needs input, weights, optional bias and one "
                           "output" % label)
    x, w, y = ins[0], ins[1], outs[0]
    bias = ins[2] if len(ins) > 2 else None
    for t, ty in ((x, _INT16), (w, _INT8), (y, _INT16)):
        if t.type != ty:
            raise PrepareError("%s: %s is %s; an int16 input needs int8 "
                               "weights and an int16 output"
                               % (label, t.label(), t.dtype))
        if not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
    if not w.is_const:
        raise PrepareError("%s: weights %s must be constant"
                           % (label, w.label()))
    if any(zp != 0 for zp in w.zero_points):
        raise PrepareError("%s: weights %s have a non-zero zero point "
                           "(TFLM requires symmetric weights)"
                           % (label, w.label()))
    if bias is not None and (bias.type not in (_INT32, _INT64)
                             or not bias.is_const):
        raise PrepareError("%s: bias %s must be a constant int32 or int64 "
                           "tensor" % (label, bias.label()))
    return x, w, bias, y


def prepare(op, ins, outs, ctx):
    """FULLY_CONNECTED with an int16 input (see the module doc).

    ins: input (int16, any rank, rows of the weights' depth), weights
    (int8 [units, depth], constant, zero point 0, per-tensor or per-unit
    scales), optional bias (constant int32 or int64 [units]). outs: int16
    with batches * units elements. Options as the int8 kernel's, and
    quantized_bias_type (the accumulator without a bias). Raises
    PrepareError (also for a multiplier whose total shift 15 - shift is
    below 1, where TFLM's int64 rounding shifts by a negative amount).
    """
    from .conv_util import NEG_MARK, keep, limit_scratch
    from .. import quant
    label = op.label()
    act, fmt, _ = _options(op)
    if fmt != 0:
        raise PrepareError("%s: weights_format %d is not supported"
                           % (label, fmt))
    x, w, bias, y = _check(op, ins, outs)
    batches, units, depth = _shapes(op, x, w, bias, y)
    if bias is not None:
        wide = bias.type == _INT64
    else:  # FullyConnectedOptions.quantized_bias_type (field 4)
        wide = (op.opt_byte(_FULLY_CONNECTED_QUANTIZED_BIAS_TYPE, 0) != _INT32
                if op.options_type == _FULLY_CONNECTED_OPTIONS else 1)
    mults, shifts, per_channel = _multipliers(op, x, w, bias, y, units)
    try:
        lo, hi = quant.activation_range(act, y.scale, y.zero_point,
                                        -32768, 32767)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    # per unit (a per-tensor multiplier repeated): int32 accumulation's
    # (multiplier, shift), int64's (reduced multiplier, total shift)
    m32 = array("i", range(units))
    s32 = array("i", range(units))
    neg = False
    for u in range(units):
        m, s = mults[u if per_channel else 0], shifts[u if per_channel
                                                      else 0]
        if m < 0:  # a negative unit scale: _multipliers marked its shift
            s -= NEG_MARK
            neg = True
        if wide:
            r = reduced(m, s)
            if r is None:
                raise PrepareError("%s: requantization multiplier too "
                                   "large for int64 accumulation (shift "
                                   "%d)" % (label, s))
            m, s = r
        m32[u], s32[u] = m, s
    # 4 scratch words per unit: an int64 accumulator's limbs
    limit_scratch(ctx, 4 * min(units, _UNIT_CHUNK))
    nc = ctx.scratch_len // 4
    chunks = []  # (multipliers, shifts) from each chunk's first unit
    for u0 in range(0, units, nc):
        chunks.append((memoryview(m32)[u0:], memoryview(s32)[u0:]))
    rescale = scale_i32
    if neg and not wide:  # int32 accumulation, a negative multiplier
        from .requant_neg import scale_any as rescale
    prm = array("i", (batches, units, depth, nc, -x.zero_point,
                      0 if bias is None else 1, wide))
    qp = array("i", [y.zero_point, lo, hi])
    # in the order of the _S_ slots (below)
    state = (x.data, w.data, y.data,
             w.data if bias is None else bias.data, keep(ctx, prm),
             tuple(chunks), keep(ctx, qp), ctx.scratch, rescale)
    return _eval, state


# The eval state (prepare's st), by named slot (as conv.py's; the
# names fold to the numbers):
_S_X = const(0)
_S_W = const(1)
_S_OUT = const(2)
_S_BIAS = const(3)
_S_PARAMS = const(4)
_S_CHUNKS = const(5)
_S_QP = const(6)
_S_SCRATCH = const(7)
_S_RESCALE = const(8)  # int32 accumulation's: scale_i32 or scale_any
# st[_S_PARAMS]: these words (p in the viper code); NC: units per
# chunk; OFF: -input_zero_point; WIDE: int64 accumulation.
_P_B = const(0)
_P_U = const(1)
_P_D = const(2)
_P_NC = const(3)
_P_OFF = const(4)
_P_HAS_BIAS = const(5)
_P_WIDE = const(6)


def _eval(st):
    _fc16(st)


@micropython.viper
def _fc16(st):
    """All rows and units; per chunk of units the accumulators go to the
    scratch words, then through st[_S_RESCALE] (int32: scale_i32, or
    scale_any for negative multipliers) or wide.finish (int64,
    4 words each) and store_i16. Input and bias are read bytewise (any
    alignment)."""
    p = ptr32(st[_S_PARAMS])
    one: int = 1
    S: int = one << 31
    B: int = p[_P_B]
    U: int = p[_P_U]
    D: int = p[_P_D]
    NC: int = p[_P_NC]
    off: int = (p[_P_OFF] ^ S) - S
    has_bias: int = p[_P_HAS_BIAS]
    wide: int = p[_P_WIDE]
    xb = ptr8(st[_S_X])
    wb = ptr8(st[_S_W])
    out = st[_S_OUT]
    bb = ptr8(st[_S_BIAS])
    chunks = st[_S_CHUNKS]
    qp = st[_S_QP]
    scr = st[_S_SCRATCH]
    rescale = st[_S_RESCALE]
    sp = ptr32(scr)
    b: int = 0
    while b < B:
        u0: int = 0
        ci: int = 0
        while u0 < U:
            n: int = U - u0
            if n > NC:
                n = NC
            k: int = 0
            while k < n:
                u: int = u0 + k
                xa: int = 2 * b * D
                wa: int = u * D
                if not wide:
                    acc: int = 0
                    if has_bias:
                        j: int = 4 * u
                        acc = bb[j] | (bb[j + 1] << 8) | (bb[j + 2] << 16)
                        acc += ((bb[j + 3] ^ 0x80) - 0x80) << 24
                    d: int = 0
                    while d < D:
                        xv: int = ((xb[xa] | (xb[xa + 1] << 8)) ^ 0x8000) \
                            - 0x8000
                        acc += ((wb[wa] ^ 0x80) - 0x80) * (xv + off)
                        xa += 2
                        wa += 1
                        d += 1
                    sp[k] = acc  # its low 32 bits: C's int32 wrap
                else:
                    # acc = l3 * 2**48 + l2 * 2**32 + l1 * 2**16 + l0
                    l0: int = 0
                    l1: int = 0
                    l2: int = 0
                    l3: int = 0
                    if has_bias:
                        j = 8 * u
                        l0 = bb[j] | (bb[j + 1] << 8)
                        l1 = bb[j + 2] | (bb[j + 3] << 8)
                        l2 = bb[j + 4] | (bb[j + 5] << 8)
                        l3 = ((bb[j + 6] | (bb[j + 7] << 8)) ^ 0x8000) \
                            - 0x8000
                    d = 0
                    while d < D:
                        e: int = d + _DCHUNK
                        if e > D:
                            e = D
                        s: int = 0
                        while d < e:
                            xv = ((xb[xa] | (xb[xa + 1] << 8)) ^ 0x8000) \
                                - 0x8000
                            s += ((wb[wa] ^ 0x80) - 0x80) * (xv + off)
                            xa += 2
                            wa += 1
                            d += 1
                        l0 += s
                        l1 += l0 >> 16
                        l0 = l0 & 0xFFFF
                        l2 += l1 >> 16
                        l1 = l1 & 0xFFFF
                        l3 += l2 >> 16
                        l2 = l2 & 0xFFFF
                    j = 4 * k
                    sp[j] = l0
                    sp[j + 1] = l1
                    sp[j + 2] = l2
                    sp[j + 3] = l3
                k += 1
            ch = chunks[ci]
            if wide:
                finish(scr, n, ch[0], ch[1])
            else:
                rescale(scr, n, ch[0], ch[1], 1)
            store_i16(scr, n, out, b * U + u0, qp)
            u0 += n
            ci += 1
        b += 1
