"""The multiply-accumulate loops of CONV_2D and FULLY_CONNECTED in viper,
for ports without Thumb machine code (the unix port, esp32, RISC-V):
thumb.py's functions, with the same block and the same results.

Each function gets a buffer and a byte offset: its block is the int32
words at that address, laid out as the comments DOTS_BLOCK (then REL, a
10th word) and PX_BLOCK in thumb.py name them. Where REL is 1 (64-bit
ports, whose addresses do not fit an int32), the block's addresses are
stored relative to its own address; the machine code only runs where REL
is 0. Each function is a thin wrapper around a worker whose first
locals are the hot ones: viper keeps the first three in registers on
x64 (two in armv6m .mpy files).

The kernels (conv.py, fully_connected.py) fill the block, call one
function for a pixel, a row of pixels or a chunk of units, and
requantize what it hands back. Sums are exact modulo 2**32, as TFLM's
int32 accumulator; where a sum is requantized it is first taken as a
signed int32 (64-bit ports).
"""

import micropython
from micropython import const

# requant_i8b's fast path (fixedpoint): |x| <= 2**20
_FAST = const(1 << 20)


@micropython.viper
def dots(buf, off: int) -> int:
    """thumb.dots: for k in range(NF), OUT[k] (int32) = BP[k] (int32) +
    BASE + sum(i < n) (byte WP[k * WS + i] ^ 0x80) * V[i] (int32 words,
    n = (VE - V) / 4), modulo 2**32. WP, BP, OUT advance past the last
    filter and NF ends at 0. Returns 0."""
    return int(_dots(0, 0, 0, buf, off))


@micropython.viper
def _dots(acc: int, va: int, wa: int, buf, off: int) -> int:
    # acc, va, wa first: the locals viper keeps in registers
    b = ptr32(int(ptr8(buf)) + off)
    one: int = 1
    S: int = one << 31
    r: int = 0  # what the addresses are relative to
    if b[9]:  # REL (dots' block: the first 9 words of PX_BLOCK, REL)
        r = int(b)
    v0: int = ((b[0] ^ S) - S) + r
    v8: int = ((b[1] ^ S) - S) + r
    ve: int = ((b[2] ^ S) - S) + r
    w: int = ((b[3] ^ S) - S) + r
    ws: int = b[4]
    bp: int = ((b[5] ^ S) - S) + r
    base: int = (b[6] ^ S) - S
    o: int = ((b[7] ^ S) - S) + r
    nf: int = b[8]
    while nf > 0:
        acc = ptr32(bp)[0] + base
        va = v0
        wa = w
        while va < v8:
            acc += ((ptr8(wa)[0] ^ 0x80) * ptr32(va)[0]
                    + (ptr8(wa)[1] ^ 0x80) * ptr32(va)[1]
                    + (ptr8(wa)[2] ^ 0x80) * ptr32(va)[2]
                    + (ptr8(wa)[3] ^ 0x80) * ptr32(va)[3]
                    + (ptr8(wa)[4] ^ 0x80) * ptr32(va)[4]
                    + (ptr8(wa)[5] ^ 0x80) * ptr32(va)[5]
                    + (ptr8(wa)[6] ^ 0x80) * ptr32(va)[6]
                    + (ptr8(wa)[7] ^ 0x80) * ptr32(va)[7])
            va += 32
            wa += 8
        while va < ve:
            acc += (ptr8(wa)[0] ^ 0x80) * ptr32(va)[0]
            va += 4
            wa += 1
        ptr32(o)[0] = acc  # the store keeps the low 32 bits: C's int32
        o += 4
        bp += 4
        w += ws
        nf -= 1
    b[3] = w - r
    b[5] = bp - r
    b[7] = o - r
    b[8] = 0
    return 0


@micropython.viper
def pixels(buf, off: int) -> int:
    """thumb.pixels: NPIX pixels of gather, sums (dots, from WP0, BP0
    into ACC) and requantized bytes at QOUT (requant_i8b's fast path when
    0 <= -shift <= 21 and |acc| <= LIM; else PEND += 1 and the byte is
    left to the caller). X += XS, QOUT += QSTEP, NPIX -= 1 per pixel;
    returns 1 after a pixel with pending values, 0 when done."""
    return int(_pixels(0, 0, 0, buf, off))


