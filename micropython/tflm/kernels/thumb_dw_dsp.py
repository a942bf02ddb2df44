"""thumb_dw.py's dw, dw3 and plane for Cortex-M4, M7 and M33 (ARMv7E-M,
the DSP extension: kernels.DSP), with the same blocks (DW_BLOCK,
PL_BLOCK in thumb_dw.py), the same int32 sums and the same bytes.

A channel's plane holds bytes x + 128 (0..255), one plane row per filter
row, the taps of a row consecutive when DX is 1: one LDR reads 4 taps
and UXTB16 (with ROR 8 for the odd bytes) widens them into two pairs of
int16, so that SMLAD multiplies two taps by two weights packed into one
register (PKHBT). dw3 packs a 3x3 filter's 9 weights into 5 registers
once per call and sums a pixel's 9 taps in 18 instructions (thumb_dw:
40): row 0 and 1 from a word at their first tap (the 4th byte, weight 0,
is ignored: SMLABB / SMLABT take the middle tap alone), row 2 from a word
one byte before its first tap (so that no byte beyond the plane's last
is read). dw sums 4 taps of a row at a time (LDR, LDM of 4 weights, 2
PKHBT, 2 UXTB16, 2 SMLAD), the rest of a row and dilated rows (DX > 1)
one at a time (LDRB, LDR, MLA). Both requantize with SMULL: M2 * acc
+ t of the contract is (acc * m) >> 22 for m = M0 + M1 << 11 + M2 << 22
(an exact identity: nested floor divisions by powers of two), the rest
as thumb_dw. plane copies the image's bytes 4 at a time (LDRB with
register offsets CS, 2 CS, 3 CS: about 4 instructions a byte, thumb_dw's
7) and keeps its constants in registers.

dw3's exact path (EE, the word of DX, not 0: depthwise_conv's choice
for right shifts e = 2..23 when EXACT): W is the filter's int8 taps,
OS bytes apart at any address (LDRSB), BI the bias, KC zc, M0 the whole
multiplier m (0 <= m < 2**31), EK = 2**(e - 2) + ZO << (e - 1) and
EE = e - 1 in the words of DX and KWX. dw3 packs the taps and sets
BI = bias - zc * sum(W) itself; every sum is requantized, nothing is
pending. TFLM's SaturatingRoundingDoublingHighMul is (acc * m + 2**30)
>> 31 (m >= 0: its saturating case, acc = m = -2**31, cannot occur),
then RoundingDivideByPOT is (v + 2**(e - 1) - (v < 0)) >> e; nested
floor divisions by powers of two fold into one, and (v < 0) may be
(acc < 0) (when v = 0 both give 0), so that

    out = ((EK << 32) + 2**30 - (acc < 0) << 31 + acc * m) >> 32 >> EE

(+ ZO, which EK carries): the 64-bit word set with AND, EOR and ADD
(acc ASR 31), SMLAL, one shift. About 35 instructions a pixel (the
fast path: 43).

dwc does a whole tile, every channel, in one call (depthwise_conv's
choice when the depth multiplier is 1, the filter 3x3 without dilation_w
and every channel's right shift 2..23): the plane's padding (the input
zero point's byte) written once per tile, then per channel its image
bytes copied as they are (no + 128: SXTB16 in the pixel loop, BI =
bias - zp * sum(W)), the channel's bias, multiplier and shift read from
their arrays, and dw3's exact path over the tile: about 5.2
instructions per MAC on KWS's 25x5x64 layers, where the driver's calls
of plane and dw3 per channel took 6.7.

The plane's words are read at any address (unaligned LDR, which
ARMv7-M does in hardware unless CCR.UNALIGN_TRP is set, as no
MicroPython port does: the plane is the caller's work buffer, never
model bytes); the weights and the block are read with LDM / LDRD, word
aligned (int32 words of the work buffer). Bounds beyond thumb_dw's
contract: -32768 <= W[i] <= 32767 (SMLAD's int16 halves; depthwise_conv's
weights are int8 << ls with ls <= 6), LIM <= 2**20 (the fast path:
depthwise_conv's LIM) and M0 + M1 << 11 + M2 << 22 < 2**31.

ARMv6-M has none of these instructions and the inline assembler has no
mnemonics for them: they are data() halfwords (T32 encodings, the
mnemonic in the comment), the rest Thumb-1, as thumb_dsp.py; only DSP
arches import it (romfs.DSP_ONLY). r8-r11 are saved and restored around
the code (asm_thumb saves r4-r7 and lr; r12 is scratch).
tests/test_thumb_dw_dsp.py runs the armv7emsp bytes on an emulated
Cortex-M4 against the contract and thumb_dw.py's machine code.
"""

import micropython

# dw3 has the exact path (depthwise_conv._dwp)
EXACT = 1


