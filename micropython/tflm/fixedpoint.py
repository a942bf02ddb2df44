"""gemmlowp fixed-point requantization, word-size independent viper.

MultiplyByQuantizedMultiplier (TFLM double rounding, the default build):
    RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << ls, m), rs)
from tensorflow/lite/kernels/internal/common.cc and gemmlowp fixedpoint.h.

Viper ints are 32 bits on Cortex-M and 64 on the unix port, so the 64-bit
product x * m is built from 16-bit limbs whose partial products all fit in
31 bits: the same code gives the same bits on both. int32 values are loaded
from ptr32 and sign-extended with (v ^ S) - S, S = 1 << 31 computed at run
time: a no-op on 32-bit, a sign extension on 64-bit. All int32 arrays here
are array('i') objects (always aligned), never model bytes.
"""

import micropython


def mbqm_ref(x, m, shift):
    """Reference MultiplyByQuantizedMultiplier in plain Python (any port).

    x: int32; m: multiplier in [0, 2**31); shift: [-31, 30]. Returns int32.
    Used by tests and at prepare time, never in invoke().
    """
    ls = shift if shift > 0 else 0
    rs = 0 if shift > 0 else -shift
    x = ((x << ls) + (1 << 31)) % (1 << 32) - (1 << 31)  # int32 wrap
    if x == m == -(1 << 31):
        return (1 << 31) - 1
    ab = x * m
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    t = ab + nudge
    q = t >> 31 if t >= 0 else -((-t) >> 31)  # C division truncates
    mask = (1 << rs) - 1
    rem = q & mask
    thr = (mask >> 1) + (1 if q < 0 else 0)
    return (q >> rs) + (1 if rem > thr else 0)


@micropython.viper
def scale_i32(buf, n: int, mults, shifts, per_channel: int):
    """In place: buf[i] = MultiplyByQuantizedMultiplier(buf[i], m, shift).

    buf, mults, shifts: array('i'). m and shift are mults[c], shifts[c]
    with c = i if per_channel else 0. n: element count.
    """
    p = ptr32(buf)
    pm = ptr32(mults)
    ps = ptr32(shifts)
    one: int = 1
    S: int = one << 31
    i: int = 0
    c: int = 0
    while i < n:
        x: int = (p[i] ^ S) - S
        b: int = (pm[c] ^ S) - S
        sh: int = (ps[c] ^ S) - S
        if sh > 0:
            x = x << sh
            # wrap to int32 like C's x * (1 << left_shift)
            x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (x & 0xFFFF))
            sh = 0
        # SaturatingRoundingDoublingHighMul(x, b), b >= 0, from 16-bit limbs.
        neg: int = 0
        if x < 0:
            neg = 1
            x = 0 - x
        if x < 0:  # x was INT32_MIN on a 32-bit port: result is -b
            q: int = b
        else:
            sh_: int = x >> 16
            sl: int = x & 0xFFFF
            bh: int = b >> 16
            bl: int = b & 0xFFFF
            t: int = (sl & 0xFF) * bl + (one << 30) - neg
            t = (sl >> 8) * bl + (t >> 8)
            hb: int = sh_ * bl
            hc: int = sl * bh
            t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
            q = (sh_ * bh + (hb >> 16) + (hc >> 16) + (t >> 16)) * 2
            q += (t & 0xFFFF) >> 15
        if neg:
            q = 0 - q
        # RoundingDivideByPOT(q, -sh)
        if sh < 0:
            e: int = 0 - sh
            mask: int = (one << e) - 1
            rem: int = q & mask
            thr: int = (mask >> 1) + neg
            q = q >> e
            if rem > thr:
                q += 1
        p[i] = q
        i += 1
        if per_channel:
            c = i


