"""thumb.py's dots and pixels for Cortex-M4, M7 and M33 (ARMv7E-M, the
DSP extension: kernels.DSP), with the same blocks (DOTS_BLOCK, PX_BLOCK
in thumb.py) and the same int32 sums, modulo 2**32.

Four window values at a time: the filter's 4 bytes in one aligned LDR,
SXTB16 (with ROR 8 for the odd bytes) widens them into two pairs of
int16, LDM reads the 4 int32 window words and PKHBT packs them into the
matching pairs, and two SMLAD add the 4 products: 8 instructions for 4
multiply-accumulates (thumb.py: 22), unrolled twice. A filter row whose
address is not 4-byte aligned (model bytes can sit anywhere, and a
stride WS that is not a multiple of 4 moves it between filters) starts
with up to 3 values one at a time (LDRSB, LDR, MLA), so no 16/32-bit
load is ever unaligned; the last n mod 4 values go the same way.

The filter bytes are taken signed (w = byte ^ 0x80 - 128) where the
contract sums (byte ^ 0x80) * v: dots adds 128 * sum(v) to BASE once per
call (an exact identity modulo 2**32); in pixels, BASE = -128 * sum(v)
and that term cancel, so its sums start from the bias alone. SMLAD
multiplies int16 halves: the window values must lie in -32768..32767.
They are x - input_zero_point (-255..255) for every caller: CONV_2D,
FULLY_CONNECTED, BATCH_MATMUL and fc_rows.py check int8 zero points.

dots takes its filters two at a time (an odd NF's last one alone, as
above): per 4 values one LDM of the window words, two PKHBT, one LDR of
each filter's bytes (the second at w + WS; plain LDR at any address, as
pixels' below), 4 SXTB16 and 4 SMLAD, so each packed pair of window
values feeds both filters: 16 multiply-accumulates in 28 instructions,
unrolled twice; the values left one at a time (LDRSB, MLA).

gather (DSP builds only: conv_dsp.py) writes CONV_2D's window for
dots: runs of input bytes, 4 at a time by one LDR and 4 SXTAB (sign
extension and + -input_zero_point in one) and one STM, and BASE =
-128 * sum(v), where conv.py's viper loop spent about 35 instructions a
value; the taps an image border cuts are zeros. gather_pair (or
gather_pair_any) and pair_dots do two pixels at once (pixels' packed
pairs and loop, on windows), requant CONV_2D's requantization and
add_lut the int8 ADD's table loop (add_dsp.py), all for conv_dsp.py and
add_dsp.py only.

pixels takes the pixels of its row two at a time (one left over goes
alone, as before). It gathers both into the window buffer as int16
pairs (per 4 values the words A0|A2, A1|A3, B0|B2, B1|B3 from one LDR of
each pixel's bytes, SXTB16 and SADD16 with -input_zero_point; then one
word An|Bn per value left: the same n words), and sums two filters at a
time against both: per 4 values one LDM of the 4 window words, one LDR
of each filter's bytes, 4 SXTB16 and 8 SMLAD, 16 multiply-accumulates
in 17 instructions; the values left one at a time by SMLABB / SMLABT.
Its 4 sums are requantized by the code of the single pixel's path (a
subroutine: BL, BX LR). A pair with a value beyond the fast path is
summed again, its first pixel alone (that path writes ACC and returns
1, as the contract says), the second with the next pixel. Those input
and filter words are read with LDR at any address (an M4, M7 or M33
reads unaligned words with LDR; LDM and LDRD, which fault, touch only
the aligned window buffer and stack). conv.py hands pixels a stride-1
1x1 convolution's whole image as one row.

ARMv6-M has none of these instructions and the inline assembler has no
mnemonics for them: they are data() halfwords (T32 encodings, the
mnemonic in the comment), the rest Thumb-1, so the module compiles for
every Thumb arch (a manifest with thumb=True freezes it everywhere) but
only DSP arches import it (romfs.DSP_ONLY). r8-r11 are saved and
restored around the code (asm_thumb saves r4-r7). tests/test_thumb_dsp.py
runs the armv7emsp bytes on an emulated Cortex-M4 against thumb.py's
machine code and the contract.
"""

import micropython


