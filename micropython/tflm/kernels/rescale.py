"""MultiplyByQuantizedMultiplier in place over int32 buffers (scale_i32)
and the int8 store with zero point and clamp (store_i8): the separate
steps of fixedpoint.requant_i8b, for the kernels that rescale operands
before combining them (ADD, SUB, SOFTMAX, QUANTIZE, PRELU, L2
normalization, SVDF, LSTM, ...). scale_i32 is thumb_rescale.py's machine
code on Cortex-M boards and rescale_loops.py's viper elsewhere; store_i8
keeps fixedpoint's arithmetic and word-size rules (see there): viper,
(v ^ S) - S sign extension.
"""

import micropython

from . import THUMB

# MultiplyByQuantizedMultiplier over a buffer: Thumb machine code on
# Cortex-M (thumb_rescale.py), viper elsewhere (rescale_loops.py)
scale_i32 = None
if THUMB:
    try:
        from .thumb_rescale import scale_i32
    except (ImportError, SyntaxError, ValueError):
        scale_i32 = None
if scale_i32 is None:
    from .rescale_loops import scale_i32  # noqa: F811


@micropython.viper
def store_i8(buf, n: int, out, off: int, qp):
    """out[off + i] = clamp(buf[i] + zp, lo, hi) as int8, for i < n (the
    sum wrapped to int32 first, as C computes it).

    buf: array('i'); out: writable bytes-like; qp: array('i') holding
    (zp, lo, hi) at indices 0..2.
    """
    p = ptr32(buf)
    o = ptr8(out)
    q = ptr32(qp)
    one: int = 1
    S: int = one << 31
    zp: int = (q[0] ^ S) - S
    lo: int = (q[1] ^ S) - S
    hi: int = (q[2] ^ S) - S
    hl: int = hi - lo
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    i: int = 0
    while i < n:
        v: int = ((p[i] ^ S) - S) + zp
        if uint(v - lo) > uint(hl):  # clamp to [lo, hi]
            v = ((v + S) & M) - S  # C's int32 wrap of the sum (64-bit)
            if v < lo:
                v = lo
            else:
                v = hi
        o[off + i] = v
        i += 1