@micropython.viper
def store_i8(buf, n: int, out, off: int, qp):
    """out[off + i] = clamp(buf[i] + zp, lo, hi) as int8, for i < n.

    buf: array('i'); out: writable bytes-like; qp: array('i') holding
    (zp, lo, hi) at indices 0..2.
    """
    p = ptr32(buf)
    o = ptr8(out)
    q = ptr32(qp)
    one: int = 1
    S: int = one << 31
    zp: int = (q[0] ^ S) - S
    lo: int = (q[1] ^ S) - S
    hi: int = (q[2] ^ S) - S
    i: int = 0
    while i < n:
        v: int = ((p[i] ^ S) - S) + zp
        if v < lo:
            v = lo
        if v > hi:
            v = hi
        o[off + i] = v
        i += 1


@micropython.viper
def requant_i8b(x: int, i: int, t: int, buf, n: int, nch: int, mults,
                shifts, qp, out, off: int, wide: int):
    """Fused requantize + store of n int32 accumulators, channel-minor:

        out[off + k] = clamp(MultiplyByQuantizedMultiplier(buf[k], m, s)
                             + zp, lo, hi)   with m, s = mults[c], shifts[c],
                                             c = k % nch

    i.e. scale_i32 (per channel) then store_i8 in one pass over a batch of
    n // nch pixels of nch channels, so one call serves many pixels. x, i,
    t are the hot locals (viper keeps the first locals in registers):
    callers pass 0. buf, mults, qp: array('i'); qp = (zp, lo, hi);
    shifts: array('b') (wide=0: the kernels keep shifts, all in
    [-31, 30], as bytes to save RAM) or array('i') (wide=1);
    out: writable bytes-like. Channels form the outer loop, so each
    channel's multiplier and shift are decoded once per batch.

    Same bits as TFLM's int64 code (common.cc, double rounding) on 32- and
    64-bit ports: SaturatingRoundingDoublingHighMul(x, m) for m >= 0 is
    floor((x * m + 2**30) / 2**31) (the saturating case needs m < 0),
    built from 16-bit limbs of the signed x and 8/16-bit limbs of m whose
    partial products all fit in 31 bits; RoundingDivideByPOT adds 1 when
    the remainder exceeds half the divisor (ties away from zero).
    """
    p = ptr32(buf)
    pm = ptr32(mults)
    ps = ptr32(shifts)
    pb = ptr8(shifts)
    q = ptr32(qp)
    o = ptr8(out)
    one: int = 1
    S: int = one << 31
    R: int = one << 30  # the rounding nudge of the doubling high mul
    zp: int = (q[0] ^ S) - S
    lo: int = (q[1] ^ S) - S
    hi: int = (q[2] ^ S) - S
    c: int = 0
    while c < nch:
        m: int = pm[c]  # in [0, 2**31): no sign extension needed
        mh: int = m >> 16
        ml: int = m & 0xFFFF
        sh: int = (pb[c] ^ 0x80) - 0x80
        if wide:
            sh = (ps[c] ^ S) - S
        ls: int = 0
        e: int = 0
        if sh > 0:
            ls = sh
        else:
            e = 0 - sh
        mask: int = (one << e) - 1
        half: int = mask >> 1
        i = c
        while i < n:
            x = (p[i] ^ S) - S
            if ls:
                # x * 2**ls wrapped to int32, as C computes it
                x = x << ls
                x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                     | (x & 0xFFFF))
            xh: int = x >> 16  # signed high limb, |xh| <= 2**15
            xl: int = x & 0xFFFF
            t = (xl & 0xFF) * ml + R
            t = (xl >> 8) * ml + (t >> 8)
            hb: int = xh * ml
            hc: int = xl * mh
            t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
            x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
            # RoundingDivideByPOT(x, e); x >> 31 is -1 for negative x.
            t = x & mask
            if t > half - (x >> 31):
                x = (x >> e) + 1
            else:
                x = x >> e
            x += zp
            if x < lo:
                x = lo
            if x > hi:
                x = hi
            o[off + i] = x
            i += nch
        c += 1
