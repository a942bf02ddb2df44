"""The int8 LSTM's per-gate loop in Thumb machine code
(@micropython.asm_thumb), for Cortex-M boards; lstm_loops.py holds its
viper twin, with the same function and block, for the other ports
(lstm_int8.py imports one of the two: kernels.THUMB).

Follows tensorflow/lite/micro/kernels/lstm_eval.cc (CalculateLstmGate:
the two FCs' int16 outputs, each clamped to int16, AddElementWise
saturating to int16, then the gate's activation; UpdateLstmCell's sum;
UpdateLstmHidden's Tanh of the cell state) with
tensorflow/lite/kernels/internal/reference/integer_ops/logistic.h and
tanh.h (their int16 versions: sigmoid_table_uint16 interpolated). About
35 instructions per value plus 30 for a sigmoid or tanh, where the viper
twin takes about 300 on armv6m. Only Thumb-1 instructions that every
Cortex-M has are used; the table is read a byte at a time (any
alignment); r12 holds the loop's end. tests/test_thumb.py runs this
machine code (mpy-cross -march=armv6m) in a Cortex-M0 emulator against
a reference written from those sources.
"""

import micropython

# The block, int32 words (lstm_int8.py makes one per kind of call; tests
# read the names from this comment):
# GATE_BLOCK: N ADD KIND MULT SHIFT
# (N values; ADD: 1 to add t first; KIND: 0 none, 1 the gates' sigmoid
# (input times 3), 2 tanh of (v * MULT + round) >> SHIFT.)


