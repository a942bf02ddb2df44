"""float32 arithmetic for the float kernels: IEEE-754 binary32 in integers.

TFLM's float kernels (tensorflow/lite/kernels/internal/reference/*.h)
round every +, -, *, / to float32 (round to nearest, ties to even,
subnormals kept) in C's loop order; the x86-64 build of the PyPI
tflite-micro (the oracle) does not contract a * b + c into a fused
multiply-add. MicroPython's own floats cannot reproduce that everywhere
(the unix port computes in double, boards in single precision with their
own FPU or ROM routines, and every float result is a heap object), so the
float kernels never use Python floats in invoke(): they treat float32
tensors as 32-bit words and do the arithmetic in @micropython.viper
integer code. The results are the bits TFLM computes, on every port, on
32- and 64-bit viper alike, and invoke() allocates nothing.

Engines (all loops of the float kernels run in these):

    dot(p, q, x, w, b, out)   acc = q[0]; acc = fl(acc + fl(x * w)) over up
                              to three nested strided loops (TFLM's MAC
                              loops), then fl(acc + bias), clamp, store;
                              for several outputs per call (a pixel's
                              channels, a batch row's units)
    vec(p, q, a, b, c, out)   out[i] = clamp(fl(c[i] + fl(a[i] * b[i])))
                              with strides: ADD, SUB, MUL, RELU, ...
    vdiv(p, q, a, b, out)     out[i] = clamp(fl(a[i] / b[i])) with strides

fl() is one float32 rounding: the exact result rounded to nearest, ties
to even, with subnormals, signed zeros, infinities and NaN as IEEE 754
has them (x86 SSE without FTZ/DAZ, which is how TFLM runs on the host).
Each operation unpacks its operands into sign, exponent and a 24-bit
significand, forms the exact result with 6 guard bits plus a sticky bit
(products from 12-bit limbs, quotients by long division), and rounds
once.

The operations are written out in each engine's loop, not called: a
call per element would cost more than the arithmetic, and float32 bit
patterns above 2**30 cannot cross a call on a 32-bit port (below). The
copies are marked `# >>> NAME [VAR]` ... `# <<< NAME` (fmul: the product
of two normal or subnormal operands; fadd: acc + pr; round: rounding S
with exponent e into VAR), here and in f32_math.py, and
tests/test_copies.py checks that all copies of a NAME are the same code
(VAR renamed, comments and annotations aside): change one, change all.

Operands are buffers of float32 words read with ptr32: model constants
that are not 4-byte aligned are copied once at prepare (words()).
Indexes and strides are in elements. Intermediates stay below 2**31 and
bit patterns are masked before any compare, so the same code gives the
same bits with 32-bit viper ints (boards) and 64-bit ones (unix port);
float32 patterns above 2**30 never cross a function call (they would be
heap ints on 32-bit ports): they stay in arrays.

Clamping is TFLM's ActivationFunctionWithMinMax, min(max(x, lo), hi):
x < lo gives lo, hi < x gives hi, NaN and -0.0 pass unchanged. NaN
results are quiet NaNs: a NaN operand propagates (the first of two, as
x86's SSE), an invalid operation gives x86's default NaN (0xFFC00000).
"""

import struct
from array import array

import micropython
from micropython import const

from ..heap import zeros
from ..errors import PrepareError

_ACT_RELU = const(1)
_ACT_RELU6 = const(3)
_ACT_RELU_N1_TO_1 = const(2)
_FLOAT32 = const(0)

ZERO = 0
NEG_ZERO = 0x80000000
ONE = 0x3F800000
MINUS_ONE = 0xBF800000
INF = 0x7F800000
NEG_INF = 0xFF800000
FLT_MAX = 0x7F7FFFFF
_LOWEST = const(0xFF7FFFFF)  # -FLT_MAX: std::numeric_limits<float>::lowest()