@micropython.asm_thumb
def dots(r0, r1):
    """thumb.dots, with the same block (DOTS_BLOCK) and results, for
    -32768 <= V[i] <= 32767. Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r1, [r0, 0])          # r8 = BASE + 128 * sum(v)
    ldr(r7, [r0, 8])
    mov(r3, 0)
    sub(r7, 12)               # 4 values left while v < VE - 12
    b(STEST4)
    label(SLOOP4)
    data(2, 0xC974)           # ldmia r1!, {r2, r4, r5, r6}
    add(r3, r3, r2)
    add(r3, r3, r4)
    add(r3, r3, r5)
    add(r3, r3, r6)
    label(STEST4)
    cmp(r1, r7)
    bcc(SLOOP4)
    add(r7, 12)
    b(STEST)
    label(SLOOP)
    ldr(r4, [r1, 0])
    add(r3, r3, r4)
    add(r1, 4)
    label(STEST)
    cmp(r1, r7)
    bcc(SLOOP)
    lsl(r3, r3, 7)
    ldr(r4, [r0, 24])
    add(r3, r3, r4)
    mov(r8, r3)
    label(FILTER)
    ldr(r4, [r0, 32])         # NF >= 2: filters k and k + 1 together
    cmp(r4, 2)
    bcs(PAIR)
    b(SINGLE)
    label(PAIR)
    ldr(r1, [r0, 0])          # v = V
    ldr(r2, [r0, 12])         # w = WP (A; B at w + WS)
    ldr(r3, [r0, 16])
    ldr(r4, [r0, 20])         # accA = BP[k] + r8, accB = BP[k + 1] + r8
    mov(r6, r8)
    ldr(r5, [r4, 0])
    add(r5, r5, r6)
    mov(r9, r5)
    ldr(r5, [r4, 4])
    add(r5, r5, r6)
    mov(r10, r5)
    ldr(r7, [r0, 8])          # VE
    push({r0})
    mov(r0, r7)               # 8 values left while v < VE - 28
    sub(r0, 28)
    b(PTEST8)
    label(PLOOP8)             # 8 values x 2 filters: 26 instructions
    data(2, 0xE8B1, 0x5060)   # ldmia.w r1!, {r5, r6, r12, lr}: v0..v3
    data(2, 0xEAC5, 0x450C)   # pkhbt r5, r5, r12, lsl #16: v0 | v2 << 16
    data(2, 0xEAC6, 0x460E)   # pkhbt r6, r6, lr, lsl #16: v1 | v3 << 16
    data(2, 0xF852, 0x4003)   # ldr.w r4, [r2, r3]: filter B's 4 bytes
    data(2, 0xF852, 0x7B04)   # ldr.w r7, [r2], #4: filter A's 4 bytes
    data(2, 0xFA2F, 0xFC87)   # sxtb16 r12, r7: a0 | a2 << 16
    data(2, 0xFB2C, 0x9905)   # smlad r9, r12, r5, r9
    data(2, 0xFA2F, 0xFC97)   # sxtb16 r12, r7, ror #8: a1 | a3 << 16
    data(2, 0xFB2C, 0x9906)   # smlad r9, r12, r6, r9
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: b0 | b2 << 16
    data(2, 0xFB2C, 0xAA05)   # smlad r10, r12, r5, r10
    data(2, 0xFA2F, 0xFC94)   # sxtb16 r12, r4, ror #8: b1 | b3 << 16
    data(2, 0xFB2C, 0xAA06)   # smlad r10, r12, r6, r10
    data(2, 0xE8B1, 0x5060)   # ldmia.w r1!, {r5, r6, r12, lr}: v4..v7
    data(2, 0xEAC5, 0x450C)   # pkhbt r5, r5, r12, lsl #16: v0 | v2 << 16
    data(2, 0xEAC6, 0x460E)   # pkhbt r6, r6, lr, lsl #16: v1 | v3 << 16
    data(2, 0xF852, 0x4003)   # ldr.w r4, [r2, r3]: filter B's 4 bytes
    data(2, 0xF852, 0x7B04)   # ldr.w r7, [r2], #4: filter A's 4 bytes
    data(2, 0xFA2F, 0xFC87)   # sxtb16 r12, r7: a0 | a2 << 16
    data(2, 0xFB2C, 0x9905)   # smlad r9, r12, r5, r9
    data(2, 0xFA2F, 0xFC97)   # sxtb16 r12, r7, ror #8: a1 | a3 << 16
    data(2, 0xFB2C, 0x9906)   # smlad r9, r12, r6, r9
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: b0 | b2 << 16
    data(2, 0xFB2C, 0xAA05)   # smlad r10, r12, r5, r10
    data(2, 0xFA2F, 0xFC94)   # sxtb16 r12, r4, ror #8: b1 | b3 << 16
    data(2, 0xFB2C, 0xAA06)   # smlad r10, r12, r6, r10
    label(PTEST8)
    cmp(r1, r0)
    bcc(PLOOP8)
    add(r0, 16)               # 4 left while v < VE - 12
    cmp(r1, r0)
    bcs(PTAIL)
    data(2, 0xE8B1, 0x5060)   # ldmia.w r1!, {r5, r6, r12, lr}: v0..v3
    data(2, 0xEAC5, 0x450C)   # pkhbt r5, r5, r12, lsl #16: v0 | v2 << 16
    data(2, 0xEAC6, 0x460E)   # pkhbt r6, r6, lr, lsl #16: v1 | v3 << 16
    data(2, 0xF852, 0x4003)   # ldr.w r4, [r2, r3]: filter B's 4 bytes
    data(2, 0xF852, 0x7B04)   # ldr.w r7, [r2], #4: filter A's 4 bytes
    data(2, 0xFA2F, 0xFC87)   # sxtb16 r12, r7: a0 | a2 << 16
    data(2, 0xFB2C, 0x9905)   # smlad r9, r12, r5, r9
    data(2, 0xFA2F, 0xFC97)   # sxtb16 r12, r7, ror #8: a1 | a3 << 16
    data(2, 0xFB2C, 0x9906)   # smlad r9, r12, r6, r9
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: b0 | b2 << 16
    data(2, 0xFB2C, 0xAA05)   # smlad r10, r12, r5, r10
    data(2, 0xFA2F, 0xFC94)   # sxtb16 r12, r4, ror #8: b1 | b3 << 16
    data(2, 0xFB2C, 0xAA06)   # smlad r10, r12, r6, r10
    label(PTAIL)
    add(r0, 12)               # VE: the values left one at a time
    b(PTEST1)
    label(PLOOP1)
    data(2, 0xF851, 0x5B04)   # ldr.w r5, [r1], #4
    data(2, 0xF912, 0x4003)   # ldrsb.w r4, [r2, r3]
    data(2, 0xF912, 0x7B01)   # ldrsb.w r7, [r2], #1
    data(2, 0xFB07, 0x9905)   # mla r9, r7, r5, r9
    data(2, 0xFB04, 0xAA05)   # mla r10, r4, r5, r10
    label(PTEST1)
    cmp(r1, r0)
    bcc(PLOOP1)
    pop({r0})
    ldr(r4, [r0, 28])         # OUT[k], OUT[k + 1] = accA, accB; OUT += 8
    mov(r5, r9)
    str(r5, [r4, 0])
    mov(r5, r10)
    str(r5, [r4, 4])
    add(r4, 8)
    str(r4, [r0, 28])
    ldr(r4, [r0, 20])         # BP += 8
    add(r4, 8)
    str(r4, [r0, 20])
    ldr(r4, [r0, 12])         # WP += 2 * WS
    ldr(r5, [r0, 16])
    add(r4, r4, r5)
    add(r4, r4, r5)
    str(r4, [r0, 12])
    ldr(r4, [r0, 32])         # NF -= 2
    sub(r4, 2)
    str(r4, [r0, 32])
    bne(PMORE)
    b(DONE)
    label(PMORE)
    b(FILTER)
    label(SINGLE)             # the last filter of an odd NF, alone
    ldr(r1, [r0, 0])          # v = V
    ldr(r7, [r0, 8])          # VE
    ldr(r2, [r0, 12])         # w = WP
    ldr(r3, [r0, 20])
    ldr(r3, [r3, 0])          # acc = BP[k] + r8
    mov(r4, r8)
    add(r3, r3, r4)
    label(HEAD)               # one value at a time up to an aligned
    lsl(r4, r2, 30)           # filter word
    beq(ALIGNED)
    cmp(r1, r7)
    bcs(SUMMED)
    data(2, 0xF912, 0x4B01)   # ldrsb.w r4, [r2], #1
    data(2, 0xF851, 0x5B04)   # ldr.w r5, [r1], #4
    data(2, 0xFB04, 0x3305)   # mla r3, r4, r5, r3
    b(HEAD)
    label(ALIGNED)
    mov(r6, r7)               # 8 values left while v < VE - 28
    sub(r6, 28)
    b(TEST8)
    label(LOOP8)
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: w0..w3
    data(2, 0xE8B1, 0x0E20)   # ldmia.w r1!, {r5, r9, r10, r11}: v0..v3
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: w0 | w2 << 16
    data(2, 0xFA2F, 0xF494)   # sxtb16 r4, r4, ror #8: w1 | w3 << 16
    data(2, 0xEAC5, 0x450A)   # pkhbt r5, r5, r10, lsl #16: v0 | v2 << 16
    data(2, 0xEAC9, 0x490B)   # pkhbt r9, r9, r11, lsl #16: v1 | v3 << 16
    data(2, 0xFB2C, 0x3305)   # smlad r3, r12, r5, r3
    data(2, 0xFB24, 0x3309)   # smlad r3, r4, r9, r3
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: w4..w7
    data(2, 0xE8B1, 0x0E20)   # ldmia.w r1!, {r5, r9, r10, r11}: v4..v7
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: w4 | w6 << 16
    data(2, 0xFA2F, 0xF494)   # sxtb16 r4, r4, ror #8: w5 | w7 << 16
    data(2, 0xEAC5, 0x450A)   # pkhbt r5, r5, r10, lsl #16: v4 | v6 << 16
    data(2, 0xEAC9, 0x490B)   # pkhbt r9, r9, r11, lsl #16: v5 | v7 << 16
    data(2, 0xFB2C, 0x3305)   # smlad r3, r12, r5, r3
    data(2, 0xFB24, 0x3309)   # smlad r3, r4, r9, r3
    label(TEST8)
    cmp(r1, r6)
    bcc(LOOP8)
    add(r6, 16)               # 4 left while v < VE - 12
    cmp(r1, r6)
    bcs(TEST1)
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: w0..w3
    data(2, 0xE8B1, 0x0E20)   # ldmia.w r1!, {r5, r9, r10, r11}: v0..v3
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: w0 | w2 << 16
    data(2, 0xFA2F, 0xF494)   # sxtb16 r4, r4, ror #8: w1 | w3 << 16
    data(2, 0xEAC5, 0x450A)   # pkhbt r5, r5, r10, lsl #16: v0 | v2 << 16
    data(2, 0xEAC9, 0x490B)   # pkhbt r9, r9, r11, lsl #16: v1 | v3 << 16
    data(2, 0xFB2C, 0x3305)   # smlad r3, r12, r5, r3
    data(2, 0xFB24, 0x3309)   # smlad r3, r4, r9, r3
    b(TEST1)
    label(LOOP1)
    data(2, 0xF912, 0x4B01)   # ldrsb.w r4, [r2], #1
    data(2, 0xF851, 0x5B04)   # ldr.w r5, [r1], #4
    data(2, 0xFB04, 0x3305)   # mla r3, r4, r5, r3
    label(TEST1)
    cmp(r1, r7)
    bcc(LOOP1)
    label(SUMMED)
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
    beq(DONE)
    b(FILTER)
    label(DONE)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)


# gather()'s block: DOTS_BLOCK's words as dots() reads them (gather
# writes V's words and BASE), REL (word 9, not read), then
# GATHER_BLOCK: GX GRUN GNRUN GRSTEP GNROW GXROW GZP GROWS GRUNS GVROW
# GV (words 10 to 20: GROWS, GRUNS and GV are its counters)


@micropython.asm_thumb
def gather(r0, r1):
    """CONV_2D's window for dots (conv.py, Cortex-M4/M7/M33 only): with
    the block laid out as DOTS_BLOCK then REL then GATHER_BLOCK, writes

        V[i] = x - input_zero_point   (x: the int8 input bytes, signed)

    for the bytes of GNROW rows GXROW apart from GX, each row GNRUN
    runs of GRUN bytes GRSTEP apart, in that order (the window of an
    output pixel's in-image taps: conv.py's gather), with GZP =
    -input_zero_point, and BASE = -128 * sum(V) (what conv.py's viper
    gather leaves for dots). GNROW, GNRUN >= 1. With GVROW = 0 the rows
    follow each other from V; else V[0 .. VE) is zeroed first (4 words
    per STM) and row r starts at the address GV + r * GVROW (bytes; GV
    is advanced as a counter): the taps cut by the image border stay 0,
    which adds nothing to a sum, so dots sums whole filter rows
    (conv_dsp.py's partial windows). Input bytes are read with LDR at
    any address (an M4 reads unaligned words), 4 at a time (SXTAB:
    sign-extend and add GZP in one), the last GRUN mod 4 of each run
    one at a time. Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r2, [r0, 0])          # v = V
    ldr(r4, [r0, 76])         # GVROW = 0: no zeros
    cmp(r4, 0)
    beq(ZDONE)
    ldr(r7, [r0, 8])          # V[0 .. VE) = 0: 4 words at a time while
    mov(r6, r7)               # v < VE - 12, then one at a time
    sub(r6, 12)
    mov(r5, 0)
    mov(r8, r5)
    mov(r9, r5)
    mov(r10, r5)
    mov(r11, r5)
    b(Z4TEST)
    label(Z4LOOP)
    data(2, 0xE8A2, 0x0F00)   # stmia.w r2!, {r8, r9, r10, r11}
    label(Z4TEST)
    cmp(r2, r6)
    bcc(Z4LOOP)
    b(Z1TEST)
    label(Z1LOOP)
    str(r5, [r2, 0])
    add(r2, 4)
    label(Z1TEST)
    cmp(r2, r7)
    bcc(Z1LOOP)
    label(ZDONE)
    ldr(r3, [r0, 64])         # GZP
    mov(r5, 0)                # s = sum(v)
    ldr(r1, [r0, 40])         # xr = GX
    ldr(r4, [r0, 56])         # GROWS = GNROW
    str(r4, [r0, 68])
    label(ROW)
    ldr(r4, [r0, 76])         # GVROW != 0: v = GV, GV += GVROW
    cmp(r4, 0)
    beq(VNEXT)
    ldr(r2, [r0, 80])
    add(r4, r4, r2)
    str(r4, [r0, 80])
    label(VNEXT)
    mov(r12, r1)              # xk = xr
    ldr(r4, [r0, 48])         # GRUNS = GNRUN
    str(r4, [r0, 72])
    label(RUN)
    mov(r6, r12)              # xa = xk
    ldr(r7, [r0, 44])         # 4 at a time up to xk + (GRUN & ~3)
    lsr(r7, r7, 2)
    lsl(r7, r7, 2)
    add(r7, r7, r6)
    b(G4TEST)
    label(G4LOOP)
    data(2, 0xF856, 0x4B04)   # ldr.w r4, [r6], #4
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
    cmp(r6, r7)
    bcc(G4LOOP)
    mov(r7, r12)              # then one at a time up to xk + GRUN
    ldr(r4, [r0, 44])
    add(r7, r7, r4)
    b(G1TEST)
    label(G1LOOP)
    data(2, 0xF916, 0x4B01)   # ldrsb.w r4, [r6], #1
    add(r4, r4, r3)
    str(r4, [r2, 0])
    add(r2, 4)
    add(r5, r5, r4)
    label(G1TEST)
    cmp(r6, r7)
    bcc(G1LOOP)
    mov(r4, r12)              # xk += GRSTEP
    ldr(r6, [r0, 52])
    add(r4, r4, r6)
    mov(r12, r4)
    ldr(r4, [r0, 72])         # GRUNS -= 1
    sub(r4, 1)
    str(r4, [r0, 72])
    bne(RUN)
    ldr(r4, [r0, 60])         # xr += GXROW
    add(r1, r1, r4)
    ldr(r4, [r0, 68])         # GROWS -= 1
    sub(r4, 1)
    str(r4, [r0, 68])
    bne(ROW)
    lsl(r5, r5, 7)            # BASE = -128 * s
    neg(r5, r5)
    str(r5, [r0, 24])
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)


