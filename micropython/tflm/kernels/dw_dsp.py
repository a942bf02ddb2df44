"""DEPTHWISE_CONV_2D's driver on Cortex-M4/M7/M33 (kernels.DSP):
depthwise_conv.py's _dwp with mac.dw3's exact path (thumb_dw_dsp.dw3:
the 3x3 filter's taps read in place, every sum requantized exactly, for
right shifts 2..23), thumb_dw_dsp.dwc (a tile's every channel in
one call) when the depth multiplier is 1 and every channel takes that
path, and thumb_dw_dsp.dwm (_dwm) for one input channel (micro_speech's
layer, a CONV_2D of one channel: 4 output channels at a time, about 2.7
instructions per MAC there, where dw took 5.1) when the taps of a row
and the channels are multiples of 4. depthwise_conv.py imports it in
place of its own where thumb_dw_dsp has EXACT; a DSP build's package only
(romfs.DSP_ONLY), so that other builds do not carry its machine code.
The state, its slots and the work buffer are depthwise_conv.py's (the
constants below are its: a const named with a leading underscore is
private to its module): a model compiled on the host runs these paths
too.
"""

import micropython
from micropython import const

from ..fixedpoint import rel, requant_i8b
from . import thumb_dw_dsp as mac
from .thumb_dw_dsp import EXACT, dwc, dwm
from .thumb_dw_dsp import plane as plane_f

_QP = const(3)
_FAST = const(1 << 20)
_DWB = const(45)
_PLB = const(32)
_NPAIRS = const(8)
_A = const(25)  # _QP + 22
_S_X = const(0)
_S_FILTER = const(1)
_S_BIAS = const(2)
_S_OUT = const(3)
_S_MULTS = const(4)
_S_SHIFTS = const(5)
_S_WORK = const(6)
_S_WPRE = const(7)
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
_P_WPRE = const(21)


@micropython.viper
def dwp(st):
    """depthwise_conv._dwp (see it: the same outputs) with mac.dw3's
    exact path (thumb_dw_dsp.dw3, EXACT) for 3x3 filters without
    dilation_w and right shifts 2..23: the filter's int8 taps read in
    place, every sum requantized exactly, nothing pending. When the
    depth multiplier is 1 and every channel's shift is in that range
    (checked per call: OC bytes), thumb_dw_dsp.dwc does each tile in
    one call, all channels (the plane's padding written once, its bytes
    x as they are, no + 128)."""
    if _dwm(st):  # one input channel: thumb_dw_dsp.dwm's path
        return
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
    zo: int = (qp[0] ^ S) - S  # the output zero point
    xq: int = 0  # mac.dw3 (prepare: KH = KW = 3, DW = 1) has EXACT
    if KH == 3 and KW == 3 and DW == 1 and int(EXACT):
        xq = 1
    q[1] = wb - rd
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
    # dwc (thumb_dw_dsp): a tile's every channel in one call, when the
    # depth multiplier is 1 and every channel takes dw3's exact path
    xc: int = 0
    if xq and DM == 1 and p[_P_REL] == 0:
        xc = 1
        k: int = 0
        while k < OC:
            s8: int = (ps[k] ^ 0x80) - 0x80
            if s8 > -2 or s8 < -23:
                xc = 0
            k += 1
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
                if xc:
                    # dwc's loop words (see it): BP, PM, PS, OUTC, NR0, CN
                    pq[0] = pl
                    pq[8] = x0 + ((b * H + iy0 + ra) * W + ix0 + jl) * C
                    q[1] = f0
                    q[4] = int(bp)
                    q[5] = int(pm)
                    q[6] = zc - 128  # KC: zp (the plane's bytes are x)
                    pq[11] = (zc - 128) & 0xFF  # ZC: zp's byte
                    q[7] = int(ps)
                    q[8] = o + ((b * OH + oy0) * OW + ox0) * OC
                    q[12] = oy1 - oy0
                    q[25] = C
                    dwc(st, tb - qa)
                    ox0 = ox1
                    continue
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
                        if xq and sh_ < -1 and sh_ > -24:
                            # mac.dw3's exact path (thumb_dw_dsp.py):
                            # the filter's int8 taps read in place, every
                            # sum requantized there, nothing pending; EK,
                            # EE in the words of DX, KWX (unused by dw3)
                            q[1] = f0 + oc - rd
                            q[2] = (bp[oc] ^ S) - S
                            q[3] = m0 + (m1 << 11) + (m2 << 22)
                            q[6] = zc
                            q[29] = ((one << (0 - sh_ - 2))
                                     + (zo << (0 - sh_ - 1)))
                            q[30] = 0 - sh_ - 1
                            q[16] = 0
                            q[17] = oy1 - oy0
                            q[20] = pl - rd
                            q[21] = (o + ((b * OH + oy0) * OW + ox0) * OC
                                     + oc - rd)
                            dwf(st, tb - qa)
                            mm += 1
                            continue
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
                        if wp:
                            wb = wp + 4 * oc * (ntap + 1)
                        if xq:  # the fast path of mac.dw3, W words
                            q[1] = wb - rd
                            q[30] = 0
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



# dwm's path (one input channel): thumb_dw_dsp.dwm's block (DWM_WORDS),
# then the plane's block (PL_BLOCK, 13 words), in the work buffer
_MB = const(22)
_MPL = const(13)