@micropython.asm_thumb
def dw(r0, r1):
    """thumb_dw.dw: the same block (DW_BLOCK), results and protocol,
    within the bounds above."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r4, [r0, 92])         # r12: taps of a row in 4-tap groups
    ldr(r5, [r0, 116])        # (KW >> 2, 0 when DX > 1) | the taps one
    cmp(r5, 1)                # at a time << 16
    beq(GROUPS)
    lsl(r4, r4, 16)
    b(SETG)
    label(GROUPS)
    lsr(r5, r4, 2)
    lsl(r4, r4, 30)
    lsr(r4, r4, 14)
    orr(r4, r5)
    label(SETG)
    mov(r12, r4)
    ldr(r6, [r0, 96])         # r6: RS - KWX, a row's end to the next row
    ldr(r4, [r0, 120])
    sub(r6, r6, r4)
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
    ldr(r2, [r0, 0])          # the taps
    ldr(r1, [r0, 4])          # the weights
    ldr(r3, [r0, 8])          # acc = BI
    ldr(r4, [r0, 88])         # lr: KH rows
    mov(lr, r4)
    label(FROW)
    data(2, 0xFA1F, 0xF78C)   # uxth.w r7, r12: 4-tap groups
    cmp(r7, 0)
    beq(TAIL)
    label(GLOOP)
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: t0..t3, any address
    data(2, 0xE8B1, 0x0F00)   # ldmia.w r1!, {r8, r9, r10, r11}: w0..w3
    data(2, 0xEAC8, 0x480A)   # pkhbt r8, r8, r10, lsl #16: w0 | w2 << 16
    data(2, 0xEAC9, 0x490B)   # pkhbt r9, r9, r11, lsl #16: w1 | w3 << 16
    data(2, 0xFA3F, 0xF584)   # uxtb16 r5, r4: t0 | t2 << 16
    data(2, 0xFA3F, 0xF494)   # uxtb16 r4, r4, ror #8: t1 | t3 << 16
    data(2, 0xFB25, 0x3308)   # smlad r3, r5, r8, r3
    data(2, 0xFB24, 0x3309)   # smlad r3, r4, r9, r3
    sub(r7, 1)
    bne(GLOOP)
    label(TAIL)
    data(2, 0xEA5F, 0x471C)   # lsrs.w r7, r12, #16: one at a time
    beq(RDONE)
    data(2, 0xF8D0, 0x8074)   # ldr.w r8, [r0, #116]: DX
    label(TLOOP)
    ldrb(r4, [r2, 0])
    data(2, 0x4442)           # add r2, r8
    data(2, 0xF851, 0x5B04)   # ldr.w r5, [r1], #4
    data(2, 0xFB04, 0x3305)   # mla r3, r4, r5, r3
    sub(r7, 1)
    bne(TLOOP)
    label(RDONE)
    add(r2, r2, r6)           # the next row
    data(2, 0xF1BE, 0x0E01)   # subs.w lr, lr, #1
    bne(FROW)
    data(2, 0xE9D0, 0x4519)   # ldrd r4, r5, [r0, #100]: beyond LIM: pending
    add(r4, r3, r4)
    cmp(r4, r5)
    bhi(PENDING)
    ldr(r4, [r0, 12])         # m = M0 + M1 << 11 + M2 << 22
    ldr(r5, [r0, 16])
    data(2, 0xEB04, 0x24C5)   # add.w r4, r4, r5, lsl #11
    ldr(r5, [r0, 20])
    data(2, 0xEB04, 0x5485)   # add.w r4, r4, r5, lsl #22
    data(2, 0xFB83, 0x7504)   # smull r7, r5, r3, r4: acc * m
    lsr(r7, r7, 22)
    data(2, 0xEA47, 0x2485)   # orr.w r4, r7, r5, lsl #10: t = acc * m >> 22
    data(2, 0xE9D0, 0x1206)   # ldrd r1, r2, [r0, #24]: KC, SM
    data(2, 0xEA02, 0x72E3)   # and.w r2, r2, r3, asr #31
    add(r4, r4, r1)           # + KC + ((acc >> 31) & SM)
    add(r4, r4, r2)
    data(2, 0xE9D0, 0x1208)   # ldrd r1, r2, [r0, #32]: SE, ZO
    asr(r4, r1)
    add(r4, r4, r2)
    data(2, 0xE9D0, 0x120A)   # ldrd r1, r2, [r0, #40]: LO, HI
    cmp(r4, r1)
    bge(NOTLO)
    mov(r4, r1)
    label(NOTLO)
    cmp(r4, r2)
    ble(NOTHI)
    mov(r4, r2)
    label(NOTHI)
    ldr(r7, [r0, 48])         # the byte at OUT
    strb(r4, [r7, 0])
    mov(r4, 0)                # r4: 1 after a pending pixel
    b(STEP)
    label(PENDING)
    str(r3, [r0, 108])        # PACC = acc, PEND = OUT
    ldr(r7, [r0, 48])
    str(r7, [r0, 112])
    mov(r4, 1)
    label(STEP)
    ldr(r5, [r0, 52])         # OUT += OS
    add(r7, r7, r5)
    str(r7, [r0, 48])
    ldr(r1, [r0, 0])          # XA += XS
    ldr(r5, [r0, 56])
    add(r1, r1, r5)
    str(r1, [r0, 0])
    ldr(r5, [r0, 64])         # CL -= 1
    sub(r5, 1)
    str(r5, [r0, 64])
    beq(ROWEND)
    cmp(r4, 0)
    bne(RETURN)
    b(PIXEL)                  # (out of a conditional branch's range)
    label(ROWEND)
    ldr(r1, [r0, 80])         # XA0 += XR
    ldr(r5, [r0, 72])
    add(r1, r1, r5)
    str(r1, [r0, 80])
    ldr(r1, [r0, 84])         # OUT0 += OR
    ldr(r5, [r0, 76])
    add(r1, r1, r5)
    str(r1, [r0, 84])
    ldr(r5, [r0, 68])         # NR -= 1
    sub(r5, 1)
    str(r5, [r0, 68])
    beq(RETURN)
    cmp(r4, 0)
    bne(RETURN)
    b(ROW)
    label(RETURN)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, r4)


@micropython.asm_thumb
def dw3(r0, r1):
    """thumb_dw.dw3 (KH = KW = 3, DX = 1, which this ignores; RS >= 3):
    the same block, results and protocol, within the bounds above, or
    the exact path when EE is not 0 (the module's docstring). The
    weights packed in r8-r12 (W0 | W2 << 16, W3 | W5 << 16, W6 | W8 << 16,
    W1 | W4 << 16, W7), m in lr, XA in r5, OUT in r6 and CL in r7 across
    the pixels of a row."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r4, [r0, 120])        # EE: the exact path reads the filter
    cmp(r4, 0)
    beq(WORDS)
    b(XENTRY)
    label(WORDS)
    ldr(r1, [r0, 4])          # the weights, packed in pairs
    ldr(r2, [r1, 0])
    ldr(r3, [r1, 8])
    data(2, 0xEAC2, 0x4803)   # pkhbt r8, r2, r3, lsl #16
    ldr(r2, [r1, 12])
    ldr(r3, [r1, 20])
    data(2, 0xEAC2, 0x4903)   # pkhbt r9, r2, r3, lsl #16
    ldr(r2, [r1, 24])
    ldr(r3, [r1, 32])
    data(2, 0xEAC2, 0x4A03)   # pkhbt r10, r2, r3, lsl #16
    ldr(r2, [r1, 4])
    ldr(r3, [r1, 16])
    data(2, 0xEAC2, 0x4B03)   # pkhbt r11, r2, r3, lsl #16
    data(2, 0xF8D1, 0xC01C)   # ldr.w r12, [r1, #28]
    ldr(r2, [r0, 12])         # lr: m = M0 + M1 << 11 + M2 << 22
    ldr(r3, [r0, 16])
    data(2, 0xEB02, 0x22C3)   # add.w r2, r2, r3, lsl #11
    ldr(r3, [r0, 20])
    data(2, 0xEB02, 0x5E83)   # add.w lr, r2, r3, lsl #22
    label(START)
    ldr(r4, [r0, 64])         # CL: 0 to start a row, else go on in it
    cmp(r4, 0)
    bne(RESUME)
    label(ROW)
    ldr(r5, [r0, 80])         # r5: XA = XA0
    ldr(r6, [r0, 84])         # r6: OUT = OUT0
    ldr(r7, [r0, 60])         # r7: CL = NC
    b(MODE)
    label(RESUME)
    ldr(r5, [r0, 0])
    ldr(r6, [r0, 48])
    mov(r7, r4)
    label(MODE)
    ldr(r4, [r0, 120])        # EE (KWX's word): 0 for the fast path
    cmp(r4, 0)
    beq(PIXEL)
    b(XPIXEL)
    label(PIXEL)
    ldr(r1, [r0, 8])          # acc = BI
    ldr(r2, [r5, 0])          # row 0: t0 t1 t2 (t3: not a tap)
    data(2, 0xFA3F, 0xF382)   # uxtb16 r3, r2: t0 | t2 << 16
    data(2, 0xFA3F, 0xF292)   # uxtb16 r2, r2, ror #8: t1 | t3 << 16
    data(2, 0xFB23, 0x1108)   # smlad r1, r3, r8, r1: + t0 * W0 + t2 * W2
    data(2, 0xFB12, 0x110B)   # smlabb r1, r2, r11, r1: + t1 * W1
    ldr(r4, [r0, 96])         # row 1 at XA + RS
    data(2, 0xF855, 0x2004)   # ldr.w r2, [r5, r4]
    data(2, 0xFA3F, 0xF382)   # uxtb16 r3, r2
    data(2, 0xFA3F, 0xF292)   # uxtb16 r2, r2, ror #8
    data(2, 0xFB23, 0x1109)   # smlad r1, r3, r9, r1: + t3 * W3 + t5 * W5
    data(2, 0xFB12, 0x111B)   # smlabt r1, r2, r11, r1: + t4 * W4
    # row 2 at XA + 2 * RS - 1: (a byte) t6 t7 t8
    data(2, 0xEB05, 0x0444)   # add.w r4, r5, r4, lsl #1
    data(2, 0xF854, 0x2C01)   # ldr.w r2, [r4, #-1]
    data(2, 0xFA3F, 0xF382)   # uxtb16 r3, r2: ? | t7 << 16
    data(2, 0xFA3F, 0xF292)   # uxtb16 r2, r2, ror #8: t6 | t8 << 16
    data(2, 0xFB13, 0x112C)   # smlatb r1, r3, r12, r1: + t7 * W7
    data(2, 0xFB22, 0x110A)   # smlad r1, r2, r10, r1: + t6 * W6 + t8 * W8
    data(2, 0xE9D0, 0x3419)   # ldrd r3, r4, [r0, #100]: beyond LIM: pending
    add(r3, r1, r3)
    cmp(r3, r4)
    bhi(PENDING)
    data(2, 0xFB81, 0x230E)   # smull r2, r3, r1, lr: acc * m
    lsr(r2, r2, 22)
    data(2, 0xEA42, 0x2283)   # orr.w r2, r2, r3, lsl #10: t = acc * m >> 22
    data(2, 0xE9D0, 0x3406)   # ldrd r3, r4, [r0, #24]: KC, SM
    data(2, 0xEA04, 0x74E1)   # and.w r4, r4, r1, asr #31
    add(r2, r2, r3)           # + KC + ((acc >> 31) & SM)
    add(r2, r2, r4)
    data(2, 0xE9D0, 0x3408)   # ldrd r3, r4, [r0, #32]: SE, ZO
    asr(r2, r3)
    add(r2, r2, r4)
    data(2, 0xE9D0, 0x340A)   # ldrd r3, r4, [r0, #40]: LO, HI
    cmp(r2, r3)
    bge(NOTLO)
    mov(r2, r3)
    label(NOTLO)
    cmp(r2, r4)
    ble(NOTHI)
    mov(r2, r4)
    label(NOTHI)
    strb(r2, [r6, 0])
    data(2, 0xE9D0, 0x340D)   # ldrd r3, r4, [r0, #52]: OS, XS
    add(r6, r6, r3)           # OUT += OS, XA += XS, CL -= 1
    add(r5, r5, r4)
    sub(r7, 1)
    bne(PIXEL)
    mov(r4, 0)                # r4: 1 after a pending pixel
    b(ROWEND)
    label(XPIXEL)             # EE >= 1: every sum requantized exactly
    ldr(r1, [r0, 8])          # acc = BI, + the taps as at PIXEL
    ldr(r2, [r5, 0])
    data(2, 0xFA3F, 0xF382)   # uxtb16 r3, r2
    data(2, 0xFA3F, 0xF292)   # uxtb16 r2, r2, ror #8
    data(2, 0xFB23, 0x1108)   # smlad r1, r3, r8, r1
    data(2, 0xFB12, 0x110B)   # smlabb r1, r2, r11, r1
    ldr(r4, [r0, 96])
    data(2, 0xF855, 0x2004)   # ldr.w r2, [r5, r4]
    data(2, 0xFA3F, 0xF382)   # uxtb16 r3, r2
    data(2, 0xFA3F, 0xF292)   # uxtb16 r2, r2, ror #8
    data(2, 0xFB23, 0x1109)   # smlad r1, r3, r9, r1
    data(2, 0xFB12, 0x111B)   # smlabt r1, r2, r11, r1
    data(2, 0xEB05, 0x0444)   # add.w r4, r5, r4, lsl #1
    data(2, 0xF854, 0x2C01)   # ldr.w r2, [r4, #-1]
    data(2, 0xFA3F, 0xF382)   # uxtb16 r3, r2
    data(2, 0xFA3F, 0xF292)   # uxtb16 r2, r2, ror #8
    data(2, 0xFB13, 0x112C)   # smlatb r1, r3, r12, r1
    data(2, 0xFB22, 0x110A)   # smlad r1, r2, r10, r1
    # r3:r2 = EK << 32 + 2**30 - (acc < 0) << 31, + acc * m (SMLAL),
    # then the high word >> EE (see the module's docstring)
    data(2, 0xE9D0, 0x341D)   # ldrd r3, r4, [r0, #116]: EK, EE
    data(2, 0xF001, 0x4200)   # and.w r2, r1, #0x80000000
    data(2, 0xF082, 0x4280)   # eor.w r2, r2, #0x40000000
    data(2, 0xEB03, 0x73E1)   # add.w r3, r3, r1, asr #31
    data(2, 0xFBC1, 0x230E)   # smlal r2, r3, r1, lr
    asr(r3, r4)               # (+ ZO: in EK)
    data(2, 0xE9D0, 0x210A)   # ldrd r2, r1, [r0, #40]: LO, HI
    cmp(r3, r2)
    bge(XNOTLO)
    mov(r3, r2)
    label(XNOTLO)
    cmp(r3, r1)
    ble(XNOTHI)
    mov(r3, r1)
    label(XNOTHI)
    strb(r3, [r6, 0])
    data(2, 0xE9D0, 0x340D)   # ldrd r3, r4, [r0, #52]: OS, XS
    add(r6, r6, r3)
    add(r5, r5, r4)
    sub(r7, 1)
    bne(XPIXEL)
    mov(r4, 0)
    b(ROWEND)
    label(PENDING)
    str(r1, [r0, 108])        # PACC = acc, PEND = OUT
    str(r6, [r0, 112])
    data(2, 0xE9D0, 0x340D)   # ldrd r3, r4, [r0, #52]: OS, XS
    add(r6, r6, r3)
    add(r5, r5, r4)
    mov(r4, 1)
    sub(r7, 1)
    beq(ROWEND)
    str(r5, [r0, 0])          # return in the row
    str(r6, [r0, 48])
    str(r7, [r0, 64])
    b(RETURN)
    label(ROWEND)
    str(r7, [r0, 64])         # CL = 0
    ldr(r2, [r0, 80])         # XA0 += XR
    ldr(r3, [r0, 72])
    add(r2, r2, r3)
    str(r2, [r0, 80])
    ldr(r2, [r0, 84])         # OUT0 += OR
    ldr(r3, [r0, 76])
    add(r2, r2, r3)
    str(r2, [r0, 84])
    ldr(r3, [r0, 68])         # NR -= 1
    sub(r3, 1)
    str(r3, [r0, 68])
    beq(RETURN)
    cmp(r4, 0)
    bne(RETURN)
    b(ROW)
    label(XENTRY)             # the exact path: W the filter's int8 taps,
    ldr(r1, [r0, 4])          # OS (= OC) bytes apart; BI the bias, KC zc
    ldr(r4, [r0, 52])
    sub(r1, r1, r4)
    data(2, 0x570A)           # ldrsb r2, [r1, r4]: W0
    add(r1, r1, r4)
    data(2, 0x570B)           # ldrsb r3, [r1, r4]: W1
    add(r1, r1, r4)
    data(2, 0x570D)           # ldrsb r5, [r1, r4]: W2
    add(r1, r1, r4)
    data(2, 0xEAC2, 0x4805)   # pkhbt r8, r2, r5, lsl #16
    add(r6, r2, r3)           # r6: the sum of the weights
    add(r6, r6, r5)
    data(2, 0x570A)           # ldrsb r2, [r1, r4]: W3
    add(r1, r1, r4)
    data(2, 0x570D)           # ldrsb r5, [r1, r4]: W4
    add(r1, r1, r4)
    data(2, 0x570F)           # ldrsb r7, [r1, r4]: W5
    add(r1, r1, r4)
    data(2, 0xEAC2, 0x4907)   # pkhbt r9, r2, r7, lsl #16
    data(2, 0xEAC3, 0x4B05)   # pkhbt r11, r3, r5, lsl #16
    add(r6, r6, r2)
    add(r6, r6, r5)
    add(r6, r6, r7)
    data(2, 0x570A)           # ldrsb r2, [r1, r4]: W6
    add(r1, r1, r4)
    data(2, 0x570B)           # ldrsb r3, [r1, r4]: W7
    add(r1, r1, r4)
    data(2, 0x570D)           # ldrsb r5, [r1, r4]: W8
    data(2, 0xEAC2, 0x4A05)   # pkhbt r10, r2, r5, lsl #16
    mov(r12, r3)
    add(r6, r6, r2)
    add(r6, r6, r3)
    add(r6, r6, r5)
    ldr(r2, [r0, 8])          # BI = bias - zc * sum(W)
    ldr(r3, [r0, 24])
    data(2, 0xFB03, 0x2216)   # mls r2, r3, r6, r2
    str(r2, [r0, 8])
    ldr(r2, [r0, 12])         # lr: m (M0's word)
    mov(lr, r2)
    b(START)
    label(RETURN)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, r4)


