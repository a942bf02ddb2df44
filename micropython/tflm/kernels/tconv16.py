"""TRANSPOSE_CONV 16x8: int16 input and output, int8 filter (per-channel
or per-tensor), int64 or int16 bias (or none).

Follows tensorflow/lite/micro/kernels/transpose_conv.cc (kTfLiteInt16:
an int16 bias is widened to int64 in a scratch buffer) and
reference_integer_ops::TransposeConv for int16_t (kernels/internal/
reference/integer_ops/transpose_conv.h): every input pixel adds x * f
into an int64 accumulator of each output pixel it reaches (TFLM's
output-sized int64 scratch), then

    out = clamp(MultiplyByQuantizedMultiplier(acc + bias[o], m[o],
                                              shift[o]))

with the int64 MultiplyByQuantizedMultiplier (wide.finish). No zero point
enters that arithmetic: a model whose int16 input or output has a zero
point other than 0 is refused (TFLM computes as if it were 0), as the
16x8 CONV_2D. Geometry (padding from the output size, the taps of each
output pixel) and the multipliers are the int8 kernel's
(transpose_conv.py, conv_util), with int16 bounds.

As the int8 kernel, this one gathers: one output pixel at a time, its
channels' sums run over the taps that reach it, as 16-bit limbs (64
products of int16 * int8 at most in one word), so no output-sized buffer
is needed: int64 sums are exact in any order. Input and bias are read
bytewise (any alignment). Imported by transpose_conv's prepare for int16
inputs only (kernels._LAZY).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .quantize import store_i16
from .transpose_conv import _geometry, _taps
from .wide import channel_multipliers, finish

_INT8 = const(9)
_INT16 = const(7)
_INT64 = const(4)
_DCHUNK = const(64)  # |sum of 64 int16 * int8| < 2**29
_TRANSPOSE_CONV_OPTIONS = const(49)  # BuiltinOptions.TransposeConvOptions
_TRANSPOSE_CONV_FUSED_ACTIVATION_FUNCTION = const(3)
_TRANSPOSE_CONV_PADDING = const(0)
_TRANSPOSE_CONV_STRIDE_H = const(2)
_TRANSPOSE_CONV_STRIDE_W = const(1)

# state slots and parameter words
_S_P = const(0)
_S_X = const(1)
_S_W = const(2)
_S_B = const(3)
_S_Y = const(4)
_S_MS = const(5)
_S_SS = const(6)
_S_QP = const(7)
_S_WORK = const(8)
_S_YT = const(9)
_S_XT = const(10)
_P_B = const(0)
_P_H = const(1)
_P_W = const(2)
_P_IC = const(3)
_P_OH = const(4)
_P_OW = const(5)
_P_OC = const(6)
_P_KH = const(7)
_P_KW = const(8)
_P_SH = const(9)
_P_SW = const(10)
_P_BIAS = const(11)  # 0: none, 2: int16, 8: int64 (bytes per value)


def prepare(op, ins, outs, ctx):
    """TRANSPOSE_CONV with an int16 input (see the module doc).

    ins: [output_shape (not read), filter int8 [OC,KH,KW,IC], input int16
    [B,H,W,IC] (zero point 0), bias int64 or int16 [OC] (optional)];
    outs: [output int16 [B,OH,OW,OC], zero point 0]. TransposeConvOptions
    as the int8 kernel's. Raises PrepareError (also for a multiplier
    whose total shift 15 - shift is below 1, and an int32 bias, which
    TFLM would read as int64).
    """
    from . import conv_util
    label = op.label()
    if len(ins) not in (3, 4) or len(outs) != 1:
        raise PrepareError("%s: expected 3 or 4 inputs and 1 output, got "
                           "%d and %d" % (label, len(ins), len(outs)))
    filt, x, y = ins[1], ins[2], outs[0]
    bias = ins[3] if len(ins) == 4 else None
    for t, tt, what in ((x, _INT16, "input"), (filt, _INT8, "filter"),
                        (y, _INT16, "output")):
        conv_util.check_type(op, t, tt, what)
        conv_util.check_rank4(op, t, what)
        if min(t.shape) < 1:
            raise PrepareError("%s: %s %s has an empty shape %s"
                               % (label, what, t.label(), t.shape))
    for t, what in ((x, "input"), (y, "output")):
        if not t.scales:
            raise PrepareError("%s: %s %s is not quantized"
                               % (label, what, t.label()))
        if t.zero_point:
            raise PrepareError("%s: %s %s has zero point %d: TFLM's 16x8 "
                               "kernel computes as if it were 0"
                               % (label, what, t.label(), t.zero_point))
    if not filt.scales or len(filt.zero_points) != len(filt.scales):
        raise PrepareError("%s: filter %s needs as many zero points as "
                           "scales" % (label, filt.label()))
    padding = sw = sh = act = 0
    if op.options_type == _TRANSPOSE_CONV_OPTIONS:
        padding = op.opt_byte(_TRANSPOSE_CONV_PADDING, 0)
        sw = op.opt_int(_TRANSPOSE_CONV_STRIDE_W, 0)
        sh = op.opt_int(_TRANSPOSE_CONV_STRIDE_H, 0)
        act = op.opt_byte(_TRANSPOSE_CONV_FUSED_ACTIVATION_FUNCTION, 0)
    ph, pw = _geometry(op, filt, x, y, padding, sh, sw)
    b, h, w, ic = x.shape
    oc, kh, kw, _ = filt.shape
    _, oh, ow, _ = y.shape
    nb = 0
    if bias is not None:
        if bias.type not in (_INT64, _INT16) or bias.size != oc:
            raise PrepareError("%s: bias %s must be an int64 or int16 "
                               "tensor of %d values (is %s, %d)"
                               % (label, bias.label(), oc, bias.dtype,
                                  bias.size))
        nb = 8 if bias.type == _INT64 else 2
    mults, shifts, qp = conv_util.quant_params(op, x, filt, y, act, oc, True,
                                                ctx, -32768, 32767,
                                                neg_ok=True)
    ms, ss = channel_multipliers(op, filt, oc, mults, shifts, ctx)
    k = conv_util.keep
    p = array("i", (b, h, w, ic, oh, ow, oc, kh, kw, sh, sw, nb))
    st = (k(ctx, p), x.data, filt.data,
          filt.data if bias is None else bias.data, y.data, ms, ss,
          k(ctx, qp), conv_util.work_buffer(ctx, 4 * oc),
          k(ctx, _taps(oh, ph, sh, kh, h)), k(ctx, _taps(ow, pw, sw, kw, w)))
    return _eval, st


def _eval(st):
    _tconv16(st[_S_X], st[_S_W], st)


@micropython.viper
def _tconv16(x, wts, st):
    """Every output pixel: each channel's int64 sum over the taps that
    reach it (16-bit limbs in the work words), then wide.finish and
    store_i16."""
    xb = ptr8(x)
    wb = ptr8(wts)
    p = ptr32(st[_S_P])
    B: int = p[_P_B]
    H: int = p[_P_H]
    W: int = p[_P_W]
    IC: int = p[_P_IC]
    OH: int = p[_P_OH]
    OW: int = p[_P_OW]
    OC: int = p[_P_OC]
    KH: int = p[_P_KH]
    KW: int = p[_P_KW]
    SH: int = p[_P_SH]
    SW: int = p[_P_SW]
    NB: int = p[_P_BIAS]
    bb = ptr8(st[_S_B])
    out = st[_S_Y]
    ms = st[_S_MS]
    ss = st[_S_SS]
    qp = st[_S_QP]
    work = st[_S_WORK]
    wp = ptr32(work)
    yt = ptr32(st[_S_YT])
    xt = ptr32(st[_S_XT])
    o: int = 0  # output pixel index
    bi: int = 0
    while bi < B:
        oy: int = 0
        while oy < OH:
            ky0: int = yt[3 * oy]
            iy0: int = yt[3 * oy + 1]
            ny: int = yt[3 * oy + 2]
            ox: int = 0
            while ox < OW:
                kx0: int = xt[3 * ox]
                ix0: int = xt[3 * ox + 1]
                nx: int = xt[3 * ox + 2]
                k: int = 0
                while k < OC:
                    l0: int = 0
                    l1: int = 0
                    l2: int = 0
                    l3: int = 0
                    if NB == 8:
                        j: int = 8 * k
                        l0 = bb[j] | (bb[j + 1] << 8)
                        l1 = bb[j + 2] | (bb[j + 3] << 8)
                        l2 = bb[j + 4] | (bb[j + 5] << 8)
                        l3 = ((bb[j + 6] | (bb[j + 7] << 8)) ^ 0x8000) \
                            - 0x8000
                    elif NB == 2:
                        j = 2 * k
                        l0 = ((bb[j] | (bb[j + 1] << 8)) ^ 0x8000) - 0x8000
                    ty: int = 0
                    while ty < ny:
                        ky: int = ky0 + ty * SH
                        iy: int = iy0 - ty
                        tx: int = 0
                        while tx < nx:
                            kx: int = kx0 + tx * SW
                            ix: int = ix0 - tx
                            xa: int = 2 * (((bi * H + iy) * W + ix) * IC)
                            wa: int = ((k * KH + ky) * KW + kx) * IC
                            i: int = 0
                            while i < IC:
                                e: int = i + _DCHUNK
                                if e > IC:
                                    e = IC
                                s: int = 0
                                while i < e:
                                    xv: int = ((xb[xa] | (xb[xa + 1] << 8))
                                               ^ 0x8000) - 0x8000
                                    s += ((wb[wa] ^ 0x80) - 0x80) * xv
                                    xa += 2
                                    wa += 1
                                    i += 1
                                l0 += s
                                l1 += l0 >> 16
                                l0 = l0 & 0xFFFF
                                l2 += l1 >> 16
                                l1 = l1 & 0xFFFF
                                l3 += l2 >> 16
                                l2 = l2 & 0xFFFF
                            tx += 1
                        ty += 1
                    # normalized limbs (an int16 bias and no tap: not yet)
                    l1 += l0 >> 16
                    l2 += l1 >> 16
                    l3 += l2 >> 16
                    j = 4 * k
                    wp[j] = l0 & 0xFFFF
                    wp[j + 1] = l1 & 0xFFFF
                    wp[j + 2] = l2 & 0xFFFF
                    wp[j + 3] = l3
                    k += 1
                finish(work, OC, ms, ss)
                store_i16(work, OC, out, o * OC, qp)
                o += 1
                ox += 1
            oy += 1
        bi += 1
