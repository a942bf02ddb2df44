"""CONV_2D, int8 (per-channel or per-tensor quantized filter).

Follows tensorflow/lite/micro/kernels/conv.cc and conv_common.cc with
reference_integer_ops::ConvPerChannel (kernels/internal/reference/
integer_ops/conv.h): NHWC input [B, H, W, C], filter [OC, KH, KW, CIN]
(C = groups * CIN), optional int32 bias [OC], output [B, OH, OW, OC].
For each output value

    acc = sum over in-image taps and CIN of f * (x - input_zero_point)
    out = clamp(MultiplyByQuantizedMultiplier(acc + bias, m[oc], s[oc])
                + output_zero_point, act_min, act_max)

Taps that fall in the padding are skipped, as TFLM skips them.

Arithmetic trick (exact): with u = x + 128 = byte ^ 0x80 and
v = u + in_off - 128 = x - input_zero_point, and wu = f + 128,

    sum f * v = sum wu * v - 128 * sum v

and the correction sum v is computed once per output pixel (and group)
for all output channels. The v of a pixel's in-image window (a group's
taps) are gathered once into an int32 array shared by all output
channels (conv_util.work_buffer), so the inner loop is one filter byte
xor 0x80 times one word. For 1x1 filters (no padding: every tap is in
the image, one group) a pixel's window is its C input values. The bias
is read where the model has it (conv_util.bias_words): no per-channel
copy is kept when it is 4-byte aligned.

The loops over filters and window run in `mac`'s functions (thumb.py's
machine code on Cortex-M, mac.py's viper elsewhere: the same results),
given a block of parameters at the start of the window buffer: `pixels`
gathers, sums and requantizes a row of 1x1 pixels,
`dots` sums a window (or one of its rows) for a group's filters (on
Cortex-M4/M7/M33, conv_dsp.py's copy of _conv_any gathers the window
with thumb_dsp.gather). Values beyond requant_i8b's fast path come back
and go through requant_i8b.

Accumulators use only +, - and *, so they are exact modulo 2**32 on
every word size; the int32 store truncates them to what TFLM's int32
accumulator holds. Filter bytes are read with ptr8 only (any alignment).
"""


import micropython
from micropython import const

from ..errors import PrepareError
from ..fixedpoint import rel, requant_i8b
from . import DSP, THUMB

# The loops: Thumb machine code on Cortex-M, viper elsewhere (THUMB)
mac = None
if THUMB:
    try:
        if DSP:  # Cortex-M4/M7/M33: SXTB16 and SMLAD
            from . import thumb_dsp as mac
        else:
            from . import thumb as mac
    except (ImportError, SyntaxError, ValueError):
        mac = None
if mac is None:
    from . import mac

# Words of requant_i8b's qp (output zero point, activation min, max) at
# the start of the parameter block (the state): one kept block for both.
_QP = const(3)
# The regions and offsets (fixedpoint.rel) of the state's buffers (_S_
# slots, below), from word _A of the block (after qp and the _P_ words)
_NPAIRS = const(8)
_A = const(24)  # _QP + 21
# int32 words before the window in the window buffer (_S_WIN): the block
# that mac.pixels reads (PX_BLOCK in thumb.py, REL its 33rd word), or
# mac.dots (DOTS_BLOCK, then REL, then GATHER_BLOCK in thumb_dsp.py:
# thumb_dsp.gather's words, written by conv_dsp.conv_any only)
_BLK = const(33)
_REL = const(32)
_DBLK = const(30)  # (a compiled block plans it: compiled.FORMAT)
_DREL = const(9)
# the words of mac.dots's block before the window where no DSP path runs
# (kernels.PLAN_DSP false): DOTS_BLOCK and REL; _P_DBLK says which
_DBLK_PLAIN = const(10)

