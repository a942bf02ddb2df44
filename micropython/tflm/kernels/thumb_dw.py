"""DEPTHWISE_CONV_2D's multiply-accumulate and requantization loop in
Thumb machine code (@micropython.asm_thumb), for Cortex-M boards: see
thumb.py (same rules, same tests)."""

import micropython


# The blocks of dw() / dw3() and of plane() (int32 words at buffer r0 +
# byte offset r1, as thumb.py's; REL is mac_dw.py's, 0 here):
# DW_BLOCK: XA W BI M0 M1 M2 KC SM SE ZO LO HI OUT OS XS NC CL NR XR OR XA0
#   OUT0 KH KW RS LIM LIM2 PACC PEND DX KWX REL
# (dw3 ignores DX and KWX: thumb_dw_dsp.dw3 reads them as EK, EE)


@micropython.asm_thumb
def dw(r0, r1):
    """DEPTHWISE_CONV_2D outputs of one channel over a tile of NR rows x
    NC columns (depthwise_conv._dwp, whose contract this is), with blk the
    block laid out as DW_BLOCK. For each pixel,
    from plane address XA (bytes x + 128 of the channel's input plane; a
    row of taps at XA + ky * RS, KW bytes DX apart; KWX = KW * DX) and
    the KH * KW int32 weights at W:

        acc = BI + sum(ky, kx) W[ky * KW + kx] * plane[XA + ky * RS
                                                       + kx * DX]
        if (acc + LIM) as unsigned > LIM2 as unsigned: pending (below)
        t = (acc * M0) >> 11;  t = (acc * M1 + t) >> 11
        q = ((acc * M2 + t + KC + ((acc >> 31) & SM)) >> SE) + ZO
        byte at OUT = min(max(q, LO), HI)

    (fixedpoint.requant_i8b's fast path; 32-bit arithmetic, arithmetic
    shifts). Then XA += XS and OUT += OS for the next column; rows start
    at XA0, OUT0 and step by XR, OR. A pending pixel's acc and OUT go to
    PACC and PEND, its byte is not written, and the call returns 1 after
    stepping past it: the caller requantizes it and calls again while NR
    is not 0 (a call with CL = 0 starts a row, else goes on in one).
    Returns 0 when the tile is done. KH, KW, NC, NR >= 1; XA, OUT, CL,
    NR, XA0, OUT0 are used up.
    """
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r4, [r0, 64])         # CL: 0 to start a row, else go on in it
    cmp(r4, 0)
    bne(PIXEL)
    label(ROW)
    ldr(r4, [r0, 80])         # XA = XA0
    str(r4, [r0, 0])
    ldr(r4, [r0, 84])         # OUT = OUT0
    str(r4, [r0, 48])
    ldr(r4, [r0, 60])         # CL = NC
    str(r4, [r0, 64])
    label(PIXEL)
    ldr(r2, [r0, 0])          # the tap row
    ldr(r1, [r0, 4])          # the weights
    ldr(r3, [r0, 8])          # acc = BI
    ldr(r6, [r0, 88])         # KH rows
    label(FROW)
    ldr(r7, [r0, 92])         # KW
    # KW taps: 4 at a time, then 1 at a time
    lsl(r7, r7, 2)
    add(r7, r7, r1)           # the end of this row's weights
    ldr(r5, [r0, 116])
    cmp(r5, 1)
    bne(TEST1)                # DX > 1: one at a time
    sub(r7, 12)               # r1 < r7: 4 or more taps left
    b(TEST4)
    label(LOOP4)
    ldrb(r4, [r2, 0])
    ldr(r5, [r1, 0])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 1])
    ldr(r5, [r1, 4])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 2])
    ldr(r5, [r1, 8])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 3])
    ldr(r5, [r1, 12])
    mul(r4, r5)
    add(r3, r3, r4)
    add(r2, 4)
    add(r1, 16)
    label(TEST4)
    cmp(r1, r7)
    bcc(LOOP4)
    add(r7, 12)               # the end of this row's weights
    b(TEST1)
    label(LOOP1)
    ldrb(r4, [r2, 0])
    ldr(r5, [r1, 0])
    mul(r4, r5)
    add(r3, r3, r4)
    ldr(r4, [r0, 116])        # + DX
    add(r2, r2, r4)
    add(r1, 4)
    label(TEST1)
    cmp(r1, r7)
    bcc(LOOP1)
    ldr(r5, [r0, 120])
    sub(r2, r2, r5)           # back to the row's first tap: - KWX
    ldr(r5, [r0, 96])         # RS
    add(r2, r2, r5)
    sub(r6, 1)
    bne(FROW)
    ldr(r5, [r0, 100])        # beyond the fast path: pending
    add(r4, r3, r5)
    ldr(r5, [r0, 104])
    cmp(r4, r5)
    bhi(PENDING)
    ldr(r5, [r0, 12])         # requantize acc (r3) into r4
    mov(r4, r3)
    mul(r4, r5)
    asr(r4, r4, 11)           # t = (acc * M0) >> 11
    ldr(r5, [r0, 16])
    mul(r5, r3)
    add(r4, r4, r5)
    asr(r4, r4, 11)           # t = (acc * M1 + t) >> 11
    ldr(r5, [r0, 20])
    mul(r5, r3)
    add(r4, r4, r5)           # acc * M2 + t
    ldr(r5, [r0, 24])
    add(r4, r4, r5)           # + KC
    asr(r3, r3, 31)
    ldr(r5, [r0, 28])
    and_(r3, r5)
    add(r4, r4, r3)           # + ((acc >> 31) & SM)
    ldr(r5, [r0, 32])
    asr(r4, r5)               # >> SE
    ldr(r5, [r0, 36])
    add(r4, r4, r5)           # + ZO
    ldr(r5, [r0, 40])
    cmp(r4, r5)
    bge(NOTLO)
    mov(r4, r5)
    label(NOTLO)
    ldr(r5, [r0, 44])
    cmp(r4, r5)
    ble(NOTHI)
    mov(r4, r5)
    label(NOTHI)
    ldr(r7, [r0, 48])         # the byte at OUT
    strb(r4, [r7, 0])
    b(STEP)
    label(PENDING)
    str(r3, [r0, 108])        # PACC = acc, PEND = OUT
    ldr(r7, [r0, 48])
    str(r7, [r0, 112])
    mov(r6, 1)                # r6: return after this pixel
    label(STEP)
    ldr(r5, [r0, 52])         # OUT += OS
    add(r7, r7, r5)
    str(r7, [r0, 48])
    ldr(r4, [r0, 0])          # XA += XS
    ldr(r5, [r0, 56])
    add(r4, r4, r5)
    str(r4, [r0, 0])
    ldr(r5, [r0, 64])         # CL -= 1
    sub(r5, 1)
    str(r5, [r0, 64])
    beq(ROWEND)
    cmp(r6, 0)
    bne(RETURN)
    b(PIXEL)                  # (out of a conditional branch's range)
    label(ROWEND)
    ldr(r4, [r0, 80])         # XA0 += XR
    ldr(r5, [r0, 72])
    add(r4, r4, r5)
    str(r4, [r0, 80])
    ldr(r4, [r0, 84])         # OUT0 += OR
    ldr(r5, [r0, 76])
    add(r4, r4, r5)
    str(r4, [r0, 84])
    ldr(r5, [r0, 68])         # NR -= 1
    sub(r5, 1)
    str(r5, [r0, 68])
    beq(RETURN)
    cmp(r6, 0)
    bne(RETURN)
    b(ROW)
    label(RETURN)
    mov(r0, r6)


