"""SOFTMAX's per-row loops in viper, for ports without the Thumb inline
assembler; thumb_softmax.py holds their machine code for Cortex-M boards,
with the same functions and block (softmax.py imports one of the two).

Each takes the row state st, an int32 block laid out as thumb_softmax.py's
SM_BLOCK (SUM MAX C48 CM32 EB CAP OFF DEPTH N; softmax_prep.py makes it).
"""

import micropython


@micropython.viper
def row(x, r_tab, st):
    """SM_BLOCK's MAX = the max of row x[OFF:OFF + DEPTH] (biased by
    +128), SUM = the sum of R[MAX - x] (r_tab), capped at CAP (2**28 for
    an int8 output, beyond which TFLM's exponent check aborts)."""
    px = ptr8(x)
    pr = ptr32(r_tab)
    s = ptr32(st)
    mx: int = 0
    i: int = s[6]
    end: int = i + s[7]
    off: int = i
    while i < end:
        v: int = px[i] ^ 0x80  # int8 -> 0..255, order preserved
        if v > mx:
            mx = v
        i += 1
    total: int = 0
    cap: int = s[5]
    i = off
    while i < end:
        total += pr[mx - (px[i] ^ 0x80)]
        if total > cap:
            total = cap
        i += 1
    s[0] = total
    s[1] = mx


@micropython.viper
def gather(buf, x, e_tab, st):
    """buf[i] = E[MAX - x[OFF + i]] (e_tab) for i < N (SM_BLOCK)."""
    pb = ptr32(buf)
    px = ptr8(x)
    pe = ptr32(e_tab)
    mx: int = ptr32(st)[1]
    off: int = ptr32(st)[6]
    n: int = ptr32(st)[8]
    i: int = 0
    while i < n:
        pb[i] = pe[mx - (px[off + i] ^ 0x80)]
        i += 1


@micropython.viper
def reciprocal(st, m, s):
    """GetReciprocal(SUM, 12) (common.h): m[0] = the Q0.31 reciprocal,
    s[0] = -exponent, exponent = num_bits_over_unit + EB - 12 - 31 (EB:
    12 + 31 - the output's bits).

    gemmlowp one_over_one_plus_x_for_x_in_0_1 with its
    SaturatingRoundingDoublingHighMul done on 16-bit limbs, so that 32-
    and 64-bit ports agree.
    """
    p = ptr32(st)
    one: int = 1
    S: int = one << 31
    imax: int = S - 1  # _INT32_MAX on either word size after the wrap
    imin: int = 0 - S
    h30: int = one << 30
    x: int = p[0]  # 2**19 <= sum <= 2**28
    if x < 1:  # (never: as thumb_softmax's, no endless loop)
        x = 1
    clz: int = 1  # CountLeadingZeros(sum) = headroom_plus_one
    while x < h30:
        x = x << 1
        clz += 1
    a: int = (x - h30) * 2  # (sum << clz) - 2**31, in [0, 2**31)
    hd: int = (a >> 1) + h30  # RoundingHalfSum(a, One)
    c48: int = (p[2] ^ S) - S
    xr: int = 0
    u: int = 0
    k: int = 0
    while k < 7:
        # Step 0: x = 48/17 + hd * (-32/17); odd steps: u = 1 - hd * x;
        # even steps: x = x + Rescale<2>(x * u).
        if k == 0:
            f: int = hd
            g: int = (p[3] ^ S) - S
        elif k & 1:
            f = hd
            g = xr
        else:
            f = xr
            g = u
        neg: int = 0
        if f < 0:
            neg = 1
            f = 0 - f
        if g < 0:
            neg ^= 1
            g = 0 - g
        fh: int = f >> 16
        fl: int = f & 0xFFFF
        gh: int = g >> 16
        gl: int = g & 0xFFFF
        t: int = (fl & 0xFF) * gl + (one << 30) - neg
        t = (fl >> 8) * gl + (t >> 8)
        hb: int = fh * gl
        hc: int = fl * gh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        r: int = (fh * gh + (hb >> 16) + (hc >> 16) + (t >> 16)) * 2
        r += (t & 0xFFFF) >> 15
        if neg:
            r = 0 - r
        if k == 0:
            xr = c48 + r
        elif k & 1:
            u = (one << 29) - r
        else:
            if r > 0x1FFFFFFF:  # saturating r << 2
                r = imax
            elif r < 0 - 0x1FFFFFFF:
                r = imin
            else:
                r = r << 2
            xr = xr + r
        k += 1
    # Rescale<0>(ExactMulByPot<-1>(x)): saturating x << 1.
    if xr > 0x3FFFFFFF:
        xr = imax
    elif xr < 0 - 0x3FFFFFFF:
        xr = imin
    else:
        xr = xr << 1
    ptr32(m)[0] = xr
    e: int = p[4] - clz  # 12 - clz + 31 - output bits
    if e > 31:  # TFLM's TFLITE_CHECK(exponent <= 31) aborts here
        e = 31
    ptr32(s)[0] = 0 - e
