"""RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR.

Follows tensorflow/lite/micro/kernels/resize_nearest_neighbor.cc and
resize_bilinear.cc with kernels/internal/reference/
resize_nearest_neighbor.h (ResizeNearestNeighbor, GetNearestNeighbor)
and resize_bilinear.h (ResizeBilinearInteger for int8, ResizeBilinear
for float32). Input [B, H, W, C], a constant int32 size tensor [2] =
(OH, OW), output [B, OH, OW, C] of the input's type (values are not
requantized: TFLM copies / interpolates the int8 codes as they are).

Everything that depends only on the sizes is computed at prepare into
per-row and per-column tables (OH + OW entries), so eval has no float
math and no division:

- nearest neighbor: TFLM picks the source index with float32 math,
  scale = in / out (or (in - 1) / (out - 1) with align_corners and
  out > 1), then floor (or round half away from zero with align_corners)
  of (i + 0.5 if half_pixel_centers else i) * scale. Prepare repeats each
  float32 rounding exactly with integers (quant.round_bits to 24 bits). Any
  element type is a byte copy: float32, int8 and int16 as TFLM.
- bilinear, int8: TFLM's integer algorithm, scales in 1/1024 units,
  the four weights' products rounded by (s +- 2**19) / 2**20 (truncating
  division: TFLM's default double-rounding build).
- bilinear, float32 (ResizeBilinear<float>): the row / column weights
  are float32 bit patterns computed at prepare with every float32
  rounding of TFLM's code; eval runs TFLM's per-pixel expression with
  f32.vec (integer IEEE-754 arithmetic, see f32.py).
"""

from array import array

import micropython
from micropython import const

from ..heap import zeros
from ..errors import PrepareError

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)
_RESIZE_BILINEAR = const(23)

_NN_TYPES = (_FLOAT32, _INT8, _INT16)
MAX_DIM = 1 << 20  # TFLM's (1 << 10) * size must fit int32
# BuiltinOptions members: TFLM reads align_corners / half_pixel_centers
# only from a table of the op's own type (else both false).
_RESIZE_BILINEAR_OPTIONS = const(15)
_RESIZE_NEAREST_NEIGHBOR_OPTIONS = const(74)
_RESIZE_BILINEAR_ALIGN_CORNERS = const(2)
_RESIZE_BILINEAR_HALF_PIXEL_CENTERS = const(3)
_RESIZE_NEAREST_NEIGHBOR_ALIGN_CORNERS = const(0)
_RESIZE_NEAREST_NEIGHBOR_HALF_PIXEL_CENTERS = const(1)


def _flags(op, want, f_align, f_half):
    """(align_corners, half_pixel_centers) from fields f_align, f_half of
    the options if they are of union type want, else (False, False)."""
    if op.options_type != want:
        return False, False
    return op.opt_byte(f_align, 0) != 0, op.opt_byte(f_half, 0) != 0


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def _check(op, ins, outs, ctx, types):
    """Common checks; returns (input, output, oh, ow)."""
    if len(ins) != 2 or len(outs) != 1:
        _fail(op, "expected 2 inputs and 1 output, got %d and %d"
              % (len(ins), len(outs)))
    x, size, y = ins[0], ins[1], outs[0]
    if x is None or size is None or y is None:
        _fail(op, "missing input or output tensor")
    if len(x.shape) != 4:
        _fail(op, "input %s has shape %s, expected rank 4"
              % (x.label(), x.shape))
    if x.type not in types:
        _fail(op, "input %s has unsupported type %s" % (x.label(), x.dtype))
    if y.type != x.type:
        _fail(op, "output %s is %s, input %s is %s"
              % (y.label(), y.dtype, x.label(), x.dtype))
    if size.type != _INT32 or len(size.shape) != 1 \
            or size.shape[0] != 2:
        _fail(op, "size %s must be an int32 tensor of shape [2]"
              % size.label())
    if not size.is_const:
        _fail(op, "size %s is not constant (TFLM requires it)"
              % size.label())
    oh, ow = ctx.const_ints(op, size, "size")
    b, h, w, c = x.shape
    want = (b, oh, ow, c)
    if tuple(y.shape) != want:
        _fail(op, "output %s has shape %s, expected %s"
              % (y.label(), tuple(y.shape), want))
    if min(b, h, w, c, oh, ow) < 1 \
            or max(h, w, oh, ow) >= MAX_DIM:
        _fail(op, "input %s shape %s or size (%d, %d) out of range"
              % (x.label(), x.shape, oh, ow))
    return x, y, oh, ow