@micropython.asm_thumb
def dw3(r0, r1):
    """dw() for a 3x3 filter (KH = KW = 3, which this ignores): the same
    block, results and protocol, with the taps unrolled and the pixel's
    plane and output addresses in registers."""
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r4, [r0, 64])         # CL: 0 to start a row, else go on in it
    cmp(r4, 0)
    bne(RESUME)
    label(ROW)
    ldr(r6, [r0, 80])         # r6: XA = XA0
    ldr(r7, [r0, 84])         # r7: OUT = OUT0
    ldr(r4, [r0, 60])         # CL = NC
    str(r4, [r0, 64])
    b(PIXEL)
    label(RESUME)
    ldr(r6, [r0, 0])
    ldr(r7, [r0, 48])
    label(PIXEL)
    ldr(r1, [r0, 4])          # the weights
    mov(r2, r6)               # the taps
    ldr(r3, [r0, 8])          # acc = BI
    ldrb(r4, [r2, 0])
    ldr(r5, [r1, 0])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 1])
    ldr(r5, [r1, 4])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 2])
    ldr(r5, [r1, 8])
    mul(r4, r5)
    add(r3, r3, r4)
    ldr(r5, [r0, 96])         # next row: + RS
    add(r2, r2, r5)
    ldrb(r4, [r2, 0])
    ldr(r5, [r1, 12])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 1])
    ldr(r5, [r1, 16])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 2])
    ldr(r5, [r1, 20])
    mul(r4, r5)
    add(r3, r3, r4)
    ldr(r5, [r0, 96])
    add(r2, r2, r5)
    ldrb(r4, [r2, 0])
    ldr(r5, [r1, 24])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 1])
    ldr(r5, [r1, 28])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 2])
    ldr(r5, [r1, 32])
    mul(r4, r5)
    add(r3, r3, r4)
    ldr(r5, [r0, 100])        # beyond the fast path: pending
    add(r4, r3, r5)
    ldr(r5, [r0, 104])
    cmp(r4, r5)
    bhi(PENDING)
    ldr(r5, [r0, 12])         # requantize acc (r3) into r4, as dw()
    mov(r4, r3)
    mul(r4, r5)
    asr(r4, r4, 11)
    ldr(r5, [r0, 16])
    mul(r5, r3)
    add(r4, r4, r5)
    asr(r4, r4, 11)
    ldr(r5, [r0, 20])
    mul(r5, r3)
    add(r4, r4, r5)
    ldr(r5, [r0, 24])
    add(r4, r4, r5)
    asr(r2, r3, 31)
    ldr(r5, [r0, 28])
    and_(r2, r5)
    add(r4, r4, r2)
    ldr(r5, [r0, 32])
    asr(r4, r5)
    ldr(r5, [r0, 36])
    add(r4, r4, r5)
    ldr(r5, [r0, 40])
    cmp(r4, r5)
    bge(NOTLO)
    mov(r4, r5)
    label(NOTLO)
    ldr(r5, [r0, 44])
    cmp(r4, r5)
    ble(NOTHI)
    mov(r4, r5)
    label(NOTHI)
    strb(r4, [r7, 0])
    mov(r1, 0)                # r1: 1 after a pending pixel
    b(STEP)
    label(PENDING)
    str(r3, [r0, 108])        # PACC = acc, PEND = OUT
    str(r7, [r0, 112])
    mov(r1, 1)
    label(STEP)
    ldr(r5, [r0, 52])         # OUT += OS, XA += XS, CL -= 1
    add(r7, r7, r5)
    ldr(r5, [r0, 56])
    add(r6, r6, r5)
    ldr(r5, [r0, 64])
    sub(r5, 1)
    str(r5, [r0, 64])
    beq(ROWEND)
    cmp(r1, 0)
    bne(SAVE)
    b(PIXEL)                  # (out of a conditional branch's range)
    label(SAVE)
    str(r6, [r0, 0])
    str(r7, [r0, 48])
    b(RETURN)
    label(ROWEND)
    ldr(r4, [r0, 80])         # XA0 += XR
    ldr(r5, [r0, 72])
    add(r4, r4, r5)
    str(r4, [r0, 80])
    ldr(r4, [r0, 84])         # OUT0 += OR
    ldr(r5, [r0, 76])
    add(r4, r4, r5)
    str(r4, [r0, 84])
    ldr(r5, [r0, 68])         # NR -= 1
    sub(r5, 1)
    str(r5, [r0, 68])
    beq(RETURN)
    cmp(r1, 0)
    bne(RETURN)
    b(ROW)
    label(RETURN)
    mov(r0, r1)


