"""CONV_2D 16x8: int16 input and output, int8 filter, int64 or int32 bias
(TFLM's int16 activations / int8 weights quantization).

Follows tensorflow/lite/micro/kernels/conv.cc (kTfLiteInt16),
conv_common.cc and reference/integer_ops/conv.h (ConvPerChannel for
int16_t):

    acc = bias[o] + sum over the taps inside the image of
          w[o, ky, kx, i] * x[b, iy, ix, g * CIN + i]
    out = clamp(MultiplyByQuantizedMultiplier(acc, m[o], shift[o]))

No zero point enters that arithmetic (16x8 activations are symmetric): a
model whose int16 input or output has a zero point other than 0 is
refused, where TFLM would compute as if it were 0. An int32 bias (or none,
with the options' quantized_bias_type INT32) sums in int32, wrapping as
C's int32 arithmetic does, and uses the int32
MultiplyByQuantizedMultiplier (rescale.scale_i32); an int64 bias (or
none, quantized_bias_type left FLOAT32) sums in int64 and uses the int64
one (wide.finish). Groups, strides, dilation, padding, multipliers and
checks are the int8 kernel's (conv.py, conv_util), with int16 bounds.
A filter channel's scale may be zero or negative, as in TFLM: its
multiplier is then (0, 0) or negative and used as TFLM uses it (int64:
a negative reduced multiplier, wide.finish; int32: the state's rescale
function is requant_neg.scale_any, imported only then, in place of
scale_i32).
Imported by conv's prepare for int16 inputs only (kernels._LAZY).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .quantize import store_i16
from .rescale import scale_i32
from .wide import channel_multipliers, check_io16, finish

_INT32 = const(2)
_INT64 = const(4)
_CONV_2D_OPTIONS = const(1)
# products summed in one word before it is added to the int64 limbs:
# |sum| < 64 * 128 * 65536 = 2**29
_DCHUNK = const(64)
_CONV2D_DILATION_H_FACTOR = const(5)
_CONV2D_DILATION_W_FACTOR = const(4)
_CONV2D_FUSED_ACTIVATION_FUNCTION = const(3)
_CONV2D_PADDING = const(0)
_CONV2D_QUANTIZED_BIAS_TYPE = const(6)
_CONV2D_STRIDE_H = const(2)
_CONV2D_STRIDE_W = const(1)


def prepare(op, ins, outs, ctx):
    """CONV_2D with an int16 input (see the module doc).

    ins: [input int16 [B,H,W,C], filter int8 [OC,KH,KW,CIN] (zero point
    0), bias int32 or int64 [OC] or None]; outs: [output int16
    [B,OH,OW,OC]]; input and output zero points 0. Conv2DOptions as the
    int8 kernel's, and quantized_bias_type (field 6: the accumulator
    without a bias). Raises PrepareError (also for a multiplier whose
    total shift 15 - shift is below 1 with int64 accumulation).
    """
    from . import conv_util
    label = op.label()
    inp, filt, bias, out = check_io16(op, ins, outs)
    padding = op.opt_byte(_CONV2D_PADDING, 0)
    sw = op.opt_int(_CONV2D_STRIDE_W, 0)
    sh = op.opt_int(_CONV2D_STRIDE_H, 0)
    act = op.opt_byte(_CONV2D_FUSED_ACTIVATION_FUNCTION, 0)
    dw = op.opt_int(_CONV2D_DILATION_W_FACTOR, 1)
    dh = op.opt_int(_CONV2D_DILATION_H_FACTOR, 1)
    b, h, w, c = inp.shape
    oc, kh, kw, cin = filt.shape
    if cin < 1 or c < 1 or c % cin:
        raise PrepareError("%s: filter %s depth %d does not divide input %s "
                           "depth %d" % (label, filt.label(), cin,
                                         inp.label(), c))
    groups = c // cin
    if oc < 1 or oc % groups:
        raise PrepareError("%s: %d output channels do not split into %d "
                           "groups" % (label, oc, groups))
    if bias is not None:
        if bias.type not in (_INT32, _INT64) or not bias.is_const or \
                bias.size != oc:
            raise PrepareError("%s: bias %s must be a constant int32 or "
                               "int64 tensor of %d values"
                               % (label, bias.label(), oc))
        wide = bias.type == _INT64
    else:  # Conv2DOptions.quantized_bias_type
        wide = op.options_type != _CONV_2D_OPTIONS or \
            op.opt_byte(_CONV2D_QUANTIZED_BIAS_TYPE, 0) != _INT32
    ph, pw = conv_util.geometry(op, inp, filt, out, padding, sh, sw, dh, dw,
                                oc)
    mults, shifts, qp = conv_util.quant_params(op, inp, filt, out, act, oc,
                                                False, ctx, -32768, 32767,
                                                neg_ok=True)
    # per channel: int32 accumulation's (multiplier, shift) as int32
    # words, int64's (reduced multiplier, total shift)
    ms, ss = channel_multipliers(op, filt, oc, mults, shifts, ctx, wide)
    # one output pixel's accumulators: a word per channel (int32), or 4
    # (int64 limbs)
    work = conv_util.work_buffer(ctx, 4 * oc if wide else oc)
    rescale = scale_i32
    if not wide and not getattr(ctx, "sizing", False) and \
            any(ms[k] < 0 for k in range(oc)):  # a negative multiplier
        from .requant_neg import scale_any as rescale
    p = array("i", (b, h, w, c, out.shape[1], out.shape[2], oc, kh, kw, cin,
                    sh, sw, dh, dw, ph, pw, oc // groups,
                    0 if bias is None else 1, wide))
    # in the order of the _S_ slots (below)
    st = (conv_util.keep(ctx, p), inp.data, filt.data,
          filt.data if bias is None else bias.data, out.data, ms, ss,
          conv_util.keep(ctx, qp), work, rescale)
    return _eval, st


# The eval state (prepare's st), by named slot (as conv.py's; the
# names fold to the numbers):
_S_PARAMS = const(0)
_S_X = const(1)
_S_FILTER = const(2)
_S_BIAS = const(3)
_S_OUT = const(4)
_S_MULTS = const(5)
_S_SHIFTS = const(6)
_S_QP = const(7)
_S_WORK = const(8)
_S_RESCALE = const(9)  # int32 accumulation's: scale_i32 or scale_any
# st[_S_PARAMS]: these words (p in the viper code); FPG: filters per
# group; WIDE: int64 accumulation.
_P_B = const(0)
_P_H = const(1)
_P_W = const(2)
_P_C = const(3)
_P_OH = const(4)
_P_OW = const(5)
_P_OC = const(6)
_P_KH = const(7)
_P_KW = const(8)
_P_CIN = const(9)
_P_SH = const(10)
_P_SW = const(11)
_P_DH = const(12)
_P_DW = const(13)
_P_PH = const(14)
_P_PW = const(15)
_P_FPG = const(16)
_P_HAS_BIAS = const(17)
_P_WIDE = const(18)


def _eval(st):
    _conv16(st)


@micropython.viper
def _conv16(st):
    """Every output pixel: its channels' accumulators in the work words,
    then st[_S_RESCALE] (int32: scale_i32, or scale_any) or wide.finish
    (int64) and store_i16. Input
    and bias are read bytewise (any alignment)."""
    p = ptr32(st[_S_PARAMS])
    B: int = p[_P_B]
    H: int = p[_P_H]
    W: int = p[_P_W]
    C: int = p[_P_C]
    OH: int = p[_P_OH]
    OW: int = p[_P_OW]
    OC: int = p[_P_OC]
    KH: int = p[_P_KH]
    KW: int = p[_P_KW]
    CIN: int = p[_P_CIN]
    SH: int = p[_P_SH]
    SW: int = p[_P_SW]
    DH: int = p[_P_DH]
    DW: int = p[_P_DW]
    PH: int = p[_P_PH]
    PW: int = p[_P_PW]
    FPG: int = p[_P_FPG]
    has_bias: int = p[_P_HAS_BIAS]
    wide: int = p[_P_WIDE]
    xb = ptr8(st[_S_X])
    wb = ptr8(st[_S_FILTER])
    bb = ptr8(st[_S_BIAS])
    out = st[_S_OUT]
    ms = st[_S_MULTS]
    ss = st[_S_SHIFTS]
    qp = st[_S_QP]
    work = st[_S_WORK]
    rescale = st[_S_RESCALE]
    wp = ptr32(work)
    o: int = 0  # output pixel index
    bi: int = 0
    while bi < B:
        oy: int = 0
        while oy < OH:
            iy0: int = oy * SH - PH
            ox: int = 0
            while ox < OW:
                ix0: int = ox * SW - PW
                k: int = 0
                while k < OC:
                    g: int = k // FPG
                    acc: int = 0
                    l0: int = 0
                    l1: int = 0
                    l2: int = 0
                    l3: int = 0
                    if has_bias:
                        if wide:
                            j: int = 8 * k
                            l0 = bb[j] | (bb[j + 1] << 8)
                            l1 = bb[j + 2] | (bb[j + 3] << 8)
                            l2 = bb[j + 4] | (bb[j + 5] << 8)
                            l3 = ((bb[j + 6] | (bb[j + 7] << 8)) ^ 0x8000) \
                                - 0x8000
                        else:
                            j = 4 * k
                            acc = bb[j] | (bb[j + 1] << 8) | \
                                (bb[j + 2] << 16)
                            acc += ((bb[j + 3] ^ 0x80) - 0x80) << 24
                    ky: int = 0
                    while ky < KH:
                        iy: int = iy0 + ky * DH
                        if iy >= 0 and iy < H:
                            kx: int = 0
                            while kx < KW:
                                ix: int = ix0 + kx * DW
                                if ix >= 0 and ix < W:
                                    xa: int = 2 * (((bi * H + iy) * W + ix)
                                                   * C + g * CIN)
                                    wa: int = ((k * KH + ky) * KW + kx) * CIN
                                    i: int = 0
                                    while i < CIN:
                                        e: int = i + _DCHUNK
                                        if e > CIN:
                                            e = CIN
                                        s: int = 0
                                        while i < e:
                                            xv: int = ((xb[xa] |
                                                        (xb[xa + 1] << 8))
                                                       ^ 0x8000) - 0x8000
                                            s += ((wb[wa] ^ 0x80) - 0x80) * xv
                                            xa += 2
                                            wa += 1
                                            i += 1
                                        if wide:
                                            l0 += s
                                            l1 += l0 >> 16
                                            l0 = l0 & 0xFFFF
                                            l2 += l1 >> 16
                                            l1 = l1 & 0xFFFF
                                            l3 += l2 >> 16
                                            l2 = l2 & 0xFFFF
                                        else:
                                            acc += s
                                kx += 1
                        ky += 1
                    if wide:
                        j = 4 * k
                        wp[j] = l0
                        wp[j + 1] = l1
                        wp[j + 2] = l2
                        wp[j + 3] = l3
                    else:
                        wp[k] = acc  # its low 32 bits: C's int32 wrap
                    k += 1
                if wide:
                    finish(work, OC, ms, ss)
                else:
                    rescale(work, OC, ms, ss, 1)
                store_i16(work, OC, out, o * OC, qp)
                o += 1
                ox += 1
            oy += 1
        bi += 1