# requant_i8b's fast path (fixedpoint): |x| <= 2**20
_FAST = const(1 << 20)
# _conv_any's accumulators at most: as many pixels' as this many words
# hold, two at least (allocator._MIN_SCRATCH, _scratch_len)
_MIN_ACC = const(32)
_CONV2D_DILATION_H_FACTOR = const(5)
_CONV2D_DILATION_W_FACTOR = const(4)
_CONV2D_FUSED_ACTIVATION_FUNCTION = const(3)
_CONV2D_PADDING = const(0)
_CONV2D_STRIDE_H = const(2)
_CONV2D_STRIDE_W = const(1)
_INT16 = const(7)
_FLOAT32 = const(0)


def prepare(op, ins, outs, ctx):
    """Check a CONV_2D operator and bind its eval function and state.

    ins: [input int8 [B,H,W,C], filter int8 [OC,KH,KW,CIN], bias int32
    [OC] or None]; outs: [output int8 [B,OH,OW,OC]]. Conv2DOptions:
    padding (0), stride_w (1), stride_h (2), fused_activation_function
    (3), dilation_w_factor (4), dilation_h_factor (5). Groups
    (C = g * CIN, g > 1) are supported. Raises PrepareError for wrong
    types, ranks, shapes, options or quantization. 1x1 filters: one
    pixel's accumulators in the operator's scratch, a work buffer for
    mac.pixels's block and a pixel's C values; other filters: one
    elastic work buffer (conv_util.elastic_work) for mac.dots's block
    (_DBLK words where kernels.PLAN_DSP, for conv_dsp.py's blocks too,
    else _DBLK_PLAIN), the window (KH*KW*CIN words) and the accumulators
    of NB pixels (at most max(32, 2 * OC) words, one pixel's at least,
    two where PLAN_DSP).
    """
    from . import conv_util
    if ins and ins[0] is not None and ins[0].type == _FLOAT32:
        from .conv_f32 import prepare_conv
        return prepare_conv(op, ins, outs, ctx)
    if ins and ins[0] is not None and ins[0].type == _INT16:  # 16x8
        from .conv16 import prepare as prepare16
        return prepare16(op, ins, outs, ctx)
    inp, filt, bias, out = conv_util.check_io(op, ins, outs)
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
                           "depth %d" % (op.label(), filt.label(), cin,
                                         inp.label(), c))
    groups = c // cin
    if oc < 1 or oc % groups:
        raise PrepareError("%s: %d output channels do not split into %d "
                           "groups" % (op.label(), oc, groups))
    ph, pw = conv_util.geometry(op, inp, filt, out, padding, sh, sw, dh, dw,
                                oc)
    mults, shifts, qp = conv_util.quant_params(op, inp, filt, out, act, oc,
                                                False, ctx, neg_ok=True)
    one = (kh == 1 and kw == 1 and ph == 0 and pw == 0 and groups == 1
           and filt.is_const)
    bias_a = conv_util.bias_words(op, bias, oc, ctx)
    from . import PLAN_DSP
    dblk = _DBLK if PLAN_DSP else _DBLK_PLAIN
    if one:  # mac.pixels keeps one pixel's accumulators
        conv_util.limit_scratch(ctx, oc)
        conv_util.check_scratch(op, ctx, oc)
        acc = ctx.scratch
        nb = ctx.scratch_len // oc
        win = conv_util.work_buffer(ctx, _BLK + c)
    else:
        # Accumulators of up to nb output pixels are requantized per
        # call: after the window, in its (elastic) work buffer, as many
        # as _scratch_len would give where the arena's head has room,
        # else one pixel's (two where conv_dsp.py sums pixels in pairs)
        taps = dblk + kh * kw * cin
        most = max(_MIN_ACC, 2 * oc) // oc
        least = min(most, 2 if PLAN_DSP else 1)
        win, words = conv_util.elastic_work(ctx, taps + most * oc,
                                            taps + least * oc)
        nb = (words - taps) // oc
        acc = conv_util.word_view(win, taps, words)
    off = -inp.zero_point - 128
    # qp (output zero point, activation range: requant_i8b's) first, so
    # that one kept block serves both (see _QP)
    oh, ow = out.shape[1], out.shape[2]
    if one and sh == 1 and sw == 1:
        # stride 1, no padding: the pixels of every row and batch follow
        # each other in the input and the output, one row for _conv_1x1
        # (one mac.pixels call: thumb_dsp.pixels takes them in pairs)
        b, h, w, oh, ow = 1, 1, b * h * w, 1, b * h * w
    # the parameter block, its pairs' words left 0 (persistent words: in
    # a compiled model's bytes, with the multipliers)
    p = conv_util.block(ctx, list(qp) + [
        b, h, w, c, oh, ow, oc, kh, kw, cin, sh, sw, dh, dw, ph, pw, off,
        oc // groups, nb, conv_util.WORD // 8, dblk], _NPAIRS)
    conv_util.check_near(op, ctx, win, (inp.data, filt.data, bias_a,
                                        out.data, mults, shifts, acc))
    # the parameter block, then the buffers in the order of the _S_
    # slots (below): the state is the block, with their pairs
    st = (p, inp.data, filt.data, bias_a, out.data, mults, shifts, acc,
          win)
    return (_eval_1x1 if one else _eval_any), conv_util.packed(ctx, st, _A)


def _eval_1x1(st):
    _conv_1x1(st)


def _eval_any(st):
    if _conv_dsp is None or not _conv_dsp(st):
        _conv_any(st)


# The eval state: the parameter block (no object: fixedpoint.rel),
# requant_i8b's qp (_QP words: output zero point, activation min and
# max), then the parameter words below (p = the block after qp), then
# from word _A the regions of the buffers, in the order of the named
# slots _S_*, and from word _A + 1 their byte offsets (const names fold
# to the numbers: no cost on a board; host_tools.kernel_consts reads
# them, and host code by name, as host_tools/mp_viper_bench.py). A new
# kernel writes its layout the same way. OFF = -input_zero_point - 128;
# FPG: filters per group; NB: output pixels per requantization batch (the
# accumulators of NB consecutive pixels are requantized by one
# requant_i8b call); REL: 1 on 64-bit ports (the block's addresses are
# stored relative to the block, see mac.py); DBLK: the window's first
# word in the window buffer (_conv_any). SCRATCH: the accumulators (of
# _conv_any: after the window, in its buffer).
_S_X = const(0)
_S_FILTER = const(1)
_S_BIAS = const(2)
_S_OUT = const(3)
_S_MULTS = const(4)
_S_SHIFTS = const(5)
_S_SCRATCH = const(6)
_S_WIN = const(7)
# (_A, buffers): host_tools/mp_compile.py rewrites their regions and
# offsets
PAIRS = (_A, _NPAIRS)
# the buffers eval writes, the output first (compiled_regions.check)
WRITES = (_S_OUT, _S_SCRATCH, _S_WIN)
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
_P_OFF = const(16)
_P_FPG = const(17)
_P_NB = const(18)
_P_REL = const(19)
_P_DBLK = const(20)  # the window's first word in the window buffer


@micropython.viper
def _conv_1x1(st):
    """1x1 filter, no padding, one group: a matrix product per pixel, a
    row of pixels per call of mac.pixels (gather, sums,
    requantization with requant_i8b's fast path); values beyond that
    fast path come back after their pixel and go through requant_i8b.
    """
    qa: int = int(ptr32(st))  # the block: qp, then p
    p = ptr32(qa + 4 * _QP)
    one: int = 1
    S: int = one << 31
    B: int = p[_P_B]
    H: int = p[_P_H]
    W: int = p[_P_W]
    C: int = p[_P_C]
    OH: int = p[_P_OH]
    OW: int = p[_P_OW]
    OC: int = p[_P_OC]
    SH: int = p[_P_SH]
    SW: int = p[_P_SW]
    x0: int = qa + int(rel(st, _A, _S_X))
    po: int = qa + int(rel(st, _A, _S_OUT))
    pm: int = qa + int(rel(st, _A, _S_MULTS))
    ps = ptr8(qa + int(rel(st, _A, _S_SHIFTS)))
    q = ptr32(qa)
    sp = ptr32(qa + int(rel(st, _A, _S_SCRATCH)))
    wa: int = qa + int(rel(st, _A, _S_WIN))
    pixels = mac.pixels
    blk = ptr32(wa)
    r0: int = 0  # addresses in the block are relative to r0 (mac.py)
    if p[_P_REL]:
        r0 = int(blk)
    blk[_REL] = p[_P_REL]
    v0: int = int(blk) + 4 * _BLK
    blk[0] = v0 - r0
    blk[1] = v0 + 4 * (C & ~7) - r0
    blk[2] = v0 + 4 * C - r0
    blk[4] = C
    blk[11] = p[_P_OFF]
    blk[13] = pm - r0
    blk[14] = 4
    blk[15] = int(ps) - r0
    blk[16] = 1
    blk[17] = q[0]  # ZO, LO, HI
    blk[18] = q[1]
    blk[19] = q[2]
    blk[21] = OC
    blk[23] = _FAST
    blk[24] = 2 * _FAST
    blk[25] = qa + int(rel(st, _A, _S_FILTER)) - r0
    blk[26] = qa + int(rel(st, _A, _S_BIAS)) - r0
    blk[27] = int(sp) - r0
    blk[28] = OC
    o: int = 0  # the output offset of the current row
    b: int = 0
    while b < B:
        oy: int = 0
        while oy < OH:
            blk[9] = x0 + ((b * H + oy * SH) * W) * C - r0
            blk[10] = SW * C
            blk[12] = OW
            blk[20] = po + o - r0
            blk[22] = 0
            while int(pixels(st, wa - qa)):
                # a pixel with values beyond the fast path: those
                # through requant_i8b, from their accumulators
                qo: int = ((blk[20] ^ S) - S) + r0 - po - OC
                k: int = 0
                while k < OC:
                    e: int = 0 - ((ps[k] ^ 0x80) - 0x80)
                    acc: int = (sp[k] ^ S) - S
                    if not (uint(e) <= uint(21) and
                            uint(acc + _FAST) <= uint(2 * _FAST)):
                        requant_i8b(0, k, 0, int(sp) - qa, k + 1, k + 1,
                                    pm - qa, int(ps) - qa, st, po - qa, qo,
                                    2)
                    k += 1
                blk[22] = 0
                if blk[12] == 0:
                    break
            o += OW * OC
            oy += 1
        b += 1


@micropython.viper
def _conv_any(st):
    """Any filter size, stride, dilation, padding and group count.

    For each output pixel the in-image tap window [kyl, kyh) x [kxl, kxh)
    is found once, so the loops have no bounds checks. For each group
    the window's v = x - input_zero_point are gathered into the window
    array (compact: rows of nkx * CIN), then mac.dots
    sums it with each of the group's filters: in one call when the
    window spans whole filter rows (nkx == KW: those filter bytes are
    contiguous), else one call per row, the first starting from the bias
    and the others from the sums so far. The accumulators of NB pixels
    are requantized by one requant_i8b call.
    """
    qa: int = int(ptr32(st))  # the block: qp, then p
    p = ptr32(qa + 4 * _QP)
    one: int = 1
    S: int = one << 31
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
    off: int = (p[_P_OFF] ^ S) - S
    FPG: int = p[_P_FPG]
    x0: int = qa + int(rel(st, _A, _S_X))
    w0: int = qa + int(rel(st, _A, _S_FILTER))
    bp: int = qa + int(rel(st, _A, _S_BIAS))
    # requant_i8b's buffers: byte offsets from the block (wide bit 1)
    ro: int = int(rel(st, _A, _S_OUT))
    rm: int = int(rel(st, _A, _S_MULTS))
    rs: int = int(rel(st, _A, _S_SHIFTS))
    sp: int = qa + int(rel(st, _A, _S_SCRATCH))
    wa: int = qa + int(rel(st, _A, _S_WIN))
    dots = mac.dots
    blk = ptr32(wa)
    r0: int = 0  # addresses in the block are relative to r0 (mac.py)
    if p[_P_REL]:
        r0 = int(blk)
    blk[_DREL] = p[_P_REL]
    v0: int = int(blk) + 4 * p[_P_DBLK]
    cap: int = p[_P_NB] * OC  # accumulators per batch
    pb: int = 0  # first accumulator of the current pixel
    dwc: int = DW * C  # input step between horizontal taps
    xrow: int = DH * W * C  # input step between vertical taps
    wrow: int = KW * CIN  # filter step between rows
    wsize: int = KH * KW * CIN  # one output channel's filter
    blk[4] = wsize  # (the block is DOTS_BLOCK and REL: no word beyond)
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
            nky: int = kyh - kyl
            ox: int = 0
            while ox < OW:
                ix0: int = ox * SW - PW
                kxl: int = 0
                while kxl < KW and ix0 + kxl * DW < 0:
                    kxl += 1
                kxh: int = kxl
                while kxh < KW and ix0 + kxh * DW < W:
                    kxh += 1
                nkx: int = kxh - kxl
                # First in-image tap of channel 0, and its filter offset.
                xg: int = x0 + ((b * H + iy0 + kyl * DH) * W
                                + ix0 + kxl * DW) * C
                wk: int = w0 + (kyl * KW + kxl) * CIN
                rowlen: int = nkx * CIN
                n: int = nky * rowlen  # window size
                rows: int = nky  # calls of dots per group
                if nkx == KW or n == 0:  # whole filter rows: one call
                    rowlen = n  # (none: the bias alone)
                    rows = 1
                k: int = 0
                while k < OC:
                    # Gather this group's v, and -128 * sum v into BASE.
                    s: int = 0
                    va: int = v0
                    xr: int = xg
                    ky: int = 0
                    while ky < nky:
                        xk: int = xr
                        kx: int = 0
                        while kx < nkx:
                            xa: int = xk
                            xe: int = xa + CIN
                            while xa < xe:
                                v: int = (ptr8(xa)[0] ^ 0x80) + off
                                ptr32(va)[0] = v
                                s += v
                                va += 4
                                xa += 1
                            xk += dwc
                            kx += 1
                        xr += xrow
                        ky += 1
                    blk[6] = 0 - s * 128
                    # the group's FPG sums, row by row: the first from
                    # the bias and -128 * sum v, the others from there
                    blk[5] = bp + 4 * k - r0
                    r: int = 0
                    while r < rows:
                        va = v0 + 4 * r * rowlen
                        blk[0] = va - r0
                        blk[1] = va + 4 * (rowlen & ~7) - r0
                        blk[2] = va + 4 * rowlen - r0
                        blk[3] = wk + r * wrow - r0
                        blk[7] = sp + 4 * (pb + k) - r0
                        blk[8] = FPG
                        dots(st, wa - qa)
                        blk[5] = sp + 4 * (pb + k) - r0
                        blk[6] = 0
                        r += 1
                    wk += FPG * wsize
                    k += FPG
                    xg += CIN
                pb += OC
                o += OC
                if pb >= cap:
                    requant_i8b(0, 0, 0, sp - qa, pb, OC, rm, rs, st, ro,
                                o - pb, 2)
                    pb = 0
                ox += 1
            oy += 1
        b += 1
    if pb:
        requant_i8b(0, 0, 0, sp - qa, pb, OC, rm, rs, st, ro, o - pb, 2)


# Cortex-M4/M7/M33 (kernels.DSP: thumb_dsp has gather): _conv_any with
# its gather in machine code, conv_dsp.py (in DSP builds only,
# romfs.DSP_ONLY: the other builds do not carry it), run by _eval_any
_conv_dsp = None
if hasattr(mac, "gather"):
    from .conv_dsp import conv_any as _conv_dsp