@micropython.asm_thumb
def plane(r0, r1):
    """thumb_dw.plane: the same block (PL_BLOCK) and bytes. The image's
    bytes 4 at a time (LDRB at SRC, SRC + CS, + 2 CS, + 3 CS: CS, 2 CS,
    3 CS, 4 CS in r6, r8-r10), the padding's byte (ZC) in r11, the row's
    first byte in lr, the source row in r2. Returns 0."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    ldr(r6, [r0, 40])         # CS
    data(2, 0xEB06, 0x0806)   # add.w r8, r6, r6
    data(2, 0xEB08, 0x0906)   # add.w r9, r8, r6
    data(2, 0xEB08, 0x0A08)   # add.w r10, r8, r8
    ldr(r4, [r0, 44])         # ZC
    mov(r11, r4)
    ldr(r4, [r0, 0])          # DST
    mov(lr, r4)
    ldr(r2, [r0, 32])         # SRC
    mov(r7, 0)                # r: the row
    label(ROW)
    mov(r1, lr)               # d: the row's first byte
    ldr(r3, [r0, 8])
    add(r3, r3, r1)           # the row's end
    mov(r5, r11)
    ldr(r4, [r0, 12])
    cmp(r7, r4)
    blt(PAD)                  # r < RA: all padding
    ldr(r4, [r0, 16])
    cmp(r7, r4)
    bge(PAD)                  # r >= RB: all padding
    ldr(r4, [r0, 24])
    add(r4, r4, r1)
    mov(r12, r4)              # padding up to JL
    b(LEFTTEST)
    label(LEFT)
    data(2, 0xF801, 0x5B01)   # strb.w r5, [r1], #1
    label(LEFTTEST)
    data(2, 0x4561)           # cmp r1, r12
    bcc(LEFT)
    ldr(r4, [r0, 28])         # the image up to JH
    data(2, 0x4474)           # add r4, lr
    sub(r4, 3)                # 4 bytes left while d < end - 3
    mov(r12, r4)
    mov(r5, r2)
    b(TEST4)
    label(COPY4)
    ldrb(r4, [r5, 0])
    data(2, 0xF084, 0x0480)   # eor.w r4, r4, #128
    strb(r4, [r1, 0])
    data(2, 0x5DAC)           # ldrb r4, [r5, r6]
    data(2, 0xF084, 0x0480)   # eor.w r4, r4, #128
    strb(r4, [r1, 1])
    data(2, 0xF815, 0x4008)   # ldrb.w r4, [r5, r8]
    data(2, 0xF084, 0x0480)   # eor.w r4, r4, #128
    strb(r4, [r1, 2])
    data(2, 0xF815, 0x4009)   # ldrb.w r4, [r5, r9]
    data(2, 0xF084, 0x0480)   # eor.w r4, r4, #128
    strb(r4, [r1, 3])
    data(2, 0x4455)           # add r5, r10
    add(r1, 4)
    label(TEST4)
    data(2, 0x4561)           # cmp r1, r12
    bcc(COPY4)
    data(2, 0xF10C, 0x0C03)   # add.w r12, r12, #3
    b(TEST1)
    label(COPY1)
    ldrb(r4, [r5, 0])
    data(2, 0xF084, 0x0480)   # eor.w r4, r4, #128
    data(2, 0xF801, 0x4B01)   # strb.w r4, [r1], #1
    add(r5, r5, r6)
    label(TEST1)
    data(2, 0x4561)           # cmp r1, r12
    bcc(COPY1)
    ldr(r4, [r0, 36])         # SRC += SRS
    add(r2, r2, r4)
    mov(r5, r11)
    label(PAD)                # padding up to the row's end
    b(PADTEST)
    label(PADLOOP)
    data(2, 0xF801, 0x5B01)   # strb.w r5, [r1], #1
    label(PADTEST)
    cmp(r1, r3)
    bcc(PADLOOP)
    ldr(r4, [r0, 4])          # the next row: + PWW
    data(2, 0x44A6)           # add lr, r4
    add(r7, 1)
    ldr(r4, [r0, 20])
    cmp(r7, r4)
    blt(ROW)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)


@micropython.asm_thumb
def dwc(r0, r1):
    """A tile's every channel in one call (depth multiplier 1, 3x3
    filter, every channel on dw3's exact path: right shifts 2..23): for
    each of CN channels, plane's copy of its plane (the PL_BLOCK after
    the DW_BLOCK's 32 words, as depthwise_conv lays them out), then
    dw3's exact path over the tile (EE set: the same bytes), then the
    next channel: SRC, W and the output one byte on. The DW_BLOCK's
    words the exact path leaves unused carry the channel loop: BP (M1's
    word: the bias of the channel, int32), PM (M2's: its multiplier
    m >= 0), PS (SM's: its right shift as int8, -23..-2), OUTC (SE's:
    its OUT0), NR0 (OUT's: the tile's rows), CN (LIM's: the channels
    left, >= 1); XA0 is DST, EK and EE are computed (dw3's exact path
    in the module's docstring). RS >= 3, OS = the input's channels.
    Returns 0; the loop's words and SRC, W, BI, M0, EK, EE, XA0, OUT0,
    NR, CL are left changed."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    add(r0, 128)              # the plane block (PL_BLOCK, at word 32)
    ldr(r1, [r0, 12])         # padding (ZC) all over the plane, unless
    cmp(r1, 0)                # the image covers it
    bne(FILL0)
    ldr(r1, [r0, 16])
    ldr(r2, [r0, 20])
    cmp(r1, r2)
    bne(FILL0)
    ldr(r1, [r0, 24])
    cmp(r1, 0)
    bne(FILL0)
    ldr(r1, [r0, 28])
    ldr(r2, [r0, 8])
    cmp(r1, r2)
    beq(CHAN0)
    label(FILL0)
    ldr(r1, [r0, 0])          # DST, its ROWS * PWW bytes in words
    ldr(r2, [r0, 20])
    ldr(r3, [r0, 4])
    data(2, 0x435A)           # muls r2, r3
    add(r2, r2, r1)
    ldr(r3, [r0, 44])         # ZC in each byte
    data(2, 0xEA43, 0x2303)   # orr.w r3, r3, r3, lsl #8
    data(2, 0xEA43, 0x4303)   # orr.w r3, r3, r3, lsl #16
    label(FILL)
    data(2, 0xF841, 0x3B04)   # str.w r3, [r1], #4
    cmp(r1, r2)
    bcc(FILL)
    label(CHAN0)
    sub(r0, 128)
    label(CHAN)               # a channel: its image bytes into the plane
    add(r0, 128)
    ldr(r6, [r0, 40])         # CS
    data(2, 0xEB06, 0x0806)   # add.w r8, r6, r6
    data(2, 0xEB08, 0x0906)   # add.w r9, r8, r6
    data(2, 0xEB08, 0x0A08)   # add.w r10, r8, r8
    ldr(r2, [r0, 32])         # r2: SRC, the source row
    ldr(r1, [r0, 12])         # r1: DST + RA * PWW + JL, the plane row
    ldr(r3, [r0, 4])
    data(2, 0x4359)           # muls r1, r3
    ldr(r3, [r0, 0])
    add(r1, r1, r3)
    ldr(r3, [r0, 24])
    add(r1, r1, r3)
    ldr(r4, [r0, 28])         # r11: JH - JL bytes a row
    sub(r4, r4, r3)
    beq(CDONE)
    mov(r11, r4)
    ldr(r7, [r0, 16])         # r7: RB - RA rows
    ldr(r3, [r0, 12])
    sub(r7, r7, r3)
    beq(CDONE)
    label(CROW)
    mov(r3, r1)               # r3: d, r5: s
    mov(r5, r2)
    mov(r4, r11)
    add(r4, r4, r3)
    mov(r12, r4)              # the row's end
    sub(r4, 3)
    mov(lr, r4)               # 4 bytes left while d < end - 3
    b(CTEST4)
    label(CCOPY4)
    ldrb(r4, [r5, 0])
    strb(r4, [r3, 0])
    data(2, 0x5DAC)           # ldrb r4, [r5, r6]
    strb(r4, [r3, 1])
    data(2, 0xF815, 0x4008)   # ldrb.w r4, [r5, r8]
    strb(r4, [r3, 2])
    data(2, 0xF815, 0x4009)   # ldrb.w r4, [r5, r9]
    strb(r4, [r3, 3])
    data(2, 0x4455)           # add r5, r10
    add(r3, 4)
    label(CTEST4)
    data(2, 0x4573)           # cmp r3, lr
    bcc(CCOPY4)
    b(CTEST1)
    label(CCOPY1)
    ldrb(r4, [r5, 0])
    strb(r4, [r3, 0])
    add(r3, 1)
    data(2, 0x4435)           # add r5, r6
    label(CTEST1)
    data(2, 0x4563)           # cmp r3, r12
    bcc(CCOPY1)
    ldr(r4, [r0, 4])          # the next row: + PWW, + SRS
    add(r1, r1, r4)
    ldr(r4, [r0, 36])
    add(r2, r2, r4)
    sub(r7, 1)
    bne(CROW)
    label(CDONE)
    sub(r0, 128)              # the channel's constants
    ldr(r1, [r0, 16])         # BI = bias[c] (BP), BP += 4
    ldr(r2, [r1, 0])
    add(r1, 4)
    str(r1, [r0, 16])
    str(r2, [r0, 8])
    ldr(r1, [r0, 20])         # lr: m (PM), PM += 4
    ldr(r2, [r1, 0])
    add(r1, 4)
    str(r1, [r0, 20])
    mov(lr, r2)
    ldr(r1, [r0, 28])         # the shift -e (PS), PS += 1
    data(2, 0xF911, 0x2B01)   # ldrsb.w r2, [r1], #1
    str(r1, [r0, 28])
    data(2, 0xF1C2, 0x0200)   # rsb r2, r2, #0: e
    sub(r3, r2, 1)            # EE = e - 1
    str(r3, [r0, 120])
    ldr(r4, [r0, 36])         # EK = 2**(e - 2) + ZO << (e - 1)
    lsl(r4, r3)
    sub(r2, 2)
    mov(r3, 1)
    lsl(r3, r2)
    add(r4, r4, r3)
    str(r4, [r0, 116])
    data(2, 0xF8D0, 0x1080)   # ldr.w r1, [r0, #128]: XA0 = DST
    str(r1, [r0, 80])
    ldr(r1, [r0, 32])         # OUT0 = OUTC, OUTC += 1
    str(r1, [r0, 84])
    add(r1, 1)
    str(r1, [r0, 32])
    ldr(r1, [r0, 48])         # NR = NR0
    str(r1, [r0, 68])
    ldr(r1, [r0, 4])          # the filter's taps (W), as dw3's exact
    ldr(r4, [r0, 52])         # path reads them
    sub(r1, r1, r4)
    data(2, 0x570A)           # ldrsb r2, [r1, r4]: W0
    add(r1, r1, r4)
    data(2, 0x570B)           # ldrsb r3, [r1, r4]: W1
    add(r1, r1, r4)
    data(2, 0x570D)           # ldrsb r5, [r1, r4]: W2
    add(r1, r1, r4)
    data(2, 0xEAC2, 0x4805)   # pkhbt r8, r2, r5, lsl #16
    add(r6, r2, r3)           # r6: the sum of the weights
    add(r6, r6, r5)
    data(2, 0x570A)           # ldrsb r2, [r1, r4]: W3
    add(r1, r1, r4)
    data(2, 0x570D)           # ldrsb r5, [r1, r4]: W4
    add(r1, r1, r4)
    data(2, 0x570F)           # ldrsb r7, [r1, r4]: W5
    add(r1, r1, r4)
    data(2, 0xEAC2, 0x4907)   # pkhbt r9, r2, r7, lsl #16
    data(2, 0xEAC3, 0x4B05)   # pkhbt r11, r3, r5, lsl #16
    add(r6, r6, r2)
    add(r6, r6, r5)
    add(r6, r6, r7)
    data(2, 0x570A)           # ldrsb r2, [r1, r4]: W6
    add(r1, r1, r4)
    data(2, 0x570B)           # ldrsb r3, [r1, r4]: W7
    add(r1, r1, r4)
    data(2, 0x570D)           # ldrsb r5, [r1, r4]: W8
    data(2, 0xEAC2, 0x4A05)   # pkhbt r10, r2, r5, lsl #16
    mov(r12, r3)
    add(r6, r6, r2)
    add(r6, r6, r3)
    add(r6, r6, r5)
    ldr(r2, [r0, 8])          # BI = bias - zc * sum(W)
    ldr(r3, [r0, 24])
    data(2, 0xFB03, 0x2216)   # mls r2, r3, r6, r2
    str(r2, [r0, 8])
    label(ROW)
    ldr(r5, [r0, 80])         # r5: XA = XA0
    ldr(r6, [r0, 84])         # r6: OUT = OUT0
    ldr(r7, [r0, 60])         # r7: CL = NC
    label(XPIXEL)             # dw3's XPIXEL
    ldr(r1, [r0, 8])          # acc = BI, + the taps
    ldr(r2, [r5, 0])
    data(2, 0xFA2F, 0xF382)   # sxtb16 r3, r2
    data(2, 0xFA2F, 0xF292)   # sxtb16 r2, r2, ror #8
    data(2, 0xFB23, 0x1108)   # smlad r1, r3, r8, r1
    data(2, 0xFB12, 0x110B)   # smlabb r1, r2, r11, r1
    ldr(r4, [r0, 96])
    data(2, 0xF855, 0x2004)   # ldr.w r2, [r5, r4]
    data(2, 0xFA2F, 0xF382)   # sxtb16 r3, r2
    data(2, 0xFA2F, 0xF292)   # sxtb16 r2, r2, ror #8
    data(2, 0xFB23, 0x1109)   # smlad r1, r3, r9, r1
    data(2, 0xFB12, 0x111B)   # smlabt r1, r2, r11, r1
    data(2, 0xEB05, 0x0444)   # add.w r4, r5, r4, lsl #1
    data(2, 0xF854, 0x2C01)   # ldr.w r2, [r4, #-1]
    data(2, 0xFA2F, 0xF382)   # sxtb16 r3, r2
    data(2, 0xFA2F, 0xF292)   # sxtb16 r2, r2, ror #8
    data(2, 0xFB13, 0x112C)   # smlatb r1, r3, r12, r1
    data(2, 0xFB22, 0x110A)   # smlad r1, r2, r10, r1
    data(2, 0xE9D0, 0x341D)   # ldrd r3, r4, [r0, #116]: EK, EE
    data(2, 0xF001, 0x4200)   # and.w r2, r1, #0x80000000
    data(2, 0xF082, 0x4280)   # eor.w r2, r2, #0x40000000
    data(2, 0xEB03, 0x73E1)   # add.w r3, r3, r1, asr #31
    data(2, 0xFBC1, 0x230E)   # smlal r2, r3, r1, lr
    asr(r3, r4)               # (+ ZO: in EK)
    data(2, 0xE9D0, 0x210A)   # ldrd r2, r1, [r0, #40]: LO, HI
    cmp(r3, r2)
    bge(XNOTLO)
    mov(r3, r2)
    label(XNOTLO)
    cmp(r3, r1)
    ble(XNOTHI)
    mov(r3, r1)
    label(XNOTHI)
    strb(r3, [r6, 0])
    data(2, 0xE9D0, 0x340D)   # ldrd r3, r4, [r0, #52]: OS, XS
    add(r6, r6, r3)
    add(r5, r5, r4)
    sub(r7, 1)
    bne(XPIXEL)
    ldr(r2, [r0, 80])         # XA0 += XR
    ldr(r3, [r0, 72])
    add(r2, r2, r3)
    str(r2, [r0, 80])
    ldr(r2, [r0, 84])         # OUT0 += OR
    ldr(r3, [r0, 76])
    add(r2, r2, r3)
    str(r2, [r0, 84])
    ldr(r3, [r0, 68])         # NR -= 1
    sub(r3, 1)
    str(r3, [r0, 68])
    beq(CEND)
    b(ROW)
    label(CEND)               # the next channel: W, SRC one byte on
    ldr(r1, [r0, 4])
    add(r1, 1)
    str(r1, [r0, 4])
    data(2, 0xF8D0, 0x10A0)   # ldr.w r1, [r0, #160]: SRC
    add(r1, 1)
    data(2, 0xF8C0, 0x10A0)   # str.w r1, [r0, #160]
    ldr(r1, [r0, 100])        # CN -= 1
    sub(r1, 1)
    str(r1, [r0, 100])
    beq(DONE)
    b(CHAN)
    label(DONE)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)


