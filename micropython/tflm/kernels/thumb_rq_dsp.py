"""FULLY_CONNECTED's gather and requantization in machine code for
Cortex-M4, M7 and M33 (ARMv7E-M, the DSP extension: kernels.DSP), driven
by fc_dsp.py: gather (below) writes the input row's values for
thumb_dsp.dots in about 2.5 instructions each (the viper loop: about
50), and rq requantizes int32 sums into int8 bytes exactly for every
sum, multiplier and shift (fixedpoint.requant_i8b's bits, TFLM's
MultiplyByQuantizedMultiplier), about 25 instructions a value where
requant_i8b's viper takes about 95.

rq's block (RQ_BLOCK below, int32 words): ACC the sums (int32 words,
aligned), N how many, MP the multipliers (int32 words, aligned: m in
0 .. 2**31 - 1), SP the shifts (signed bytes, any address: -31 .. 30,
or above 30 for a negative multiplier, conv_util.NEG_MARK), SSTEP 0
(one multiplier and shift for all: MP and SP stay) or 1 (one per sum:
MP advances 4 bytes, SP 1), OUT the output bytes (any address), ZO,
LO, HI the output zero point and the activation's clamp (-128 <= LO <=
HI <= 127). For k < N:

    OUT[k] = clamp(MultiplyByQuantizedMultiplier(ACC[k], m, s) + ZO,
                   LO, HI)

With ls = max(s, 0) and e = max(-s, 0), x = ACC[k] << ls (wrapped to
int32, as C's x * (1 << ls)), TFLM's SaturatingRoundingDoublingHighMul
is floor((x * m + 2**30) / 2**31) (m >= 0: its saturating case cannot
occur) and RoundingDivideByPOT(v, e) is floor((v + 2**(e - 1) - (v <
0)) / 2**e) for e >= 1, where (v < 0) may be (x < 0) (v = 0 gives 0
either way); the nested floors fold into one:

    e = 0:  (x * m + 2**30) >> 31
    e >= 1: (x * m + 2**30 + 2**(30 + e) - (x < 0) * 2**31) >> (31 + e)

the 64-bit constant set with MOV, shifts and SUBS / SBC, the product
added by SMLAL (|x * m| < 2**62: no 64-bit overflow), then the high word
shifted (ASR e - 1; for e = 0, the high word << 1 and the low word's top
bit). The output zero point is added to the int32 result (wrapping as
TFLM's int32 sum does). A sum whose shift is above 30 (a negative
multiplier) is left to the caller: rq stops there, with ACC, N, MP, SP
and OUT advanced to it, and returns 1 (else 0, the block unchanged).

ARMv6-M has none of these instructions and the inline assembler has no
mnemonics for them: they are data() halfwords (T32 encodings, the
mnemonic in the comment), the rest Thumb-1, as thumb_dsp.py; only DSP
arches import it (romfs.DSP_ONLY). r8-r11 are saved and restored around
the code (asm_thumb saves r4-r7 and lr; r12 is scratch).
tests/test_thumb_rq_dsp.py runs the armv7emsp bytes on an emulated
Cortex-M4 against the contracts and TFLM's arithmetic.
"""

import micropython

# RQ_BLOCK: ACC N MP SP SSTEP OUT ZO LO HI (words 0 to 8)