@micropython.asm_thumb
def pixels(r0, r1):
    """thumb.pixels, with the same block (PX_BLOCK) and results, for
    window values v = (byte ^ 0x80) + OFF in -32768..32767 (input
    zero points -128..127). BASE is the pairs' pending flag (its word
    is free); the window buffer's content is not the contract's (packed
    pairs, see above). Returns 0 or 1 as thumb.pixels."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    label(TOP)
    ldr(r4, [r0, 48])         # NPIX >= 2: a pair of pixels (below);
    cmp(r4, 2)                # one: PIXEL
    bcs(PAIR)
    b(PIXEL)
    label(PAIR)
    mov(r4, 0)                # BASE: the pair's pending flag
    str(r4, [r0, 24])
    ldr(r1, [r0, 36])         # gather A = X and B = X + XS, packed: per
    ldr(r3, [r0, 40])         # 4 values the words A0|A2, A1|A3, B0|B2,
    ldr(r2, [r0, 0])          # B1|B3 (int16 halves), then one word
    ldr(r5, [r0, 44])         # An|Bn per value left
    add(r5, 128)              # -input_zero_point = OFF + 128 (x + that:
    data(2, 0xEAC5, 0x4505)   # pkhbt r5, r5, r5, lsl #16
    ldr(r7, [r0, 8])          # x ^ 0x80 + OFF), in both halves
    sub(r7, r7, r2)
    lsr(r7, r7, 4)
    lsl(r7, r7, 4)
    add(r7, r7, r2)           # the end of the 4-value groups
    b(GTEST)
    label(GLOOP)
    ldr(r4, [r1, 0])          # (x: arena bytes, unaligned LDR allowed)
    data(2, 0x58CE)           # ldr r6, [r1, r3]
    add(r1, 4)
    data(2, 0xFA2F, 0xF884)   # sxtb16 r8, r4
    data(2, 0xFA2F, 0xF994)   # sxtb16 r9, r4, ror #8
    data(2, 0xFA2F, 0xFA86)   # sxtb16 r10, r6
    data(2, 0xFA2F, 0xFB96)   # sxtb16 r11, r6, ror #8
    data(2, 0xFA98, 0xF805)   # sadd16 r8, r8, r5
    data(2, 0xFA99, 0xF905)   # sadd16 r9, r9, r5
    data(2, 0xFA9A, 0xFA05)   # sadd16 r10, r10, r5
    data(2, 0xFA9B, 0xFB05)   # sadd16 r11, r11, r5
    data(2, 0xE8A2, 0x0F00)   # stmia.w r2!, {r8, r9, r10, r11}
    label(GTEST)
    cmp(r2, r7)
    bcc(GLOOP)
    ldr(r7, [r0, 8])
    b(TTEST)
    label(TLOOP)
    data(2, 0x56CE)           # ldrsb r6, [r1, r3]
    data(2, 0xF911, 0x4B01)   # ldrsb.w r4, [r1], #1
    data(2, 0xEAC4, 0x4406)   # pkhbt r4, r4, r6, lsl #16
    data(2, 0xFA94, 0xF405)   # sadd16 r4, r4, r5
    str(r4, [r2, 0])
    add(r2, 4)
    label(TTEST)
    cmp(r2, r7)
    bcc(TLOOP)
    ldr(r4, [r0, 100])        # WP = WP0, BP = BP0, NF = NF0, MP = MP0,
    str(r4, [r0, 12])         # SP = SP0, Q = QOUT
    ldr(r4, [r0, 104])
    str(r4, [r0, 20])
    ldr(r4, [r0, 112])
    str(r4, [r0, 32])
    ldr(r4, [r0, 52])
    str(r4, [r0, 116])
    ldr(r4, [r0, 60])
    str(r4, [r0, 120])
    ldr(r4, [r0, 80])
    str(r4, [r0, 124])
    label(FPAIR)              # filters k and k + 1 (k alone if NF = 1:
    ldr(r2, [r0, 20])         # then summed twice, stored once)
    ldr(r4, [r2, 0])
    mov(r8, r4)               # A1 = B1 = BP[k]
    mov(r9, r4)
    ldr(r3, [r0, 16])
    ldr(r5, [r0, 32])
    cmp(r5, 1)
    bne(TWO)
    mov(r3, 0)
    b(ONE)
    label(TWO)
    ldr(r4, [r2, 4])
    label(ONE)
    mov(r10, r4)              # A2 = B2 = BP[k + 1]
    mov(r11, r4)
    sub(r3, 4)                # the second filter at w + r3 + 4
    ldr(r1, [r0, 12])         # w = WP (model bytes: unaligned LDR, never
    ldr(r6, [r0, 0])          # LDRD or LDM)
    ldr(r2, [r0, 8])
    sub(r2, r2, r6)
    lsr(r2, r2, 4)
    lsl(r2, r2, 4)
    add(r2, r2, r6)
    push({r0})
    mov(r0, r6)
    b(MTEST)
    label(MLOOP)              # 4 values x 2 filters x 2 pixels:
    data(2, 0xE8B0, 0x50C0)   # ldmia.w r0!, {r6, r7, r12, lr}
    data(2, 0xF851, 0x4B04)   # ldr.w r4, [r1], #4
    data(2, 0xFA2F, 0xF584)   # sxtb16 r5, r4
    data(2, 0xFB25, 0x8806)   # smlad r8, r5, r6, r8
    data(2, 0xFB25, 0x990C)   # smlad r9, r5, r12, r9
    data(2, 0xFA2F, 0xF594)   # sxtb16 r5, r4, ror #8
    data(2, 0xFB25, 0x8807)   # smlad r8, r5, r7, r8
    data(2, 0xFB25, 0x990E)   # smlad r9, r5, lr, r9
    data(2, 0xF851, 0x4003)   # ldr.w r4, [r1, r3]
    data(2, 0xFA2F, 0xF584)   # sxtb16 r5, r4
    data(2, 0xFB25, 0xAA06)   # smlad r10, r5, r6, r10
    data(2, 0xFB25, 0xBB0C)   # smlad r11, r5, r12, r11
    data(2, 0xFA2F, 0xF594)   # sxtb16 r5, r4, ror #8
    data(2, 0xFB25, 0xAA07)   # smlad r10, r5, r7, r10
    data(2, 0xFB25, 0xBB0E)   # smlad r11, r5, lr, r11
    label(MTEST)
    cmp(r0, r2)
    bcc(MLOOP)
    pop({r2})                 # the block
    ldr(r7, [r2, 8])
    b(XTEST)
    label(XLOOP)              # the values left, one at a time
    data(2, 0xF850, 0x6B04)   # ldr.w r6, [r0], #4
    data(2, 0xF911, 0x4B01)   # ldrsb.w r4, [r1], #1
    add(r5, r1, r3)
    data(2, 0xF995, 0x5003)   # ldrsb.w r5, [r5, #3]
    data(2, 0xFB14, 0x8806)   # smlabb r8, r4, r6, r8
    data(2, 0xFB14, 0x9916)   # smlabt r9, r4, r6, r9
    data(2, 0xFB15, 0xAA06)   # smlabb r10, r5, r6, r10
    data(2, 0xFB15, 0xBB16)   # smlabt r11, r5, r6, r11
    label(XTEST)
    cmp(r0, r7)
    bcc(XLOOP)
    mov(r0, r2)
    ldr(r1, [r0, 116])        # A1 -> Q[0], B1 -> Q[QSTEP]
    ldr(r2, [r0, 120])
    ldr(r6, [r0, 124])
    mov(r3, r8)
    bl(RQ)
    ldr(r2, [r0, 120])
    ldr(r6, [r0, 124])
    ldr(r4, [r0, 84])
    add(r6, r6, r4)
    mov(r3, r9)
    bl(RQ)
    ldr(r4, [r0, 32])
    cmp(r4, 1)
    beq(PNEXT)
    ldr(r1, [r0, 116])        # A2 -> Q[1], B2 -> Q[QSTEP + 1]
    ldr(r4, [r0, 56])
    add(r1, r1, r4)
    ldr(r2, [r0, 120])
    ldr(r4, [r0, 64])
    add(r2, r2, r4)
    ldr(r6, [r0, 124])
    add(r6, 1)
    mov(r3, r10)
    bl(RQ)
    ldr(r2, [r0, 120])
    ldr(r4, [r0, 64])
    add(r2, r2, r4)
    ldr(r6, [r0, 124])
    add(r6, 1)
    ldr(r4, [r0, 84])
    add(r6, r6, r4)
    mov(r3, r11)
    bl(RQ)
    label(PNEXT)
    ldr(r4, [r0, 20])         # BP += 8, WP += 2 * WS, MP += 2 * MSTEP,
    add(r4, 8)                # SP += 2 * SSTEP, Q += 2, NF -= 2
    str(r4, [r0, 20])
    ldr(r4, [r0, 12])
    ldr(r5, [r0, 16])
    add(r4, r4, r5)
    add(r4, r4, r5)
    str(r4, [r0, 12])
    ldr(r4, [r0, 116])
    ldr(r5, [r0, 56])
    add(r4, r4, r5)
    add(r4, r4, r5)
    str(r4, [r0, 116])
    ldr(r4, [r0, 120])
    ldr(r5, [r0, 64])
    add(r4, r4, r5)
    add(r4, r4, r5)
    str(r4, [r0, 120])
    ldr(r4, [r0, 124])
    add(r4, 2)
    str(r4, [r0, 124])
    ldr(r4, [r0, 32])
    sub(r4, 2)
    str(r4, [r0, 32])
    ble(PAIRDONE)
    b(FPAIR)
    label(PAIRDONE)
    ldr(r4, [r0, 24])         # a value beyond the fast path: pixel A
    cmp(r4, 0)                # again alone (PIXEL: its sums in ACC, the
    beq(PAIROK)               # caller's), B with the next pixel
    b(PIXEL)
    label(PAIROK)
    ldr(r4, [r0, 36])         # X += 2 * XS, QOUT += 2 * QSTEP, NPIX -= 2
    ldr(r5, [r0, 40])
    add(r4, r4, r5)
    add(r4, r4, r5)
    str(r4, [r0, 36])
    ldr(r4, [r0, 80])
    ldr(r5, [r0, 84])
    add(r4, r4, r5)
    add(r4, r4, r5)
    str(r4, [r0, 80])
    ldr(r4, [r0, 48])
    sub(r4, 2)
    str(r4, [r0, 48])
    beq(PAIRRET)
    b(TOP)
    label(PAIRRET)
    b(RET0)
    label(RQ)                 # requantize r3 into the byte at r6 with
    ldrb(r7, [r2, 0])         # the multiplier at r1 and the shift at r2
    lsl(r7, r7, 24)           # (as SUMMED below), or set the pending
    asr(r7, r7, 24)           # flag; uses r2-r7, returns to lr
    neg(r7, r7)
    cmp(r7, 21)
    bhi(RQP)
    ldr(r5, [r0, 92])
    add(r4, r3, r5)
    ldr(r5, [r0, 96])
    cmp(r4, r5)
    bhi(RQP)
    ldr(r2, [r1, 0])
    lsl(r4, r2, 21)
    lsr(r4, r4, 21)
    mul(r4, r3)
    asr(r4, r4, 11)
    lsl(r5, r2, 10)
    lsr(r5, r5, 21)
    mul(r5, r3)
    add(r4, r4, r5)
    asr(r4, r4, 11)
    lsr(r5, r2, 22)
    mul(r5, r3)
    add(r4, r4, r5)
    add(r4, 128)
    add(r4, 128)
    cmp(r7, 0)
    beq(RQN)
    mov(r2, r7)
    add(r2, 8)
    mov(r5, 1)
    lsl(r5, r2)
    add(r4, r4, r5)
    asr(r3, r3, 31)
    lsl(r3, r3, 9)
    add(r4, r4, r3)
    add(r2, 1)
    asr(r4, r2)
    b(RQZ)
    label(RQN)
    asr(r4, r4, 9)
    label(RQZ)
    ldr(r5, [r0, 68])
    add(r4, r4, r5)
    ldr(r5, [r0, 72])
    cmp(r4, r5)
    bge(RQL)
    mov(r4, r5)
    label(RQL)
    ldr(r5, [r0, 76])
    cmp(r4, r5)
    ble(RQH)
    mov(r4, r5)
    label(RQH)
    strb(r4, [r6, 0])
    bx(lr)
    label(RQP)
    mov(r4, 1)
    str(r4, [r0, 24])
    bx(lr)

    label(PIXEL)
    ldr(r1, [r0, 36])         # gather: x = X, v = V, up to VE
    ldr(r2, [r0, 0])
    ldr(r7, [r0, 8])
    ldr(r5, [r0, 44])         # OFF
    mov(r6, 0x80)
    label(GATHER)
    ldrb(r4, [r1, 0])
    eor(r4, r6)
    add(r4, r4, r5)
    str(r4, [r2, 0])
    add(r1, 1)
    add(r2, 4)
    cmp(r2, r7)
    bcc(GATHER)
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
    ldr(r1, [r0, 0])          # v = V
    ldr(r7, [r0, 8])          # VE
    ldr(r2, [r0, 12])         # w = WP
    ldr(r3, [r0, 20])
    ldr(r3, [r3, 0])          # acc = BP[k]
    label(HEAD)               # one value at a time up to an aligned
    lsl(r4, r2, 30)           # filter word
    beq(ALIGNED)
    cmp(r1, r7)
    bcs(SUMMED)
    data(2, 0xF912, 0x4B01)   # ldrsb.w r4, [r2], #1
    data(2, 0xF851, 0x5B04)   # ldr.w r5, [r1], #4
    data(2, 0xFB04, 0x3305)   # mla r3, r4, r5, r3
    b(HEAD)
    label(ALIGNED)
    mov(r6, r7)               # 8 values left while v < VE - 28
    sub(r6, 28)
    b(TEST8)
    label(LOOP8)
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: w0..w3
    data(2, 0xE8B1, 0x0E20)   # ldmia.w r1!, {r5, r9, r10, r11}: v0..v3
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: w0 | w2 << 16
    data(2, 0xFA2F, 0xF494)   # sxtb16 r4, r4, ror #8: w1 | w3 << 16
    data(2, 0xEAC5, 0x450A)   # pkhbt r5, r5, r10, lsl #16: v0 | v2 << 16
    data(2, 0xEAC9, 0x490B)   # pkhbt r9, r9, r11, lsl #16: v1 | v3 << 16
    data(2, 0xFB2C, 0x3305)   # smlad r3, r12, r5, r3
    data(2, 0xFB24, 0x3309)   # smlad r3, r4, r9, r3
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: w4..w7
    data(2, 0xE8B1, 0x0E20)   # ldmia.w r1!, {r5, r9, r10, r11}: v4..v7
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: w4 | w6 << 16
    data(2, 0xFA2F, 0xF494)   # sxtb16 r4, r4, ror #8: w5 | w7 << 16
    data(2, 0xEAC5, 0x450A)   # pkhbt r5, r5, r10, lsl #16: v4 | v6 << 16
    data(2, 0xEAC9, 0x490B)   # pkhbt r9, r9, r11, lsl #16: v5 | v7 << 16
    data(2, 0xFB2C, 0x3305)   # smlad r3, r12, r5, r3
    data(2, 0xFB24, 0x3309)   # smlad r3, r4, r9, r3
    label(TEST8)
    cmp(r1, r6)
    bcc(LOOP8)
    add(r6, 16)               # 4 left while v < VE - 12
    cmp(r1, r6)
    bcs(TEST1)
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: w0..w3
    data(2, 0xE8B1, 0x0E20)   # ldmia.w r1!, {r5, r9, r10, r11}: v0..v3
    data(2, 0xFA2F, 0xFC84)   # sxtb16 r12, r4: w0 | w2 << 16
    data(2, 0xFA2F, 0xF494)   # sxtb16 r4, r4, ror #8: w1 | w3 << 16
    data(2, 0xEAC5, 0x450A)   # pkhbt r5, r5, r10, lsl #16: v0 | v2 << 16
    data(2, 0xEAC9, 0x490B)   # pkhbt r9, r9, r11, lsl #16: v1 | v3 << 16
    data(2, 0xFB2C, 0x3305)   # smlad r3, r12, r5, r3
    data(2, 0xFB24, 0x3309)   # smlad r3, r4, r9, r3
    b(TEST1)
    label(LOOP1)
    data(2, 0xF912, 0x4B01)   # ldrsb.w r4, [r2], #1
    data(2, 0xF851, 0x5B04)   # ldr.w r5, [r1], #4
    data(2, 0xFB04, 0x3305)   # mla r3, r4, r5, r3
    label(TEST1)
    cmp(r1, r7)
    bcc(LOOP1)
    label(SUMMED)
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
    b(TOP)
    label(RET1)
    mov(r0, 1)
    b(END)
    label(RET0)
    mov(r0, 0)
    label(END)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}


# requant()'s block (RQ_BLOCK, after GATHER_BLOCK in conv_dsp.py's window
# buffer: words 21 to 28): RBUF RN RNCH RM RS RQP ROUT RC (RC: its
# channel counter)


@micropython.asm_thumb
def requant(r0, r1):
    """fixedpoint.requant_i8b's batch for CONV_2D (conv_dsp.py): with
    RQ_BLOCK at byte offset r1 of buffer r0, for the RN int32 values of
    RBUF (channel-minor: channel c = k % RNCH),

        OUT[k] = clamp(MultiplyByQuantizedMultiplier(RBUF[k], RM[c],
                       RS[c]) + zp, lo, hi)   (zp, lo, hi: RQP's words)

    RM: int32 multipliers in [0, 2**31); RS: int8 shifts. Returns 1 at
    once, writing nothing, if a shift is above 30 (a negative
    multiplier, conv_util's mark: requant_i8b's _requant_neg then does
    the batch); else 0. Same bits as TFLM's double rounding for every
    int32 value: shift >= 0 gives SaturatingRoundingDoublingHighMul(x
    << shift, m) = floor((x' * m + 2**30) / 2**31) (SMULL, the 64-bit
    sum); shift = -e < 0 folds RoundingDivideByPOT(., e) in, one floor
    of the 64-bit x * m + 2**30 + 2**(30 + e) - (x < 0) * 2**31 (SMLAL
    onto that constant) by 2**(31 + e): its high word >> (e - 1).
    (x < 0 in place of TFLM's SRDHM(x, m) < 0: they differ only where
    that is 0, which rounds to 0 either way.) Channels outer, pixels
    inner (stride RNCH), as requant_i8b."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r1, [r0, 16])         # a shift above 30: return 1
    ldr(r2, [r0, 8])
    add(r2, r2, r1)
    label(SCAN)
    data(2, 0xF911, 0x3B01)   # ldrsb.w r3, [r1], #1
    cmp(r3, 30)
    bgt(NEG)
    cmp(r1, r2)
    bcc(SCAN)
    ldr(r4, [r0, 20])         # r10, r11, r12 = zp, lo, hi
    ldr(r5, [r4, 0])
    mov(r10, r5)
    ldr(r5, [r4, 4])
    mov(r11, r5)
    ldr(r5, [r4, 8])
    mov(r12, r5)
    ldr(r7, [r0, 8])          # RNCH
    ldr(r3, [r0, 24])         # the end: ROUT + RN
    ldr(r4, [r0, 4])
    add(r3, r3, r4)
    mov(r4, 0)                # RC = 0
    str(r4, [r0, 28])
    label(CH)
    ldr(r4, [r0, 28])         # channel c: x = RBUF + 4c, o = ROUT + c,
    lsl(r5, r4, 2)            # r8 = m
    ldr(r1, [r0, 0])
    add(r1, r1, r5)
    ldr(r6, [r0, 12])
    data(2, 0x5976)           # ldr r6, [r6, r5]
    mov(r8, r6)
    ldr(r2, [r0, 24])
    add(r2, r2, r4)
    ldr(r5, [r0, 16])
    data(2, 0x572D)           # ldrsb r5, [r5, r4]: the shift
    push({r0})
    cmp(r5, 0)
    bge(LSHIFT)
    neg(r5, r5)               # e = -shift >= 1: r9 = e - 1, and the
    sub(r5, 1)                # constant 2**30 + 2**(30 + e) in lr:r0
    mov(r9, r5)
    mov(r0, 3)                # e = 1: 0:3 << 30
    mov(r6, 0)
    cmp(r5, 0)
    beq(ESET)
    mov(r0, 1)                # e >= 2: 1 << (e - 2):1 << 30
    mov(r6, 1)
    sub(r5, 1)
    lsl(r6, r5)
    label(ESET)
    lsl(r0, r0, 30)
    data(2, 0x46B6)           # mov lr, r6
    cmp(r2, r3)
    bcs(CDONE)
    label(LOOPE)              # 17 instructions a value
    ldr(r4, [r1, 0])          # x
    data(2, 0xEB01, 0x0187)   # add.w r1, r1, r7, lsl #2
    asr(r5, r4, 31)           # -(x < 0)
    data(2, 0xEB10, 0x76C5)   # adds.w r6, r0, r5, lsl #31
    data(2, 0xEB4E, 0x0505)   # adc.w r5, lr, r5: r5:r6 = the constant
    data(2, 0xFBC4, 0x6508)   # smlal r6, r5, r4, r8: - (x < 0) * 2**31
    data(2, 0xFA45, 0xF409)   # asr.w r4, r5, r9: + x * m, >> (31 + e)
    data(2, 0x4454)           # add r4, r10: + zp, clamped to [lo, hi]
    data(2, 0x455C)           # cmp r4, r11
    data(2, 0xBFB8)           # it lt
    data(2, 0x465C)           # movlt r4, r11
    data(2, 0x4564)           # cmp r4, r12
    data(2, 0xBFC8)           # it gt
    data(2, 0x4664)           # movgt r4, r12
    strb(r4, [r2, 0])
    add(r2, r2, r7)
    cmp(r2, r3)
    bcc(LOOPE)
    b(CDONE)
    label(LSHIFT)             # shift >= 0: SRDHM(x << shift, m)
    mov(r9, r5)
    cmp(r2, r3)
    bcs(CDONE)
    label(LOOPL)
    ldr(r4, [r1, 0])          # x << shift (int32, wrapping as C's)
    data(2, 0xEB01, 0x0187)   # add.w r1, r1, r7, lsl #2
    data(2, 0xFA04, 0xF409)   # lsl.w r4, r4, r9
    data(2, 0xFB84, 0x6508)   # smull r6, r5, r4, r8
    data(2, 0xF116, 0x4680)   # adds.w r6, r6, #0x40000000
    data(2, 0xF145, 0x0500)   # adc.w r5, r5, #0
    lsr(r6, r6, 31)           # the 64-bit sum >> 31
    data(2, 0xEA46, 0x0445)   # orr.w r4, r6, r5, lsl #1
    data(2, 0x4454)           # add r4, r10: + zp, clamped to [lo, hi]
    data(2, 0x455C)           # cmp r4, r11
    data(2, 0xBFB8)           # it lt
    data(2, 0x465C)           # movlt r4, r11
    data(2, 0x4564)           # cmp r4, r12
    data(2, 0xBFC8)           # it gt
    data(2, 0x4664)           # movgt r4, r12
    strb(r4, [r2, 0])
    add(r2, r2, r7)
    cmp(r2, r3)
    bcc(LOOPL)
    label(CDONE)
    pop({r0})
    ldr(r4, [r0, 28])         # RC += 1, up to RNCH
    add(r4, 1)
    str(r4, [r0, 28])
    cmp(r4, r7)
    bge(DONE)
    b(CH)
    label(DONE)
    mov(r0, 0)
    b(END)
    label(NEG)
    mov(r0, 1)
    label(END)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}


# add_lut()'s block (ADD_BLOCK, after the tables in the work buffer:
# add_dsp.py): P1 P2 PO NEGN TAB M E ZP LO HI


@micropython.asm_thumb
def add_lut(r0, r1):
    """add._add_lut's element loop for equal shapes (add_dsp.py): with
    ADD_BLOCK at byte offset r1 of buffer r0, for i = -NEGN .. -1,

        PO[i] = clamp(MultiplyByQuantizedMultiplier(TAB[P1[i]]
                      + TAB[256 + P2[i]], M, -E) + ZP, LO, HI)

    (P1, P2, PO: the ends of the input and output bytes; TAB: add.py's
    int32 tables, each value below 2**28 in magnitude; M in [0, 2**31),
    E >= 1.) SaturatingRoundingDoublingHighMul(x, M) = floor((x * M +
    2**30) / 2**31) is SMMULR of 2x (no overflow: |2x| < 2**30) and M;
    RoundingDivideByPOT(r, E) = (r + 2**(E - 1) - (r < 0)) >> E: the bits
    of TFLM's code, 21 instructions an element. Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r4, [r0, 20])         # r8 = M
    mov(r8, r4)
    ldr(r4, [r0, 24])         # r9 = E, r10 = 1 << (E - 1)
    mov(r9, r4)
    sub(r4, 1)
    mov(r5, 1)
    lsl(r5, r4)
    mov(r10, r5)
    ldr(r4, [r0, 28])         # r11, r12, lr = ZP, LO, HI
    mov(r11, r4)
    ldr(r4, [r0, 32])
    mov(r12, r4)
    ldr(r4, [r0, 36])
    data(2, 0x46A6)           # mov lr, r4
    ldr(r6, [r0, 16])         # TAB, and TAB + 256 words
    mov(r7, 1)
    lsl(r7, r7, 10)
    add(r7, r7, r6)
    ldr(r3, [r0, 12])         # i = -NEGN, up to 0
    ldr(r1, [r0, 4])
    ldr(r2, [r0, 8])
    ldr(r0, [r0, 0])
    cmp(r3, 0)
    beq(DONE)
    label(LOOP)
    data(2, 0xF810, 0x4003)   # ldrb.w r4, [r0, r3]
    data(2, 0xF811, 0x5003)   # ldrb.w r5, [r1, r3]
    data(2, 0xF856, 0x4024)   # ldr.w r4, [r6, r4, lsl #2]
    data(2, 0xF857, 0x5025)   # ldr.w r5, [r7, r5, lsl #2]
    add(r4, r4, r5)           # 2x
    add(r4, r4, r4)
    data(2, 0xFB54, 0xF418)   # smmulr r4, r4, r8: SRDHM(x, M)
    data(2, 0xEB04, 0x74E4)   # add.w r4, r4, r4, asr #31: - (r < 0)
    data(2, 0x4454)           # add r4, r10: + 2**(E - 1)
    data(2, 0xFA44, 0xF409)   # asr.w r4, r4, r9: >> E
    data(2, 0x445C)           # add r4, r11: + ZP, clamped to [LO, HI]
    data(2, 0x4564)           # cmp r4, r12
    data(2, 0xBFB8)           # it lt
    data(2, 0x4664)           # movlt r4, r12
    data(2, 0x4574)           # cmp r4, lr
    data(2, 0xBFC8)           # it gt
    data(2, 0x4674)           # movgt r4, lr
    data(2, 0xF802, 0x4003)   # strb.w r4, [r2, r3]
    add(r3, 1)
    bne(LOOP)
    label(DONE)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)


# gather_pair()'s block: gather()'s (GX GRUN GNRUN GRSTEP GNROW GXROW GZP
# GROWS GRUNS at words 10 to 18), V at word 0, and GXS at word 29.


@micropython.asm_thumb
def gather_pair(r0, r1):
    """CONV_2D's windows of two pixels for pair_dots (conv_dsp.py), with
    the block as gather()'s (V, GX .. GRUNS) and GXS (the input step to
    the second pixel, pixel B at x + GXS): the window bytes in gather's
    order (GNROW rows of GNRUN runs of GRUN bytes; GRUN a multiple of 4),
    v = x - input_zero_point (GZP = -input_zero_point), packed as
    pixels' pairs: per 4 values the words A0|A2, A1|A3, B0|B2, B1|B3
    (int16 halves) from V on. Input bytes read with LDR at any address.
    11 instructions per 4 values of both pixels. Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r2, [r0, 0])          # v = V
    ldr(r5, [r0, 64])         # GZP in both halves
    data(2, 0xEAC5, 0x4505)   # pkhbt r5, r5, r5, lsl #16
    ldr(r3, [r0, 116])        # GXS
    ldr(r1, [r0, 40])         # xr = GX
    ldr(r4, [r0, 56])         # GROWS = GNROW
    str(r4, [r0, 68])
    label(ROW)
    mov(r12, r1)              # xk = xr
    ldr(r4, [r0, 48])         # GRUNS = GNRUN
    str(r4, [r0, 72])
    label(RUN)
    mov(r6, r12)              # xa = xk, up to xk + GRUN
    ldr(r7, [r0, 44])
    add(r7, r7, r6)
    b(GTEST)
    label(GLOOP)
    ldr(r4, [r6, 0])          # A's 4 bytes, B's at + GXS
    data(2, 0xF856, 0xB003)   # ldr.w r11, [r6, r3]
    add(r6, 4)
    data(2, 0xFA2F, 0xFA8B)   # sxtb16 r10, r11: B0 | B2
    data(2, 0xFA2F, 0xFB9B)   # sxtb16 r11, r11, ror #8: B1 | B3
    data(2, 0xFA2F, 0xF884)   # sxtb16 r8, r4: A0 | A2
    data(2, 0xFA2F, 0xF994)   # sxtb16 r9, r4, ror #8: A1 | A3
    data(2, 0xFA98, 0xF805)   # sadd16 r8, r8, r5: - input_zero_point
    data(2, 0xFA99, 0xF905)   # sadd16 r9, r9, r5
    data(2, 0xFA9A, 0xFA05)   # sadd16 r10, r10, r5
    data(2, 0xFA9B, 0xFB05)   # sadd16 r11, r11, r5
    data(2, 0xE8A2, 0x0F00)   # stmia.w r2!, {r8, r9, r10, r11}
    label(GTEST)
    cmp(r6, r7)
    bcc(GLOOP)
    mov(r4, r12)              # xk += GRSTEP
    ldr(r6, [r0, 52])
    add(r4, r4, r6)
    mov(r12, r4)
    ldr(r4, [r0, 72])         # GRUNS -= 1
    sub(r4, 1)
    str(r4, [r0, 72])
    bne(RUN)
    ldr(r4, [r0, 60])         # xr += GXROW
    add(r1, r1, r4)
    ldr(r4, [r0, 68])         # GROWS -= 1
    sub(r4, 1)
    str(r4, [r0, 68])
    bne(ROW)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)