# PL_BLOCK: DST PWW COLS RA RB ROWS JL JH SRC SRS CS ZC REL


@micropython.asm_thumb
def plane(r0, r1):
    """One input channel's plane for a tile (depthwise_conv._dwp's copy,
    whose contract this is), with the block laid out as PL_BLOCK: ROWS
    rows of COLS bytes, row r at DST + r * PWW. Rows RA <= r < RB are
    in the image: bytes [JL, JH) are the input's x ^ 0x80, from SRC (row
    RA's first) stepping CS bytes, SRS bytes further for each next row;
    every other byte is ZC (the padding's zp + 128). 0 <= RA <= RB <=
    ROWS, 0 <= JL <= JH <= COLS. DST and SRC are used up. Returns 0."""
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    mov(r7, 0)                # r: the row
    label(ROW)
    ldr(r1, [r0, 0])          # d = DST
    ldr(r5, [r0, 44])         # ZC
    ldr(r3, [r0, 8])
    add(r3, r3, r1)           # the row's end
    ldr(r4, [r0, 12])
    cmp(r7, r4)
    blt(PAD)                  # r < RA: all padding
    ldr(r4, [r0, 16])
    cmp(r7, r4)
    bge(PAD)                  # r >= RB: all padding
    ldr(r3, [r0, 24])
    add(r3, r3, r1)           # padding up to JL
    b(LEFTTEST)
    label(LEFT)
    strb(r5, [r1, 0])
    add(r1, 1)
    label(LEFTTEST)
    cmp(r1, r3)
    bcc(LEFT)
    ldr(r3, [r0, 28])
    ldr(r4, [r0, 0])
    add(r3, r3, r4)           # the image up to JH
    ldr(r2, [r0, 32])         # SRC
    ldr(r6, [r0, 40])         # CS
    mov(r5, 0x80)
    b(COPYTEST)
    label(COPY)
    ldrb(r4, [r2, 0])
    eor(r4, r5)
    strb(r4, [r1, 0])
    add(r1, 1)
    add(r2, r2, r6)
    label(COPYTEST)
    cmp(r1, r3)
    bcc(COPY)
    ldr(r2, [r0, 32])         # SRC += SRS
    ldr(r4, [r0, 36])
    add(r2, r2, r4)
    str(r2, [r0, 32])
    ldr(r5, [r0, 44])
    ldr(r3, [r0, 8])
    ldr(r4, [r0, 0])
    add(r3, r3, r4)           # padding up to COLS
    label(PAD)
    b(PADTEST)
    label(PADLOOP)
    strb(r5, [r1, 0])
    add(r1, 1)
    label(PADTEST)
    cmp(r1, r3)
    bcc(PADLOOP)
    ldr(r4, [r0, 0])          # DST += PWW
    ldr(r5, [r0, 4])
    add(r4, r4, r5)
    str(r4, [r0, 0])
    add(r7, 1)
    ldr(r4, [r0, 20])
    cmp(r7, r4)
    blt(ROW)
    mov(r0, 0)
