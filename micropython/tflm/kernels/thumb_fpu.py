"""f32.dot and f32.vec on the FPU of Cortex-M4F, M7 and M33 (armv7emsp,
armv7emdp: kernels.FPU): the same outputs, bit for bit, in
single-precision VFP instructions instead of integer emulation.

f32.dot's arithmetic is IEEE binary32 with one rounding per operation
(round to nearest, ties to even, subnormals kept): exactly what the FPU
does with FPSCR's RMode = 0 and FZ = 0. fdot sets those bits (and DN =
0) for its run and puts FPSCR back after, so a port that flushes
subnormals cannot change the results. Each term is VMUL then VADD: two
roundings, in f32.dot's (TFLM's) order; never VFMA, and not VMLA
either. The bias is one more VADD (f32.dot adds fl(b * 1.0) = b), the
clamp TFLM's min(max(acc, lo), hi) with ordered compares (NaN and -0.0
pass), as f32.dot's. Contiguous terms are read 4 at a time (VLDMIA with
writeback), their products and sums still one by one in order.

vec (the elementwise ADD, SUB, MUL, RELU, RELU6 of float_ops.py) is
f32.vec's fl(c + fl(a * b)), clamped: VMUL then VADD per element, as
f32.vec rounds twice (a * 1.0 and -0.0 + p are exact, so ADD is one
rounding of x1 + x2 and MUL one of x1 * x2, TFLM's).

NaN is where the FPU and f32.dot (x86's SSE, which TFLM's oracle runs
on) part: an invalid operation gives 0x7FC00000 on ARM, 0xFFC00000 on
x86, and of two NaN operands ARM prefers a signalling one. NaN is
sticky through the sums and the clamp, so an output is NaN on the FPU
exactly when it is in f32.dot; fdot counts them, and dot() recomputes
just those outputs with f32.dot (the integer code), which gives the
NaN's bits. fvec stops before storing a NaN element and vec() has f32.vec
compute that one element (its output may be one of its inputs, which
must still hold their values), then goes on with fvec. Operands at an
address that is not 4-byte aligned (VLDR faults on those, whatever
SCB->CCR says) go to f32.dot / f32.vec whole: the kernels hand them
aligned buffers (f32.words), so that does not happen in practice.

The VFP instructions are data() halfwords (the T32 encoding, the
mnemonic in the comment), the rest Thumb-1, so the module compiles for
every Thumb arch (a manifest with thumb=True freezes it everywhere) but
only FPU arches import it (romfs.FPU_ONLY). Registers: r0-r7 (asm_thumb
saves r4-r7) and s0-s15 (caller-saved in the AAPCS; s12-s15 hold loop
state). tests/test_thumb_fpu.py runs the armv7emsp bytes on an emulated
Cortex-M4 with its FPU against f32.dot's contract.
"""

import micropython

from ..heap import zeros
from .f32 import dot as _int_dot
from .f32 import vec as _int_vec

# FDOT_BLOCK: X0 W0 N2 XS2 WS2 N1 XS1 WS1 N0 XS0 WS0 BP OP NOUT XSTEP
#   XEVERY WSTEP Q FPSCR XCOUNT NANS CNT
# (f32.dot's slots as addresses and byte strides: X0 / W0 the first
# output's first x / w term, BP the first bias (0: none), OP the first
# output, Q the address of q; FPSCR .. CNT: fdot's own)
_B = zeros("i", 22)