@micropython.viper
def _dwm(st) -> int:
    """dwp's path for one input channel (micro_speech's layer: a CONV_2D
    of one channel into OC), in the work buffer that depthwise_conv.py
    planned for _dwp (no more: plain and compiled models alike); returns
    0, doing nothing, where it does not apply: more than one input
    channel, a row of taps not a multiple of 4, dilation in width, OC
    not a multiple of 4, a negative multiplier (a shift above 30), or a
    work buffer too small for dwm's block, the plane's, the window, OC
    sums, OC corrected biases, the filter transposed and a plane tile
    of at least one pixel. Else 1, the output written: per eval the
    filter [1, KH, KW, OC] transposed into the work buffer (channel c's
    taps consecutive, as thumb_dw_dsp.dwm reads them) and the biases
    less (zp + 128) * sum(w); then per tile of output pixels its plane
    (thumb_dw_dsp.plane: x + 128, the padding zp + 128) and per output
    row of the tile one dwm call: every channel of every pixel summed
    and requantized exactly (TFLM's bytes)."""
    qp = ptr32(st)  # the block: qp, then p
    p = ptr32(int(qp) + 4 * _QP)
    one: int = 1
    S: int = one << 31
    OC: int = p[_P_OC]
    KH: int = p[_P_KH]
    KW: int = p[_P_KW]
    if (p[_P_C] != 1 or (KW & 3) or p[_P_DW] != 1 or (OC & 3)
            or p[_P_REL]):
        return 0
    qa: int = int(qp)
    ps = ptr8(qa + int(rel(st, _A, _S_SHIFTS)))
    c: int = 0
    while c < OC:
        if (ps[c] ^ 0x80) - 0x80 > 30:  # conv_util.NEG_MARK
            return 0
        c += 1
    OH: int = p[_P_OH]
    OW: int = p[_P_OW]
    SH: int = p[_P_SH]
    SW: int = p[_P_SW]
    DH: int = p[_P_DH]
    nt: int = KH * KW
    eh: int = (KH - 1) * DH + 1
    # the work words depthwise_conv.prepare asked for, less dwm's
    plane: int = ((p[_P_TH] - 1) * SH + eh) * p[_P_PWW]
    ntw: int = nt  # (no weights words where prepare wrote them)
    if p[_P_WPRE]:
        ntw = 0
    cap: int = 4 * (OC + ntw + _DWB + ((plane + 3) >> 2)
                    - (_MB + _MPL + (nt >> 1) + 2 * OC + ((OC * nt) >> 2)))
    if cap < eh * KW:
        return 0
    # depthwise_conv._tile's tile for cap bytes: whole rows if one fits
    TW: int = OW
    while TW > 1 and ((TW - 1) * SW + KW) * eh > cap:
        TW -= 1
    PWW: int = (TW - 1) * SW + KW
    TH: int = 1
    while TH < OH and (TH * SH + eh) * PWW <= cap:
        TH += 1
    H: int = p[_P_H]
    W: int = p[_P_W]
    B: int = p[_P_B]
    PH: int = p[_P_PH]
    PW: int = p[_P_PW]
    zc: int = ((p[_P_ZP] ^ S) - S) + 128  # zp + 128, the padding's byte
    x0: int = qa + int(rel(st, _A, _S_X))
    f0: int = qa + int(rel(st, _A, _S_FILTER))
    bp = ptr32(qa + int(rel(st, _A, _S_BIAS)))
    o: int = qa + int(rel(st, _A, _S_OUT))
    w0b: int = qa + int(rel(st, _A, _S_WORK))
    q = ptr32(w0b)  # dwm's block
    tq: int = w0b + 4 * _MB  # the plane's block
    pq = ptr32(tq)
    win: int = tq + 4 * _MPL
    acc: int = win + 2 * nt
    bi: int = acc + 4 * OC
    fw: int = bi + 4 * OC
    pl: int = fw + OC * nt
    # the filter transposed, and the biases less zc * sum(w)
    c = 0
    while c < OC:
        s: int = 0
        fa: int = f0 + c
        fd: int = fw + c * nt
        t: int = 0
        while t < nt:
            v: int = ptr8(fa)[0]
            ptr8(fd)[t] = v
            s += (v ^ 0x80) - 0x80
            fa += OC
            t += 1
        ptr32(bi)[c] = bp[c] - zc * s
        c += 1
    q[1] = SW  # XS
    q[2] = DH * PWW - KW  # RSK
    q[3] = KH
    q[4] = KW >> 2
    q[6] = win
    q[7] = fw
    q[8] = nt
    q[9] = bi
    q[10] = OC
    q[11] = qa + int(rel(st, _A, _S_MULTS))
    q[12] = int(ps)
    q[14] = qp[0]  # ZO, LO, HI
    q[15] = qp[1]
    q[16] = qp[2]
    q[17] = acc
    pq[1] = PWW
    pq[9] = W  # SRS, CS (one channel)
    pq[10] = 1
    pq[11] = zc
    pq[12] = 0
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
                cols: int = (ox1 - ox0 - 1) * SW + KW
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
                pq[0] = pl
                pq[2] = cols
                pq[3] = ra
                pq[4] = rb
                pq[5] = rows
                pq[6] = jl
                pq[7] = jh
                pq[8] = x0 + (b * H + iy0 + ra) * W + ix0 + jl
                plane_f(st, tq - qa)
                oy: int = oy0
                while oy < oy1:
                    q[0] = pl + (oy - oy0) * SH * PWW  # XA
                    q[5] = ox1 - ox0  # NPIX
                    q[13] = o + ((b * OH + oy) * OW + ox0) * OC  # OUT
                    dwm(st, w0b - qa)
                    oy += 1
                ox0 = ox1
            oy0 = oy1
        b += 1
    return 1
