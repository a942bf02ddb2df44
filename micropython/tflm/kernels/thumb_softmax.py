"""SOFTMAX's per-row loops in Thumb machine code (@micropython.asm_thumb),
for Cortex-M boards; softmax_loops.py holds their viper twins, with the
same functions and block, for the other ports (softmax.py imports one of
the two: kernels.THUMB).

A Cortex-M0 board copies the machine code of every imported module to RAM:
these three functions take about a fifth of their viper twins' (viper for
armv6m keeps few locals in registers and moves every operand through
r0-r2). Only Thumb-1 instructions that every Cortex-M has are used
(ARMv6-M: no 64-bit multiply, so SaturatingRoundingDoublingHighMul is
done on 16-bit limbs, as the viper twin does); every 32-bit access is to
an int32 array or the operator's 4-byte aligned scratch.
tests/test_thumb.py runs this machine code (mpy-cross -march=armv6m) in a
Cortex-M0 emulator against the viper twins' contract and TFLM's
arithmetic.
"""

import micropython

# The row state st, int32 words (softmax_prep.py makes it; tests read the
# names from this comment):
# SM_BLOCK: SUM MAX C48 CM32 EB CAP OFF DEPTH N
# (SUM: the row's sum of R; MAX: its max, biased by +128; C48, CM32: 48/17
# and -32/17 in Q2.29; EB: 12 + 31 - the output's bits; CAP: the sum's
# cap; OFF: the row's or chunk's first element; DEPTH: the row's length;
# N: the chunk's.) Each function returns 0 (a small int: the call
# allocates nothing).


@micropython.asm_thumb
def row(r0, r1, r2):
    """row(x, r_tab, st): MAX = the max of x[OFF:OFF + DEPTH] ^ 0x80 (int8
    bytes as 0..255, order kept), SUM = the sum of R[MAX - (x ^ 0x80)]
    (int32 words of r_tab), capped at CAP after each term (signed)."""
    ldr(r3, [r2, 24])         # OFF
    add(r0, r0, r3)           # the row's first byte
    ldr(r3, [r2, 28])         # DEPTH
    add(r3, r0, r3)           # past its last
    mov(r7, 0x80)
    mov(r4, 0)                # the max
    mov(r5, r0)
    b(MTEST)
    label(MLOOP)
    ldrb(r6, [r5, 0])
    eor(r6, r7)
    cmp(r6, r4)
    bls(MNEXT)
    mov(r4, r6)
    label(MNEXT)
    add(r5, 1)
    label(MTEST)
    cmp(r5, r3)
    bcc(MLOOP)
    str(r4, [r2, 4])          # MAX
    lsl(r4, r4, 2)
    add(r1, r1, r4)           # &R[MAX]
    mov(r4, 0)                # the sum
    b(STEST)
    label(SLOOP)
    ldrb(r6, [r0, 0])
    eor(r6, r7)
    lsl(r6, r6, 2)
    sub(r6, r1, r6)
    ldr(r6, [r6, 0])          # R[MAX - (x ^ 0x80)]
    add(r4, r4, r6)
    ldr(r6, [r2, 20])         # CAP
    cmp(r4, r6)
    ble(SNEXT)
    mov(r4, r6)
    label(SNEXT)
    add(r0, 1)
    label(STEST)
    cmp(r0, r3)
    bcc(SLOOP)
    str(r4, [r2, 0])          # SUM
    mov(r0, 0)


@micropython.asm_thumb
def gather(r0, r1, r2, r3):
    """gather(buf, x, e_tab, st): buf[i] = E[MAX - (x[OFF + i] ^ 0x80)]
    (int32 words of e_tab) for i < N; buf: int32 words."""
    ldr(r4, [r3, 4])          # MAX
    lsl(r4, r4, 2)
    add(r2, r2, r4)           # &E[MAX]
    ldr(r4, [r3, 24])         # OFF
    add(r1, r1, r4)
    ldr(r4, [r3, 32])         # N
    add(r4, r1, r4)           # past the chunk's last byte
    mov(r7, 0x80)
    b(GTEST)
    label(GLOOP)
    ldrb(r5, [r1, 0])
    eor(r5, r7)
    lsl(r5, r5, 2)
    sub(r5, r2, r5)
    ldr(r5, [r5, 0])
    str(r5, [r0, 0])
    add(r0, 4)
    add(r1, 1)
    label(GTEST)
    cmp(r1, r4)
    bcc(GLOOP)
    mov(r0, 0)


