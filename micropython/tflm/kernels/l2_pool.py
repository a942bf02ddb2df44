"""L2_POOL_2D (float32): the square root of the mean of the squares over
each pooling window.

Follows tensorflow/lite/micro/kernels/l2_pool_2d.cc (L2Prepare, L2Eval)
and tensorflow/lite/kernels/internal/reference/pooling.h (L2Pool): NHWC
float32 input and output (TFLM supports no other type), Pool2DOptions
padding, strides, filter size and fused activation; the window is
clipped to the input (padding as padding.h, as the other pools) and

    out = clamp(sqrtf(fl(sum of fl(v * v) in (filter_y, filter_x) order,
                         from 0.0) / count))

with count the in-bounds taps. Bit-exact: the sums run in f32.dot (the
input as both operands), the division in f32.vdiv, and sqrtf, which IEEE
754 rounds correctly, in _sqrt_clamp (f32_math.sqrt_word, SQRT's too:
word-size independent); then TFLM's ActivationFunctionWithMinMax (NaN
passes).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from . import f32
from .f32 import dot, vdiv
from .f32_math import sqrt_word

_POOL2D_OPTIONS = const(5)
_POOL2D_FILTER_HEIGHT = const(4)
_POOL2D_FILTER_WIDTH = const(3)
_POOL2D_FUSED_ACTIVATION_FUNCTION = const(5)
_POOL2D_PADDING = const(0)
_POOL2D_STRIDE_H = const(2)
_POOL2D_STRIDE_W = const(1)

# Geometry slots (array('i')): batches, height, width, channels, output
# height and width, strides (h, w), filter (h, w), padding (h, w).
_G_N = const(0)
_G_H = const(1)
_G_W = const(2)
_G_C = const(3)
_G_OH = const(4)
_G_OW = const(5)
_G_SH = const(6)
_G_SW = const(7)
_G_FH = const(8)
_G_FW = const(9)
_G_PH = const(10)
_G_PW = const(11)

_S_G = const(0)
_S_DOT = const(1)
_S_Q = const(2)
_S_X = const(3)
_S_Y = const(4)
_S_DIV = const(5)
_S_QD = const(6)
_S_CNT = const(7)
_S_ACT = const(8)


@micropython.viper
def _sqrt_clamp(y, o: int, n: int, q):
    """y[o + i] = clamp(sqrtf(y[o + i]), q[0], q[1]) for i < n (float32
    words; the inputs are >= 0, +inf or NaN, which pass)."""
    py = ptr32(y)
    pq = ptr32(q)
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)
    clo: int = pq[0]
    chi: int = pq[1]
    kl: int = clo & MAG
    if (clo >> 31) & 1:
        kl = 0 - kl
    kh: int = chi & MAG
    if (chi >> 31) & 1:
        kh = 0 - kh
    i: int = o
    end: int = o + n
    while i < end:
        w: int = py[i]
        a: int = w & MAG
        if a != 0 and a < INF and not ((w >> 31) & 1):
            sqrt_word(y, i)  # correctly rounded
            w = py[i]
        # clamp: min(max(x, lo), hi) by order keys; NaN passes
        a = w & MAG
        if a <= INF:
            kv: int = a
            if (w >> 31) & 1:
                kv = 0 - kv
            if kv < kl:
                w = clo
            elif kv > kh:
                w = chi
        py[i] = w
        i += 1


@micropython.viper
def _l2_pool(st):
    g = ptr32(st[_S_G])
    p = st[_S_DOT]
    pp = ptr32(p)
    q = st[_S_Q]
    x = st[_S_X]
    y = st[_S_Y]
    pd = st[_S_DIV]
    pdp = ptr32(pd)
    qd = st[_S_QD]
    cnt = st[_S_CNT]
    act = st[_S_ACT]
    H: int = g[_G_H]
    W: int = g[_G_W]
    C: int = g[_G_C]
    one: int = 1
    pp[3] = W * C   # x and w (the same input) step W * C per filter row
    pp[4] = W * C
    pp[5] = 1
    pp[9] = C       # and C per filter column
    pp[10] = C
    pp[11] = 0 - one
    pp[13] = C
    pp[14] = 1
    pp[15] = 1
    pp[16] = 1
    o: int = 0
    b: int = 0
    while b < g[_G_N]:
        oy: int = 0
        while oy < g[_G_OH]:
            iy0: int = oy * g[_G_SH] - g[_G_PH]
            fy0: int = 0 if iy0 >= 0 else 0 - iy0
            fy1: int = g[_G_FH] if g[_G_FH] < H - iy0 else H - iy0
            ox: int = 0
            while ox < g[_G_OW]:
                ix0: int = ox * g[_G_SW] - g[_G_PW]
                fx0: int = 0 if ix0 >= 0 else 0 - ix0
                fx1: int = g[_G_FW] if g[_G_FW] < W - ix0 else W - ix0
                start: int = ((b * H + iy0 + fy0) * W + ix0 + fx0) * C
                pp[0] = start
                pp[1] = start
                pp[2] = fy1 - fy0
                pp[8] = fx1 - fx0
                pp[12] = o
                dot(p, q, x, x, q, y)  # C sums of squares
                _i2f((fy1 - fy0) * (fx1 - fx0), cnt)
                pdp[0] = o
                pdp[4] = o
                vdiv(pd, qd, y, cnt, y)
                _sqrt_clamp(y, o, C, act)
                o += C
                ox += 1
            oy += 1
        b += 1


@micropython.viper
def _i2f(n: int, out):
    """out[0] = float32 bits of 0 < n < 2**24 (exact)."""
    e: int = 150
    one: int = 1
    while n < (one << 23):
        n = n << 1
        e -= 1
    ptr32(out)[0] = ((e - 1) << 23) + n


def prepare(op, ins, outs, ctx):
    """L2_POOL_2D.

    ins: [input float32 NHWC]; outs: [float32 NHWC, the input's batch and
    channels, the padding rule's height and width]. Pool2DOptions:
    padding, stride_w / stride_h, filter_width / filter_height (>= 1),
    fused activation. Raises PrepareError naming the op and tensor
    otherwise. Semantics: TFLM kernels/l2_pool_2d.cc,
    reference/pooling.h L2Pool.
    """
    from . import conv_util
    from ..heap import keep
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1 or outs[0] is None:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    f32.check_float(op, (x, y))
    for t in (x, y):
        conv_util.check_rank4(op, t, "input" if t is x else "output")
    if op.options_type != _POOL2D_OPTIONS:
        raise PrepareError("%s has no Pool2DOptions" % label)
    padding = op.opt_byte(_POOL2D_PADDING, 0)
    sw, sh = op.opt_int(_POOL2D_STRIDE_W, 0), op.opt_int(_POOL2D_STRIDE_H, 0)
    fw = op.opt_int(_POOL2D_FILTER_WIDTH, 0)
    fh = op.opt_int(_POOL2D_FILTER_HEIGHT, 0)
    act = op.opt_byte(_POOL2D_FUSED_ACTIVATION_FUNCTION, 0)
    n, h, w, c = x.shape
    oh = conv_util.out_size(padding, h, fh, sh, 1)
    ow = conv_util.out_size(padding, w, fw, sw, 1)
    if oh is None or ow is None or min(fw, fh) < 1:
        raise PrepareError("%s: bad padding %d, strides %dx%d or filter "
                           "%dx%d" % (label, padding, sh, sw, fh, fw))
    if tuple(y.shape) != (n, oh, ow, c) or oh < 1 or ow < 1:
        raise PrepareError("%s: output %s shape %s, expected %s"
                           % (label, y.label(), tuple(y.shape),
                              (n, oh, ow, c)))
    ph = conv_util.pad_before(sh, 1, h, fh, oh)
    pw = conv_util.pad_before(sw, 1, w, fw, ow)
    if max(ph, pw) > 32767:  # TFLM's PaddingValues are int16_t
        raise PrepareError("%s: padding (%d, %d) exceeds 32767"
                           % (label, ph, pw))
    g = array("i", (n, h, w, c, oh, ow, sh, sw, fh, fw, ph, pw))
    lo, hi = f32.act_range(act)
    # dot: squares summed from 0.0, no clamp; vdiv: by the tap count
    # (cnt[0]), no clamp; _sqrt_clamp: the activation's clamp
    q = f32.consts(f32.ZERO, f32.NEG_INF, f32.INF)
    pd = f32.slots(f32.VDIV_SLOTS)
    pd[1] = 1
    pd[5] = c
    return _l2_pool, (keep(ctx, g), f32.slots(f32.DOT_SLOTS), keep(ctx, q),
                      f32.words(x, ctx), y.data, pd,
                      keep(ctx, f32.consts(f32.NEG_INF, f32.INF)),
                      f32.consts(0), keep(ctx, f32.consts(lo, hi)))