def bits(x):
    """float32 bit pattern (int in [0, 2**32)) of a Python float, rounded
    to nearest float32 (struct's 'f' conversion)."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def consts(*words):
    """array('I') of float32 bit patterns, e.g. consts(ONE)."""
    return array("I", words)


def act_range(act):
    """(lo, hi) bits of CalculateActivationRange<float> (kernel_util.h):
    RELU [0, FLT_MAX], RELU6 [0, 6], RELU_N1_TO_1 [-1, 1], anything else
    [lowest, FLT_MAX] (TFLM clamps to the finite range even with no
    activation, so +-inf become +-FLT_MAX)."""
    if act == _ACT_RELU:
        return ZERO, FLT_MAX
    if act == _ACT_RELU6:
        return ZERO, 0x40C00000
    if act == _ACT_RELU_N1_TO_1:
        return MINUS_ONE, ONE
    return _LOWEST, FLT_MAX


@micropython.viper
def _low_bits(buf) -> int:
    return int(ptr8(buf)) & 3


def words(t, ctx):
    """The data of float32 tensor t, readable with ptr32: t.data itself
    when 4-byte aligned, else a one-time aligned copy (constants only;
    counted in ctx.copied_bytes)."""
    if _low_bits(t.data) == 0:
        return t.data
    a = bytearray(t.data)  # heap blocks are word aligned
    ctx.copied_bytes += t.nbytes
    return a


def check_float(op, ts):
    """Raise PrepareError unless every tensor in ts (skipping None) is
    float32 (TFLM's float kernels take no mixed types)."""
    for t in ts:
        if t is not None and t.type != _FLOAT32:
            raise PrepareError("%s: %s is %s, expected float32"
                               % (op.label(), t.label(), t.dtype))


def slots(n):
    """array('i') of n zeros: a parameter block for dot / vec / vdiv."""
    return zeros("i", n)


# dot() parameter slots (array('i') p):
# 0 x offset, 1 w offset, 2 n2, 3 x stride 2, 4 w stride 2, 5 n1,
# 6 x stride 1, 7 w stride 1, 8 n0, 9 x stride 0, 10 w stride 0,
# 11 bias index (< 0: no bias), 12 output index, 13 outputs (0 means 1),
# 14 x offset step, 15 outputs per x step (0: never), 16 w offset step.
# q (array('I')): 0 initial accumulator, 1 lo, 2 hi, 3 1.0 (ONE).
DOT_SLOTS = 17


@micropython.viper
def dot(p, q, x, w, b, out):
    """Outputs of a MAC loop (TFLM's `total += x * w` in float): for each
    of the p[13] outputs t,

        acc = q[0]
        for i2 < n2: for i1 < n1: for i0 < n0:
            acc = fl(acc + fl(x[k] * w[j]))
        if p[11] >= 0: acc = fl(acc + b[p[11] + t])
        out[p[12] + t] = clamp(acc, q[1], q[2])

    k starts at x offset p[0] and steps by the x strides, j at p[1] by the
    w strides; each loop restarts its inner loop at its own position (plus
    its stride after each step). Between outputs the w offset moves by
    p[16] and the x offset by p[14] after every p[15] outputs (conv:
    CIN per group of filters, depthwise: 1 per depth_multiplier outputs).
    The bias is added as one more term b * 1.0 (exact), q[3] holding 1.0.
    b: any buffer when p[11] < 0.
    """
    pp = ptr32(p)
    pq = ptr32(q)
    one: int = 1
    H23: int = one << 23
    H29: int = one << 29
    H30: int = one << 30
    M23: int = H23 - 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    QNAN: int = 0x1FF * (one << 22)
    n0: int = pp[8]
    n1: int = pp[5]
    n2: int = pp[2]
    xs0: int = pp[9] * 4
    ws0: int = pp[10] * 4
    S: int = one << 31
    bi: int = (pp[11] ^ S) - S  # sign-extended on 64-bit viper
    bias_x: int = int(ptr32(b)) + bi * 4
    bias_w: int = int(pq) + 12
    x0: int = int(ptr32(x)) + pp[0] * 4
    w0: int = int(ptr32(w)) + pp[1] * 4
    po: int = int(ptr32(out)) + pp[12] * 4
    nout: int = pp[13]
    if nout == 0:
        nout = 1
    xstep: int = pp[14] * 4
    xevery: int = pp[15]
    wstep: int = pp[16] * 4
    xcount: int = 0
    clo: int = pq[1]
    chi: int = pq[2]
    kl: int = clo & MAG
    if (clo >> 31) & 1:
        kl = 0 - kl
    kh: int = chi & MAG
    if (chi >> 31) & 1:
        kh = 0 - kh
    while nout > 0:
        nout -= 1
        acc: int = pq[0]
        x2: int = x0
        w2: int = w0
        x1: int = x2
        w1: int = w2
        xa: int = x2
        wa: int = w2
        cnt: int = n0 * n1 * n2
        if cnt == 0:
            xa = bias_x
            wa = bias_w
        if bi >= 0:
            cnt += 1
        i0: int = 0
        i1: int = 0
        i2: int = 0
        while cnt > 0:
            cnt -= 1
            a: int = ptr32(xa)[0]
            bb: int = ptr32(wa)[0]
            # advance to the next term: x0 loop, then x1, x2, then the bias
            i0 += 1
            xa += xs0
            wa += ws0
            if i0 == n0:
                i0 = 0
                i1 += 1
                x1 += pp[6] * 4
                w1 += pp[7] * 4
                if i1 == n1:
                    i1 = 0
                    i2 += 1
                    x2 += pp[3] * 4
                    w2 += pp[4] * 4
                    x1 = x2
                    w1 = w2
                    if i2 == n2:
                        x1 = bias_x
                        w1 = bias_w
                xa = x1
                wa = w1
            # ---- pr = fl(a * bb) ----
            sg: int = ((a ^ bb) >> 31) & 1
            ea: int = (a >> 23) & 0xFF
            eb: int = (bb >> 23) & 0xFF
            ma: int = a & M23
            mb: int = bb & M23
            pr: int = 0
            if ea == 0xFF or eb == 0xFF:
                if ea == 0xFF and ma:  # a NaN operand, quieted (x86: the
                    pr = a | (one << 22)  # first one)
                elif eb == 0xFF and mb:
                    pr = bb | (one << 22)
                elif (ea | ma) == 0 or (eb | mb) == 0:
                    pr = QNAN | (one << 31)  # inf * 0
                else:
                    pr = INF | (sg << 31)
            elif (ea | ma) == 0 or (eb | mb) == 0:
                if acc & MAG:
                    continue  # acc + (+-0) == acc for acc != +-0
                pr = sg << 31
            else:
                # >>> fmul
                if ea:
                    ma |= H23
                else:
                    ea = 1
                    while ma < H23:
                        ma = ma << 1
                        ea -= 1
                if eb:
                    mb |= H23
                else:
                    eb = 1
                    while mb < H23:
                        mb = mb << 1
                        eb -= 1
                # 48-bit product from 12-bit limbs, kept as 30 bits + sticky.
                ah: int = ma >> 12
                al: int = ma & 0xFFF
                bh: int = mb >> 12
                bl: int = mb & 0xFFF
                mid: int = ah * bl + al * bh
                lo: int = al * bl + ((mid & 0xFFF) << 12)
                S = ((ah * bh + (mid >> 12) + (lo >> 24)) << 6) \
                    | ((lo & 0xFFFFFF) >> 18)
                if lo & 0x3FFFF:
                    S |= 1
                e: int = ea + eb - 126
                if S < H29:
                    S = S << 1
                    e -= 1
                # round S * 2**(e - 156) to float32 (fl() in the module doc)
                # >>> round pr
                if e >= 0xFF:
                    pr = INF
                else:
                    if e <= 0:
                        sh: int = 1 - e
                        if sh > 30:
                            S = 1
                        else:
                            t: int = S & ((one << sh) - 1)
                            S = S >> sh
                            if t:
                                S |= 1
                        e = 1
                    pr = ((e - 1) << 23) + (S >> 6)
                    g: int = S & 63
                    if g > 32 or (g == 32 and (pr & 1)):
                        pr += 1
                # <<< round
                pr |= sg << 31
                # <<< fmul
            # ---- acc = fl(acc + pr) ----
            # >>> fadd
            sa: int = (acc >> 31) & 1
            sb: int = (pr >> 31) & 1
            ea = (acc >> 23) & 0xFF
            eb = (pr >> 23) & 0xFF
            ma = acc & M23
            mb = pr & M23
            if ea == 0xFF or eb == 0xFF:
                if ea == 0xFF and ma:
                    acc = acc | (one << 22)
                elif eb == 0xFF and mb:
                    acc = pr | (one << 22)
                elif ea == 0xFF and eb == 0xFF and sa != sb:
                    acc = QNAN | (one << 31)  # inf - inf
                elif eb == 0xFF:
                    acc = pr
            elif (eb | mb) == 0:
                if (ea | ma) == 0:
                    acc = (sa & sb) << 31
            elif (ea | ma) == 0:
                acc = pr
            else:
                if ea:
                    ma |= H23
                else:
                    ea = 1
                if eb:
                    mb |= H23
                else:
                    eb = 1
                sb ^= sa  # 1: subtract magnitudes
                if eb > ea or (eb == ea and mb > ma):
                    t = ea
                    ea = eb
                    eb = t
                    t = ma
                    ma = mb
                    mb = t
                    sa ^= sb  # the result takes the larger operand's sign
                S = ma << 6
                B: int = mb << 6
                d: int = ea - eb
                if d:
                    if d > 30:
                        B = 1
                    else:
                        t = B & ((one << d) - 1)
                        B = B >> d
                        if t:
                            B |= 1
                if sb:
                    S -= B
                else:
                    S += B
                if S == 0:
                    acc = 0  # exact cancellation gives +0
                else:
                    e = ea
                    if S >= H30:
                        S = (S >> 1) | (S & 1)
                        e += 1
                    while S < H29:
                        S = S << 1
                        e -= 1
                    # >>> round acc
                    if e >= 0xFF:
                        acc = INF
                    else:
                        if e <= 0:
                            sh = 1 - e
                            if sh > 30:
                                S = 1
                            else:
                                t = S & ((one << sh) - 1)
                                S = S >> sh
                                if t:
                                    S |= 1
                            e = 1
                        acc = ((e - 1) << 23) + (S >> 6)
                        g = S & 63
                        if g > 32 or (g == 32 and (acc & 1)):
                            acc += 1
                    # <<< round
                    acc |= sa << 31
            # <<< fadd
        # ---- clamp (NaN passes) and store ----
        if (acc & MAG) <= INF:
            k: int = acc & MAG
            if (acc >> 31) & 1:
                k = 0 - k
            if k < kl:
                acc = clo
                k = kl
            if kh < k:
                acc = chi
        ptr32(po)[0] = acc
        po += 4
        bias_x += 4
        w0 += wstep
        xcount += 1
        if xcount == xevery:
            xcount = 0
            x0 += xstep

# vec() parameter slots (array('i') p): 0 a offset, 1 a stride, 2 b offset,
# 3 b stride, 4 c offset, 5 c stride, 6 output offset, 7 count, 8 output
# stride (0 means 1). q (array('I')): 0 lo, 1 hi.
VEC_SLOTS = 9


@micropython.viper
def vec(p, q, a_, b_, c_, out):
    """out[p[6] + i] = clamp(fl(c + fl(a * b)), q[0], q[1]) for i < p[7],
    a, b, c read from p[0], p[2], p[4] stepping by their strides (0 for a
    broadcast scalar). With constant operands this is every elementwise
    op: ADD a + b = fl(b + fl(a * 1)), SUB a - b = fl(a + fl(b * -1)),
    MUL fl(-0.0 + fl(a * b)) (-0.0 is the identity of +), RELU / RELU6
    fl(-0.0 + fl(x * 1)) clamped. The output may be one of the inputs.
    """
    pp = ptr32(p)
    pq = ptr32(q)
    one: int = 1
    H23: int = one << 23
    H29: int = one << 29
    H30: int = one << 30
    M23: int = H23 - 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    QNAN: int = 0x1FF * (one << 22)
    clo: int = pq[0]
    chi: int = pq[1]
    kl: int = clo & MAG
    if (clo >> 31) & 1:
        kl = 0 - kl
    kh: int = chi & MAG
    if (chi >> 31) & 1:
        kh = 0 - kh
    xa: int = int(ptr32(a_)) + pp[0] * 4
    xs: int = pp[1]  # strides may be negative: sign-extended (ptr32
    xs = ((((xs >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 18 \
        | ((xs & 0xFFFF) << 2)  # zero-extends on 64-bit viper)
    wa: int = int(ptr32(b_)) + pp[2] * 4
    ws: int = pp[3]
    ws = ((((ws >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 18 \
        | ((ws & 0xFFFF) << 2)
    ca: int = int(ptr32(c_)) + pp[4] * 4
    cs: int = pp[5]
    cs = ((((cs >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 18 \
        | ((cs & 0xFFFF) << 2)
    po: int = int(ptr32(out)) + pp[6] * 4
    ps: int = pp[8]
    ps = ((((ps >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 18 \
        | ((ps & 0xFFFF) << 2)
    if ps == 0:
        ps = 4
    n: int = pp[7]
    while n > 0:
        n -= 1
        a: int = ptr32(xa)[0]
        bb: int = ptr32(wa)[0]
        acc: int = ptr32(ca)[0]
        xa += xs
        wa += ws
        ca += cs
        # ---- pr = fl(a * bb) ----
        sg: int = ((a ^ bb) >> 31) & 1
        ea: int = (a >> 23) & 0xFF
        eb: int = (bb >> 23) & 0xFF
        ma: int = a & M23
        mb: int = bb & M23
        pr: int = 0
        if ea == 0xFF or eb == 0xFF:
            if ea == 0xFF and ma:  # a NaN operand, quieted (x86: the
                pr = a | (one << 22)  # first one)
            elif eb == 0xFF and mb:
                pr = bb | (one << 22)
            elif (ea | ma) == 0 or (eb | mb) == 0:
                pr = QNAN | (one << 31)  # inf * 0
            else:
                pr = INF | (sg << 31)
        elif (ea | ma) == 0 or (eb | mb) == 0:
            pr = sg << 31
        else:
            # >>> fmul
            if ea:
                ma |= H23
            else:
                ea = 1
                while ma < H23:
                    ma = ma << 1
                    ea -= 1
            if eb:
                mb |= H23
            else:
                eb = 1
                while mb < H23:
                    mb = mb << 1
                    eb -= 1
            # 48-bit product from 12-bit limbs, kept as 30 bits + sticky.
            ah: int = ma >> 12
            al: int = ma & 0xFFF
            bh: int = mb >> 12
            bl: int = mb & 0xFFF
            mid: int = ah * bl + al * bh
            lo: int = al * bl + ((mid & 0xFFF) << 12)
            S = ((ah * bh + (mid >> 12) + (lo >> 24)) << 6) \
                | ((lo & 0xFFFFFF) >> 18)
            if lo & 0x3FFFF:
                S |= 1
            e: int = ea + eb - 126
            if S < H29:
                S = S << 1
                e -= 1
            # round S * 2**(e - 156) to float32 (fl() in the module doc)
            # >>> round pr
            if e >= 0xFF:
                pr = INF
            else:
                if e <= 0:
                    sh: int = 1 - e
                    if sh > 30:
                        S = 1
                    else:
                        t: int = S & ((one << sh) - 1)
                        S = S >> sh
                        if t:
                            S |= 1
                    e = 1
                pr = ((e - 1) << 23) + (S >> 6)
                g: int = S & 63
                if g > 32 or (g == 32 and (pr & 1)):
                    pr += 1
            # <<< round
            pr |= sg << 31
            # <<< fmul
        # ---- acc = fl(acc + pr) ----
        # >>> fadd
        sa: int = (acc >> 31) & 1
        sb: int = (pr >> 31) & 1
        ea = (acc >> 23) & 0xFF
        eb = (pr >> 23) & 0xFF
        ma = acc & M23
        mb = pr & M23
        if ea == 0xFF or eb == 0xFF:
            if ea == 0xFF and ma:
                acc = acc | (one << 22)
            elif eb == 0xFF and mb:
                acc = pr | (one << 22)
            elif ea == 0xFF and eb == 0xFF and sa != sb:
                acc = QNAN | (one << 31)  # inf - inf
            elif eb == 0xFF:
                acc = pr
        elif (eb | mb) == 0:
            if (ea | ma) == 0:
                acc = (sa & sb) << 31
        elif (ea | ma) == 0:
            acc = pr
        else:
            if ea:
                ma |= H23
            else:
                ea = 1
            if eb:
                mb |= H23
            else:
                eb = 1
            sb ^= sa  # 1: subtract magnitudes
            if eb > ea or (eb == ea and mb > ma):
                t = ea
                ea = eb
                eb = t
                t = ma
                ma = mb
                mb = t
                sa ^= sb  # the result takes the larger operand's sign
            S = ma << 6
            B: int = mb << 6
            d: int = ea - eb
            if d:
                if d > 30:
                    B = 1
                else:
                    t = B & ((one << d) - 1)
                    B = B >> d
                    if t:
                        B |= 1
            if sb:
                S -= B
            else:
                S += B
            if S == 0:
                acc = 0  # exact cancellation gives +0
            else:
                e = ea
                if S >= H30:
                    S = (S >> 1) | (S & 1)
                    e += 1
                while S < H29:
                    S = S << 1
                    e -= 1
                # >>> round acc
                if e >= 0xFF:
                    acc = INF
                else:
                    if e <= 0:
                        sh = 1 - e
                        if sh > 30:
                            S = 1
                        else:
                            t = S & ((one << sh) - 1)
                            S = S >> sh
                            if t:
                                S |= 1
                        e = 1
                    acc = ((e - 1) << 23) + (S >> 6)
                    g = S & 63
                    if g > 32 or (g == 32 and (acc & 1)):
                        acc += 1
                # <<< round
                acc |= sa << 31
        # <<< fadd
        # ---- clamp (NaN passes) and store ----
        if (acc & MAG) <= INF:
            k: int = acc & MAG
            if (acc >> 31) & 1:
                k = 0 - k
            if k < kl:
                acc = clo
                k = kl
            if kh < k:
                acc = chi
        ptr32(po)[0] = acc
        po += ps


# vdiv() parameter slots (array('i') p): 0 a offset, 1 a stride, 2 b
# offset, 3 b stride, 4 output offset, 5 count. q (array('I')): 0 lo, 1 hi.
VDIV_SLOTS = 6


@micropython.viper
def vdiv(p, q, a_, b_, out):
    """out[p[4] + i] = clamp(fl(a / b), q[0], q[1]) for i < p[5], a and b
    read from p[0], p[2] stepping by p[1], p[3] (C's float division:
    AVERAGE_POOL_2D, MEAN, SOFTMAX, LOGISTIC). The output may be an input.
    """
    pp = ptr32(p)
    pq = ptr32(q)
    one: int = 1
    H23: int = one << 23
    M23: int = H23 - 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    QNAN: int = 0x1FF * (one << 22)
    clo: int = pq[0]
    chi: int = pq[1]
    kl: int = clo & MAG
    if (clo >> 31) & 1:
        kl = 0 - kl
    kh: int = chi & MAG
    if (chi >> 31) & 1:
        kh = 0 - kh
    xa: int = int(ptr32(a_)) + pp[0] * 4
    xs: int = pp[1] * 4
    wa: int = int(ptr32(b_)) + pp[2] * 4
    ws: int = pp[3] * 4
    po: int = int(ptr32(out)) + pp[4] * 4
    n: int = pp[5]
    while n > 0:
        n -= 1
        a: int = ptr32(xa)[0]
        bb: int = ptr32(wa)[0]
        xa += xs
        wa += ws
        sg: int = ((a ^ bb) >> 31) & 1
        ea: int = (a >> 23) & 0xFF
        eb: int = (bb >> 23) & 0xFF
        ma: int = a & M23
        mb: int = bb & M23
        acc: int = 0
        if ea == 0xFF or eb == 0xFF:
            if ea == 0xFF and ma:
                acc = a | (one << 22)
            elif eb == 0xFF and mb:
                acc = bb | (one << 22)
            elif ea == 0xFF and eb == 0xFF:
                acc = QNAN | (one << 31)  # inf / inf
            elif ea == 0xFF:
                acc = INF | (sg << 31)
            else:
                acc = sg << 31  # finite / inf
        elif (eb | mb) == 0:
            if (ea | ma) == 0:
                acc = QNAN | (one << 31)  # 0 / 0
            else:
                acc = INF | (sg << 31)
        elif (ea | ma) == 0:
            acc = sg << 31
        else:
            if ea:
                ma |= H23
            else:
                ea = 1
                while ma < H23:
                    ma = ma << 1
                    ea -= 1
            if eb:
                mb |= H23
            else:
                eb = 1
                while mb < H23:
                    mb = mb << 1
                    eb -= 1
            e: int = ea - eb + 127
            if ma < mb:
                ma = ma << 1
                e -= 1
            # restoring division: 30 quotient bits (the first is 1)
            S: int = 0
            k: int = 0
            while k < 30:
                S = S << 1
                if ma >= mb:
                    ma -= mb
                    S |= 1
                ma = ma << 1
                k += 1
            if ma:
                S |= 1  # sticky
            # >>> round acc
            if e >= 0xFF:
                acc = INF
            else:
                if e <= 0:
                    sh: int = 1 - e
                    if sh > 30:
                        S = 1
                    else:
                        t: int = S & ((one << sh) - 1)
                        S = S >> sh
                        if t:
                            S |= 1
                    e = 1
                acc = ((e - 1) << 23) + (S >> 6)
                g: int = S & 63
                if g > 32 or (g == 32 and (acc & 1)):
                    acc += 1
            # <<< round
            acc |= sg << 31
        # ---- clamp (NaN passes) and store ----
        if (acc & MAG) <= INF:
            k = acc & MAG
            if (acc >> 31) & 1:
                k = 0 - k
            if k < kl:
                acc = clo
                k = kl
            if kh < k:
                acc = chi
        ptr32(po)[0] = acc
        po += 4
