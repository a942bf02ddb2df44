"""DEPTHWISE_CONV_2D's loops in viper, for ports without Thumb machine
code: thumb_dw.py's functions, with the same blocks (int32 words at a
buffer + byte offset, named by the comments DW_BLOCK / PL_BLOCK in
thumb_dw.py; addresses relative to the block where its REL word is 1)
and the same results; see mac.py."""

import micropython


@micropython.viper
def dw(buf, off: int) -> int:
    """thumb_dw.dw: a tile of NR x NC outputs of one channel, each the
    sum of KH x KW taps of the plane (bytes DX apart, rows RS apart; KWX
    = KW * DX) times the
    int32 weights W, plus BI, taken as a signed int32, then requantized
    (requant_i8b's fast path, folded: M0, M1, M2, KC, SM, SE; ZO, LO,
    HI) into the byte at OUT, or pending when (acc + LIM) as unsigned >
    LIM2: PACC, PEND set, the call returns 1 after stepping past it."""
    return int(_dw(0, 0, 0, buf, off, 0))


@micropython.viper
def dw3(buf, off: int) -> int:
    """thumb_dw.dw3: dw for a 3x3 filter (DX 1), its weights in locals."""
    return int(_dw(0, 0, 0, buf, off, 1))


@micropython.viper
def _dw(acc: int, xa: int, wa: int, buf, off: int, k3: int) -> int:
    # acc, xa, wa first: the locals viper keeps in registers
    b = ptr32(int(ptr8(buf)) + off)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    r: int = 0  # what the addresses are relative to
    if b[31]:
        r = int(b)
    w0: int = ((b[1] ^ S) - S) + r
    bi: int = (b[2] ^ S) - S
    m0: int = b[3]
    m1: int = b[4]
    m2: int = b[5]
    kc: int = (b[6] ^ S) - S
    sm: int = (b[7] ^ S) - S
    se: int = b[8]
    zo: int = (b[9] ^ S) - S
    lo: int = (b[10] ^ S) - S
    hi: int = (b[11] ^ S) - S
    os: int = b[13]
    xs: int = b[14]
    nc: int = b[15]
    xr: int = b[18]
    orr: int = b[19]
    kh: int = b[22]
    rs: int = b[24]
    dx: int = b[29]
    kwx: int = b[30]
    lim: int = b[25]
    lim2: int = b[26]
    pend: int = 0
    cl: int = b[16]
    nr: int = b[17]
    px0: int = ((b[20] ^ S) - S) + r
    o0: int = ((b[21] ^ S) - S) + r
    px: int = ((b[0] ^ S) - S) + r
    o: int = ((b[12] ^ S) - S) + r
    if cl == 0:
        px = px0
        o = o0
        cl = nc
    w_0: int = 0  # a 3x3 filter's weights, sign-extended
    w_1: int = 0
    w_2: int = 0
    w_3: int = 0
    w_4: int = 0
    w_5: int = 0
    w_6: int = 0
    w_7: int = 0
    w_8: int = 0
    if k3:
        wp = ptr32(w0)
        w_0 = (wp[0] ^ S) - S
        w_1 = (wp[1] ^ S) - S
        w_2 = (wp[2] ^ S) - S
        w_3 = (wp[3] ^ S) - S
        w_4 = (wp[4] ^ S) - S
        w_5 = (wp[5] ^ S) - S
        w_6 = (wp[6] ^ S) - S
        w_7 = (wp[7] ^ S) - S
        w_8 = (wp[8] ^ S) - S
    while nr > 0:
        while cl > 0:
            acc = bi
            xa = px
            if k3:
                acc += w_0 * ptr8(xa)[0]
                acc += w_1 * ptr8(xa)[1]
                acc += w_2 * ptr8(xa)[2]
                xa += rs
                acc += w_3 * ptr8(xa)[0]
                acc += w_4 * ptr8(xa)[1]
                acc += w_5 * ptr8(xa)[2]
                xa += rs
                acc += w_6 * ptr8(xa)[0]
                acc += w_7 * ptr8(xa)[1]
                acc += w_8 * ptr8(xa)[2]
            else:
                wa = w0
                ky: int = 0
                while ky < kh:
                    xe: int = xa + kwx
                    while xa < xe:
                        acc += ptr32(wa)[0] * ptr8(xa)[0]
                        xa += dx
                        wa += 4
                    xa += rs - kwx
                    ky += 1
            acc = ((acc & M) ^ S) - S  # a signed int32 (64-bit ports)
            if uint(acc + lim) > uint(lim2):
                b[27] = acc
                b[28] = o - r
                pend = 1
            else:
                t: int = (acc * m0) >> 11
                t = (acc * m1 + t) >> 11
                acc = (acc * m2 + t + kc + ((acc >> 31) & sm)) >> se
                acc += zo
                if acc < lo:
                    acc = lo
                if acc > hi:
                    acc = hi
                ptr8(o)[0] = acc
            o += os
            px += xs
            cl -= 1
            if pend:
                break
        if cl == 0:
            px0 += xr
            o0 += orr
            nr -= 1
            if nr > 0 and not pend:
                px = px0
                o = o0
                cl = nc
        if pend:
            break
    b[0] = px - r
    b[12] = o - r
    b[16] = cl
    b[17] = nr
    b[20] = px0 - r
    b[21] = o0 - r
    return pend


@micropython.viper
def plane(buf, off: int) -> int:
    """thumb_dw.plane: ROWS rows of COLS bytes at DST (PWW apart); rows
    RA <= r < RB hold x ^ 0x80 from SRC (CS apart, SRS between rows) in
    columns [JL, JH), the rest ZC. Returns 0."""
    b = ptr32(int(ptr8(buf)) + off)
    d: int = 0
    s: int = 0
    one: int = 1
    S: int = one << 31
    r: int = 0  # what the addresses are relative to
    if b[12]:
        r = int(b)
    dst: int = ((b[0] ^ S) - S) + r
    pww: int = b[1]
    cols: int = b[2]
    ra: int = b[3]
    rb: int = b[4]
    rows: int = b[5]
    jl: int = b[6]
    jh: int = b[7]
    src: int = ((b[8] ^ S) - S) + r
    srs: int = b[9]
    cs: int = b[10]
    zc: int = b[11]
    y: int = 0  # the row
    while y < rows:
        d = dst + y * pww
        e: int = d + cols
        if ra <= y < rb:
            el: int = d + jl
            while d < el:
                ptr8(d)[0] = zc
                d += 1
            eh: int = dst + y * pww + jh
            s = src
            while d < eh:
                ptr8(d)[0] = ptr8(s)[0] ^ 0x80
                d += 1
                s += cs
            src += srs
        while d < e:
            ptr8(d)[0] = zc
            d += 1
        y += 1
    b[0] = dst + rows * pww - r
    b[8] = src - r
    return 0