# dwm()'s block (int32 words): XA XS RSK KH KW4 NPIX WIN F NT BI OC MP SP
# OUT ZO LO HI ACC, then its counters CQ BIP ACP FP (words 18 to 21)
DWM_WORDS = 22


@micropython.asm_thumb
def dwm(r0, r1):
    """DEPTHWISE_CONV_2D with one input channel (dw_dsp.py's dwm path: a
    CONV_2D of one input channel into OC output channels), NPIX output
    pixels of a plane row, every channel of each; with the block laid
    out as DWM_WORDS above:

        ACC[c] = BI[c] + sum(t < NT) F[c * NT + t] * u[t]
        OUT[c] = clamp(MultiplyByQuantizedMultiplier(ACC[c], MP[c],
                       SP[c]) + ZO, LO, HI)          for c < OC

    where u[ky * 4 KW4 + kx] is the plane byte (0..255: x + 128, thumb_dw
    .plane's) XA + ky * (4 KW4 + RSK) + kx, for ky < KH, kx < 4 KW4
    (NT = 4 KW4 KH taps; F: int8, channel c's NT taps at F + c NT, word
    aligned, NT and OC multiples of 4; BI, MP, ACC: int32 words; SP:
    signed bytes, each <= 30: no negative multiplier). Then XA += XS,
    OUT += OC per pixel; XA, NPIX (>= 1) and OUT are used up, the
    counters overwritten. Returns 0.

    Per pixel, the window goes into WIN (2 NT bytes, aligned) as int16
    pairs u0 | u2 << 16, u1 | u3 << 16 per 4 taps (one LDR at any plane
    address, two UXTB16, STM); then 4 channels at a time, per 4 taps one
    LDM of the two window words and per channel one LDR of its 4 weight
    bytes (aligned), two SXTB16 and two SMLAD: 16 multiply-accumulates
    in 21 instructions. The sums are requantized as thumb_rq_dsp.rq
    (the same instructions, exact for every sum, multiplier and
    shift)."""
    data(2, 0xE92D, 0x0F00)   # push.w {r8, r9, r10, r11}
    add(r0, r0, r1)           # the block: buffer r0, byte offset r1
    label(PIXEL)
    ldr(r1, [r0, 24])         # the window: w = WIN
    ldr(r2, [r0, 0])          # x = XA
    ldr(r3, [r0, 12])         # KH rows
    label(WROW)
    ldr(r7, [r0, 16])         # KW4 groups of 4 taps
    label(WG)
    data(2, 0xF852, 0x4B04)   # ldr.w r4, [r2], #4: u0..u3, any address
    data(2, 0xFA3F, 0xF584)   # uxtb16 r5, r4: u0 | u2 << 16
    data(2, 0xFA3F, 0xF694)   # uxtb16 r6, r4, ror #8: u1 | u3 << 16
    data(2, 0xC160)           # stmia r1!, {r5, r6}
    sub(r7, 1)
    bne(WG)
    ldr(r4, [r0, 8])          # x += RSK: the next row
    add(r2, r2, r4)
    sub(r3, 1)
    bne(WROW)
    ldr(r4, [r0, 40])         # CQ = OC / 4 quads of channels
    lsr(r4, r4, 2)
    str(r4, [r0, 72])
    ldr(r4, [r0, 36])         # BIP = BI
    str(r4, [r0, 76])
    ldr(r4, [r0, 68])         # ACP = ACC
    str(r4, [r0, 80])
    ldr(r4, [r0, 28])         # FP = F
    str(r4, [r0, 84])
    label(QUAD)
    ldr(r4, [r0, 76])         # r8..r11 = BI[c .. c + 3]
    data(2, 0xE8B4, 0x0F00)   # ldmia.w r4!, {r8, r9, r10, r11}
    str(r4, [r0, 76])
    ldr(r1, [r0, 24])         # w = WIN
    ldr(r3, [r0, 32])         # NT: channel c + 1's taps at +NT
    lsl(r4, r3, 1)            # lr = WIN + 2 NT: the window's end
    add(r4, r4, r1)
    mov(lr, r4)
    ldr(r2, [r0, 84])         # A = FP, C = A + 2 NT
    lsl(r7, r3, 1)
    add(r7, r7, r2)
    label(G)                  # 4 taps x 4 channels: 21 instructions
    data(2, 0xC930)           # ldmia r1!, {r4, r5}: the taps' pairs
    data(2, 0xF852, 0x6003)   # ldr.w r6, [r2, r3]: channel B's 4 bytes
    data(2, 0xFA2F, 0xFC86)   # sxtb16 r12, r6
    data(2, 0xFB2C, 0x9904)   # smlad r9, r12, r4, r9
    data(2, 0xFA2F, 0xFC96)   # sxtb16 r12, r6, ror #8
    data(2, 0xFB2C, 0x9905)   # smlad r9, r12, r5, r9
    data(2, 0xF852, 0x6B04)   # ldr.w r6, [r2], #4: channel A's
    data(2, 0xFA2F, 0xFC86)   # sxtb16 r12, r6
    data(2, 0xFB2C, 0x8804)   # smlad r8, r12, r4, r8
    data(2, 0xFA2F, 0xFC96)   # sxtb16 r12, r6, ror #8
    data(2, 0xFB2C, 0x8805)   # smlad r8, r12, r5, r8
    data(2, 0xF857, 0x6003)   # ldr.w r6, [r7, r3]: channel D's
    data(2, 0xFA2F, 0xFC86)   # sxtb16 r12, r6
    data(2, 0xFB2C, 0xBB04)   # smlad r11, r12, r4, r11
    data(2, 0xFA2F, 0xFC96)   # sxtb16 r12, r6, ror #8
    data(2, 0xFB2C, 0xBB05)   # smlad r11, r12, r5, r11
    data(2, 0xF857, 0x6B04)   # ldr.w r6, [r7], #4: channel C's
    data(2, 0xFA2F, 0xFC86)   # sxtb16 r12, r6
    data(2, 0xFB2C, 0xAA04)   # smlad r10, r12, r4, r10
    data(2, 0xFA2F, 0xFC96)   # sxtb16 r12, r6, ror #8
    data(2, 0xFB2C, 0xAA05)   # smlad r10, r12, r5, r10
    data(2, 0x4571)           # cmp r1, lr
    bcc(G)
    ldr(r4, [r0, 80])         # ACC[c .. c + 3] = r8..r11; ACP += 16
    data(2, 0xE8A4, 0x0F00)   # stmia.w r4!, {r8, r9, r10, r11}
    str(r4, [r0, 80])
    ldr(r4, [r0, 84])         # FP += 4 NT
    lsl(r3, r3, 2)
    add(r4, r4, r3)
    str(r4, [r0, 84])
    ldr(r4, [r0, 72])         # CQ -= 1
    sub(r4, 1)
    str(r4, [r0, 72])
    bne(QUAD)
    ldr(r1, [r0, 68])         # requantize ACC into OUT (rq's code)
    ldr(r2, [r0, 40])
    ldr(r3, [r0, 44])
    ldr(r4, [r0, 48])
    ldr(r5, [r0, 52])
    data(2, 0xF8D0, 0xA038)   # ldr.w r10, [r0, #56]: ZO
    data(2, 0xF8D0, 0xB03C)   # ldr.w r11, [r0, #60]: LO
    label(RQL)
    data(2, 0xF994, 0x6000)   # ldrsb.w r6, [r4]: s
    ldr(r7, [r1, 0])          # x
    data(2, 0xF8D3, 0xC000)   # ldr.w r12, [r3]: m
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
    ldr(r7, [r0, 64])         # HI
    cmp(r6, r7)
    ble(BELOW)
    mov(r6, r7)
    label(BELOW)
    strb(r6, [r5, 0])
    add(r5, 1)
    add(r1, 4)
    add(r3, 4)
    add(r4, 1)
    sub(r2, 1)
    bne(RQL)
    str(r5, [r0, 52])         # OUT += OC
    ldr(r4, [r0, 0])          # XA += XS
    ldr(r5, [r0, 4])
    add(r4, r4, r5)
    str(r4, [r0, 0])
    ldr(r4, [r0, 20])         # NPIX -= 1
    sub(r4, 1)
    str(r4, [r0, 20])
    beq(END)
    b(PIXEL)
    label(END)
    data(2, 0xE8BD, 0x0F00)   # pop.w {r8, r9, r10, r11}
    mov(r0, 0)
