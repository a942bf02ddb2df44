"""The int8 multiply-accumulate loops of CONV_2D and FULLY_CONNECTED in
Thumb machine code (@micropython.asm_thumb), for Cortex-M boards
(DEPTHWISE_CONV_2D's: thumb_dw.py).

Viper code for armv6m keeps two locals in registers and moves every
operand through r0-r2, so an int8 multiply-accumulate costs it 10 or more
instructions; here it costs 5.5 (ldrb, eor, ldr, mul, add, 8-way
unrolled). Only Thumb-1 instructions that every Cortex-M has are used
(ARMv6-M: RP2040's M0+ and up), and no 16/32-bit load is unaligned when
the window words are 4-byte aligned: filter bytes, which can start at any
address in a model, are read one byte at a time.

This module compiles only where MicroPython has the Thumb inline
assembler (rp2, stm32, qemu-arm...). The kernels import it on those ports
only (kernels.THUMB: the native arch of sys.implementation._mpy is
armv6m .. armv7emdp) and keep their viper loops for the others: each
function here has the contract of the viper loop it replaces, and
tests/test_thumb.py runs this machine code (mpy-cross -march=armv6m) in
a Cortex-M0 emulator against that contract and TFLM's arithmetic.
"""

import micropython

# Every function here takes a buffer (r0: its address) and a byte offset
# (r1): its block is the int32 words at r0 + r1 (4-byte aligned), named
# by the layout comments below (tests/test_thumb.py reads them; names in
# the device code would cost a board RAM). It returns 0 or 1 (a small
# int: the call allocates nothing).
#
# DOTS_BLOCK: V V8 VE WP WS BP BASE OUT NF


@micropython.asm_thumb
def dots(r0, r1):
    """For k in range(NF), with the block laid out as DOTS_BLOCK:

        OUT[k] = BP[k] + BASE + sum(i < n) (WP[k * WS + i] ^ 0x80) * V[i]

    (words at addresses OUT and BP, bytes at WP, int32 window words at
    V .. VE, n = (VE - V) / 4, V8 = V + 4 * (n & ~7); sums modulo 2**32).
    blk[WP], blk[BP], blk[OUT] and blk[NF] are used up (advanced past
    the last filter; NF ends at 0); NF must be >= 1. Returns 0. The
    unsigned filter byte xor 0x80 is filter + 128: with v = x -
    input_zero_point, the caller adds -128 * sum(v) to BASE (conv.py).
    """
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    mov(r6, 0x80)
    label(FILTER)
    ldr(r1, [r0, 0])          # v = V
    ldr(r7, [r0, 4])          # V8
    ldr(r2, [r0, 12])         # w = WP
    ldr(r3, [r0, 20])
    ldr(r3, [r3, 0])          # acc = BP[k]
    ldr(r4, [r0, 24])
    add(r3, r3, r4)           # + BASE
    b(TEST8)
    label(LOOP8)
    ldrb(r4, [r2, 0])
    eor(r4, r6)
    ldr(r5, [r1, 0])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 1])
    eor(r4, r6)
    ldr(r5, [r1, 4])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 2])
    eor(r4, r6)
    ldr(r5, [r1, 8])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 3])
    eor(r4, r6)
    ldr(r5, [r1, 12])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 4])
    eor(r4, r6)
    ldr(r5, [r1, 16])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 5])
    eor(r4, r6)
    ldr(r5, [r1, 20])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 6])
    eor(r4, r6)
    ldr(r5, [r1, 24])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 7])
    eor(r4, r6)
    ldr(r5, [r1, 28])
    mul(r4, r5)
    add(r3, r3, r4)
    add(r2, 8)
    add(r1, 32)
    label(TEST8)
    cmp(r1, r7)
    bcc(LOOP8)
    ldr(r7, [r0, 8])          # VE
    b(TEST1)
    label(LOOP1)
    ldrb(r4, [r2, 0])
    eor(r4, r6)
    ldr(r5, [r1, 0])
    mul(r4, r5)
    add(r3, r3, r4)
    add(r2, 1)
    add(r1, 4)
    label(TEST1)
    cmp(r1, r7)
    bcc(LOOP1)
    ldr(r4, [r0, 28])         # OUT[k] = acc; OUT += 4
    str(r3, [r4, 0])
    add(r4, 4)
    str(r4, [r0, 28])
    ldr(r4, [r0, 20])         # BP += 4
    add(r4, 4)
    str(r4, [r0, 20])
    ldr(r4, [r0, 12])         # WP += WS
    ldr(r5, [r0, 16])
    add(r4, r4, r5)
    str(r4, [r0, 12])
    ldr(r4, [r0, 32])         # NF -= 1
    sub(r4, 1)
    str(r4, [r0, 32])
    bne(FILTER)
    mov(r0, 0)


