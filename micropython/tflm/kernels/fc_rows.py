"""Integer FullyConnected sums into int32 words, for the recurrent kernels:
the LSTM's gate matmuls (lstm_int8.py) and SVDF's feature matmul
(svdf.py), which requantize them their own way.

Follows the sum of tensorflow/lite/kernels/internal/reference/
integer_ops/fully_connected.h (FullyConnected: acc = bias[u] +
sum_d (w[u, d] + weights_offset) * (x[b, d] + input_offset), int32):

    out[r * units + u] = wrap32(sum_d (w[u, d] + wo) * (x[x0 + r * depth
                                + d] + xo) (+ bias[u]))

for each row r. Each row's v = x + xo are gathered once into the
window (a work buffer after mac.dots's block), then FULLY_CONNECTED's
loop, mac.dots (thumb.py's machine code on Cortex-M, mac.py's viper
elsewhere), sums them with every unit's weight bytes xor 0x80 (w + 128)
at 5.5 instructions per multiply-accumulate on armv6m;
(wo - 128) * sum v is its BASE. int8 x and w at any address; bias and
out int32 words (aligned).
"""

import micropython
from micropython import const

from ..heap import persistent
from . import DSP, THUMB, WORD

# The loop: Thumb machine code on Cortex-M, viper elsewhere (THUMB)
mac = None
if THUMB:
    try:
        if DSP:  # Cortex-M4/M7/M33: SXTB16 and SMLAD
            from . import thumb_dsp as mac
        else:
            from . import thumb as mac
    except (ImportError, SyntaxError, ValueError):
        mac = None
if mac is None:
    from . import mac
dots = mac.dots

# The parameter block (params()), int32 words: X0 the first row's offset
# in x (word 0: the caller moves it between calls); ROWS; DEPTH (values
# per row of x and w); UNITS; XO, WO: the offsets added to each x and w
# (-zero points; a caller may change WO, word 6, between calls);
# HAS_BIAS; REL: 1 on 64-bit ports (mac.py).
_X0 = const(0)
_ROWS = const(1)
_DEPTH = const(2)
_UNITS = const(3)
_XO = const(4)
_HAS_BIAS = const(5)
_WO = const(6)
_REL_FLAG = const(7)
_PARAMS = const(8)
# int32 words before the gathered values in the window: the block that
# mac.dots reads (DOTS_BLOCK in thumb.py, then REL), by name
_D_V = const(0)
_D_V8 = const(1)
_D_VE = const(2)
_D_WP = const(3)
_D_WS = const(4)
_D_BP = const(5)
_D_BASE = const(6)
_D_OUT = const(7)
_D_NF = const(8)
_REL = const(9)
_BLK = const(10)


def params(ctx, rows, depth, units, x_offset, w_offset, has_bias):
    """The parameter block of rows() (int32 words in the persistent
    arena): rows x units sums over depth values, x_offset and w_offset
    added to each x and w (TFLM's input_offset / weights_offset: -zero
    points), the bias added when has_bias; X0 starts at 0."""
    p = persistent(ctx, "i", _PARAMS)
    for k, v in ((_ROWS, rows), (_DEPTH, depth), (_UNITS, units),
                 (_XO, x_offset), (_WO, w_offset),
                 (_HAS_BIAS, 1 if has_bias else 0),
                 (_REL_FLAG, WORD // 8)):
        p[k] = v
    return p


def window(ctx, depth):
    """The work buffer rows() gathers a row of up to depth values into,
    after mac.dots's block (scratch planned into the arena's head)."""
    return ctx.work(_BLK + depth)


@micropython.viper
def rows(x, w, bias, out, fc, win, dots):
    """out[r * UNITS + u] = wrap32(sum_d (w[u * DEPTH + d] + WO) *
    (x[X0 + r * DEPTH + d] + XO) (+ bias[u] when HAS_BIAS)) for r < ROWS,
    u < UNITS (fc: params(); win: window() of at least DEPTH values;
    dots: this module's dots). x, w: int8 bytes at any address; bias,
    out: int32 words."""
    q = ptr32(fc)
    blk = ptr32(win)
    one: int = 1
    S: int = one << 31
    x0: int = int(ptr8(x)) + q[_X0]
    nr: int = q[_ROWS]
    depth: int = q[_DEPTH]
    units: int = q[_UNITS]
    xo: int = ((q[_XO] ^ S) - S) - 128  # x bytes are read as x + 128
    has_b: int = q[_HAS_BIAS]
    wo: int = ((q[_WO] ^ S) - S) - 128
    w0: int = int(ptr8(w))
    pb: int = int(ptr32(bias))
    po: int = int(ptr32(out))
    r0: int = 0  # addresses in the block are relative to r0 (mac.py)
    if q[_REL_FLAG]:
        r0 = int(blk)
    blk[_REL] = q[_REL_FLAG]
    v0: int = int(blk) + 4 * _BLK
    r: int = 0
    while r < nr and units > 0:
        s: int = 0
        va: int = v0
        xa: int = x0 + r * depth
        xe: int = xa + depth
        while xa < xe:
            v: int = (ptr8(xa)[0] ^ 0x80) + xo
            ptr32(va)[0] = v
            s += v
            va += 4
            xa += 1
        o: int = po + 4 * r * units
        if has_b:
            blk[_D_BP] = pb - r0
        else:
            k: int = 0
            while k < units:
                ptr32(o)[k] = 0
                k += 1
            blk[_D_BP] = o - r0
        blk[_D_V] = v0 - r0
        blk[_D_V8] = v0 + 4 * (depth & ~7) - r0
        blk[_D_VE] = v0 + 4 * depth - r0
        blk[_D_WP] = w0 - r0
        blk[_D_WS] = depth
        blk[_D_BASE] = wo * s
        blk[_D_OUT] = o - r0
        blk[_D_NF] = units
        dots(win, 0)
        r += 1