@micropython.asm_thumb
def fdot(r0):
    """The outputs of FDOT_BLOCK r0 (f32.dot's loops); returns
    how many of them are NaN."""
    data(2, 0xEEF1, 0x1A10)   # vmrs r1, FPSCR
    str(r1, [r0, 72])         # FPSCR kept, restored at the end
    mov(r2, 0xF)              # RMode (round to nearest), FZ (subnormals
    lsl(r2, r2, 22)           # kept), DN (NaNs propagate), AHP cleared
    bic(r1, r2)
    data(2, 0xEEE1, 0x1A10)   # vmsr FPSCR, r1
    mov(r1, 0)
    str(r1, [r0, 76])         # XCOUNT
    str(r1, [r0, 80])         # NANS
    ldr(r1, [r0, 8])          # CNT = N2 * N1 * N0 (0: no MAC terms)
    ldr(r2, [r0, 20])
    mul(r1, r2)
    ldr(r2, [r0, 32])
    mul(r1, r2)
    str(r1, [r0, 84])
    label(OUTPUT)
    ldr(r1, [r0, 68])
    data(2, 0xED91, 0x0A00)   # vldr s0, [r1, 0]: acc = q[0]
    ldr(r1, [r0, 84])
    cmp(r1, 0)
    beq(BIAS)
    ldr(r1, [r0, 0])          # x2, w2 = X0, W0
    ldr(r2, [r0, 4])
    data(2, 0xEE06, 0x1A10)   # vmov s12, r1
    data(2, 0xEE06, 0x2A90)   # vmov s13, r2
    ldr(r1, [r0, 8])
    data(2, 0xEE07, 0x1A10)   # vmov s14, r1: i2 counts N2 down
    label(LOOP2)
    data(2, 0xEE16, 0x6A10)   # vmov r6, s12: x1, w1 = x2, w2
    data(2, 0xEE16, 0x7A90)   # vmov r7, s13
    ldr(r1, [r0, 20])
    data(2, 0xEE07, 0x1A90)   # vmov s15, r1: i1 counts N1 down
    label(LOOP1)
    mov(r1, r6)               # xa, wa = x1, w1
    mov(r2, r7)
    ldr(r3, [r0, 36])         # XS0, WS0 (bytes), N0
    ldr(r4, [r0, 40])
    ldr(r5, [r0, 32])
    cmp(r3, 4)                # both contiguous: 4 terms at a time
    bne(ONE)
    cmp(r4, 4)
    bne(ONE)
    cmp(r5, 4)
    blt(ONE)
    label(FOUR)
    data(2, 0xECF1, 0x0A04)   # vldmia r1!, {s1-s4}: 4 x terms
    data(2, 0xECF2, 0x2A04)   # vldmia r2!, {s5-s8}: 4 w terms
    data(2, 0xEE60, 0x0AA2)   # vmul.f32 s1, s1, s5
    data(2, 0xEE30, 0x0A20)   # vadd.f32 s0, s0, s1
    data(2, 0xEE21, 0x1A03)   # vmul.f32 s2, s2, s6
    data(2, 0xEE30, 0x0A01)   # vadd.f32 s0, s0, s2
    data(2, 0xEE61, 0x1AA3)   # vmul.f32 s3, s3, s7
    data(2, 0xEE30, 0x0A21)   # vadd.f32 s0, s0, s3
    data(2, 0xEE22, 0x2A04)   # vmul.f32 s4, s4, s8
    data(2, 0xEE30, 0x0A02)   # vadd.f32 s0, s0, s4
    sub(r5, 4)
    cmp(r5, 4)
    bge(FOUR)
    label(ONE)
    cmp(r5, 0)
    beq(DONE0)
    label(LOOP0)
    data(2, 0xEDD1, 0x0A00)   # vldr s1, [r1, 0]
    data(2, 0xED92, 0x1A00)   # vldr s2, [r2, 0]
    data(2, 0xEE60, 0x0A81)   # vmul.f32 s1, s1, s2: fl(x * w)
    data(2, 0xEE30, 0x0A20)   # vadd.f32 s0, s0, s1: fl(acc + it)
    add(r1, r1, r3)
    add(r2, r2, r4)
    sub(r5, 1)
    bne(LOOP0)
    label(DONE0)
    ldr(r3, [r0, 24])         # x1 += XS1, w1 += WS1
    add(r6, r6, r3)
    ldr(r3, [r0, 28])
    add(r7, r7, r3)
    data(2, 0xEE17, 0x1A90)   # vmov r1, s15
    sub(r1, 1)
    data(2, 0xEE07, 0x1A90)   # vmov s15, r1
    beq(END1)
    b(LOOP1)
    label(END1)
    data(2, 0xEE16, 0x1A10)   # vmov r1, s12: x2 += XS2, w2 += WS2
    ldr(r3, [r0, 12])
    add(r1, r1, r3)
    data(2, 0xEE06, 0x1A10)   # vmov s12, r1
    data(2, 0xEE16, 0x1A90)   # vmov r1, s13
    ldr(r3, [r0, 16])
    add(r1, r1, r3)
    data(2, 0xEE06, 0x1A90)   # vmov s13, r1
    data(2, 0xEE17, 0x1A10)   # vmov r1, s14
    sub(r1, 1)
    data(2, 0xEE07, 0x1A10)   # vmov s14, r1
    beq(BIAS)
    b(LOOP2)
    label(BIAS)
    ldr(r1, [r0, 44])         # BP: 0 for no bias
    cmp(r1, 0)
    beq(CLAMP)
    data(2, 0xEDD1, 0x0A00)   # vldr s1, [r1, 0]
    data(2, 0xEE30, 0x0A20)   # vadd.f32 s0, s0, s1: acc + bias
    add(r1, 4)
    str(r1, [r0, 44])
    label(CLAMP)              # min(max(acc, lo), hi): NaN passes
    ldr(r1, [r0, 68])
    data(2, 0xEDD1, 0x0A01)   # vldr s1, [r1, 4]
    data(2, 0xED91, 0x1A02)   # vldr s2, [r1, 8]
    data(2, 0xEEB4, 0x0A60)   # vcmp.f32 s0, s1
    data(2, 0xEEF1, 0xFA10)   # vmrs APSR_nzcv, FPSCR
    bpl(NOTLO)                # N: acc < lo (ordered)
    data(2, 0xEEB0, 0x0A60)   # vmov.f32 s0, s1
    label(NOTLO)
    data(2, 0xEEB4, 0x1A40)   # vcmp.f32 s2, s0
    data(2, 0xEEF1, 0xFA10)   # vmrs APSR_nzcv, FPSCR
    bpl(NOTHI)                # N: hi < acc
    data(2, 0xEEB0, 0x0A41)   # vmov.f32 s0, s2
    label(NOTHI)
    data(2, 0xEEB4, 0x0A40)   # vcmp.f32 s0, s0
    data(2, 0xEEF1, 0xFA10)   # vmrs APSR_nzcv, FPSCR
    bvc(STORE)                # V: unordered, acc is NaN
    ldr(r1, [r0, 80])
    add(r1, 1)
    str(r1, [r0, 80])
    label(STORE)
    ldr(r1, [r0, 48])
    data(2, 0xED81, 0x0A00)   # vstr s0, [r1, 0]
    add(r1, 4)
    str(r1, [r0, 48])
    ldr(r1, [r0, 4])          # W0 += WSTEP
    ldr(r2, [r0, 64])
    add(r1, r1, r2)
    str(r1, [r0, 4])
    ldr(r1, [r0, 76])         # X0 += XSTEP every XEVERY outputs
    add(r1, 1)
    ldr(r2, [r0, 60])
    cmp(r1, r2)
    bne(KEEPX)
    ldr(r2, [r0, 0])
    ldr(r3, [r0, 56])
    add(r2, r2, r3)
    str(r2, [r0, 0])
    mov(r1, 0)
    label(KEEPX)
    str(r1, [r0, 76])
    ldr(r1, [r0, 52])         # NOUT -= 1
    sub(r1, 1)
    str(r1, [r0, 52])
    beq(DONE)
    b(OUTPUT)
    label(DONE)
    ldr(r1, [r0, 72])
    data(2, 0xEEE1, 0x1A10)   # vmsr FPSCR, r1
    ldr(r0, [r0, 80])


