"""NumPy-style broadcasting for the binary elementwise kernels.

Shared by ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM and MINIMUM. Follows
tensorflow/lite/kernels/internal/reference/process_broadcast_shapes.h
(ProcessBroadcastShapes: equal extended shapes need no broadcast) and
reference/broadcast_loop.h (BroadcastBinaryOpSimple: inputs and output of
any rank up to 6 (_MAX_RANK), size-1 dimensions broadcast, loops fused
where the strides allow). Every output element depends only on its two
input elements, so walking the output in order gives TFLM's bits.

The checks and the odometer that prepare builds are in broadcast_prep.py
(construction only); this module holds the eval loops.

Eval walks the output in chunks: gather() loads the next n elements of
both inputs (offset, optionally shifted, sign-extended) into two int32
arrays, the kernel combines them, then stores. The walk's position lives
in an odometer array('i') (see broadcast_prep.walker()), so chunks
continue where the last one stopped.
"""

import micropython


@micropython.viper
def reset(st):
    """Rewind the odometer to the first output element."""
    s = ptr32(st)
    s[1] = 0
    s[2] = 0
    k: int = 0
    nd: int = s[0]
    while k < nd:
        s[9 + 4 * k] = 0
        k += 1


@micropython.viper
def gather(a, b, n: int, x1, x2, st):
    """a[i] = (x1[..] + add1) << shift and b[i] = (x2[..] + add2) << shift
    for the next n output elements (int8 or, width 2, int16 elements,
    sign-extended), or the 4-byte elements' int32 bits as they are
    (width 4), walking the odometer st (see broadcast_prep.walker()).
    a, b: array('i') (or memoryviews of one) of at least n entries.
    """
    pa = ptr32(a)
    pb = ptr32(b)
    p1 = ptr8(x1)
    p2 = ptr8(x2)
    s = ptr32(st)
    one: int = 1
    S: int = one << 31
    nd: int = s[0]
    o1: int = s[1]
    o2: int = s[2]
    z1: int = (s[3] ^ S) - S
    z2: int = (s[4] ^ S) - S
    sh: int = s[5]
    w: int = s[6]
    d0: int = s[8]
    c0: int = s[9]
    a0: int = s[10]
    b0: int = s[11]
    i: int = 0
    while i < n:
        if w == 1:
            pa[i] = (((p1[o1] ^ 0x80) - 0x80) + z1) << sh
            pb[i] = (((p2[o2] ^ 0x80) - 0x80) + z2) << sh
        elif w == 2:  # int16, little-endian bytes (any alignment)
            j2: int = o1 * 2
            v: int = p1[j2] | (p1[j2 + 1] << 8)
            pa[i] = (((v ^ 0x8000) - 0x8000) + z1) << sh
            j2 = o2 * 2
            v = p2[j2] | (p2[j2 + 1] << 8)
            pb[i] = (((v ^ 0x8000) - 0x8000) + z2) << sh
        else:
            j: int = o1 * 4
            pa[i] = ((((p1[j + 3] ^ 0x80) - 0x80) << 24) | (p1[j + 2] << 16)
                     | (p1[j + 1] << 8) | p1[j])
            j = o2 * 4
            pb[i] = ((((p2[j + 3] ^ 0x80) - 0x80) << 24) | (p2[j + 2] << 16)
                     | (p2[j + 1] << 8) | p2[j])
        i += 1
        o1 += a0
        o2 += b0
        c0 += 1
        if c0 == d0:  # carry into the outer loops
            c0 = 0
            o1 -= d0 * a0
            o2 -= d0 * b0
            k: int = 12
            end: int = 8 + 4 * nd
            while k < end:
                o1 += s[k + 2]
                o2 += s[k + 3]
                ck: int = s[k + 1] + 1
                if ck < s[k]:
                    s[k + 1] = ck
                    break
                s[k + 1] = 0
                o1 -= s[k] * s[k + 2]
                o2 -= s[k] * s[k + 3]
                k += 4
    s[1] = o1
    s[2] = o2
    s[9] = c0


@micropython.viper
def store_w32(buf, n: int, out, off: int):
    """out[off + i] = buf[i] as 4 little-endian bytes, for i < n (int32 or
    float32 bits; byte stores, so any alignment)."""
    p = ptr32(buf)
    o = ptr8(out)
    i: int = 0
    j: int = off * 4
    while i < n:
        v: int = p[i]
        o[j] = v
        o[j + 1] = v >> 8
        o[j + 2] = v >> 16
        o[j + 3] = v >> 24
        i += 1
        j += 4
