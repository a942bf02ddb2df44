"""DEPTHWISE_CONV_2D 16x8: int16 input and output, int8 filter, int64
bias (TFLM's int16 activations / int8 weights quantization).

Follows tensorflow/lite/micro/kernels/depthwise_conv.cc (kTfLiteInt16),
depthwise_conv_common.cc and reference/integer_ops/depthwise_conv.h
(DepthwiseConvPerChannel for int16_t):

    acc = bias[o] + sum over the taps inside the image of
          w[0, ky, kx, o] * x[b, iy, ix, o // depth_multiplier]
    out = clamp(MultiplyByQuantizedMultiplier(acc, m[o], shift[o]))

always in int64 (wide.finish). TFLM reads the bias as int64 whatever its
type, so an int32 bias is refused here (TFLM would read past it). No zero
point enters that arithmetic: a model whose int16 input or output has a
zero point other than 0 is refused, where TFLM would compute as if it
were 0. Strides, dilation, padding, multipliers and checks are the int8
kernel's (depthwise_conv.py, conv_util), with int16 bounds. Imported by
depthwise_conv's prepare for int16 inputs only (kernels._LAZY).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .quantize import store_i16
from .wide import channel_multipliers, check_io16, finish

_INT64 = const(4)
# taps summed in one word before it is added to the int64 limbs:
# |sum| < 64 * 128 * 65536 = 2**29
_DCHUNK = const(64)
_DEPTHWISE_CONV2D_DEPTH_MULTIPLIER = const(3)
_DEPTHWISE_CONV2D_DILATION_H_FACTOR = const(6)
_DEPTHWISE_CONV2D_DILATION_W_FACTOR = const(5)
_DEPTHWISE_CONV2D_FUSED_ACTIVATION_FUNCTION = const(4)
_DEPTHWISE_CONV2D_PADDING = const(0)
_DEPTHWISE_CONV2D_STRIDE_H = const(2)
_DEPTHWISE_CONV2D_STRIDE_W = const(1)


def prepare(op, ins, outs, ctx):
    """DEPTHWISE_CONV_2D with an int16 input (see the module doc).

    ins: [input int16 [B,H,W,C], filter int8 [1,KH,KW,OC] (zero point 0),
    bias int64 [OC] or None]; outs: [output int16 [B,OH,OW,OC]]; input
    and output zero points 0. DepthwiseConv2DOptions as the int8
    kernel's. Raises PrepareError (also for a multiplier whose total
    shift 15 - shift is below 1).
    """
    from . import conv_util
    label = op.label()
    inp, filt, bias, out = check_io16(op, ins, outs)
    padding = op.opt_byte(_DEPTHWISE_CONV2D_PADDING, 0)
    sw = op.opt_int(_DEPTHWISE_CONV2D_STRIDE_W, 0)
    sh = op.opt_int(_DEPTHWISE_CONV2D_STRIDE_H, 0)
    dm = op.opt_int(_DEPTHWISE_CONV2D_DEPTH_MULTIPLIER, 0)
    act = op.opt_byte(_DEPTHWISE_CONV2D_FUSED_ACTIVATION_FUNCTION, 0)
    dw = op.opt_int(_DEPTHWISE_CONV2D_DILATION_W_FACTOR, 1)
    dh = op.opt_int(_DEPTHWISE_CONV2D_DILATION_H_FACTOR, 1)
    b, h, w, c = inp.shape
    one, kh, kw, oc = filt.shape
    if one != 1:
        raise PrepareError("%s: filter %s has shape %s, expected [1, kh, kw, "
                           "channels]" % (label, filt.label(), filt.shape))
    if not 1 <= dm <= conv_util.INT16_MAX or c < 1 or oc != c * dm:
        raise PrepareError("%s: filter %s has %d channels, input %s has %d "
                           "and depth_multiplier is %d"
                           % (label, filt.label(), oc, inp.label(), c, dm))
    if bias is not None and (bias.type != _INT64 or not bias.is_const or
                             bias.size != oc):
        raise PrepareError("%s: bias %s must be a constant int64 tensor of "
                           "%d values (TFLM's 16x8 kernel reads it as "
                           "int64)" % (label, bias.label(), oc))
    ph, pw = conv_util.geometry(op, inp, filt, out, padding, sh, sw, dh, dw,
                                oc)
    mults, shifts, qp = conv_util.quant_params(op, inp, filt, out, act, oc,
                                                True, ctx, -32768, 32767,
                                                neg_ok=True)
    rms, tss = channel_multipliers(op, filt, oc, mults, shifts, ctx)
    # one output pixel's accumulators: 4 words (int64 limbs) per channel
    work = conv_util.work_buffer(ctx, 4 * oc)
    p = array("i", (b, h, w, c, out.shape[1], out.shape[2], oc, kh, kw, dm,
                    sh, sw, dh, dw, ph, pw, 0 if bias is None else 1))
    # in the order of the _S_ slots (below)
    st = (conv_util.keep(ctx, p), inp.data, filt.data,
          filt.data if bias is None else bias.data, out.data, rms, tss,
          conv_util.keep(ctx, qp), work)
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
# st[_S_PARAMS]: these words (p in the viper code).
_P_B = const(0)
_P_H = const(1)
_P_W = const(2)
_P_C = const(3)
_P_OH = const(4)
_P_OW = const(5)
_P_OC = const(6)
_P_KH = const(7)
_P_KW = const(8)
_P_DM = const(9)
_P_SH = const(10)
_P_SW = const(11)
_P_DH = const(12)
_P_DW = const(13)
_P_PH = const(14)
_P_PW = const(15)
_P_HAS_BIAS = const(16)


def _eval(st):
    _dw16(st)


@micropython.viper
def _dw16(st):
    """Every output pixel: its channels' int64 accumulators (4 limbs
    each) in the work words, then wide.finish and store_i16. Input and
    bias are read bytewise (any alignment)."""
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
    DM: int = p[_P_DM]
    SH: int = p[_P_SH]
    SW: int = p[_P_SW]
    DH: int = p[_P_DH]
    DW: int = p[_P_DW]
    PH: int = p[_P_PH]
    PW: int = p[_P_PW]
    has_bias: int = p[_P_HAS_BIAS]
    xb = ptr8(st[_S_X])
    wb = ptr8(st[_S_FILTER])
    bb = ptr8(st[_S_BIAS])
    out = st[_S_OUT]
    rms = st[_S_MULTS]
    tss = st[_S_SHIFTS]
    qp = st[_S_QP]
    work = st[_S_WORK]
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
                    ic: int = k // DM
                    l0: int = 0
                    l1: int = 0
                    l2: int = 0
                    l3: int = 0
                    if has_bias:
                        j: int = 8 * k
                        l0 = bb[j] | (bb[j + 1] << 8)
                        l1 = bb[j + 2] | (bb[j + 3] << 8)
                        l2 = bb[j + 4] | (bb[j + 5] << 8)
                        l3 = ((bb[j + 6] | (bb[j + 7] << 8)) ^ 0x8000) \
                            - 0x8000
                    s: int = 0
                    n: int = 0  # taps in s
                    ky: int = 0
                    while ky < KH:
                        iy: int = iy0 + ky * DH
                        if iy >= 0 and iy < H:
                            kx: int = 0
                            while kx < KW:
                                ix: int = ix0 + kx * DW
                                if ix >= 0 and ix < W:
                                    xa: int = 2 * (((bi * H + iy) * W + ix)
                                                   * C + ic)
                                    xv: int = ((xb[xa] | (xb[xa + 1] << 8))
                                               ^ 0x8000) - 0x8000
                                    wv: int = wb[(ky * KW + kx) * OC + k]
                                    s += ((wv ^ 0x80) - 0x80) * xv
                                    n += 1
                                    if n == _DCHUNK:
                                        l0 += s
                                        l1 += l0 >> 16
                                        l0 = l0 & 0xFFFF
                                        l2 += l1 >> 16
                                        l1 = l1 & 0xFFFF
                                        l3 += l2 >> 16
                                        l2 = l2 & 0xFFFF
                                        s = 0
                                        n = 0
                                kx += 1
                        ky += 1
                    l0 += s
                    l1 += l0 >> 16
                    l0 = l0 & 0xFFFF
                    l2 += l1 >> 16
                    l1 = l1 & 0xFFFF
                    l3 += l2 >> 16
                    l2 = l2 & 0xFFFF
                    j = 4 * k
                    wp[j] = l0
                    wp[j + 1] = l1
                    wp[j + 2] = l2
                    wp[j + 3] = l3
                    k += 1
                finish(work, OC, rms, tss)
                store_i16(work, OC, out, o * OC, qp)
                o += 1
                ox += 1
            oy += 1
        bi += 1