# FVEC_BLOCK: A AS B BS C CS O OS N LO HI FPSCR
# (f32.vec's operands as addresses and byte strides, N elements, LO and
# HI the clamp's bits; FPSCR: fvec's own)
_V = zeros("i", 12)
# f32.vec's parameters for one element that fvec left NaN
_P1 = zeros("i", 9)


@micropython.asm_thumb
def fvec(r0):
    """The elements of FVEC_BLOCK r0 (f32.vec's loop) until N is 0 (returns
    0) or one is NaN (returns 1, that element not stored, the block's A,
    B, C, O and N at it)."""
    data(2, 0xEEF1, 0x1A10)   # vmrs r1, FPSCR
    str(r1, [r0, 44])         # FPSCR kept, restored at the end
    mov(r2, 0xF)              # RMode, FZ, DN, AHP cleared (as fdot)
    lsl(r2, r2, 22)
    bic(r1, r2)
    data(2, 0xEEE1, 0x1A10)   # vmsr FPSCR, r1
    data(2, 0xED90, 0x2A09)   # vldr s4, [r0, 36]: lo
    data(2, 0xEDD0, 0x2A0A)   # vldr s5, [r0, 40]: hi
    ldr(r1, [r0, 0])          # a, b, c, out, n
    ldr(r2, [r0, 8])
    ldr(r3, [r0, 16])
    ldr(r4, [r0, 24])
    ldr(r5, [r0, 32])
    mov(r6, 0)
    label(LOOP)
    cmp(r5, 0)
    beq(DONE)
    data(2, 0xED91, 0x0A00)   # vldr s0, [r1, 0]
    data(2, 0xEDD2, 0x0A00)   # vldr s1, [r2, 0]
    data(2, 0xED93, 0x1A00)   # vldr s2, [r3, 0]
    data(2, 0xEE20, 0x0A20)   # vmul.f32 s0, s0, s1: fl(a * b)
    data(2, 0xEE31, 0x0A00)   # vadd.f32 s0, s2, s0: fl(c + it)
    data(2, 0xEEB4, 0x0A42)   # vcmp.f32 s0, s4
    data(2, 0xEEF1, 0xFA10)   # vmrs APSR_nzcv, FPSCR
    bpl(NOTLO)                # N: acc < lo (ordered)
    data(2, 0xEEB0, 0x0A42)   # vmov.f32 s0, s4
    label(NOTLO)
    data(2, 0xEEF4, 0x2A40)   # vcmp.f32 s5, s0
    data(2, 0xEEF1, 0xFA10)   # vmrs APSR_nzcv, FPSCR
    bpl(NOTHI)                # N: hi < acc
    data(2, 0xEEB0, 0x0A62)   # vmov.f32 s0, s5
    label(NOTHI)
    data(2, 0xEEB4, 0x0A40)   # vcmp.f32 s0, s0
    data(2, 0xEEF1, 0xFA10)   # vmrs APSR_nzcv, FPSCR
    bvs(NAN)                  # V: unordered, the element is NaN
    data(2, 0xED84, 0x0A00)   # vstr s0, [r4, 0]
    ldr(r7, [r0, 4])          # a, b, c, out += their strides
    add(r1, r1, r7)
    ldr(r7, [r0, 12])
    add(r2, r2, r7)
    ldr(r7, [r0, 20])
    add(r3, r3, r7)
    ldr(r7, [r0, 28])
    add(r4, r4, r7)
    sub(r5, 1)
    b(LOOP)
    label(NAN)
    mov(r6, 1)
    label(DONE)
    str(r1, [r0, 0])
    str(r2, [r0, 8])
    str(r3, [r0, 16])
    str(r4, [r0, 24])
    str(r5, [r0, 32])
    ldr(r1, [r0, 44])
    data(2, 0xEEE1, 0x1A10)   # vmsr FPSCR, r1
    mov(r0, r6)