def _f32_floor(m, e, nearest):
    """floor(m * 2**e), or round half away from zero, for m * 2**e >= 0."""
    if e >= 0:
        return m << e
    if nearest:
        return (m + (1 << (-e - 1))) >> -e
    return m >> -e


def nearest_index(i, in_size, out_size, align, half):
    """GetNearestNeighbor (resize_nearest_neighbor.h) with float32 math
    reproduced exactly in integers: the source index of output index i."""
    from .. import quant
    if align and out_size > 1:
        num, den = in_size - 1, out_size - 1
    else:
        num, den = in_size, out_size
    # scale = float(num) / float(den), rounded to float32
    scale = quant.round_bits(num, den, 24) if num else quant.ZERO
    # (i + offset) * scale, one float32 rounding (i + 0.5 is exact)
    t = (2 * i + 1, -1) if half else (i, 0)
    m, e = quant.mul(t, scale, 24)
    v = min(_f32_floor(m, e, align), in_size - 1)
    if half:
        v = max(0, v)
    return v


def prepare_nearest(op, ins, outs, ctx):
    """RESIZE_NEAREST_NEIGHBOR: float32, int8 or int16 (a byte copy).

    ins: [input [B,H,W,C], size int32 [2] constant]; outs: [output
    [B,OH,OW,C]]. ResizeNearestNeighborOptions: align_corners (0),
    half_pixel_centers (1); both may be set, as TFLM allows. Raises
    PrepareError for other types, ranks, a non-constant size or an
    output shape that does not match the size.
    """
    from . import conv_util
    x, y, oh, ow = _check(op, ins, outs, ctx, _NN_TYPES)
    align, half = _flags(op, _RESIZE_NEAREST_NEIGHBOR_OPTIONS,
                         _RESIZE_NEAREST_NEIGHBOR_ALIGN_CORNERS,
                         _RESIZE_NEAREST_NEIGHBOR_HALF_PIXEL_CENTERS)
    b, h, w, c = x.shape
    cb = c * x.itemsize
    ytab = array("i", (nearest_index(i, h, oh, align, half) * w * cb
                       for i in range(oh)))
    xtab = array("i", (nearest_index(i, w, ow, align, half) * cb
                       for i in range(ow)))
    p = array("i", (b, oh, ow, cb, h * w * cb))
    k = conv_util.keep
    return _nearest, (k(ctx, p), k(ctx, ytab), k(ctx, xtab), x.data, y.data)


@micropython.viper
def _nearest(st):
    """Copy cb bytes per output pixel from the tabled source pixel; an
    output row whose source row equals the previous one's is a copy of
    the previous output row. Bytes only: input may be model data."""
    p = ptr32(st[0])
    yt = ptr32(st[1])
    xt = ptr32(st[2])
    src: int = int(ptr8(st[3]))
    o = ptr8(st[4])
    B: int = p[0]
    OH: int = p[1]
    OW: int = p[2]
    CB: int = p[3]
    BS: int = p[4]
    orow: int = OW * CB
    k: int = 0  # output byte offset
    b: int = 0
    while b < B:
        y: int = 0
        while y < OH:
            if y > 0 and yt[y] == yt[y - 1]:
                i: int = k - orow
                e: int = k + orow
                while k < e:
                    o[k] = o[i]
                    k += 1
                    i += 1
            else:
                r: int = src + yt[y]
                x: int = 0
                while x < OW:
                    a = ptr8(r + xt[x])
                    j: int = 0
                    while j < CB:
                        o[k] = a[j]
                        k += 1
                        j += 1
                    x += 1
            y += 1
        src += BS
        b += 1


