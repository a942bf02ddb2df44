"""AVERAGE_POOL_2D's int8 loop in Thumb machine code (@micropython.asm_thumb),
for Cortex-M boards; pool_loops.py holds its viper twin, with the same
function and block, for the other ports (pooling.py imports one of the two:
kernels.THUMB).

Machine code for its size: a Cortex-M0 board copies the code of every
imported module to RAM, and this loop takes a sixth of its viper twin's.
Only Thumb-1 instructions that every Cortex-M has are used: ARMv6-M has
no divide instruction, so the rounded average is a 32-step restoring
division. Input and output bytes are read and written one at a time (any
alignment); the block and the scratch are int32 arrays.
tests/test_thumb.py runs this machine code (mpy-cross -march=armv6m) in a
Cortex-M0 emulator against TFLM's reference AveragePool.
"""

import micropython

# The operator's parameters, int32 words (pooling_prep.py makes them;
# tests read the names from this comment):
# POOL_BLOCK: N H W C OH OW SH SW FH FW PH PW LO HI
# (input N x H x W x C, output OH x OW; strides, filter, padding; LO, HI:
# the fused activation range.)
# The scratch keeps the loop's counters (words at these byte offsets):
# 0 b, 4 oy, 8 ox, 12 the output pixel's address, 16 fy0, 24 window rows,
# 28 window columns, 32 channel 0's first tap, 36 tap count, 40 channel,
# 44 x, 48 iy0.


