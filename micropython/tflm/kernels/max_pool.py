"""MAX_POOL_2D, int8 NHWC: pooling_prep.py's checks and geometry with the max
loop of tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h
(MaxPool: the window clipped to the input, the maximum clamped to the
fused activation range).
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


def prepare(op, ins, outs, ctx):
    """Check a MAX_POOL_2D op and bind its eval (pooling_prep.prepare_with,
    construction only)."""
    from .pooling_prep import prepare_with
    return prepare_with(op, ins, outs, ctx, _max_pool, _eval, False)


# eval's state: (loop, acc, x, y, parameters, channels); the slots it only
# passes to the loop, which casts them to pointers: a compiled model stores
# there the address of its view of the arena or the model, an int, no
# object (compiled.py T_ADDR).
ADDRESSES = (1, 2, 3, 4)


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
