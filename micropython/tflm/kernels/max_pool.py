"""MAX_POOL_2D, int8 NHWC: pooling_prep.py's checks and geometry with the max
loop of tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h
(MaxPool: the window clipped to the input, the maximum clamped to the
fused activation range).
"""

import micropython


def prepare(op, ins, outs, ctx):
    """Check a MAX_POOL_2D op and bind its eval (pooling_prep.prepare_with,
    construction only)."""
    from .pooling_prep import prepare_with
    return prepare_with(op, ins, outs, ctx, _max_pool, _eval, False)


def _eval(state):
    fn, acc, xd, yd, p, c = state
    fn(xd, yd, acc, p, 0, c)


@micropython.viper
def _max_pool(x, y, acc, p, c0: int, cn: int):
    """Max pool of channels [c0, c0 + cn), acc: int32 scratch >= cn."""
    px = ptr8(x)
    py = ptr8(y)
    pa = ptr32(acc)
    q = ptr32(p)
    h: int = q[1]
    w: int = q[2]
    c: int = q[3]
    one: int = 1
    S: int = one << 31
    lo: int = (q[12] ^ S) - S
    hi: int = (q[13] ^ S) - S
    nb: int = q[0]
    oh: int = q[4]
    ow: int = q[5]
    b: int = 0
    o: int = c0
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
                    pa[k] = 0  # values are kept biased by +128: 0 is -128
                    k += 1
                fy: int = fy0
                while fy < fy1:
                    r: int = ((b * h + iy0 + fy) * w + ix0 + fx0) * c + c0
                    fx: int = fx0
                    while fx < fx1:
                        k = 0
                        while k < cn:
                            v: int = px[r + k] ^ 0x80
                            if v > pa[k]:
                                pa[k] = v
                            k += 1
                        r += c
                        fx += 1
                    fy += 1
                k = 0
                while k < cn:
                    v = pa[k] - 0x80
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
