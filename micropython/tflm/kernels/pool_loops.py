"""AVERAGE_POOL_2D's int8 loop in viper, for ports without the Thumb inline
assembler; thumb_pool.py holds its machine code for Cortex-M boards, with
the same function and block (pooling.py imports one of the two). The
semantics are in pooling.py.
"""

import micropython


@micropython.viper
def avg_pool(x, y, acc, p):
    """Average pool of int8 NHWC x into y, every channel (c0 = 0, cn =
    C); acc: int32 scratch of >= C words; p: the int32 words of
    thumb_pool.py's POOL_BLOCK."""
    px = ptr8(x)
    py = ptr8(y)
    pa = ptr32(acc)
    q = ptr32(p)
    h: int = q[1]
    w: int = q[2]
    c: int = q[3]
    c0: int = 0
    cn: int = c
    one: int = 1
    S: int = one << 31
    lo: int = (q[12] ^ S) - S
    hi: int = (q[13] ^ S) - S
    nb: int = q[0]
    oh: int = q[4]
    ow: int = q[5]
    b: int = 0
    o: int = c0  # output offset of the current pixel's first channel
    while b < nb:
        oy: int = 0
        while oy < oh:
            iy0: int = oy * q[6] - q[10]
            fy0: int = 0 if iy0 >= 0 else 0 - iy0
            fy1: int = q[8] if q[8] < h - iy0 else h - iy0
            ox: int = 0
            while ox < ow:
                ix0: int = ox * q[7] - q[11]
                fx0: int = 0 if ix0 >= 0 else 0 - ix0
                fx1: int = q[9] if q[9] < w - ix0 else w - ix0
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
                            pa[k] = pa[k] + (px[r + k] ^ 0x80) - 0x80
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
                    py[o + k] = v
                    k += 1
                o += c
                ox += 1
            oy += 1
        b += 1