@micropython.viper
def _pixels(acc: int, va: int, wa: int, buf, off: int) -> int:
    # acc, va, wa first: the locals viper keeps in registers
    b = ptr32(int(ptr8(buf)) + off)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    r: int = 0  # what the addresses are relative to
    if b[32]:
        r = int(b)
    v0: int = ((b[0] ^ S) - S) + r
    v8: int = ((b[1] ^ S) - S) + r
    ve: int = ((b[2] ^ S) - S) + r
    ws: int = b[4]
    x: int = ((b[9] ^ S) - S) + r
    xs: int = b[10]
    xoff: int = (b[11] ^ S) - S
    npix: int = b[12]
    mp0: int = ((b[13] ^ S) - S) + r
    mstep: int = b[14]
    sp0: int = ((b[15] ^ S) - S) + r
    sstep: int = b[16]
    zo: int = (b[17] ^ S) - S
    lo: int = (b[18] ^ S) - S
    hi: int = (b[19] ^ S) - S
    q0: int = ((b[20] ^ S) - S) + r
    qstep: int = b[21]
    lim: int = b[23]
    lim2: int = b[24]
    w0: int = ((b[25] ^ S) - S) + r
    bp0: int = ((b[26] ^ S) - S) + r
    a0: int = ((b[27] ^ S) - S) + r
    nf0: int = b[28]
    pend: int = b[22]
    while npix > 0:
        s: int = 0  # gather v and their sum
        va = v0
        wa = x
        while va < ve:
            v: int = (ptr8(wa)[0] ^ 0x80) + xoff
            ptr32(va)[0] = v
            s += v
            va += 4
            wa += 1
        base: int = 0 - s * 128
        k: int = 0
        w: int = w0
        while k < nf0:
            acc = ptr32(bp0)[k] + base
            va = v0
            wa = w
            while va < v8:
                acc += ((ptr8(wa)[0] ^ 0x80) * ptr32(va)[0]
                        + (ptr8(wa)[1] ^ 0x80) * ptr32(va)[1]
                        + (ptr8(wa)[2] ^ 0x80) * ptr32(va)[2]
                        + (ptr8(wa)[3] ^ 0x80) * ptr32(va)[3]
                        + (ptr8(wa)[4] ^ 0x80) * ptr32(va)[4]
                        + (ptr8(wa)[5] ^ 0x80) * ptr32(va)[5]
                        + (ptr8(wa)[6] ^ 0x80) * ptr32(va)[6]
                        + (ptr8(wa)[7] ^ 0x80) * ptr32(va)[7])
                va += 32
                wa += 8
            while va < ve:
                acc += (ptr8(wa)[0] ^ 0x80) * ptr32(va)[0]
                va += 4
                wa += 1
            acc = ((acc & M) ^ S) - S  # a signed int32, as TFLM's
            ptr32(a0)[k] = acc
            e: int = 0 - ((ptr8(sp0)[k * sstep] ^ 0x80) - 0x80)
            if (uint(e) <= uint(21)
                    and uint(acc + lim) <= uint(lim2)):
                m: int = ptr32(mp0 + k * mstep)[0]
                t: int = (acc * (m & 0x7FF)) >> 11
                t = (acc * ((m >> 11) & 0x7FF) + t) >> 11
                if e:
                    acc = (acc * ((m >> 22) & 0x1FF) + t + 256
                           + (one << (8 + e)) + ((acc >> 31) & -512)) \
                        >> (9 + e)
                else:
                    acc = (acc * ((m >> 22) & 0x1FF) + t + 256) >> 9
                acc += zo
                if acc < lo:
                    acc = lo
                if acc > hi:
                    acc = hi
                ptr8(q0)[k] = acc
            else:
                pend += 1
            w += ws
            k += 1
        x += xs
        q0 += qstep
        npix -= 1
        if pend:
            break
    b[9] = x - r
    b[12] = npix
    b[20] = q0 - r
    b[22] = pend
    if pend:
        return 1
    return 0
