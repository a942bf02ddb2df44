"""FULLY_CONNECTED's driver on Cortex-M4/M7/M33 (kernels.DSP):
fully_connected.py's _fc with its gather and its requantization in
machine code: thumb_rq_dsp.gather (4 input bytes per LDR, SXTAB, about
2.5 instructions a value, where the viper loop took about 50) and
thumb_rq_dsp.rq (about 25 instructions a unit, requant_i8b's viper
about 95). fully_connected.py imports it in place of its own where
thumb_dsp has gather; a DSP build's package only (romfs.DSP_ONLY). The
state, its slots, the work buffer and its block are fully_connected.py's
(the constants below are its: a const named with a leading underscore is
private to its module), so that a model compiled on the host (for
thumb.py's loops) runs here unchanged: gather borrows the block's OUT
and NF words, rq takes the block's first 9 words once dots is done.
"""

import micropython
from micropython import const

from ..fixedpoint import requant_i8b
from . import thumb_dsp, thumb_rq_dsp

_BLK = const(10)
_REL = const(9)
_S_ACC = const(0)
_S_X = const(1)
_S_W = const(2)
_S_OUT = const(3)
_S_BIAS = const(4)
_S_PARAMS = const(5)
_S_QP = const(6)
_S_MULTS = const(7)  # (or the chunks: see prepare)
_S_WIN = const(8)
_S_SHIFTS = const(9)
_P_BATCHES = const(0)
_P_UNITS = const(1)
_P_DEPTH = const(2)
_P_N = const(3)
_P_PER_CHANNEL = const(4)
_P_DC = const(5)
_P_OFF = const(6)
_P_HAS_BIAS = const(7)
_P_REL = const(8)


@micropython.viper
def fc(st):
    """fully_connected._fc (the same outputs; see it), its gather
    (thumb_rq_dsp.gather) and requantization (thumb_rq_dsp.rq, per
    chunk of units; a unit with a negative multiplier through
    requant_i8b) in machine code."""
    acc = st[_S_ACC]
    pa: int = int(ptr32(acc))
    x0: int = int(ptr8(st[_S_X]))
    w0: int = int(ptr8(st[_S_W]))
    yd = st[_S_OUT]
    pb: int = int(ptr32(st[_S_BIAS]))
    prm = ptr32(st[_S_PARAMS])
    qp = st[_S_QP]
    mults = st[_S_MULTS]
    shifts = st[_S_SHIFTS]
    win = st[_S_WIN]
    dots = thumb_dsp.dots
    gather = thumb_rq_dsp.gather
    blk = ptr32(win)
    batches: int = prm[_P_BATCHES]
    units: int = prm[_P_UNITS]
    depth: int = prm[_P_DEPTH]
    N: int = prm[_P_N]
    per_channel: int = prm[_P_PER_CHANNEL]
    DC: int = prm[_P_DC]
    one: int = 1
    S: int = one << 31
    off: int = (prm[_P_OFF] ^ S) - S  # -input_zero_point - 128
    has_bias: int = prm[_P_HAS_BIAS]
    chunked: int = 0  # _S_MULTS holds the chunks (see prepare)
    if per_channel and units > N:
        chunked = 1
    r0: int = 0  # addresses in the block are relative to r0 (mac.py)
    if prm[_P_REL]:
        r0 = int(blk)
    blk[_REL] = prm[_P_REL]
    v0: int = int(blk) + 4 * _BLK
    rq = thumb_rq_dsp.rq
    q = ptr32(win)  # rq's block (RQ_BLOCK): dots' first 9 words
    pq = ptr32(qp)
    b: int = 0
    while b < batches:
        xrow: int = x0 + b * depth
        u0: int = 0
        kc: int = 0
        while u0 < units:
            n: int = units - u0
            if n > N:
                n = N
            d0: int = 0
            while d0 < depth:
                dn: int = depth - d0
                if dn > DC:
                    dn = DC
                # thumb_rq_dsp.gather: v of this chunk and BASE = -128 *
                # sum v (x and -input_zero_point in OUT's, NF's words)
                blk[0] = v0 - r0
                blk[2] = v0 + 4 * dn - r0
                blk[7] = xrow + d0
                blk[8] = off + 128
                gather(win, 0)
                # the n sums: from the partial sums, the bias or zeros
                blk[5] = pa - r0
                if d0 == 0:
                    if has_bias:
                        blk[5] = pb + 4 * u0 - r0
                    else:
                        k: int = 0
                        while k < n:
                            ptr32(pa)[k] = 0
                            k += 1
                blk[1] = v0 + 4 * (dn & ~7) - r0
                blk[2] = v0 + 4 * dn - r0
                blk[3] = w0 + u0 * depth + d0 - r0
                blk[4] = depth
                blk[7] = pa - r0
                blk[8] = n
                dots(win, 0)
                d0 += dn
            # thumb_rq_dsp.rq: the n sums requantized (its block in
            # the first 9 words of dots', which is done)
            q[0] = pa
            q[1] = n
            if chunked:
                q[2] = int(ptr32(mults[2 * kc]))
                q[3] = int(ptr8(mults[2 * kc + 1]))
            elif per_channel:
                q[2] = int(ptr32(mults)) + 4 * u0
                q[3] = int(ptr8(shifts)) + u0
            else:
                q[2] = int(ptr32(mults))
                q[3] = int(ptr8(shifts))
            q[4] = per_channel  # SSTEP
            q[5] = int(ptr8(yd)) + b * units + u0
            q[6] = pq[0]  # ZO, LO, HI
            q[7] = pq[1]
            q[8] = pq[2]
            while int(rq(win, 0)):
                # a unit with a negative multiplier (per unit only):
                # requant_i8b for it alone, then on
                k = (q[0] - pa) >> 2
                if chunked:
                    requant_i8b(0, k, 0, acc, k + 1, k + 1, mults[2 * kc],
                                mults[2 * kc + 1], qp, yd,
                                b * units + u0, 0)
                else:
                    requant_i8b(0, k, 0, acc, k + 1, k + 1, mults, shifts,
                                qp, yd, b * units + u0, 0)
                q[0] += 4
                q[1] -= 1
                q[2] += 4
                q[3] += 1
                q[5] += 1
                if q[1] == 0:
                    break
            u0 += n
            kc += 1
        b += 1
