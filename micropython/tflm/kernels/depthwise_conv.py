"""DEPTHWISE_CONV_2D, int8 (per-channel or per-tensor quantized filter).

Follows tensorflow/lite/micro/kernels/depthwise_conv.cc and
depthwise_conv_common.cc with reference_integer_ops::
DepthwiseConvPerChannel (kernels/internal/reference/integer_ops/
depthwise_conv.h): NHWC input [B, H, W, C], filter [1, KH, KW, OC] with
OC = C * depth_multiplier, optional int32 bias [OC], output
[B, OH, OW, OC]. Output channel oc reads input channel oc // dm:

    acc = sum over in-image taps of f[ky, kx, oc] * (x - input_zero_point)
    out = clamp(MultiplyByQuantizedMultiplier(acc + bias, m[oc], s[oc])
                + output_zero_point, act_min, act_max)

Taps in the padding are skipped, as TFLM skips them. TFLM takes the depth
multiplier from the options (and only debug-checks OC == C * dm); here a
mismatch is a PrepareError. Accumulators use only +, - and *, exact modulo
2**32 on every word size.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from ..fixedpoint import requant_i8b
from . import conv_util

# Words of requant_i8b's qp (output zero point, activation min, max) at
# the start of the parameter block st[0]: one kept block for both.
_QP = const(3)


def prepare(op, ins, outs, ctx):
    """Check a DEPTHWISE_CONV_2D operator and bind its eval function.

    ins: [input int8 [B,H,W,C], filter int8 [1,KH,KW,OC], bias int32 [OC]
    or None]; outs: [output int8 [B,OH,OW,OC]]. DepthwiseConv2DOptions:
    padding (0), stride_w (1), stride_h (2), depth_multiplier (3),
    fused_activation_function (4), dilation_w_factor (5),
    dilation_h_factor (6). Raises PrepareError for wrong types, ranks,
    shapes, options or quantization.
    """
    if ins and ins[0] is not None and ins[0].type == 0:  # float32
        from .conv_f32 import prepare_depthwise
        return prepare_depthwise(op, ins, outs, ctx)
    inp, filt, bias, out = conv_util.check_io(op, ins, outs)
    padding = op.opt_byte(0, 0)
    sw = op.opt_int(1, 0)
    sh = op.opt_int(2, 0)
    dm = op.opt_int(3, 0)
    act = op.opt_byte(4, 0)
    dw = op.opt_int(5, 1)
    dh = op.opt_int(6, 1)
    b, h, w, c = inp.shape
    one, kh, kw, oc = filt.shape
    if one != 1:
        raise PrepareError("%s: filter %s has shape %s, expected [1, kh, kw, "
                           "channels]" % (op.label(), filt.label(),
                                          filt.shape))
    if not 1 <= dm <= conv_util.INT16_MAX or c < 1 or oc != c * dm:
        raise PrepareError("%s: filter %s has %d channels, input %s has %d "
                           "and depth_multiplier is %d"
                           % (op.label(), filt.label(), oc, inp.label(), c,
                              dm))
    ph, pw = conv_util.geometry(op, inp, filt, out, padding, sh, sw, dh, dw,
                                oc)
    mults, shifts, qp = conv_util.quant_params(op, inp, filt, out, act, oc,
                                                True, ctx)
    bias_w = conv_util.bias_words(op, bias, oc, ctx)
    conv_util.check_scratch(op, ctx, oc)
    off = -inp.zero_point - 128
    # Accumulators of up to nb output pixels are requantized per call.
    nb = ctx.scratch_len // oc
    # qp first: one kept block (see _QP)
    p = array("i", list(qp) + [b, h, w, c, out.shape[1], out.shape[2], oc,
                               kh, kw, dm, sh, sw, dh, dw, ph, pw, off, nb])
    k = conv_util.keep
    st = (k(ctx, p), inp.data, filt.data, bias_w, out.data,
          mults, shifts, ctx.scratch)
    return (_eval_m1 if dm == 1 else _eval_any), st


def _eval_any(st):
    _dw(0, 0, 0, st, 0)


def _eval_m1(st):
    _dw(0, 0, 0, st, 1)


# Parameter slots of st[0], after its first _QP words (the qp of
# requant_i8b: output zero point, activation min and max):
# 0 B, 1 H, 2 W, 3 C, 4 OH, 5 OW, 6 OC, 7 KH, 8 KW, 9 DM, 10 SH, 11 SW,
# 12 DH, 13 DW, 14 PH, 15 PW, 16 OFF (= -input_zero_point - 128), 17 NB
# (output pixels per requantization batch).

@micropython.viper
def _dw(sa: int, xa: int, wa: int, st, m1: int):
    """One output pixel at a time: accumulators start at the bias, then
    each in-image tap adds filter[tap, oc] * v[tap, oc // DM] for all
    output channels in one pass (input, filter and accumulators are
    contiguous along channels). m1: DM == 1, a 4-way unrolled loop.
    The accumulators of NB consecutive output pixels are kept side by side
    in the scratch array and requantized by one requant_i8b call.

    sa, xa, wa are the hot locals (addresses of the current accumulator,
    input byte and filter byte); callers pass 0.
    """
    p = ptr32(int(ptr32(st[0])) + 4 * _QP)
    one: int = 1
    S: int = one << 31
    B: int = p[0]
    H: int = p[1]
    W: int = p[2]
    C: int = p[3]
    OH: int = p[4]
    OW: int = p[5]
    OC: int = p[6]
    KH: int = p[7]
    KW: int = p[8]
    DM: int = p[9]
    SH: int = p[10]
    SW: int = p[11]
    DH: int = p[12]
    DW: int = p[13]
    PH: int = p[14]
    PW: int = p[15]
    off: int = (p[16] ^ S) - S
    x0: int = int(ptr8(st[1]))
    w0: int = int(ptr8(st[2]))
    bp = ptr32(st[3])
    out = st[4]
    mults = st[5]
    shifts = st[6]
    qp = st[0]
    scratch = st[7]
    sp = ptr32(scratch)
    sbase: int = int(sp)
    cap: int = p[17] * OC  # accumulators per batch
    pb: int = 0  # first accumulator of the current pixel
    dm4: int = 4 * DM
    dwc: int = DW * C  # input step between horizontal taps
    xrow: int = DH * W * C  # input step between vertical taps
    wrow: int = KW * OC  # filter step between rows
    o: int = 0
    b: int = 0
    while b < B:
        oy: int = 0
        while oy < OH:
            iy0: int = oy * SH - PH
            kyl: int = 0
            while kyl < KH and iy0 + kyl * DH < 0:
                kyl += 1
            kyh: int = kyl
            while kyh < KH and iy0 + kyh * DH < H:
                kyh += 1
            ox: int = 0
            while ox < OW:
                ix0: int = ox * SW - PW
                kxl: int = 0
                while kxl < KW and ix0 + kxl * DW < 0:
                    kxl += 1
                kxh: int = kxl
                while kxh < KW and ix0 + kxh * DW < W:
                    kxh += 1
                s0: int = sbase + 4 * pb
                se: int = s0 + 4 * OC  # end of the accumulators
                s4: int = s0 + 4 * (OC & ~3)  # end of the unrolled part
                k: int = 0
                while k < OC:
                    sp[pb + k] = bp[k]
                    k += 1
                # First in-image tap of channel 0, and its filter.
                xr: int = x0 + ((b * H + iy0 + kyl * DH) * W
                                + ix0 + kxl * DW) * C
                wr: int = w0 + (kyl * KW + kxl) * OC
                ky: int = kyl
                while ky < kyh:
                    xt: int = xr
                    wt: int = wr
                    kx: int = kxl
                    while kx < kxh:
                        sa = s0
                        xa = xt
                        wa = wt
                        if m1:
                            while sa < s4:
                                ptr32(sa)[0] += (
                                    ((ptr8(wa)[0] ^ 0x80) - 0x80)
                                    * ((ptr8(xa)[0] ^ 0x80) + off))
                                ptr32(sa)[1] += (
                                    ((ptr8(wa)[1] ^ 0x80) - 0x80)
                                    * ((ptr8(xa)[1] ^ 0x80) + off))
                                ptr32(sa)[2] += (
                                    ((ptr8(wa)[2] ^ 0x80) - 0x80)
                                    * ((ptr8(xa)[2] ^ 0x80) + off))
                                ptr32(sa)[3] += (
                                    ((ptr8(wa)[3] ^ 0x80) - 0x80)
                                    * ((ptr8(xa)[3] ^ 0x80) + off))
                                sa += 16
                                xa += 4
                                wa += 4
                            while sa < se:
                                ptr32(sa)[0] += (
                                    ((ptr8(wa)[0] ^ 0x80) - 0x80)
                                    * ((ptr8(xa)[0] ^ 0x80) + off))
                                sa += 4
                                xa += 1
                                wa += 1
                        else:
                            while sa < se:
                                v: int = (ptr8(xa)[0] ^ 0x80) + off
                                sm: int = sa + dm4
                                while sa < sm:
                                    ptr32(sa)[0] += (
                                        ((ptr8(wa)[0] ^ 0x80) - 0x80) * v)
                                    sa += 4
                                    wa += 1
                                xa += 1
                        xt += dwc
                        wt += OC
                        kx += 1
                    xr += xrow
                    wr += wrow
                    ky += 1
                pb += OC
                o += OC
                if pb >= cap:
                    requant_i8b(0, 0, 0, scratch, pb, OC, mults, shifts, qp,
                               out, o - pb, 0)
                    pb = 0
                ox += 1
            oy += 1
        b += 1
    if pb:
        requant_i8b(0, 0, 0, scratch, pb, OC, mults, shifts, qp, out,
                    o - pb, 0)
