"""AVERAGE_POOL_2D and MAX_POOL_2D, int16 NHWC (16x8 models): pooling.py's
and max_pool.py's loops with 16-bit elements, imported only for models
whose pooling operators have int16 tensors (kernels._LAZY). Same
semantics: TFLM's reference_integer_ops AveragePool / MaxPool for
int16_t (window clipped to the input, int32 sum divided by the in-bounds
tap count rounding half away from zero, C's truncating division, clamped
to the fused activation range), from pooling_prep.prepare_with.
"""

import micropython
from micropython import const

# POOL_BLOCK's words (thumb_pool.py), by name (const: folded to numbers;
# tests/test_thumb.py checks every copy against POOL_BLOCK)
_P_N = const(0)
_P_H = const(1)
_P_W = const(2)
_P_C = const(3)
_P_OH = const(4)
_P_OW = const(5)
_P_SH = const(6)
_P_SW = const(7)
_P_FH = const(8)
_P_FW = const(9)
_P_PH = const(10)
_P_PW = const(11)
_P_LO = const(12)
_P_HI = const(13)


def eval16(state):
    """pooling_prep's state: the loop over all c channels at once."""
    fn, acc, xd, yd, p, c = state
    fn(xd, yd, acc, p, 0, c)


@micropython.viper
def avg16(x, y, acc, p, c0: int, cn: int):
    """Average pool of channels [c0, c0 + cn) of int16 NHWC x into y
    (little-endian bytes, any alignment); acc: int32 scratch of >= cn
    words; p: pooling_prep's int32 parameters (batch, h, w, c, out h,
    out w, strides, filter, padding, activation min / max). TFLM's
    reference_integer_ops::AveragePool for int16_t."""
    px = ptr8(x)
    py = ptr8(y)
    pa = ptr32(acc)
    q = ptr32(p)
    h: int = q[_P_H]
    w: int = q[_P_W]
    c: int = q[_P_C]
    one: int = 1
    S: int = one << 31
    lo: int = (q[_P_LO] ^ S) - S
    hi: int = (q[_P_HI] ^ S) - S
    nb: int = q[_P_N]
    oh: int = q[_P_OH]
    ow: int = q[_P_OW]
    b: int = 0
    o: int = c0  # output offset of the current pixel's first channel
    while b < nb:
        oy: int = 0
        while oy < oh:
            iy0: int = oy * q[_P_SH] - q[_P_PH]
            fy0: int = 0 if iy0 >= 0 else 0 - iy0
            fy1: int = q[_P_FH] if q[_P_FH] < h - iy0 else h - iy0
            ox: int = 0
            while ox < ow:
                ix0: int = ox * q[_P_SW] - q[_P_PW]
                fx0: int = 0 if ix0 >= 0 else 0 - ix0
                fx1: int = q[_P_FW] if q[_P_FW] < w - ix0 else w - ix0
                k: int = 0
                while k < cn:
                    pa[k] = 0
                    k += 1
                fy: int = fy0
                while fy < fy1:
                    r: int = ((b * h + iy0 + fy) * w + ix0 + fx0) * c + c0
                    fx: int = fx0
                    while fx < fx1:
                        k = 0
                        while k < cn:
                            i: int = 2 * (r + k)
                            pa[k] = pa[k] + ((px[i] | (px[i + 1] << 8))
                                             ^ 0x8000) - 0x8000
                            k += 1
                        r += c
                        fx += 1
                    fy += 1
                # Rounded division by the in-bounds tap count, as TFLM:
                # (acc > 0) ? (acc + n/2) / n : (acc - n/2) / n, truncating.
                count: int = (fy1 - fy0) * (fx1 - fx0)
                half: int = count >> 1
                k = 0
                while k < cn:
                    v: int = (pa[k] ^ S) - S
                    if v > 0:
                        v = (v + half) // count
                    else:
                        v = 0 - (half - v) // count
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    py[2 * (o + k)] = v
                    py[2 * (o + k) + 1] = v >> 8
                    k += 1
                o += c
                ox += 1
            oy += 1
        b += 1


@micropython.viper
def max16(x, y, acc, p, c0: int, cn: int):
    """Max pool of channels [c0, c0 + cn), the arguments as avg16's;
    values are kept biased by +32768 in acc. TFLM's
    reference_integer_ops::MaxPool for int16_t."""
    px = ptr8(x)
    py = ptr8(y)
    pa = ptr32(acc)
    q = ptr32(p)
    h: int = q[_P_H]
    w: int = q[_P_W]
    c: int = q[_P_C]
    one: int = 1
    S: int = one << 31
    lo: int = (q[_P_LO] ^ S) - S
    hi: int = (q[_P_HI] ^ S) - S
    nb: int = q[_P_N]
    oh: int = q[_P_OH]
    ow: int = q[_P_OW]
    b: int = 0
    o: int = c0
    while b < nb:
        oy: int = 0
        while oy < oh:
            iy0: int = oy * q[_P_SH] - q[_P_PH]
            fy0: int = 0 if iy0 >= 0 else 0 - iy0
            fy1: int = q[_P_FH] if q[_P_FH] < h - iy0 else h - iy0
            ox: int = 0
            while ox < ow:
                ix0: int = ox * q[_P_SW] - q[_P_PW]
                fx0: int = 0 if ix0 >= 0 else 0 - ix0
                fx1: int = q[_P_FW] if q[_P_FW] < w - ix0 else w - ix0
                k: int = 0
                while k < cn:
                    pa[k] = 0  # values are kept biased by +32768
                    k += 1
                fy: int = fy0
                while fy < fy1:
                    r: int = ((b * h + iy0 + fy) * w + ix0 + fx0) * c + c0
                    fx: int = fx0
                    while fx < fx1:
                        k = 0
                        while k < cn:
                            i: int = 2 * (r + k)
                            v: int = (px[i] | (px[i + 1] << 8)) ^ 0x8000
                            if v > pa[k]:
                                pa[k] = v
                            k += 1
                        r += c
                        fx += 1
                    fy += 1
                k = 0
                while k < cn:
                    v = pa[k] - 0x8000
                    if v < lo:
                        v = lo
                    if v > hi:
                        v = hi
                    py[2 * (o + k)] = v
                    py[2 * (o + k) + 1] = v >> 8
                    k += 1
                o += c
                ox += 1
            oy += 1
        b += 1
