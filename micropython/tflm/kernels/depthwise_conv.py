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

Taps in the padding add nothing, as TFLM skips them. TFLM takes the depth
multiplier from the options (and only debug-checks OC == C * dm); here a
mismatch is a PrepareError. Accumulators use only +, - and *, exact modulo
2**32 on every word size.

Eval (_dwp): per tile of output pixels and input channel, mac.plane
copies the input plane the tile reads into a work buffer as x + 128
bytes, the padding holding zp + 128, so that each output is one loop over
its taps with no bounds checks, sum(w * (x + 128)) plus the bias less
(zp + 128) * sum(w); mac.dw (mac.dw3 for 3x3 filters) sums and
requantizes a channel's outputs over the tile (fixedpoint.requant_i8b's
fast path, RoundingDivideByPOT folded in); a value beyond that fast path
comes back and goes through requant_i8b. `mac` is thumb_dw.py's machine
code on Cortex-M (about 14 instructions per MAC on person_detect's
layers, 9 on micro_speech's: bench/device.md), thumb_dw_dsp.py's on
Cortex-M4/M7/M33 (kernels.DSP: UXTB16, SMLAD, SMULL; about 7 and 2.7 on
armv7emsp: its dw3 reads the 3x3 filter's taps in place and requantizes
every sum exactly, SMLAL, for right shifts 2..23, driven by dw_dsp.py's
copy of _dwp, whose thumb_dw_dsp.dwc does a tile's every channel in one
call when the depth multiplier is 1: about 5 per MAC, and whose
thumb_dw_dsp.dwm sums one input channel into 4 output channels at a
time: micro_speech's layer), mac_dw.py's viper elsewhere.
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
        if DSP:  # Cortex-M4/M7/M33: UXTB16, SMLAD and SMULL
            from . import thumb_dw_dsp as mac
        else:
            from . import thumb_dw as mac
    except (ImportError, SyntaxError, ValueError):
        mac = None
if mac is None:
    from . import mac_dw as mac

# Words of requant_i8b's qp (output zero point, activation min, max) at
# the start of the parameter block (the state): one kept block for both.
_QP = const(3)
# The regions and offsets (fixedpoint.rel) of the state's buffers (_S_
# slots, below), from word _A of the block (after qp and the _P_ words)
_NPAIRS = const(8)
_A = const(25)  # _QP + 22
# Bytes of a plane tile (see _dwp): an elastic work buffer
# (conv_util.elastic_work) of up to _PLANE_MAX where the arena's head has
# room during the op, else at least an eighth of the op's input + output
# bytes, at least _PLANE_MIN and at most _PLANE_MAX (where the op is the
# arena's peak its work buffer adds little); a tile one output pixel big
# may be larger.
_PLANE_MAX = const(2048)
_PLANE_MIN = const(512)
# requant's fast path (fixedpoint.requant_i8b): |x| <= 2**20
_FAST = const(1 << 20)
# int32 words of the blocks of mac.dw (DW_BLOCK in thumb_dw.py) and, after
# it, mac.plane (PL_BLOCK), in the work buffer
_DWB = const(45)
_PLB = const(32)
# int32 words of dw_dsp._dwm's blocks (its _MB + _MPL)
_DWM_WORDS = const(35)
_DEPTHWISE_CONV2D_DEPTH_MULTIPLIER = const(3)
_DEPTHWISE_CONV2D_DILATION_H_FACTOR = const(6)
_DEPTHWISE_CONV2D_DILATION_W_FACTOR = const(5)
_DEPTHWISE_CONV2D_FUSED_ACTIVATION_FUNCTION = const(4)
_DEPTHWISE_CONV2D_PADDING = const(0)
_DEPTHWISE_CONV2D_STRIDE_H = const(2)
_DEPTHWISE_CONV2D_STRIDE_W = const(1)
_INT16 = const(7)
_FLOAT32 = const(0)


def _tile(cap, oh, ow, kh, kw, sh, sw, dh, dw):
    """(rows, columns) of output pixels per tile, the bytes of a plane
    row and of the plane: the plane of a whole output row when it fits in
    cap bytes, as many rows as fit."""
    eh = (kh - 1) * dh + 1
    ew = (kw - 1) * dw + 1
    tw = ow
    if (ow - 1) * sw + ew > cap // eh:
        tw = max(1, (cap // eh - ew) // sw + 1)
    pw = (tw - 1) * sw + ew
    th = max(1, min(oh, (cap // pw - eh) // sh + 1))
    return th, tw, pw, ((th - 1) * sh + eh) * pw


def prepare(op, ins, outs, ctx):
    """Check a DEPTHWISE_CONV_2D operator and bind its eval function.

    ins: [input int8 [B,H,W,C], filter int8 [1,KH,KW,OC], bias int32 [OC]
    or None]; outs: [output int8 [B,OH,OW,OC]]. DepthwiseConv2DOptions:
    padding (0), stride_w (1), stride_h (2), depth_multiplier (3),
    fused_activation_function (4), dilation_w_factor (5),
    dilation_h_factor (6). Raises PrepareError for wrong types, ranks,
    shapes, options or quantization. Asks the context for one work
    buffer, elastic (conv_util.elastic_work): OC + KH*KW + _DWB words
    and an input plane tile of up to 2 KB where the arena's head has
    room during this op, else of an eighth of the input and output bytes
    (at least 512, at most 2 KB, at least one output pixel's; on a board
    that runs dw_dsp.py's dwm, kernels.PLAN_DSP, at least what dwm needs
    for a layer it takes). In a model compiled on the host
    (kernels.COMPILING), for a layer of more than one tile on a 2 KB
    plane whose constant filter has no channel with a positive shift,
    the filter's weights per output channel as int32 words and their sum
    are persistent words (in the model's bytes on the board: _dwp then
    gathers none) and the work buffer holds no KH*KW words.
    """
    from . import conv_util
    if ins and ins[0] is not None and ins[0].type == _FLOAT32:
        from .conv_f32 import prepare_depthwise
        return prepare_depthwise(op, ins, outs, ctx)
    if ins and ins[0] is not None and ins[0].type == _INT16:  # 16x8
        from .dw16 import prepare as prepare16
        return prepare16(op, ins, outs, ctx)
    inp, filt, bias, out = conv_util.check_io(op, ins, outs)
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
                                                True, ctx, neg_ok=True)
    bias_w = conv_util.bias_words(op, bias, oc, ctx)
    oh, ow = out.shape[1], out.shape[2]
    wpre = None
    from . import COMPILING, PLAN_DSP
    th, tw, _, most = _tile(_PLANE_MAX, oh, ow, kh, kw, sh, sw, dh, dw)
    if COMPILING and (th < oh or tw < ow):  # (on the host only)
        # more than one tile even on the largest plane: _dwp would
        # gather each channel's weights again per tile (one tile: once)
        from .compiled_prep import dw_weights
        wpre = dw_weights(ctx, op, inp, filt, out, act, shifts, oc, kh * kw)
    # work: OC words (word oc: an accumulator beyond the fast path, for
    # requant_i8b), KH*KW words (a filter's weights, unless wpre), the
    # _DWB words of the blocks of mac.dw and mac.plane, the plane
    # (elastic)
    fixed = oc + (0 if wpre else kh * kw) + _DWB
    # the least plane: _tile's for an eighth of the input and output
    # bytes; where PLAN_DSP, for a layer that dw_dsp._dwm takes (one
    # input channel, KW and OC multiples of 4, no dilation in width), at
    # least what dwm needs beyond _dwp's words: its block, the plane's,
    # the window, OC sums and biases, the filter transposed and a plane
    # tile of one pixel
    least = _tile(min(_PLANE_MAX, max(_PLANE_MIN, (
        inp.nbytes + out.nbytes) >> 3)), oh, ow, kh, kw, sh, sw, dh, dw)[3]
    if PLAN_DSP and c == 1 and not kw & 3 and not oc & 3 and dw == 1:
        nt = kh * kw
        need = 4 * (_DWM_WORDS + (nt >> 1) + 2 * oc + ((oc * nt) >> 2)
                    - fixed) + ((kh - 1) * dh + 1) * kw
        cap = max(need, 1)
        while _tile(cap, oh, ow, kh, kw, sh, sw, dh, dw)[3] < need:
            cap += 4
        least = max(least, _tile(cap, oh, ow, kh, kw, sh, sw, dh, dw)[3])
    most = max(least, most)
    work, words = conv_util.elastic_work(ctx, fixed + ((most + 3) >> 2),
                                         fixed + ((least + 3) >> 2), True)
    th, tw, pww, plane = _tile(4 * (words - fixed), oh, ow, kh, kw, sh, sw,
                               dh, dw)
    k3 = kh == 3 and kw == 3 and dw == 1  # mac.dw3: no dilation_w
    # qp first: one kept block (see _QP)
    # the parameter block, its pairs' words left 0 (persistent words: in
    # a compiled model's bytes, with the multipliers)
    p = conv_util.block(ctx, list(qp) + [
        b, h, w, c, oh, ow, oc, kh, kw, dm, sh, sw, dh, dw, ph, pw,
        inp.zero_point, th, tw, pww, conv_util.WORD // 8,
        0 if wpre is None else 1], _NPAIRS)
    conv_util.check_near(op, ctx, work, (inp.data, out.data))
    # the parameter block, then the buffers in the order of the _S_
    # slots (below): the state is the block, with their pairs (without
    # prepared weights, the filter in their slot: any buffer will do)
    st = (p, inp.data, filt.data, bias_w, out.data, mults, shifts, work,
          filt.data if wpre is None else wpre)
    return (_eval_k3 if k3 else _eval_any), conv_util.packed(ctx, st, _A)


def _eval_k3(st):
    _dwp(st)


def _eval_any(st):
    _dwp(st)


# The eval state: the parameter block (no object: fixedpoint.rel),
# requant_i8b's qp (_QP words: output zero point, activation min and
# max), then the words below (p: the block after qp), then from word _A
# the regions of the buffers and from word _A + 1 their byte offsets, in
# the order of the named slots (as conv.py's; the names fold to the
# numbers). ZP: the input zero
# point; TH, TW: output rows and columns per tile; PWW: bytes per plane
# row; REL: 1 on 64-bit ports (addresses in the blocks are relative to
# them, see mac.py).
_S_X = const(0)
_S_FILTER = const(1)
_S_BIAS = const(2)
_S_OUT = const(3)
_S_MULTS = const(4)
_S_SHIFTS = const(5)
_S_WORK = const(6)
_S_WPRE = const(7)  # prepare's weights (_P_WPRE), else the filter
# (_A, buffers): host_tools/mp_compile.py rewrites their regions and
# offsets
PAIRS = (_A, _NPAIRS)
# the buffers eval writes, the output first (compiled_regions.check)
WRITES = (_S_OUT, _S_WORK)
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
_P_ZP = const(16)
_P_TH = const(17)
_P_TW = const(18)
_P_PWW = const(19)
_P_REL = const(20)
_P_WPRE = const(21)  # 1: weights prepared in _S_WPRE (compiled_prep.py)


@micropython.viper
def _dwp(st):
    """The output in tiles of TH x TW pixels; per tile and input channel
    c, mac.plane copies the input plane the tile reads into the
    work buffer as bytes x ^ 0x80 = x + 128 (taps in the padding hold
    zp + 128), then for every output channel oc of c mac.dw (or
    mac.dw3 for 3x3 filters) sums each output with no bounds checks:

        acc = bias[oc] - (zp + 128) * sum(w) + sum over taps of
              w[tap, oc] * plane[tap]        (= TFLM's accumulator)

    and requantizes it (fixedpoint.requant_i8b's fast path, with
    RoundingDivideByPOT folded in). The weights of oc (<< ls, below) are
    copied into the work buffer as int32 words first (or read where
    prepare wrote them: _P_WPRE). Values beyond the
    fast path come back, one at a time, and go through requant_i8b.
    """
    qp = ptr32(st)  # the block: qp, then p
    p = ptr32(int(qp) + 4 * _QP)
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
    DM: int = p[_P_DM]
    SH: int = p[_P_SH]
    SW: int = p[_P_SW]
    DH: int = p[_P_DH]
    DW: int = p[_P_DW]
    PH: int = p[_P_PH]
    PW: int = p[_P_PW]
    zc: int = ((p[_P_ZP] ^ S) - S) + 128  # zp + 128, the padding's byte
    TH: int = p[_P_TH]
    TW: int = p[_P_TW]
    PWW: int = p[_P_PWW]
    qa: int = int(qp)
    x0: int = qa + int(rel(st, _A, _S_X))
    f0: int = qa + int(rel(st, _A, _S_FILTER))
    bp = ptr32(qa + int(rel(st, _A, _S_BIAS)))
    o: int = qa + int(rel(st, _A, _S_OUT))
    pm = ptr32(qa + int(rel(st, _A, _S_MULTS)))
    ps = ptr8(qa + int(rel(st, _A, _S_SHIFTS)))
    w0b: int = qa + int(rel(st, _A, _S_WORK))
    dwf = mac.dw
    if KH == 3 and KW == 3 and DW == 1:
        dwf = mac.dw3
    plf = mac.plane
    wb: int = w0b + 4 * OC  # oc's weights as int32
    wp: int = 0  # prepare's weights (_P_WPRE), none in the work buffer
    if p[_P_WPRE]:
        wp = qa + int(rel(st, _A, _S_WPRE))
        wb = wp
    tb: int = w0b + 4 * OC + 4 * KH * KW  # mac.dw's block
    if wp:
        tb = w0b + 4 * OC
    tq: int = tb + 4 * _PLB  # mac.plane's block
    pl: int = tb + 4 * _DWB  # the plane
    q = ptr32(tb)
    pq = ptr32(tq)
    rd: int = 0  # the blocks' addresses are relative to rd, rp
    rp: int = 0
    if p[_P_REL]:
        rd = tb
        rp = tq
    q[31] = p[_P_REL]
    pq[12] = p[_P_REL]
    eh: int = (KH - 1) * DH + 1
    ew: int = (KW - 1) * DW + 1
    rs: int = DH * PWW  # plane step between filter rows
    ntap: int = KH * KW
    q[9] = qp[0]  # ZO, LO, HI
    q[10] = qp[1]
    q[11] = qp[2]
    q[13] = OC
    q[14] = SW
    q[18] = SH * PWW
    q[19] = OW * OC
    q[22] = KH
    q[23] = KW
    q[24] = rs
    q[29] = DW
    q[30] = KW * DW
    pq[1] = PWW
    pq[9] = W * C
    pq[10] = C
    pq[11] = zc
    # R = max |x - zp| over int8 x: the accumulator's bound per weight
    rz: int = zc
    if rz < 255 - zc:
        rz = 255 - zc
    bw: int = _FAST + 1  # |x - zp| * |w| summed over the taps
    if ntap < 1024:
        bw = rz * 128 * ntap
    b: int = 0
    while b < B:
        oy0: int = 0
        while oy0 < OH:
            oy1: int = oy0 + TH
            if oy1 > OH:
                oy1 = OH
            ox0: int = 0
            while ox0 < OW:
                ox1: int = ox0 + TW
                if ox1 > OW:
                    ox1 = OW
                rows: int = (oy1 - oy0 - 1) * SH + eh
                cols: int = (ox1 - ox0 - 1) * SW + ew
                iy0: int = oy0 * SH - PH
                ix0: int = ox0 * SW - PW
                # columns [jl, jh) of a plane row are in the image, and
                # rows [ra, rb)
                jl: int = 0 - ix0
                if jl < 0:
                    jl = 0
                if jl > cols:
                    jl = cols
                jh: int = W - ix0
                if jh > cols:
                    jh = cols
                if jh < jl:
                    jh = jl
                ra: int = 0 - iy0
                if ra < 0:
                    ra = 0
                if ra > rows:
                    ra = rows
                rb: int = H - iy0
                if rb > rows:
                    rb = rows
                if rb < ra:
                    rb = ra
                pq[2] = cols
                pq[3] = ra
                pq[4] = rb
                pq[5] = rows
                pq[6] = jl
                pq[7] = jh
                q[15] = ox1 - ox0
                c: int = 0
                while c < C:
                    # the plane of input channel c for this tile
                    pq[0] = pl - rp
                    pq[8] = (x0 + (((b * H + iy0 + ra) * W + ix0 + jl) * C
                                   + c) - rp)
                    plf(st, tq - qa)
                    mm: int = 0
                    while mm < DM:
                        oc: int = c * DM + mm
                        # requantization of oc, x the accumulator: when
                        # |x << ls| <= 2**20 for every input (bound:
                        # |bias| + R * 128 * taps), requant_i8b's fast
                        # path with RoundingDivideByPOT folded in, and ls
                        # folded into weights and bias; otherwise (chk)
                        # that fast path for the values within it when
                        # ls == 0 (lim), requant_i8b for the others.
                        m: int = pm[oc]
                        m0: int = m & 0x7FF
                        m1: int = (m >> 11) & 0x7FF
                        m2: int = (m >> 22) & 0x1FF
                        sh_: int = (ps[oc] ^ 0x80) - 0x80
                        ls: int = 0
                        e: int = 0
                        if sh_ > 0:
                            ls = sh_
                        else:
                            e = 0 - sh_
                        bo: int = (bp[oc] ^ S) - S
                        ab: int = bo
                        if ab < 0:
                            ab = 0 - ab
                        chk: int = 1
                        lim: int = 0
                        if (uint(ab) < uint(_FAST)
                                and ab + bw <= (_FAST >> ls)):
                            chk = 0
                            lim = _FAST  # (never exceeded)
                        elif ls == 0:
                            lim = _FAST
                        if sh_ > 30:
                            # a negative multiplier (conv_util.NEG_MARK):
                            # every value but 0 (whose result is zp on
                            # any path) goes through requant_i8b
                            chk = 1
                            lim = 0
                            e = 0
                        kc: int = 256
                        sm: int = 0
                        se: int = 9 + e
                        if e > 21:  # the fast path's result is 0
                            m0 = 0
                            m1 = 0
                            m2 = 0
                            kc = 0
                        elif e:
                            kc = 256 + (one << (8 + e))
                            sm = -512
                        if chk:
                            ls = 0
                        # the weights of oc (<< ls) as int32 words, and
                        # their sum (prepare's: ls is 0 there)
                        sw_: int = 0
                        if wp:
                            wb = wp + 4 * oc * (ntap + 1)
                            sw_ = (ptr32(wb)[ntap] ^ S) - S
                        else:
                            fa: int = f0 + oc
                            t: int = 0
                            while t < ntap:
                                v: int = ((ptr8(fa)[0] ^ 0x80) - 0x80) << ls
                                ptr32(wb)[t] = v
                                sw_ += v
                                fa += OC
                                t += 1
                        q[1] = wb - rd
                        q[2] = (bo << ls) - zc * sw_
                        q[3] = m0
                        q[4] = m1
                        q[5] = m2
                        q[6] = kc
                        q[7] = sm
                        q[8] = se
                        q[16] = 0  # CL: start a row
                        q[17] = oy1 - oy0
                        q[20] = pl - rd
                        q[21] = (o + ((b * OH + oy0) * OW + ox0) * OC + oc
                                 - rd)
                        q[25] = lim
                        q[26] = lim + lim
                        while int(dwf(st, tb - qa)):
                            # a value beyond the fast path: requant_i8b
                            # for channel oc alone
                            ptr32(w0b)[oc] = q[27]
                            requant_i8b(0, oc, 0, w0b - qa, oc + 1, oc + 1,
                                        int(pm) - qa, int(ps) - qa, st,
                                        o - qa,
                                        ((q[28] ^ S) - S) + rd - o - oc, 2)
                            if q[17] == 0:  # NR: that was the last
                                break
                        mm += 1
                    c += 1
                ox0 = ox1
            oy0 = oy1
        b += 1


# Cortex-M4/M7/M33 (kernels.DSP: thumb_dw_dsp.dw3 has an EXACT path):
# _dwp with that path, dw_dsp.py (in DSP builds only, romfs.DSP_ONLY:
# the other builds do not carry it)
if getattr(mac, "EXACT", 0):
    from .dw_dsp import dwp as _dwp  # noqa: F811