@micropython.asm_thumb
def avg_pool(r0, r1, r2, r3):
    """avg_pool(x, y, acc, p): the average pool of int8 NHWC x into y, all
    channels; p: POOL_BLOCK; acc: int32 scratch of >= 13 words. Per
    output, the window clipped to the input, sum over its taps, then
    (sum > 0 ? (sum + n / 2) / n : (sum - n / 2) / n) truncating (n: the
    in-bounds taps), clamped to [LO, HI]. Returns 0."""
    str(r0, [r2, 44])         # x
    str(r1, [r2, 12])         # the output pixel
    mov(r0, 0)
    str(r0, [r2, 0])          # b
    label(LB)
    ldr(r0, [r2, 0])
    ldr(r1, [r3, 0])          # N
    cmp(r0, r1)
    blt(B1)
    b(DONE)
    label(B1)
    mov(r0, 0)
    str(r0, [r2, 4])          # oy
    label(LOY)
    ldr(r0, [r2, 4])
    ldr(r1, [r3, 16])         # OH
    cmp(r0, r1)
    blt(Y1)
    ldr(r0, [r2, 0])
    add(r0, 1)
    str(r0, [r2, 0])
    b(LB)
    label(Y1)
    ldr(r1, [r3, 24])         # SH
    mul(r1, r0)
    ldr(r4, [r3, 40])         # PH
    sub(r1, r1, r4)           # iy0 = oy * SH - PH
    str(r1, [r2, 48])
    neg(r4, r1)
    cmp(r4, 0)
    bge(Y2)
    mov(r4, 0)
    label(Y2)                 # fy0 = max(0, -iy0)
    ldr(r5, [r3, 4])          # H
    sub(r5, r5, r1)
    ldr(r6, [r3, 32])         # FH
    cmp(r6, r5)
    blt(Y3)
    mov(r6, r5)
    label(Y3)                 # fy1 = min(FH, H - iy0)
    str(r4, [r2, 16])
    sub(r6, r6, r4)
    str(r6, [r2, 24])         # the window's rows
    mov(r0, 0)
    str(r0, [r2, 8])          # ox
    label(LOX)
    ldr(r0, [r2, 8])
    ldr(r1, [r3, 20])         # OW
    cmp(r0, r1)
    blt(X1)
    ldr(r0, [r2, 4])
    add(r0, 1)
    str(r0, [r2, 4])
    b(LOY)
    label(X1)
    ldr(r1, [r3, 28])         # SW
    mul(r1, r0)
    ldr(r4, [r3, 44])         # PW
    sub(r1, r1, r4)           # ix0
    neg(r4, r1)
    cmp(r4, 0)
    bge(X2)
    mov(r4, 0)
    label(X2)                 # fx0
    ldr(r5, [r3, 8])          # W
    sub(r5, r5, r1)
    ldr(r6, [r3, 36])         # FW
    cmp(r6, r5)
    blt(X3)
    mov(r6, r5)
    label(X3)                 # fx1
    sub(r6, r6, r4)
    str(r6, [r2, 28])         # the window's columns
    ldr(r5, [r2, 24])
    mul(r5, r6)
    str(r5, [r2, 36])         # the tap count
    add(r1, r1, r4)           # ix0 + fx0
    ldr(r4, [r2, 0])
    ldr(r5, [r3, 4])
    mul(r4, r5)
    ldr(r5, [r2, 48])
    add(r4, r4, r5)
    ldr(r5, [r2, 16])
    add(r4, r4, r5)           # b * H + iy0 + fy0
    ldr(r5, [r3, 8])
    mul(r4, r5)
    add(r4, r4, r1)
    ldr(r5, [r3, 12])         # C
    mul(r4, r5)
    ldr(r5, [r2, 44])
    add(r4, r4, r5)
    str(r4, [r2, 32])         # channel 0's first tap
    mov(r0, 0)
    str(r0, [r2, 40])         # the channel
    label(LK)
    ldr(r0, [r2, 40])
    ldr(r1, [r3, 12])
    cmp(r0, r1)
    blt(K1)
    ldr(r1, [r2, 12])         # the next output pixel
    add(r1, r1, r0)
    str(r1, [r2, 12])
    ldr(r0, [r2, 8])
    add(r0, 1)
    str(r0, [r2, 8])
    b(LOX)
    label(K1)
    ldr(r4, [r2, 32])
    add(r4, r4, r0)           # the channel's first tap
    mov(r5, 0)                # the sum
    ldr(r6, [r2, 24])
    b(FYT)
    label(FYL)
    mov(r1, r4)
    ldr(r7, [r2, 28])
    b(FXT)
    label(FXL)
    ldrb(r0, [r1, 0])
    lsl(r0, r0, 24)
    asr(r0, r0, 24)           # int8
    add(r5, r5, r0)
    ldr(r0, [r3, 12])
    add(r1, r1, r0)           # the next column: + C
    sub(r7, 1)
    label(FXT)
    cmp(r7, 0)
    bgt(FXL)
    ldr(r0, [r3, 8])
    ldr(r1, [r3, 12])
    mul(r0, r1)
    add(r4, r4, r0)           # the next row: + W * C
    sub(r6, 1)
    label(FYT)
    cmp(r6, 0)
    bgt(FYL)
    ldr(r6, [r2, 36])         # n
    lsr(r0, r6, 1)            # n / 2
    mov(r4, 0)
    cmp(r5, 0)
    bgt(D1)
    neg(r5, r5)
    mov(r4, 1)                # the sum is <= 0
    label(D1)
    add(r5, r5, r0)           # |sum| + n / 2, divided by n:
    mov(r1, 0)
    mov(r7, 32)
    label(DL)
    lsl(r5, r5, 1)
    adc(r1, r1)
    cmp(r1, r6)
    bcc(D2)
    sub(r1, r1, r6)
    add(r5, 1)
    label(D2)
    sub(r7, 1)
    bne(DL)
    cmp(r4, 0)
    beq(D3)
    neg(r5, r5)
    label(D3)
    ldr(r0, [r3, 48])         # LO
    cmp(r5, r0)
    bge(D4)
    mov(r5, r0)
    label(D4)
    ldr(r0, [r3, 52])         # HI
    cmp(r5, r0)
    ble(D5)
    mov(r5, r0)
    label(D5)
    ldr(r0, [r2, 40])
    ldr(r1, [r2, 12])
    add(r1, r1, r0)
    strb(r5, [r1, 0])
    add(r0, 1)
    str(r0, [r2, 40])
    b(LK)
    label(DONE)
    mov(r0, 0)