@micropython.viper
def vec(p, q, a_, b_, c_, out):
    """f32.vec(p, q, a, b, c, out): the same arguments, slots and outputs
    (see f32.vec), on the FPU."""
    pp = ptr32(p)
    V = ptr32(_V)
    n: int = pp[7]
    if n <= 0:
        return
    a0: int = int(ptr32(a_))
    b0: int = int(ptr32(b_))
    c0: int = int(ptr32(c_))
    o0: int = int(ptr32(out))
    aa: int = a0 + pp[0] * 4
    ba: int = b0 + pp[2] * 4
    ca: int = c0 + pp[4] * 4
    oa: int = o0 + pp[6] * 4
    if (aa | ba | ca | oa) & 3:
        _int_vec(p, q, a_, b_, c_, out)
        return
    ostep: int = pp[8]
    if ostep == 0:
        ostep = 1
    V[0] = aa
    V[1] = pp[1] * 4
    V[2] = ba
    V[3] = pp[3] * 4
    V[4] = ca
    V[5] = pp[5] * 4
    V[6] = oa
    V[7] = ostep * 4
    V[8] = n
    pq = ptr32(q)
    V[9] = pq[0]
    V[10] = pq[1]
    while int(fvec(_V)):
        # one element at V's addresses is NaN: f32.vec gives its bits
        P = ptr32(_P1)
        P[0] = (V[0] - a0) >> 2
        P[2] = (V[2] - b0) >> 2
        P[4] = (V[4] - c0) >> 2
        P[6] = (V[6] - o0) >> 2
        P[7] = 1
        _int_vec(_P1, q, a_, b_, c_, out)
        V[0] = V[0] + V[1]
        V[2] = V[2] + V[3]
        V[4] = V[4] + V[5]
        V[6] = V[6] + V[7]
        V[8] = V[8] - 1


