"""SOFTMAX, int16 input -> int16 output (16x8 models): the eval, imported
by softmax16_prep (its prepare and TFLM's two tables, construction only).

Follows tensorflow/lite/micro/kernels/softmax.cc, softmax_common.cc
(CalculateSoftmaxParams, InitializeLutForInt16) and
reference_ops::SoftmaxInt16 (kernels/internal/reference/softmax.h) with
LUTLookup (kernels/internal/common.h). Per row of the last dimension:

    mx = max(x)
    d = MultiplyByQuantizedMultiplier(x - mx, input_multiplier, shift)
    e = LUT(exp_lut, clamp(d + 32767, int16))     (written to the output)
    sum = sum of e; h = CountLeadingZeros(sum)
    s = ((sum << (h - 1)) + 2**13) >> 14
    r = LUT(one_over_one_plus_x_lut, min(s - 98304, 32767))
    y = clamp((e * r + 2**(30 - h)) >> (31 - h), 0, 32767)

LUT(t, v) = t[256 + (v >> 7)] + ((slope * (v & 127) + 64) >> 7), slope
= t[i + 1] - t[i] (int16 wraps as C's). The two 513-entry int16 tables
are in the arena's persistent part; x - mx is rescaled chunk by chunk in
ctx.scratch by rescale.scale_i32. int16 values are read and written as
byte pairs (any alignment).
"""

import micropython
from micropython import const

from .rescale import scale_i32

# state slots and parameter words (softmax16_prep builds them)
_S_X = const(0)
_S_Y = const(1)
_S_P = const(2)
_S_EXP = const(3)
_S_INV = const(4)
_S_BUF = const(5)
_S_M = const(6)
_S_S = const(7)
_P_ROWS = const(0)
_P_DEPTH = const(1)
_P_STEP = const(2)


def _eval(st):
    _softmax16(st[_S_X], st[_S_Y], st)


@micropython.viper
def _softmax16(x, y, st):
    px = ptr8(x)
    py = ptr8(y)
    p = ptr32(st[_S_P])
    pe = ptr16(st[_S_EXP])
    pi = ptr16(st[_S_INV])
    buf = st[_S_BUF]
    pb = ptr32(buf)
    m = st[_S_M]
    s = st[_S_S]
    rows: int = p[_P_ROWS]
    depth: int = p[_P_DEPTH]
    step: int = p[_P_STEP]
    one: int = 1
    S: int = one << 31
    h30: int = one << 30
    off: int = 0  # byte offset of the row
    r: int = 0
    while r < rows:
        end: int = off + 2 * depth
        mx: int = -32768
        j: int = off
        while j < end:
            v: int = ((px[j] | (px[j + 1] << 8)) ^ 0x8000) - 0x8000
            if v > mx:
                mx = v
            j += 2
        total: int = 0
        c: int = off
        while c < end:
            n: int = (end - c) >> 1
            if n > step:
                n = step
            k: int = 0
            while k < n:
                j = c + 2 * k
                pb[k] = (((px[j] | (px[j + 1] << 8)) ^ 0x8000) - 0x8000) - mx
                k += 1
            scale_i32(buf, n, m, s, 0)
            k = 0
            while k < n:
                v = ((pb[k] ^ S) - S) + 32767
                if v > 32767:
                    v = 32767
                elif v < -32768:
                    v = -32768
                i: int = 256 + (v >> 7)
                b: int = ((pe[i] ^ 0x8000) - 0x8000)
                sl: int = (((pe[i + 1] - b) & 0xFFFF) ^ 0x8000) - 0x8000
                e: int = ((((b + ((sl * (v & 0x7F) + 64) >> 7)) & 0xFFFF)
                          ^ 0x8000) - 0x8000)
                j = c + 2 * k
                py[j] = e
                py[j + 1] = e >> 8
                total += e
                k += 1
            c += 2 * n
        # CountLeadingZeros(sum); sum >= 1 (the row's max gives 32767)
        h: int = 1
        t: int = total
        while t < h30:
            t = t << 1
            h += 1
        v = (t >> 14) + ((t >> 13) & 1) - 98304  # no overflow at 2**31
        if v > 32767:
            v = 32767
        i = 256 + (v >> 7)
        b = ((pi[i] ^ 0x8000) - 0x8000)
        sl = (((pi[i + 1] - b) & 0xFFFF) ^ 0x8000) - 0x8000
        rec: int = ((((b + ((sl * (v & 0x7F) + 64) >> 7)) & 0xFFFF)
                    ^ 0x8000) - 0x8000)
        rs: int = 31 - h
        rnd: int = one << (rs - 1)
        j = off
        while j < end:
            e = ((py[j] | (py[j + 1] << 8)) ^ 0x8000) - 0x8000
            v = (e * rec + rnd) >> rs
            if v < 0:
                v = 0
            elif v > 32767:
                v = 32767
            py[j] = v
            py[j + 1] = v >> 8
            j += 2
        off = end
        r += 1
