"""rescale.scale_i32 in viper, for ports without Thumb machine code (the
unix port, esp32, RISC-V): thumb_rescale.py's twin, with the same function
and results (rescale.py imports one of the two: kernels.THUMB).
"""

import micropython


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
