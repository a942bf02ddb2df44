"""AVERAGE_POOL_2D, MAX_POOL_2D and MEAN on float32 tensors.

Pooling follows tensorflow/lite/kernels/internal/reference/pooling.h
(float AveragePool, MaxPool) as micro/kernels/pooling.cc calls them: the
window is clipped to the input; the average is
fl(sum of the in-bounds taps in (filter_y, filter_x) order) / count
(float division by the number of in-bounds taps); the max is the
std::max chain from std::numeric_limits<float>::lowest() (NaN inputs never
win, -0.0 and 0.0 keep the first seen); both are clamped to the fused
activation range (ActivationFunctionWithMinMax). Padding and output size
follow padding.h, as for the int8 kernels.

MEAN follows micro/kernels/reduce_common.cc (EvalMeanHelper) with
reference_ops::Mean (kernels/internal/reference/reduce.h): every output
is fl(sum of its reduced inputs in row-major order, from 0.0) divided by
(float) the number of reduced elements; the 4-D keep_dims mean over axes
1 and 2 that TFLM special-cases sums in the same order.

Arithmetic: f32.dot / f32.vdiv (bit-exact float32, see f32.py).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from . import f32
from .f32 import dot, vdiv

_FLOAT32 = const(0)
_INT32 = const(2)
_MAX_POOL_2D = const(17)

_POOL2D_OPTIONS = const(5)
_REDUCER_OPTIONS = const(27)
_POOL2D_FILTER_HEIGHT = const(4)
_POOL2D_FILTER_WIDTH = const(3)
_POOL2D_FUSED_ACTIVATION_FUNCTION = const(5)
_POOL2D_PADDING = const(0)
_POOL2D_STRIDE_H = const(2)
_POOL2D_STRIDE_W = const(1)
_REDUCER_KEEP_DIMS = const(0)


def prepare_pool(op, ins, outs, ctx):
    """Float32 AVERAGE_POOL_2D / MAX_POOL_2D (called by pooling.prepare).

    ins: [input float32 NHWC]; outs: [float32 NHWC] with the batch and
    channels of the input and the padding rule's height and width.
    Pool2DOptions: padding, stride_w, stride_h, filter_w, filter_h,
    activation. Raises PrepareError.
    """
    from . import conv_util
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
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
                           % (label, y.label(), y.shape, [n, oh, ow, c]))
    ph = conv_util.pad_before(sh, 1, h, fh, oh)
    pw = conv_util.pad_before(sw, 1, w, fw, ow)
    if max(ph, pw) > 32767:  # TFLM's PaddingValues are int16_t
        raise PrepareError("%s: padding (%d, %d) exceeds 32767"
                           % (label, ph, pw))
    g = array("i", (n, h, w, c, oh, ow, sh, sw, fh, fw, ph, pw))
    lo, hi = f32.act_range(act)
    # read-only for eval: kept in the tail (ADDRESSES)
    g = conv_util.keep(ctx, g)
    if op.code == _MAX_POOL_2D:
        return _max_pool, (g, conv_util.keep(ctx, f32.consts(lo, hi)),
                           f32.words(x, ctx), y.data)
    # dot sums with weight 1.0 (stride 0) and no clamp; vdiv divides by
    # the tap count (tmp[0]) and clamps.
    q = conv_util.keep(ctx, f32.consts(f32.ZERO, f32.NEG_INF, f32.INF,
                                       f32.ONE))
    pd = f32.slots(f32.VDIV_SLOTS)
    pd[1] = 1
    pd[5] = c
    return _avg_pool, (g, f32.slots(f32.DOT_SLOTS), q, f32.words(x, ctx),
                       y.data, pd,
                       f32.consts(lo, hi), f32.consts(0))


@micropython.viper
def _i2f(n: int, out):
    """out[0] = float32 bits of 0 < n < 2**24 (exact). Stored, not
    returned: bits above 2**30 would be a heap int on 32-bit ports."""
    e: int = 150
    one: int = 1
    while n < (one << 23):
        n = n << 1
        e -= 1
    ptr32(out)[0] = ((e - 1) << 23) + n


# Geometry slots: 0 N, 1 H, 2 W, 3 C, 4 OH, 5 OW, 6 SH, 7 SW, 8 FH, 9 FW,
# 10 PH, 11 PW.

# The slots of the states below (_max_pool's, _avg_pool's, _mean's) that
# eval only casts to pointers: a compiled model stores there the address
# of its view of the arena or the model, an int, no object (compiled.py
# T_ADDR).
ADDRESSES = (0, 1, 2, 3)


@micropython.viper
def _avg_pool(st):
    g = ptr32(st[0])
    p = st[1]
    pp = ptr32(p)
    q = st[2]
    x = st[3]
    y = st[4]
    pd = st[5]
    pdp = ptr32(pd)
    qd = st[6]
    cnt = st[7]
    H: int = g[1]
    W: int = g[2]
    C: int = g[3]
    one: int = 1
    pp[1] = 3  # w: q[3] = 1.0 with stride 0
    pp[3] = W * C
    pp[4] = 0
    pp[5] = 1
    pp[9] = C
    pp[10] = 0
    pp[11] = 0 - one
    pp[13] = C
    pp[14] = 1
    pp[15] = 1
    o: int = 0
    b: int = 0
    while b < g[0]:
        oy: int = 0
        while oy < g[4]:
            iy0: int = oy * g[6] - g[10]
            fy0: int = 0 if iy0 >= 0 else 0 - iy0
            fy1: int = g[8] if g[8] < H - iy0 else H - iy0
            ox: int = 0
            while ox < g[5]:
                ix0: int = ox * g[7] - g[11]
                fx0: int = 0 if ix0 >= 0 else 0 - ix0
                fx1: int = g[9] if g[9] < W - ix0 else W - ix0
                pp[0] = ((b * H + iy0 + fy0) * W + ix0 + fx0) * C
                pp[2] = fy1 - fy0
                pp[8] = fx1 - fx0
                pp[12] = o
                dot(p, q, x, q, q, y)  # C sums, the input moves 1 per sum
                _i2f((fy1 - fy0) * (fx1 - fx0), cnt)
                pdp[0] = o
                pdp[4] = o
                vdiv(pd, qd, y, cnt, y)
                o += C
                ox += 1
            oy += 1
        b += 1


@micropython.viper
def _max_pool(st):
    g = ptr32(st[0])
    q = ptr32(st[1])
    px = ptr32(st[2])
    py = ptr32(st[3])
    H: int = g[1]
    W: int = g[2]
    C: int = g[3]
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    lo: int = q[0]
    hi: int = q[1]
    # Order keys: the magnitude, negated for negative numbers (-0 == 0).
    kl: int = lo & MAG
    if (lo >> 31) & 1:
        kl = 0 - kl
    kh: int = hi & MAG
    if (hi >> 31) & 1:
        kh = 0 - kh
    lowest: int = INF - 1 + (one << 31)  # bits of -FLT_MAX
    o: int = 0
    b: int = 0
    while b < g[0]:
        oy: int = 0
        while oy < g[4]:
            iy0: int = oy * g[6] - g[10]
            fy0: int = 0 if iy0 >= 0 else 0 - iy0
            fy1: int = g[8] if g[8] < H - iy0 else H - iy0
            ox: int = 0
            while ox < g[5]:
                ix0: int = ox * g[7] - g[11]
                fx0: int = 0 if ix0 >= 0 else 0 - ix0
                fx1: int = g[9] if g[9] < W - ix0 else W - ix0
                k: int = 0
                while k < C:
                    m: int = lowest
                    km: int = 0 - (INF - 1)
                    fy: int = fy0
                    while fy < fy1:
                        i: int = ((b * H + iy0 + fy) * W + ix0 + fx0) * C + k
                        fx: int = fx0
                        while fx < fx1:
                            v: int = px[i]
                            kv: int = v & MAG
                            # std::max(m, v) = m < v ? v : m; NaN never wins
                            if kv <= INF:
                                if (v >> 31) & 1:
                                    kv = 0 - kv
                                if km < kv:
                                    m = v
                                    km = kv
                            i += C
                            fx += 1
                        fy += 1
                    if km < kl:
                        m = lo
                        km = kl
                    if kh < km:
                        m = hi
                    py[o + k] = m
                    k += 1
                o += C
                ox += 1
            oy += 1
        b += 1


def prepare_mean(op, ins, outs, ctx):
    """Float32 MEAN (the MEAN registry entry).

    ins: [input float32, axis: constant int32 tensor (any count, negative
    axes count from the end, repeats ignored)]; outs: [float32 of the
    input shape with the reduced axes set to 1 (keep_dims) or removed].
    ReducerOptions: keep_dims. At most three groups of non-adjacent
    reduced axes. Raises PrepareError (int8 MEAN is not supported yet).
    """
    label = op.label()
    if len(ins) != 2 or None in ins or len(outs) != 1:
        raise PrepareError("%s needs input, axis and one output" % label)
    x, axis, y = ins[0], ins[1], outs[0]
    if x.type != _FLOAT32:
        raise PrepareError("%s: input %s is %s; only float32 MEAN is "
                           "supported" % (label, x.label(), x.dtype))
    f32.check_float(op, (y,))
    if axis.type != _INT32 or not axis.is_const:
        raise PrepareError("%s: axis %s must be a constant int32 tensor"
                           % (label, axis.label()))
    rank = len(x.shape)
    axes = []
    for a in ctx.const_ints(op, axis, "axis"):
        if not -rank <= a < rank:
            raise PrepareError("%s: axis %d out of range for rank %d"
                               % (label, a, rank))
        a %= rank if rank else 1
        if a not in axes:
            axes.append(a)
    keep = (op.opt_byte(_REDUCER_KEEP_DIMS, 0)
            if op.options_type == _REDUCER_OPTIONS else 0)
    want = tuple(1 if i in axes else d for i, d in enumerate(x.shape)
                 if keep or i not in axes)
    if tuple(y.shape) != want:
        raise PrepareError("%s: output %s shape %s, expected %s"
                           % (label, y.label(), y.shape, want))
    loops, bases, count = _mean_plan(op, x.shape, axes)
    p = f32.slots(f32.DOT_SLOTS)
    p[1] = 3  # weight q[3] = 1.0, stride 0
    p[11] = -1
    for j, (n, s) in enumerate(loops):  # outermost first -> slots 2, 5, 8
        p[2 + 3 * (3 - len(loops) + j)] = n
        p[3 + 3 * (3 - len(loops) + j)] = s
    for j in range(3 - len(loops)):
        p[2 + 3 * j] = 1
    q = f32.consts(f32.ZERO, f32.NEG_INF, f32.INF, f32.ONE)
    pd = f32.slots(f32.VDIV_SLOTS)
    pd[1] = 1
    pd[5] = y.size
    cnt = f32.consts(f32.bits(float(count)) if count else f32.ONE)
    return _mean, (p, q, f32.words(x, ctx), y.data, bases, y.size, pd,
                   f32.consts(f32.NEG_INF, f32.INF), cnt)


def _mean_plan(op, shape, axes):
    """([(count, stride)] loops over the reduced elements, outermost first,
    adjacent reduced axes merged; array('i') of each output's first input
    element; the number of reduced elements)."""
    rank = len(shape)
    strides = [1] * rank
    for i in range(rank - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    loops = []
    count = 1
    prev = -2
    for i in range(rank):
        if i in axes:
            if prev == i - 1 and loops:
                n, _ = loops[-1]
                loops[-1] = (n * shape[i], strides[i])
            else:
                loops.append((shape[i], strides[i]))
            prev = i
            count *= shape[i]
    if len(loops) > 3:
        raise PrepareError("%s: more than three separate groups of reduced "
                           "axes %s" % (op.label(), sorted(axes)))
    bases = [0]
    for i in range(rank):
        if i not in axes:
            bases = [b + k * strides[i] for b in bases
                     for k in range(shape[i])]
    return loops, array("i", bases), count


@micropython.viper
def _mean(st):
    p = st[0]
    pp = ptr32(p)
    q = st[1]
    x = st[2]
    y = st[3]
    bases = ptr32(st[4])
    n: int = int(st[5])
    o: int = 0
    while o < n:
        pp[0] = bases[o]
        pp[12] = o
        dot(p, q, x, q, q, y)
        o += 1
    vdiv(st[6], st[7], y, st[8], y)