# pixels()'s block: the first 9 words as dots() reads them (with BASE and
# the working WP, BP, OUT, NF set by pixels itself from WP0, BP0, ACC,
# NF0); REL is mac.py's (0 here)
# PX_BLOCK: V V8 VE WP WS BP BASE OUT NF X XS OFF NPIX MP0 MSTEP SP0 SSTEP ZO
#   LO HI QOUT QSTEP PEND LIM LIM2 WP0 BP0 ACC NF0 MP SP Q REL


@micropython.asm_thumb
def pixels(r0, r1):
    """NPIX output pixels of CONV_2D 1x1 or FULLY_CONNECTED (conv.py /
    fully_connected.py, whose contract this is), with the block laid out
    as PX_BLOCK. For each pixel:

        v[i] = ((byte at X + i) ^ 0x80) + OFF  (n = (VE - V) / 4 words
                                               at V; OFF = -zp - 128)
        BASE = -128 * sum(v)
        for k in range(NF0): acc = dots()'s sum with WP0, BP0, ACC:
            ACC[k] = BP0[k] + BASE + sum(i) (WP0[k * WS + i] ^ 0x80) * v[i]
            m = MP0[k * MSTEP / 4]; shift = signed byte SP0[k * SSTEP]
            if 0 <= -shift <= 21 and |acc| <= LIM (LIM2 = 2 * LIM):
                byte QOUT[k] = clamp(MultiplyByQuantizedMultiplier(acc,
                    m, shift) + ZO, LO, HI)   (requant_i8b's fast path)
            else: PEND += 1 (the byte is left to the caller)
        X += XS; QOUT += QSTEP; NPIX -= 1

    A pixel with pending values ends the call (returns 1): the caller
    requantizes them from ACC and calls again while NPIX is not 0.
    Returns 0 when NPIX pixels are done. NF0, NPIX >= 1, n >= 1.
    """
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    label(PIXEL)
    ldr(r1, [r0, 36])         # gather: x = X, v = V, up to VE
    ldr(r2, [r0, 0])
    ldr(r7, [r0, 8])
    ldr(r5, [r0, 44])         # OFF
    mov(r6, 0x80)
    mov(r3, 0)
    label(GATHER)
    ldrb(r4, [r1, 0])
    eor(r4, r6)
    add(r4, r4, r5)
    str(r4, [r2, 0])
    add(r3, r3, r4)
    add(r1, 1)
    add(r2, 4)
    cmp(r2, r7)
    bcc(GATHER)
    lsl(r3, r3, 7)
    neg(r3, r3)
    str(r3, [r0, 24])         # BASE = -128 * sum(v)
    ldr(r4, [r0, 100])        # WP = WP0, BP = BP0, OUT = ACC, NF = NF0,
    str(r4, [r0, 12])         # MP = MP0, SP = SP0, Q = QOUT
    ldr(r4, [r0, 104])
    str(r4, [r0, 20])
    ldr(r4, [r0, 108])
    str(r4, [r0, 28])
    ldr(r4, [r0, 112])
    str(r4, [r0, 32])
    ldr(r4, [r0, 52])
    str(r4, [r0, 116])
    ldr(r4, [r0, 60])
    str(r4, [r0, 120])
    ldr(r4, [r0, 80])
    str(r4, [r0, 124])
    label(FILTER)
    mov(r6, 0x80)
    ldr(r1, [r0, 0])          # v = V
    ldr(r7, [r0, 4])          # V8
    ldr(r2, [r0, 12])         # w = WP
    ldr(r3, [r0, 20])
    ldr(r3, [r3, 0])          # acc = BP[k]
    ldr(r4, [r0, 24])
    add(r3, r3, r4)           # + BASE
    b(TEST8)
    label(LOOP8)
    ldrb(r4, [r2, 0])
    eor(r4, r6)
    ldr(r5, [r1, 0])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 1])
    eor(r4, r6)
    ldr(r5, [r1, 4])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 2])
    eor(r4, r6)
    ldr(r5, [r1, 8])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 3])
    eor(r4, r6)
    ldr(r5, [r1, 12])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 4])
    eor(r4, r6)
    ldr(r5, [r1, 16])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 5])
    eor(r4, r6)
    ldr(r5, [r1, 20])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 6])
    eor(r4, r6)
    ldr(r5, [r1, 24])
    mul(r4, r5)
    add(r3, r3, r4)
    ldrb(r4, [r2, 7])
    eor(r4, r6)
    ldr(r5, [r1, 28])
    mul(r4, r5)
    add(r3, r3, r4)
    add(r2, 8)
    add(r1, 32)
    label(TEST8)
    cmp(r1, r7)
    bcc(LOOP8)
    ldr(r7, [r0, 8])          # VE
    b(TEST1)
    label(LOOP1)
    ldrb(r4, [r2, 0])
    eor(r4, r6)
    ldr(r5, [r1, 0])
    mul(r4, r5)
    add(r3, r3, r4)
    add(r2, 1)
    add(r1, 4)
    label(TEST1)
    cmp(r1, r7)
    bcc(LOOP1)
    ldr(r4, [r0, 28])         # OUT[k] = acc
    str(r3, [r4, 0])
    ldr(r7, [r0, 120])        # e = -shift (SP: a signed byte)
    ldrb(r7, [r7, 0])
    lsl(r7, r7, 24)
    asr(r7, r7, 24)
    neg(r7, r7)
    cmp(r7, 21)
    bhi(PENDING)              # e < 0 or e > 21
    ldr(r5, [r0, 92])         # |acc| <= LIM
    add(r4, r3, r5)
    ldr(r5, [r0, 96])
    cmp(r4, r5)
    bhi(PENDING)
    ldr(r6, [r0, 116])        # m
    ldr(r6, [r6, 0])
    lsl(r4, r6, 21)
    lsr(r4, r4, 21)
    mul(r4, r3)
    asr(r4, r4, 11)           # t = (acc * (m & 0x7FF)) >> 11
    lsl(r5, r6, 10)
    lsr(r5, r5, 21)
    mul(r5, r3)
    add(r4, r4, r5)
    asr(r4, r4, 11)           # t = (acc * ((m >> 11) & 0x7FF) + t) >> 11
    lsr(r5, r6, 22)
    mul(r5, r3)
    add(r4, r4, r5)           # acc * (m >> 22) + t
    add(r4, 128)
    add(r4, 128)              # + 256
    cmp(r7, 0)
    beq(NOROUND)
    mov(r6, r7)               # e > 0: + 2**(8 + e) - (acc < 0) * 512,
    add(r6, 8)                # >> (9 + e): RoundingDivideByPOT folded in
    mov(r5, 1)
    lsl(r5, r6)
    add(r4, r4, r5)
    asr(r3, r3, 31)
    lsl(r3, r3, 9)
    add(r4, r4, r3)
    add(r6, 1)
    asr(r4, r6)
    b(ZERO)
    label(NOROUND)
    asr(r4, r4, 9)
    label(ZERO)
    ldr(r5, [r0, 68])         # + ZO, clamped to [LO, HI]
    add(r4, r4, r5)
    ldr(r5, [r0, 72])
    cmp(r4, r5)
    bge(NOTLO)
    mov(r4, r5)
    label(NOTLO)
    ldr(r5, [r0, 76])
    cmp(r4, r5)
    ble(NOTHI)
    mov(r4, r5)
    label(NOTHI)
    ldr(r5, [r0, 124])
    strb(r4, [r5, 0])
    b(NEXT)
    label(PENDING)
    ldr(r4, [r0, 88])         # PEND += 1
    add(r4, 1)
    str(r4, [r0, 88])
    label(NEXT)
    ldr(r4, [r0, 28])         # OUT += 4, BP += 4, WP += WS, MP += MSTEP,
    add(r4, 4)                # SP += SSTEP, Q += 1
    str(r4, [r0, 28])
    ldr(r4, [r0, 20])
    add(r4, 4)
    str(r4, [r0, 20])
    ldr(r4, [r0, 12])
    ldr(r5, [r0, 16])
    add(r4, r4, r5)
    str(r4, [r0, 12])
    ldr(r4, [r0, 116])
    ldr(r5, [r0, 56])
    add(r4, r4, r5)
    str(r4, [r0, 116])
    ldr(r4, [r0, 120])
    ldr(r5, [r0, 64])
    add(r4, r4, r5)
    str(r4, [r0, 120])
    ldr(r4, [r0, 124])
    add(r4, 1)
    str(r4, [r0, 124])
    ldr(r4, [r0, 32])         # NF -= 1
    sub(r4, 1)
    str(r4, [r0, 32])
    beq(PIXELEND)
    b(FILTER)                 # (out of a conditional branch's range)
    label(PIXELEND)
    ldr(r4, [r0, 36])         # X += XS, QOUT += QSTEP, NPIX -= 1
    ldr(r5, [r0, 40])
    add(r4, r4, r5)
    str(r4, [r0, 36])
    ldr(r4, [r0, 80])
    ldr(r5, [r0, 84])
    add(r4, r4, r5)
    str(r4, [r0, 80])
    ldr(r4, [r0, 48])
    sub(r4, 1)
    str(r4, [r0, 48])
    ldr(r1, [r0, 88])         # pending values: back to the caller
    cmp(r1, 0)
    bne(RET1)
    cmp(r4, 0)
    beq(RET0)
    b(PIXEL)
    label(RET1)
    mov(r0, 1)
    b(END)
    label(RET0)
    mov(r0, 0)
    label(END)