# pair_dots()'s block (PAIR_BLOCK, DOTS_BLOCK's places): V OB VE WP WS BP
# (word 6 unused) OUT NF


@micropython.asm_thumb
def pair_dots(r0, r1):
    """Two pixels' sums for CONV_2D (conv_dsp.py): with PAIR_BLOCK at
    byte offset r1 of buffer r0, V .. VE the two windows as
    gather_pair or gather_pair_any packs them (n values each), for the
    NF filters of n int8 bytes (signed) at WP, WP + WS, ...:

        OUT[k] = BP[k] + sum_i w_k[i] * A[i]
        OUT[OB / 4 + k] = BP[k] + sum_i w_k[i] * B[i]   (int32, modulo
                                                          2**32)

    then BP, OUT advanced past the filters and NF = 0 (counters, as
    dots'). Two filters at a time (an odd NF's last one summed twice,
    stored once): per 4 values one LDM of the 4 packed words, one LDR of
    each filter's bytes (any address), 4 SXTB16 and 8 SMLAD (pixels'
    loop): 16 multiply-accumulates in 15 instructions; the n mod 4
    values left one word An | Bn each (SMLABB, SMLABT). Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    label(FPAIR)
    ldr(r2, [r0, 20])         # A1 = B1 = BP[k]
    ldr(r4, [r2, 0])
    mov(r8, r4)
    mov(r9, r4)
    ldr(r3, [r0, 16])
    ldr(r5, [r0, 32])
    cmp(r5, 1)
    bne(TWO)
    mov(r3, 0)                # NF = 1: the second filter is the first
    b(ONE)
    label(TWO)
    ldr(r4, [r2, 4])
    label(ONE)
    mov(r10, r4)              # A2 = B2 = BP[k + 1]
    mov(r11, r4)
    sub(r3, 4)                # the second filter at w + r3 + 4
    ldr(r1, [r0, 12])         # w = WP
    ldr(r6, [r0, 0])
    ldr(r2, [r0, 8])          # the end of the 4-value groups
    sub(r2, r2, r6)
    lsr(r2, r2, 4)
    lsl(r2, r2, 4)
    add(r2, r2, r6)
    push({r0})
    mov(r0, r6)
    b(MTEST)
    label(MLOOP)              # 4 values x 2 filters x 2 pixels
    data(2, 0xE8B0, 0x50C0)   # ldmia.w r0!, {r6, r7, r12, lr}
    data(2, 0xF851, 0x4B04)   # ldr.w r4, [r1], #4
    data(2, 0xFA2F, 0xF584)   # sxtb16 r5, r4
    data(2, 0xFB25, 0x8806)   # smlad r8, r5, r6, r8
    data(2, 0xFB25, 0x990C)   # smlad r9, r5, r12, r9
    data(2, 0xFA2F, 0xF594)   # sxtb16 r5, r4, ror #8
    data(2, 0xFB25, 0x8807)   # smlad r8, r5, r7, r8
    data(2, 0xFB25, 0x990E)   # smlad r9, r5, lr, r9
    data(2, 0xF851, 0x4003)   # ldr.w r4, [r1, r3]
    data(2, 0xFA2F, 0xF584)   # sxtb16 r5, r4
    data(2, 0xFB25, 0xAA06)   # smlad r10, r5, r6, r10
    data(2, 0xFB25, 0xBB0C)   # smlad r11, r5, r12, r11
    data(2, 0xFA2F, 0xF594)   # sxtb16 r5, r4, ror #8
    data(2, 0xFB25, 0xAA07)   # smlad r10, r5, r7, r10
    data(2, 0xFB25, 0xBB0E)   # smlad r11, r5, lr, r11
    label(MTEST)
    cmp(r0, r2)
    bcc(MLOOP)
    pop({r2})                 # the block
    ldr(r7, [r2, 8])
    b(XTEST)
    label(XLOOP)              # the values left, one word An | Bn each
    data(2, 0xF850, 0x6B04)   # ldr.w r6, [r0], #4
    data(2, 0xF911, 0x4B01)   # ldrsb.w r4, [r1], #1
    add(r5, r1, r3)
    data(2, 0xF995, 0x5003)   # ldrsb.w r5, [r5, #3]
    data(2, 0xFB14, 0x8806)   # smlabb r8, r4, r6, r8
    data(2, 0xFB14, 0x9916)   # smlabt r9, r4, r6, r9
    data(2, 0xFB15, 0xAA06)   # smlabb r10, r5, r6, r10
    data(2, 0xFB15, 0xBB16)   # smlabt r11, r5, r6, r11
    label(XTEST)
    cmp(r0, r7)
    bcc(XLOOP)
    mov(r0, r2)
    ldr(r4, [r0, 28])         # OUT[k] = A1, OUT[OB / 4 + k] = B1
    ldr(r5, [r0, 4])
    mov(r6, r8)
    str(r6, [r4, 0])
    mov(r6, r9)
    data(2, 0x5166)           # str r6, [r4, r5]
    ldr(r6, [r0, 32])
    cmp(r6, 1)
    beq(LAST)
    mov(r6, r10)              # OUT[k + 1] = A2, OUT[OB / 4 + k + 1] = B2
    str(r6, [r4, 4])
    add(r7, r4, r5)
    mov(r6, r11)
    str(r6, [r7, 4])
    add(r4, 8)                # OUT += 8, BP += 8, WP += 2 * WS, NF -= 2
    str(r4, [r0, 28])
    ldr(r4, [r0, 20])
    add(r4, 8)
    str(r4, [r0, 20])
    ldr(r4, [r0, 12])
    ldr(r5, [r0, 16])
    add(r4, r4, r5)
    add(r4, r4, r5)
    str(r4, [r0, 12])
    ldr(r4, [r0, 32])
    sub(r4, 2)
    str(r4, [r0, 32])
    beq(DONE)
    b(FPAIR)
    label(LAST)               # the odd last filter: OUT += 4, BP += 4,
    add(r4, 4)                # WP += WS, NF = 0
    str(r4, [r0, 28])
    ldr(r4, [r0, 20])
    add(r4, 4)
    str(r4, [r0, 20])
    ldr(r4, [r0, 12])
    ldr(r5, [r0, 16])
    add(r4, r4, r5)
    str(r4, [r0, 12])
    mov(r4, 0)
    str(r4, [r0, 32])
    label(DONE)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)


@micropython.asm_thumb
def gather_pair_any(r0, r1):
    """gather_pair's windows for runs of any length (conv_dsp.py, where
    a run is not whole words: CONV_2D on 3 input channels), one value at
    a time: value i of A and B (i < n - n mod 4) as int16 halves of the
    words A0|A2, A1|A3, B0|B2, B1|B3 of its group of 4, the n mod 4
    left one word Ai | Bi each, as pair_dots reads them (n: (VE - V) / 4,
    VE at word 2). 17 instructions a value of both pixels. Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r2, [r0, 0])          # V
    ldr(r4, [r0, 8])          # r10 = the values in whole groups
    sub(r4, r4, r2)
    lsr(r4, r4, 4)
    lsl(r4, r4, 2)
    mov(r10, r4)
    ldr(r4, [r0, 64])         # r9 = GZP
    mov(r9, r4)
    ldr(r3, [r0, 116])        # B: at GXS - 1 after A's post-increment
    sub(r3, 1)
    mov(r4, 0)                # r8 = i = 0
    mov(r8, r4)
    ldr(r1, [r0, 40])         # xr = GX
    ldr(r4, [r0, 56])         # GROWS = GNROW
    str(r4, [r0, 68])
    label(ROW)
    mov(r12, r1)              # xk = xr
    ldr(r4, [r0, 48])         # GRUNS = GNRUN
    str(r4, [r0, 72])
    label(RUN)
    mov(r6, r12)              # xa = xk, up to xk + GRUN
    ldr(r7, [r0, 44])
    add(r7, r7, r6)
    b(GTEST)
    label(GLOOP)
    data(2, 0xF916, 0x4B01)   # ldrsb.w r4, [r6], #1: A
    data(2, 0x56F5)           # ldrsb r5, [r6, r3]: B
    data(2, 0x444C)           # add r4, r9: - input_zero_point
    data(2, 0x444D)           # add r5, r9
    data(2, 0x45D0)           # cmp r8, r10
    bcs(GTAIL)
    data(2, 0xF028, 0x0B03)   # bic.w r11, r8, #3: A's halfword at
    data(2, 0xEA4F, 0x0B8B)   # lsl.w r11, r11, #2: 16 (i >> 2)
    data(2, 0xF008, 0x0E01)   # and.w lr, r8, #1: + 4 (i & 1)
    data(2, 0xEA4B, 0x0B8E)   # orr.w r11, r11, lr, lsl #2
    data(2, 0xF008, 0x0E02)   # and.w lr, r8, #2: + (i & 2)
    data(2, 0xEA4B, 0x0B0E)   # orr.w r11, r11, lr
    data(2, 0xF822, 0x400B)   # strh.w r4, [r2, r11]
    data(2, 0xF10B, 0x0B08)   # add.w r11, r11, #8: B's 8 bytes on
    data(2, 0xF822, 0x500B)   # strh.w r5, [r2, r11]
    b(GNEXT)
    label(GTAIL)
    data(2, 0xEA4F, 0x0B88)   # lsl.w r11, r8, #2: word i = A | B << 16
    data(2, 0xF822, 0x400B)   # strh.w r4, [r2, r11]
    data(2, 0xF10B, 0x0B02)   # add.w r11, r11, #2
    data(2, 0xF822, 0x500B)   # strh.w r5, [r2, r11]
    label(GNEXT)
    data(2, 0xF108, 0x0801)   # add.w r8, r8, #1
    label(GTEST)
    cmp(r6, r7)
    bcc(GLOOP)
    mov(r4, r12)              # xk += GRSTEP
    ldr(r6, [r0, 52])
    add(r4, r4, r6)
    mov(r12, r4)
    ldr(r4, [r0, 72])         # GRUNS -= 1
    sub(r4, 1)
    str(r4, [r0, 72])
    bne(RUN)
    ldr(r4, [r0, 60])         # xr += GXROW
    add(r1, r1, r4)
    ldr(r4, [r0, 68])         # GROWS -= 1
    sub(r4, 1)
    str(r4, [r0, 68])
    bne(ROW)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)
