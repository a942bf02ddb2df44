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
FLOAT32) sums in int64 and uses the int64 one (common.cc):

    reduced = (m + 2**15) >> 16 if m < 0x7FFF0000 else 0x7FFF
    total_shift = 15 - shift
    out = int32((acc * reduced + 2**(total_shift - 1)) >> total_shift)

all in int64 (the product wraps there as it does in C). Here the int64
values are four 16-bit limbs in viper ints, so every product stays
below 2**31 and the code is the same on 32- and 64-bit ports. The
multipliers, the activation range and the checks are the int8 kernel's
(fully_connected.py), with int16 bounds. Imported by fully_connected's
prepare for int16 inputs only (kernels._LAZY).
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from .conv_util import keep, limit_scratch
from .fully_connected import _multipliers, _options, _shapes
from .quantize import store_i16
from .rescale import scale_i32

_INT8 = const(9)
_INT16 = const(7)
_INT32 = const(2)
_INT64 = const(4)
_UNIT_CHUNK = const(128)  # units whose results are kept at once (scratch)
_DCHUNK = const(64)  # products summed in a word before the int64 limbs


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
        wide = op.opt_byte(4, 0) != _INT32 if op.options_type == 8 else 1
    mults, shifts, per_channel = _multipliers(op, x, w, bias, y, units)
    try:
        lo, hi = quant.activation_range(act, y.scale, y.zero_point,
                                        -32768, 32767)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    n = len(mults)
    m32 = array("i", range(n))
    s32 = array("i", range(n))
    for c in range(n):
        m, s = mults[c], shifts[c]
        if wide:  # the int64 MultiplyByQuantizedMultiplier's operands
            if 15 - s < 1:
                raise PrepareError("%s: requantization multiplier too "
                                   "large for int64 accumulation (shift "
                                   "%d)" % (label, s))
            m = (m + 32768) >> 16 if m < 0x7FFF0000 else 0x7FFF
            s = 15 - s
        m32[c], s32[c] = m, s
    limit_scratch(ctx, min(units, _UNIT_CHUNK))
    nc = ctx.scratch_len
    chunks = []  # (multipliers, shifts) from each chunk's first unit
    for u0 in range(0, units, nc):
        k = u0 if per_channel else 0
        chunks.append((memoryview(m32)[k:], memoryview(s32)[k:]))
    prm = array("i", (batches, units, depth, nc, per_channel,
                      -x.zero_point, 0 if bias is None else 1, wide))
    qp = array("i", [y.zero_point, lo, hi])
    state = (x.data, w.data, y.data,
             w.data if bias is None else bias.data, keep(ctx, prm),
             tuple(chunks), keep(ctx, qp), ctx.scratch)
    return _eval, state


def _eval(st):
    _fc16(st)


@micropython.viper
def _fc16(st):
    """All rows and units; per chunk of units the results go to the
    scratch words, then through scale_i32 (int32 accumulators) and
    store_i16. Input and bias are read bytewise (any alignment)."""
    p = ptr32(st[4])
    one: int = 1
    S: int = one << 31
    B: int = p[0]
    U: int = p[1]
    D: int = p[2]
    NC: int = p[3]
    PC: int = p[4]
    off: int = (p[5] ^ S) - S
    has_bias: int = p[6]
    wide: int = p[7]
    xb = ptr8(st[0])
    wb = ptr8(st[1])
    out = st[2]
    bb = ptr8(st[3])
    chunks = st[5]
    qp = st[6]
    scr = st[7]
    sp = ptr32(scr)
    b: int = 0
    while b < B:
        u0: int = 0
        ci: int = 0
        while u0 < U:
            n: int = U - u0
            if n > NC:
                n = NC
            ch = chunks[ci]
            mults = ch[0]
            shifts = ch[1]
            pm = ptr32(mults)
            ps = ptr32(shifts)
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
                        s: int = 0  # |s| < 64 * 128 * 65536 = 2**29
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
                    c: int = 0
                    if PC:
                        c = k
                    rm: int = pm[c]  # reduced multiplier, 0 .. 0x7FFF
                    ts: int = ps[c]  # total shift, 1 .. 46
                    # acc * rm (l0 * rm < 2**31), mod 2**64
                    t: int = l0 * rm
                    q0: int = t & 0xFFFF
                    t = l1 * rm + (t >> 16)
                    q1: int = t & 0xFFFF
                    t = l2 * rm + (t >> 16)
                    q2: int = t & 0xFFFF
                    q3: int = (l3 & 0xFFFF) * rm + (t >> 16)
                    # + 2**(ts - 1)
                    rb: int = ts - 1
                    bit: int = one << (rb & 15)
                    if rb < 16:
                        q0 += bit
                    elif rb < 32:
                        q1 += bit
                    else:
                        q2 += bit
                    q1 += q0 >> 16
                    q0 = q0 & 0xFFFF
                    q2 += q1 >> 16
                    q1 = q1 & 0xFFFF
                    q3 += q2 >> 16
                    q2 = q2 & 0xFFFF
                    q3 = q3 & 0xFFFF  # bits 48..63 (the rest wraps away)
                    ext: int = 0  # the digits above, sign-extended
                    if q3 & 0x8000:
                        ext = 0xFFFF
                    r: int = ts & 15
                    qi: int = ts >> 4
                    if qi == 0:
                        da: int = q0
                        db: int = q1
                        dc: int = q2
                    elif qi == 1:
                        da = q1
                        db = q2
                        dc = q3
                    else:
                        da = q2
                        db = q3
                        dc = ext
                    lo16: int = ((da >> r) | (db << (16 - r))) & 0xFFFF
                    hi16: int = ((db >> r) | (dc << (16 - r))) & 0xFFFF
                    sp[k] = (((hi16 ^ 0x8000) - 0x8000) << 16) | lo16
                k += 1
            if not wide:
                scale_i32(scr, n, mults, shifts, PC)
            store_i16(scr, n, out, b * U + u0, qp)
            u0 += n
            ci += 1
        b += 1