def _interp(i, in_size, scale_10, half):
    """ComputeInterpolationValuesInteger: (lower, upper, frac) with frac =
    scaled - 1024 * lower (1/1024 units, may be negative near the first
    row with half_pixel_centers)."""
    s = i * scale_10
    if half:
        s += scale_10 // 2 - (1 << 9)
    lo = max(_cdiv(s, 1 << 10), 0)
    hi = min(_cdiv(s + (1 << 10) - 1, 1 << 10), in_size - 1)
    if lo > in_size - 1:
        # TFLM's lower index passes the last input row / column when
        # scale_10 rounded up enough, e.g. the last output index of 1 -> 65
        # (scale_10 16, 64 * 16 = 1024) or of 1 -> 62 (17 * 61 > 1024).
        # TFLM then reads the pixel after the row / column with (almost)
        # full weight: the next row's or batch's, or past the tensor
        # (arena garbage). Not reproduced: the last one, weight 1024.
        return in_size - 1, in_size - 1, 0
    return lo, hi, s - (lo << 10)


def _cdiv(a, b):
    """C integer division (truncates toward zero), b > 0."""
    return a // b if a >= 0 else -((-a) // b)


def _scale_10(in_size, out_size, align):
    if align and out_size > 1:
        n, d = in_size - 1, out_size - 1
    else:
        n, d = in_size, out_size
    return ((1 << 10) * n + d // 2) // d if d else 0


def bilinear_tables(in_size, out_size, stride, align, half):
    """array('i') of (lower * stride, upper * stride, 1024 - frac, frac)
    per output index."""
    s10 = _scale_10(in_size, out_size, align)
    t = zeros("i", 4 * out_size)
    for i in range(out_size):
        lo, hi, f = _interp(i, in_size, s10, half)
        t[4 * i] = lo * stride
        t[4 * i + 1] = hi * stride
        t[4 * i + 2] = (1 << 10) - f
        t[4 * i + 3] = f
    return t


def prepare_bilinear(op, ins, outs, ctx):
    """RESIZE_BILINEAR, int8 (ResizeBilinearInteger) or float32
    (ResizeBilinear<float>, see prepare_bilinear_f32).

    ins: [input [B,H,W,C], size int32 [2] constant]; outs: [output
    [B,OH,OW,C]] of the input's type. ResizeBilinearOptions:
    align_corners (2), half_pixel_centers (3); setting both is rejected,
    as TFLM does. Raises PrepareError for other types, ranks, a
    non-constant size or a mismatched output shape.
    """
    from . import conv_util
    x, y, oh, ow = _check(op, ins, outs, ctx, (_INT8, _FLOAT32))
    align, half = _flags(op, _RESIZE_BILINEAR_OPTIONS,
                         _RESIZE_BILINEAR_ALIGN_CORNERS,
                         _RESIZE_BILINEAR_HALF_PIXEL_CENTERS)
    if align and half:
        _fail(op, "half_pixel_centers requires align_corners false")
    if x.type == _FLOAT32:
        return prepare_bilinear_f32(x, y, oh, ow, align, half, ctx)
    b, h, w, c = x.shape
    ytab = bilinear_tables(h, oh, w * c, align, half)
    xtab = bilinear_tables(w, ow, c, align, half)
    p = array("i", (b, oh, ow, c, h * w * c))
    k = conv_util.keep
    return _bilinear, (k(ctx, p), k(ctx, ytab), k(ctx, xtab), x.data,
                       y.data)


@micropython.viper
def _bilinear(st):
    """s = (v00 * wx0 + v01 * wx1) * wy0 + (v10 * wx0 + v11 * wx1) * wy1
    (the four TFLM products, regrouped: exact), |s| < 2**30; then
    (s +- 2**19) / 2**20 truncated, as TFLM rounds."""
    p = ptr32(st[0])
    yt = ptr32(st[1])
    xt = ptr32(st[2])
    src: int = int(ptr8(st[3]))
    o = ptr8(st[4])
    one: int = 1
    R: int = one << 19
    S: int = one << 31  # sign extension of the (possibly negative) fracs
    B: int = p[0]
    OH: int = p[1]
    OW: int = p[2]
    C: int = p[3]
    BS: int = p[4]
    k: int = 0
    b: int = 0
    while b < B:
        y: int = 0
        while y < OH:
            r0: int = src + yt[4 * y]
            r1: int = src + yt[4 * y + 1]
            wy0: int = yt[4 * y + 2]
            wy1: int = (yt[4 * y + 3] ^ S) - S
            x: int = 0
            while x < OW:
                a00 = ptr8(r0 + xt[4 * x])
                a01 = ptr8(r0 + xt[4 * x + 1])
                a10 = ptr8(r1 + xt[4 * x])
                a11 = ptr8(r1 + xt[4 * x + 1])
                wx0: int = xt[4 * x + 2]
                wx1: int = (xt[4 * x + 3] ^ S) - S
                c: int = 0
                while c < C:
                    s: int = ((((a00[c] ^ 0x80) - 0x80) * wx0
                               + ((a01[c] ^ 0x80) - 0x80) * wx1) * wy0
                              + (((a10[c] ^ 0x80) - 0x80) * wx0
                                 + ((a11[c] ^ 0x80) - 0x80) * wx1) * wy1)
                    if s > 0:
                        s = (s + R) >> 20
                    else:
                        s = 0 - ((R - s) >> 20)
                    o[k] = s
                    k += 1
                    c += 1
                x += 1
            y += 1
        src += BS
        b += 1


def prepare(op, ins, outs, ctx):
    """Dispatch on the operator code (see prepare_nearest /
    prepare_bilinear)."""
    if op.code == _RESIZE_BILINEAR:
        return prepare_bilinear(op, ins, outs, ctx)
    return prepare_nearest(op, ins, outs, ctx)


# --- float32 ---------------------------------------------------------------
# Exact float32 values at prepare: a pair (n, e) meaning n * 2**e, n a
# signed int; _f32 rounds to float32 (nearest, ties to even). Only normal
# numbers occur here (sizes below 2**20).

def _f32(n, e=0):
    from .. import quant
    if n == 0:
        return 0, 0
    m, k = quant.round_bits(abs(n), 1, 24)
    return (m if n > 0 else -m), k + e


def _fadd(a, b):
    e = min(a[1], b[1])
    return _f32((a[0] << (a[1] - e)) + (b[0] << (b[1] - e)), e)


def _fmul(a, b):
    return _f32(a[0] * b[0], a[1] + b[1])


def _ffloor(a):
    return a[0] << a[1] if a[1] >= 0 else a[0] >> -a[1]


def _fbits(a):
    """IEEE-754 binary32 bits of a (normal or zero; +0.0 for zero)."""
    n, e = a
    if n == 0:
        return 0
    sign = 0x80000000 if n < 0 else 0
    m, e = _f32(abs(n), e)
    return sign | ((e + 150) << 23) | (m & 0x7FFFFF)


def bilinear_f32_tables(in_size, out_size, stride, align, half):
    """array('I') of (lower * stride, upper * stride, bits of
    1 - (v - lower), bits of v - lower) per output index, where v is
    ComputeInterpolationValues' scaled value: every operation of TFLM's
    float32 code (scale division, (i + 0.5) * scale - 0.5, the weight
    subtractions) rounded to float32 as TFLM rounds it."""
    from .. import quant
    if align and out_size > 1:
        num, den = in_size - 1, out_size - 1
    else:
        num, den = in_size, out_size
    scale = _f32(0) if not num or not den else quant.round_bits(num, den, 24)
    t = zeros("I", 4 * out_size)
    for i in range(out_size):
        if half:
            v = _fadd(_fmul((2 * i + 1, -1), scale), (-1, -1))
        else:
            v = _fmul((i, 0), scale)
        fl = _ffloor(v)
        lo = min(max(fl, 0), in_size - 1)
        hi = min(-_ffloor((-v[0], v[1])), in_size - 1)
        d = _fadd(v, (-lo, 0))
        t[4 * i] = lo * stride
        t[4 * i + 1] = max(hi, 0) * stride
        t[4 * i + 2] = _fbits(_fadd((1, 0), (-d[0], d[1])))
        t[4 * i + 3] = _fbits(d)
    return t


def prepare_bilinear_f32(x, y, oh, ow, align, half, ctx):
    """float32 RESIZE_BILINEAR: per output pixel, TFLM's expression

        ((((v00 * wy0) * wx0 + (v10 * wy1) * wx0) + (v01 * wy0) * wx1)
         + (v11 * wy1) * wx1) + 0.0

    evaluated with f32.vec over the pixel's C channels (8 calls, each
    one float32 rounding per operation; a * b alone is fl(-0.0 + a * b),
    exact), the partial results in ctx.scratch (2 * C words)."""
    from . import conv_util
    from . import f32
    b, h, w, c = x.shape
    k = conv_util.keep
    ytab = bilinear_f32_tables(h, oh, w * c, align, half)
    xtab = bilinear_f32_tables(w, ow, c, align, half)
    p = array("i", (b, oh, ow, c, h * w * c))
    vp = f32.slots(f32.VEC_SLOTS)
    q = f32.consts(f32.NEG_INF, f32.INF)
    kc = f32.consts(f32.NEG_ZERO, f32.ONE, f32.ZERO)
    st = (k(ctx, p), k(ctx, ytab, 4), k(ctx, xtab, 4), f32.words(x, ctx),
          y.data, ctx.scratch, k(ctx, vp), k(ctx, q), k(ctx, kc), f32.vec)
    return _bilinear_f32, st


@micropython.viper
def _bilinear_f32(st):
    """Drive f32.vec: T = v * wy (a product: c = -0.0), A = T * wx, then
    A = A + T * wx three times, out = 0.0 + A * 1."""
    p = ptr32(st[0])
    yt = st[1]
    xt = st[2]
    src = st[3]
    out = st[4]
    sc = st[5]
    vp = ptr32(st[6])
    q = st[7]
    kc = st[8]
    vec = st[9]
    yp = ptr32(yt)
    xp = ptr32(xt)
    B: int = p[0]
    OH: int = p[1]
    OW: int = p[2]
    C: int = p[3]
    BS: int = p[4]
    vp[7] = C
    o: int = 0  # output element index
    base: int = 0
    b: int = 0
    while b < B:
        y: int = 0
        while y < OH:
            x: int = 0
            while x < OW:
                j: int = 0
                while j < 4:
                    # taps in TFLM's order: (y0,x0) (y1,x0) (y0,x1) (y1,x1)
                    ys: int = j & 1
                    xs: int = j >> 1
                    vp[0] = base + yp[4 * y + ys] + xp[4 * x + xs]
                    vp[1] = 1
                    vp[2] = 4 * y + 2 + ys
                    vp[3] = 0
                    vp[4] = 0
                    vp[5] = 0
                    vp[6] = 0
                    vec(st[6], q, src, yt, kc, sc)  # T = v * wy
                    vp[0] = 0
                    vp[2] = 4 * x + 2 + xs
                    vp[6] = C
                    if j:
                        vp[4] = C  # c = A
                        vp[5] = 1
                        vec(st[6], q, sc, xt, sc, sc)  # A += T * wx
                    else:
                        vec(st[6], q, sc, xt, kc, sc)  # A = T * wx
                    j += 1
                vp[0] = C
                vp[2] = 1
                vp[3] = 0
                vp[4] = 2
                vp[5] = 0
                vp[6] = o
                vec(st[6], q, sc, kc, kc, out)  # out = 0.0 + A * 1.0
                o += C
                x += 1
            y += 1
        base += BS
        b += 1