@micropython.viper
def dot(p, q, x, w, b, out):
    """f32.dot(p, q, x, w, b, out): the same arguments, slots and
    outputs (see f32.dot), on the FPU."""
    pp = ptr32(p)
    B = ptr32(_B)
    one: int = 1
    S: int = one << 31
    bi: int = (pp[11] ^ S) - S
    xa: int = int(ptr32(x)) + pp[0] * 4
    wa: int = int(ptr32(w)) + pp[1] * 4
    oa: int = int(ptr32(out)) + pp[12] * 4
    qa: int = int(ptr32(q))
    ba: int = 0
    if bi >= 0:
        ba = int(ptr32(b)) + bi * 4
    if (xa | wa | ba | oa | qa) & 3:
        _int_dot(p, q, x, w, b, out)
        return
    B[0] = xa
    B[1] = wa
    B[2] = pp[2]
    B[3] = pp[3] * 4
    B[4] = pp[4] * 4
    B[5] = pp[5]
    B[6] = pp[6] * 4
    B[7] = pp[7] * 4
    B[8] = pp[8]
    B[9] = pp[9] * 4
    B[10] = pp[10] * 4
    B[11] = ba
    B[12] = oa
    nout: int = pp[13]
    if nout == 0:
        nout = 1
    B[13] = nout
    B[14] = pp[14] * 4
    B[15] = pp[15]
    B[16] = pp[16] * 4
    B[17] = qa
    if int(fdot(_B)):
        _nans(p, q, x, w, b, out, nout)


@micropython.viper
def _nans(p, q, x, w, b, out, nout: int):
    """Recompute with f32.dot each of dot's nout outputs that fdot left
    NaN (x86's NaN bits); p as on entry, and on return."""
    pp = ptr32(p)
    po = ptr32(out)
    one: int = 1
    S: int = one << 31
    x0: int = pp[0]
    w0: int = pp[1]
    b0: int = pp[11]
    bi: int = (b0 ^ S) - S
    o0: int = pp[12]
    n0: int = pp[13]
    xstep: int = pp[14]
    xevery: int = pp[15]
    wstep: int = pp[16]
    xo: int = x0
    xc: int = 0
    t: int = 0
    while t < nout:
        v: int = po[o0 + t]
        if (v >> 23) & 0xFF == 0xFF and v & 0x7FFFFF:
            pp[0] = xo
            pp[1] = w0 + t * wstep
            if bi >= 0:
                pp[11] = bi + t
            pp[12] = o0 + t
            pp[13] = 1
            _int_dot(p, q, x, w, b, out)
        t += 1
        xc += 1
        if xc == xevery:
            xc = 0
            xo += xstep
    pp[0] = x0
    pp[1] = w0
    pp[11] = b0
    pp[12] = o0
    pp[13] = n0