@micropython.asm_thumb
def rq(r0, r1):
    """OUT[k] = requantized ACC[k] for k < N (RQ_BLOCK, above). Returns
    0, or 1 at a negative multiplier (the block advanced to it)."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r1, [r0, 0])          # ACC
    ldr(r2, [r0, 4])          # N
    ldr(r3, [r0, 8])          # MP
    ldr(r4, [r0, 12])         # SP
    ldr(r5, [r0, 20])         # OUT
    data(2, 0xF8D0, 0xA018)   # ldr.w r10, [r0, #24]: ZO
    data(2, 0xF8D0, 0xB01C)   # ldr.w r11, [r0, #28]: LO
    cmp(r2, 0)
    bgt(LOOP)
    b(DONE)
    label(LOOP)
    data(2, 0xF994, 0x6000)   # ldrsb.w r6, [r4]: s
    ldr(r7, [r1, 0])          # x
    data(2, 0xF8D3, 0xC000)   # ldr.w r12, [r3]: m
    cmp(r6, 30)
    bgt(NEG)
    cmp(r6, 0)
    blt(RIGHT)
    lsl(r7, r6)               # x << ls, wrapped (lsls)
    data(2, 0xF04F, 0x4880)   # mov.w r8, #0x40000000
    data(2, 0xF04F, 0x0900)   # mov.w r9, #0
    data(2, 0xFBC7, 0x890C)   # smlal r8, r9, r7, r12
    data(2, 0xEA4F, 0x0649)   # lsl.w r6, r9, #1
    data(2, 0xEA46, 0x76D8)   # orr.w r6, r6, r8, lsr #31
    b(STORE)
    label(RIGHT)
    neg(r6, r6)               # e = -s, 1..31
    data(2, 0xF04F, 0x0E01)   # mov.w lr, #1
    data(2, 0xFA0E, 0xFE06)   # lsl.w lr, lr, r6: 2**e
    data(2, 0xEA4F, 0x099E)   # lsr.w r9, lr, #2: high word of 2**(30 + e)
    data(2, 0xEA4F, 0x788E)   # lsl.w r8, lr, #30: its low word
    data(2, 0xF108, 0x4880)   # add.w r8, r8, #0x40000000: + 2**30
    data(2, 0xEA4F, 0x7EE7)   # asr.w lr, r7, #31: -(x < 0)
    data(2, 0xEBB8, 0x78CE)   # subs.w r8, r8, lr, lsl #31: - 2**31
    data(2, 0xF169, 0x0900)   # sbc.w r9, r9, #0
    data(2, 0xFBC7, 0x890C)   # smlal r8, r9, r7, r12
    sub(r6, 1)
    data(2, 0xFA49, 0xF606)   # asr.w r6, r9, r6: >> (31 + e)
    label(STORE)
    data(2, 0x4456)           # add r6, r10: + ZO
    data(2, 0x455E)           # cmp r6, r11
    bge(ABOVE)
    data(2, 0x465E)           # mov r6, r11: LO
    label(ABOVE)
    ldr(r7, [r0, 32])         # HI
    cmp(r6, r7)
    ble(BELOW)
    mov(r6, r7)
    label(BELOW)
    strb(r6, [r5, 0])
    add(r5, 1)
    add(r1, 4)
    ldr(r7, [r0, 16])         # SSTEP: SP += SSTEP, MP += 4 * SSTEP
    add(r4, r4, r7)
    data(2, 0xEB03, 0x0387)   # add.w r3, r3, r7, lsl #2
    sub(r2, 1)
    bne(LOOP)
    label(DONE)
    mov(r0, 0)
    b(EXIT)
    label(NEG)                # a negative multiplier: the caller's
    str(r1, [r0, 0])
    str(r2, [r0, 4])
    str(r3, [r0, 8])
    str(r4, [r0, 12])
    str(r5, [r0, 20])
    mov(r0, 1)
    label(EXIT)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}


@micropython.asm_thumb
def gather(r0, r1):
    """FULLY_CONNECTED's window for thumb_dsp.dots (fc_dsp.py), in dots'
    own block (DOTS_BLOCK, thumb.py), the words of OUT and NF borrowed:

        V[i] = x[i] - input_zero_point   for i < (VE - V) / 4

    (x: the int8 input bytes from the address in OUT's word, signed;
    NF's word: -input_zero_point), and BASE = -128 * sum(V). 4 input
    bytes per LDR (any address: an M4 reads unaligned words), SXTAB
    (sign extension and + -input_zero_point in one) and one STM of 4
    words; the last (VE - V) / 4 mod 4 one at a time. The caller sets
    OUT and NF for dots afterwards. Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r2, [r0, 0])          # v = V
    ldr(r7, [r0, 8])          # VE
    ldr(r1, [r0, 28])         # x (OUT's word)
    ldr(r3, [r0, 32])         # -input_zero_point (NF's word)
    mov(r5, 0)                # s = sum(v)
    mov(r6, r7)               # 4 at a time while v < VE - 12
    sub(r6, 12)
    b(G4TEST)
    label(G4LOOP)
    data(2, 0xF851, 0x4B04)   # ldr.w r4, [r1], #4
    data(2, 0xFA43, 0xF884)   # sxtab r8, r3, r4
    data(2, 0xFA43, 0xF994)   # sxtab r9, r3, r4, ror #8
    data(2, 0xFA43, 0xFAA4)   # sxtab r10, r3, r4, ror #16
    data(2, 0xFA43, 0xFBB4)   # sxtab r11, r3, r4, ror #24
    data(2, 0xE8A2, 0x0F00)   # stmia.w r2!, {r8, r9, r10, r11}
    data(2, 0x4445)           # add r5, r8
    data(2, 0x444D)           # add r5, r9
    data(2, 0x4455)           # add r5, r10
    data(2, 0x445D)           # add r5, r11
    label(G4TEST)
    cmp(r2, r6)
    bcc(G4LOOP)
    b(G1TEST)
    label(G1LOOP)             # the rest one at a time
    data(2, 0xF911, 0x4B01)   # ldrsb.w r4, [r1], #1
    add(r4, r4, r3)
    str(r4, [r2, 0])
    add(r2, 4)
    add(r5, r5, r4)
    label(G1TEST)
    cmp(r2, r7)
    bcc(G1LOOP)
    lsl(r5, r5, 7)            # BASE = -128 * s
    neg(r5, r5)
    str(r5, [r0, 24])
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)