@micropython.asm_thumb
def gate(r0, r1, r2, r3):
    """gate(g, t, table, block): for i < N, in place on int32 words,
    v = g[i], or sat16(clamp16(g[i]) + clamp16(t[i])) when ADD; then
    g[i] = TFLM's int16 Logistic(v) (input multiplier 0, left shift 0:
    v * 3) when KIND is 1, its int16 Tanh(MULT, SHIFT) when KIND is 2,
    v when 0. table: sigmoid_table_uint16 as little-endian bytes.
    Returns 0."""
    ldr(r4, [r3, 0])          # N
    lsl(r4, r4, 2)
    add(r4, r0, r4)
    mov(r12, r4)              # the end of g
    label(LOOP)
    mov(r4, r12)
    cmp(r0, r4)
    bcc(BODY)
    b(DONE)
    label(BODY)
    ldr(r4, [r0, 0])          # v
    ldr(r5, [r3, 4])          # ADD
    cmp(r5, 0)
    beq(ACT)
    # clamp16(g) + clamp16(t), saturated: x + 32768 above 0xFFFF
    # (unsigned) is out of range, and (x >> 31) ^ 32767 its bound
    mov(r7, 1)
    lsl(r7, r7, 15)           # 32768
    add(r6, r4, r7)
    lsr(r6, r6, 16)
    beq(C1)
    asr(r4, r4, 31)
    sub(r6, r7, 1)
    eor(r4, r6)
    label(C1)
    ldr(r5, [r1, 0])
    add(r6, r5, r7)
    lsr(r6, r6, 16)
    beq(C2)
    asr(r5, r5, 31)
    sub(r6, r7, 1)
    eor(r5, r6)
    label(C2)
    add(r4, r4, r5)
    add(r6, r4, r7)
    lsr(r6, r6, 16)
    beq(ACT)
    asr(r4, r4, 31)
    sub(r6, r7, 1)
    eor(r4, r6)
    label(ACT)
    ldr(r5, [r3, 8])          # KIND
    cmp(r5, 1)
    beq(SIG)
    bgt(TANH)
    b(STORE)
    label(SIG)
    lsl(r5, r4, 1)
    add(r4, r4, r5)           # v * 3
    str(r4, [r0, 0])          # (its sign is read back below)
    asr(r5, r4, 31)
    eor(r4, r5)
    sub(r4, r4, r5)           # a = |v * 3|
    lsr(r5, r4, 9)            # uh
    cmp(r5, 255)
    bge(SSAT)
    lsl(r5, r5, 1)
    add(r5, r2, r5)
    ldrb(r6, [r5, 0])
    ldrb(r7, [r5, 1])
    lsl(r7, r7, 8)
    orr(r6, r7)               # ua = table[uh]
    ldrb(r7, [r5, 2])
    ldrb(r5, [r5, 3])
    lsl(r5, r5, 8)
    orr(r7, r5)               # ub = table[uh + 1]
    sub(r7, r7, r6)
    lsl(r5, r4, 23)
    lsr(r5, r5, 23)           # a & 0x1FF
    mul(r5, r7)
    lsl(r4, r6, 9)
    add(r4, r4, r5)           # (ua << 9) + (a & 0x1FF) * (ub - ua)
    b(SSIGN)
    label(SSAT)
    mov(r4, 1)
    lsl(r4, r4, 15)
    sub(r4, r4, 1)
    lsl(r4, r4, 10)           # 0x7FFF << 10
    label(SSIGN)
    ldr(r5, [r0, 0])
    cmp(r5, 0)
    blt(SNEG)
    mov(r5, 1)
    lsl(r5, r5, 9)
    add(r4, r4, r5)           # r + 512
    b(SOUT)
    label(SNEG)
    mov(r5, 1)
    lsl(r5, r5, 25)
    sub(r4, r5, r4)
    add(r4, 255)
    add(r4, 255)
    add(r4, 1)                # (1 << 25) - r + 511
    label(SOUT)
    asr(r4, r4, 10)
    b(STORE)
    label(TANH)
    ldr(r5, [r3, 12])         # MULT
    mul(r4, r5)
    ldr(r5, [r3, 16])         # SHIFT
    cmp(r5, 0)
    beq(TNS)
    sub(r6, r5, 1)
    mov(r7, 1)
    lsl(r7, r6)
    add(r4, r4, r7)           # + round
    asr(r4, r5)
    label(TNS)
    str(r4, [r0, 0])          # (its sign is read back below)
    asr(r5, r4, 31)
    eor(r4, r5)
    sub(r4, r4, r5)           # a
    lsr(r5, r4, 8)            # uh
    cmp(r5, 255)
    bge(TSAT)
    lsl(r5, r5, 1)
    add(r5, r2, r5)
    ldrb(r6, [r5, 0])
    ldrb(r7, [r5, 1])
    lsl(r7, r7, 8)
    orr(r6, r7)               # ua
    ldrb(r7, [r5, 2])
    ldrb(r5, [r5, 3])
    lsl(r5, r5, 8)
    orr(r7, r5)               # ub
    sub(r7, r7, r6)
    lsl(r5, r4, 24)
    lsr(r5, r5, 24)           # a & 0xFF
    mul(r5, r7)
    lsl(r4, r6, 8)
    add(r4, r4, r5)           # (ua << 8) + (a & 0xFF) * (ub - ua)
    b(TSIGN)
    label(TSAT)
    mov(r4, 1)
    lsl(r4, r4, 16)
    sub(r4, r4, 1)
    lsl(r4, r4, 8)            # 0xFFFF << 8
    label(TSIGN)
    ldr(r5, [r0, 0])
    mov(r6, 1)
    lsl(r6, r6, 23)
    cmp(r5, 0)
    blt(TNEG)
    sub(r4, r4, r6)
    add(r4, 128)              # r - (1 << 23) + 128
    b(TOUT)
    label(TNEG)
    sub(r4, r6, r4)
    add(r4, 127)              # (1 << 23) - r + 127
    label(TOUT)
    asr(r4, r4, 8)
    label(STORE)
    str(r4, [r0, 0])
    add(r0, 4)
    add(r1, 4)
    b(LOOP)
    label(DONE)
    mov(r0, 0)