@micropython.asm_thumb
def reciprocal(r0, r1, r2):
    """reciprocal(st, m, s): GetReciprocal(SUM, 12) (TFLM common.h, with
    gemmlowp's one_over_one_plus_x_for_x_in_0_1): m[0] = the Q0.31
    reciprocal, s[0] = -exponent, exponent = EB - CountLeadingZeros(SUM)
    (at most 31). SUM > 0 (the row's max term is 2**19); a SUM <= 0 is
    taken as 1 (no endless loop)."""
    push({r1, r2})            # m, s
    ldr(r3, [r0, 0])          # x = SUM
    cmp(r3, 0)
    bgt(POS)
    mov(r3, 1)
    label(POS)
    mov(r1, 1)                # headroom_plus_one = CountLeadingZeros(SUM)
    mov(r6, 1)
    lsl(r6, r6, 30)           # 2**30
    b(CTEST)
    label(CLOOP)
    lsl(r3, r3, 1)
    add(r1, 1)
    label(CTEST)
    cmp(r3, r6)
    blt(CLOOP)
    sub(r3, r3, r6)
    add(r3, r3, r3)           # (SUM << clz) - 2**31, in [0, 2**31)
    lsr(r3, r3, 1)
    add(r2, r3, r6)           # hd = RoundingHalfSum(that, One)
    mov(r3, r2)
    ldr(r4, [r0, 12])         # CM32
    bl(SRDHM)
    ldr(r5, [r0, 8])          # C48
    add(r5, r5, r3)           # x = 48/17 + hd * (-32/17)
    push({r1})
    mov(r1, 3)                # Newton-Raphson: three steps
    label(NLOOP)
    mov(r3, r2)
    mov(r4, r5)
    bl(SRDHM)                 # hd * x
    mov(r4, 1)
    lsl(r4, r4, 29)
    sub(r4, r4, r3)           # u = 1 - hd * x (Q2.29)
    mov(r3, r5)
    bl(SRDHM)                 # x * u
    lsl(r4, r3, 2)            # Rescale<2>: saturating << 2
    asr(r6, r4, 2)
    cmp(r6, r3)
    beq(NSUM)
    mov(r4, 1)
    lsl(r4, r4, 31)           # INT32_MIN
    cmp(r3, 0)
    blt(NSUM)
    sub(r4, 1)                # INT32_MAX
    label(NSUM)
    add(r5, r5, r4)           # x += that
    sub(r1, 1)
    bne(NLOOP)
    pop({r1})
    lsl(r4, r5, 1)            # ExactMulByPot<-1>, Rescale<0>: saturating
    asr(r6, r4, 1)            # x << 1
    cmp(r6, r5)
    beq(SAVE)
    mov(r4, 1)
    lsl(r4, r4, 31)
    cmp(r5, 0)
    blt(SAVE)
    sub(r4, 1)
    label(SAVE)
    pop({r2, r3})             # m, s
    str(r4, [r2, 0])
    ldr(r4, [r0, 16])         # EB
    sub(r4, r4, r1)
    cmp(r4, 31)               # TFLM's TFLITE_CHECK(exponent <= 31)
    ble(SEXP)
    mov(r4, 31)
    label(SEXP)
    neg(r4, r4)
    str(r4, [r3, 0])
    mov(r0, 0)
    b(DONE)
    # SaturatingRoundingDoublingHighMul(r3, r4) -> r3: the magnitudes'
    # 64-bit product on 16-bit limbs, + 2**30 (- 1 when negative), >> 31,
    # the sign put back (gemmlowp's truncating division). Keeps r0-r2
    # and r5; uses r4, r6, r7.
    label(SRDHM)
    push({r0, r1, r2, lr})
    mov(r2, 0)                # the product is negative
    cmp(r3, 0)
    bge(SP1)
    neg(r3, r3)
    mov(r2, 1)
    label(SP1)
    cmp(r4, 0)
    bge(SP2)
    neg(r4, r4)
    mov(r0, 1)
    eor(r2, r0)
    label(SP2)
    lsr(r1, r3, 16)           # fh
    lsl(r3, r3, 16)
    lsr(r3, r3, 16)           # fl
    lsr(r6, r4, 16)           # gh
    lsl(r4, r4, 16)
    lsr(r4, r4, 16)           # gl
    mov(r7, r1)
    mul(r7, r6)               # high word: fh * gh
    mul(r1, r4)               # fh * gl
    mul(r6, r3)               # gh * fl
    mul(r3, r4)               # low word: fl * gl
    lsl(r0, r1, 16)
    add(r3, r3, r0)
    mov(r0, 0)                # (movs keeps the carry)
    adc(r7, r0)
    lsr(r1, r1, 16)
    add(r7, r7, r1)
    lsl(r0, r6, 16)
    add(r3, r3, r0)
    mov(r0, 0)
    adc(r7, r0)
    lsr(r6, r6, 16)
    add(r7, r7, r6)
    mov(r0, 1)
    lsl(r0, r0, 30)
    sub(r0, r0, r2)           # the nudge
    add(r3, r3, r0)
    mov(r0, 0)
    adc(r7, r0)
    lsr(r3, r3, 31)
    add(r7, r7, r7)
    orr(r3, r7)               # >> 31
    cmp(r2, 0)
    beq(SP3)
    neg(r3, r3)
    label(SP3)
    pop({r0, r1, r2, pc})
    label(DONE)
