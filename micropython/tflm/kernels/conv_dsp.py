"""CONV_2D's driver for any filter on Cortex-M4/M7/M33 (kernels.DSP):
conv.py's _conv_any with its gather in machine code (thumb_dsp.gather,
which zero-fills the taps cut by the image border: one dots call per
pixel and group), two pixels at a time where both windows are whole in
x and there is one group (thumb_dsp.gather_pair or gather_pair_any, and
pair_dots: 2 pixels x 2 filters per loop), and the requantization in
machine code (thumb_dsp.requant; requant_i8b for a negative
multiplier).
conv.py imports it in place of its own where thumb_dsp has gather; a
DSP build's package only (romfs.DSP_ONLY), so that other builds do not
carry its machine code. The state and its slots are conv.py's (the
constants below are its: a const named with a leading underscore is
private to its module).
"""

import micropython
from micropython import const

from ..fixedpoint import rel, requant_i8b
from . import thumb_dsp

_GATHER = thumb_dsp.gather
_REQUANT = thumb_dsp.requant
_GATHER_PAIR = thumb_dsp.gather_pair
_GATHER_PAIR_ANY = thumb_dsp.gather_pair_any
_PAIR_DOTS = thumb_dsp.pair_dots

_QP = const(3)
_DBLK = const(30)
_RQB = const(21)  # thumb_dsp.requant's block: words 21 to 28
_DREL = const(9)
_NPAIRS = const(8)
_A = const(24)  # _QP + 21
_S_X = const(0)
_S_FILTER = const(1)
_S_BIAS = const(2)
_S_OUT = const(3)
_S_MULTS = const(4)
_S_SHIFTS = const(5)
_S_SCRATCH = const(6)
_S_WIN = const(7)
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
_P_DBLK = const(20)


@micropython.viper
def conv_any(st) -> int:
    """conv._conv_any (see it: the same sums) with each group's window
    gathered by thumb_dsp.gather (machine code: runs of bytes, and
    -128 * sum v into BASE) in place of the viper loop, as whole filter
    rows kyl .. kyh - 1: the taps that the left or right image border
    cuts are 0 in the window (gather's GVROW), which adds nothing to the
    sums (TFLM skips them), so every pixel takes one dots call per group
    (not one per filter row). With one group, a pixel whose window and
    the next one's are whole in x goes with it: both windows packed
    (thumb_dsp.gather_pair: runs of whole words; else gather_pair_any)
    and summed by pair_dots into both pixels' accumulators (the bias
    and signed filter bytes: no -128 * sum v term), when the batch has
    room for both. Each batch of accumulators is requantized by
    thumb_dsp.requant (requant_i8b if a channel's multiplier is
    negative). Returns 1; 0, doing nothing, for a block planned without
    kernels.PLAN_DSP (a model compiled for armv6m): its window buffer
    has no room for gather's and requant's blocks (conv._eval_any then
    runs conv._conv_any)."""
    qa: int = int(ptr32(st))  # the block: qp, then p
    p = ptr32(qa + 4 * _QP)
    if p[_P_DBLK] < _DBLK:  # no room for gather's and requant's blocks
        return 0
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
    dots = thumb_dsp.dots
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
    blk[4] = wsize
    gat = _GATHER
    blk[15] = xrow
    blk[16] = ((p[_P_OFF] ^ S) - S) + 128  # -input_zero_point
    rq = _REQUANT  # thumb_dsp.requant: RBUF RN RNCH RM RS RQP ROUT
    blk[_RQB] = sp - r0
    blk[_RQB + 2] = OC
    blk[_RQB + 3] = qa + rm - r0
    blk[_RQB + 4] = qa + rs - r0
    blk[_RQB + 5] = qa - r0
    # pixels two at a time (thumb_dsp.pair_dots) where both windows are
    # whole in x and there is one group: gather_pair packs runs of whole
    # words (a row's KW * CIN bytes where its taps are contiguous, else
    # CIN), gather_pair_any any runs
    pair: int = 0
    if FPG == OC:
        pair = 1
    gp = _GATHER_PAIR
    if (CIN & 3) and not (dwc == CIN and (wrow & 3) == 0):
        gp = _GATHER_PAIR_ANY
    pd = _PAIR_DOTS
    blk[29] = SW * C  # GXS: the second pixel's input
    o: int = 0
    k: int = 0
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
                wk: int = w0 + kyl * wrow  # filter row kyl's first tap
                n: int = nky * nkx * CIN  # in-image taps
                # the window: whole filter rows kyl .. kyh - 1, the taps
                # cut by the left or right border zero (gather: GVROW)
                rowlen: int = nky * wrow
                blk[19] = 0
                if n:  # thumb_dsp.gather: runs of bytes
                    blk[11] = CIN  # GRUN bytes, GNRUN times, GRSTEP apart
                    blk[12] = nkx
                    blk[13] = dwc
                    if dwc == CIN:  # the taps of a row are contiguous
                        blk[11] = nkx * CIN
                        blk[12] = 1
                    blk[14] = nky
                    if nkx < KW:
                        blk[19] = 4 * wrow
                else:
                    rowlen = 0
                npx: int = 1  # pixels summed here
                if (pair and n and nkx == KW and ox + 1 < OW and cap - pb
                        >= 2 * OC and ix0 + SW + (KW - 1) * DW < W):
                    npx = 2  # this pixel and the next, whole in x
                    blk[0] = v0 - r0
                    blk[2] = v0 + 4 * n - r0
                    blk[10] = xg
                    gp(st, wa - qa)
                    blk[1] = 4 * OC  # PAIR_BLOCK: OB, VE, WP, BP, OUT, NF
                    blk[3] = wk - r0
                    blk[5] = bp - r0
                    blk[7] = sp + 4 * pb - r0
                    blk[8] = OC
                    pd(st, wa - qa)
                    k = OC  # (no single-pixel groups)
                else:
                    blk[1] = v0 + 4 * (rowlen & ~7) - r0
                    blk[2] = v0 + 4 * rowlen - r0
                    k = 0
                while k < OC:
                    # Gather this group's v, and -128 * sum v into BASE.
                    blk[0] = v0 - r0
                    if n:
                        blk[10] = xg
                        blk[20] = v0 + 4 * kxl * CIN - r0
                        gat(st, wa - qa)
                    else:  # no tap in the image: the bias alone
                        blk[6] = 0
                    # the group's FPG sums, from the bias and -128 * sum v
                    blk[3] = wk - r0
                    blk[5] = bp + 4 * k - r0
                    blk[7] = sp + 4 * (pb + k) - r0
                    blk[8] = FPG
                    dots(st, wa - qa)
                    wk += FPG * wsize
                    k += FPG
                    xg += CIN
                pb += npx * OC
                o += npx * OC
                if pb >= cap:  # the batch: thumb_dsp.requant
                    blk[_RQB + 1] = pb
                    blk[_RQB + 6] = qa + ro + o - pb - r0
                    if not int(rq(st, wa - qa + 4 * _RQB)):
                        pb = 0
                if pb >= cap:  # or a negative multiplier: requant_i8b
                    requant_i8b(0, 0, 0, sp - qa, pb, OC, rm, rs, st, ro,
                                o - pb, 2)
                    pb = 0
                ox += npx
            oy += 1
        b += 1
    if pb:
        blk[_RQB + 1] = pb
        blk[_RQB + 6] = qa + ro + o - pb - r0
        if not int(rq(st, wa - qa + 4 * _RQB)):
            pb = 0
    if pb:
        requant_i8b(0, 0, 0, sp - qa, pb, OC, rm, rs, st, ro, o - pb, 2)
    return 1
