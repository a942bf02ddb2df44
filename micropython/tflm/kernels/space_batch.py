"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (byte copies of pixels).

Follows tensorflow/lite/micro/kernels/space_to_batch_nd.cc,
batch_to_space_nd.cc and kernels/internal/reference/space_to_batch_nd.h,
batch_to_space_nd.h: input and output of rank 3 (NHC, seen as NH1C) or 4
(NHWC), one type, float32 or int8; block_shape holds [bh, bw] ([bh] for
rank 3) and paddings / crops [[top, bottom], [left, right]] ([[top,
bottom]] for rank 3), int32. Constant ones are checked at prepare; as in
TFLM they may also be computed by the graph, and are then read and
checked at invoke (a preallocated InvokeError if they do not fit the
shapes stored in the model, where TFLM would copy out of bounds).

SPACE_TO_BATCH_ND: output batch b holds, for input batch b % N and
shift (sh, sw) = divmod(b // N, bw), the pixels (oh * bh + sh - top,
ow * bw + sw - left) of the input, or padding outside it. The padding is
the output zero point for int8 and 0.0 for float32, as in TFLite's
kernel, which sets SpaceToBatchParams.output_offset to the output zero
point. (TFLM's Prepare never sets it: its padding bytes are whatever the
persistent buffer held, 0 in a fresh arena, anything after that.)
BATCH_TO_SPACE_ND is the inverse: output pixel (b, oh, ow) comes from
input batch (sh * bw + sw) * B + b, pixel (ih, iw), where (ih, sh) =
divmod(oh + top, bh) and (iw, sw) = divmod(ow + left, bw).

TFLM checks no shape against block_shape and paddings / crops; here the
output shape must be the one they give (block sizes >= 1, paddings and
crops >= 0, spatial sizes divisible). No quantization check (TFLM has
none): values are copied unchanged. Eval walks the output in order with
counters (no division per pixel) and copies one pixel's bytes at a time.
"""

from array import array

import micropython
from micropython import const

from ..errors import InvokeError
from .copy_util import (F32, I8, I32, check_types, const_vector, fail,
                        raise_made)

_INT8 = const(9)
_SPACE_TO_BATCH_ND = const(38)

_TYPES = (F32, I8)

# g (int32): 0 spatial axes (1 or 2), 1 N, 2 H, 3 W, 4 bytes per pixel,
# 5 OB, 6 OH, 7 OW (input and output NHWC sizes, rank 3 as NH1C), 8 bh,
# 9 bw, 10 top, 11 left, 12 padding byte, 13 1 for SPACE_TO_BATCH_ND,
# 14..19 block sizes and paddings / crops read at invoke (computed ones).


def _shape4(s):
    """NHC -> NH1C, as ExtendShapeSpaceToBatch."""
    return tuple(s) if len(s) == 4 else (s[0], s[1], 1, s[2])


def _want(s2b, xs, p):
    """The output NHWC shape for input NHWC shape xs and p = (bh, bw,
    top, bottom, left, right), or None if the sizes do not divide."""
    bh, bw, top, bot, left, right = p
    N, H, W, C = xs
    if s2b:
        if (H + top + bot) % bh or (W + left + right) % bw:
            return None
        return (N * bh * bw, (H + top + bot) // bh, (W + left + right) // bw,
                C)
    if N % (bh * bw):
        return None
    return (N // (bh * bw), H * bh - top - bot, W * bw - left - right, C)


def _const_params(op, ins, ctx, n, what, x, y, s2b):
    """(bh, bw, top, left) from constant block_shape and paddings /
    crops, checked against the shapes."""
    blk = const_vector(op, ins[1], "block_shape", ctx, n)
    pads = const_vector(op, ins[2], what, ctx, 2 * n)
    if n == 1:
        blk, pads = blk + (1,), pads + (0, 0)
    if min(blk) < 1 or min(pads) < 0:
        fail(op, "block_shape %s must be >= 1 and %s %s >= 0"
             % (list(blk[:n]), what, list(pads[:2 * n])))
    p = blk + pads
    want = _want(s2b, _shape4(x.shape), p)
    if want is None:
        fail(op, "input %s shape %s is not divisible by block_shape %s "
             "with %s %s" % (x.label(), tuple(x.shape), list(blk[:n]),
                             what, list(pads[:2 * n])))
    if _shape4(y.shape) != want or min(want) < 0:
        fail(op, "output %s has shape %s, block_shape and %s give %s"
             % (y.label(), tuple(y.shape), what, want))
    return p[0], p[1], p[2], p[4]


def _check_vector(op, t, what, n):
    """A computed block_shape / paddings / crops: int32, n values."""
    if t is None or t.type != I32 or t.size != n:
        fail(op, "%s must be an int32 tensor of %d values" % (what, n))


def prepare(op, ins, outs, ctx):
    """Check a SPACE_TO_BATCH_ND or BATCH_TO_SPACE_ND op and plan it.

    ins: [input (rank 3 or 4, float32 / int8), block_shape (int32, rank -
    2 values), paddings / crops (int32, [rank - 2, 2])]; outs: [output of
    the input's type and rank, the shape these give]. Raises
    PrepareError.
    """
    s2b = op.code == _SPACE_TO_BATCH_ND
    what = "paddings" if s2b else "crops"
    if len(ins) != 3 or ins[0] is None or len(outs) != 1:
        fail(op, "needs input, block_shape, %s and one output" % what)
    x, y = ins[0], outs[0]
    check_types(op, x, outs, _TYPES, "SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND")
    rank = len(x.shape)
    if not 3 <= rank <= 4 or len(y.shape) != rank:
        fail(op, "input %s rank %d, output %s rank %d: both must be 3 or 4 "
             "(TFLM's limits)" % (x.label(), rank, y.label(), len(y.shape)))
    n = rank - 2
    _check_vector(op, ins[1], "block_shape", n)
    _check_vector(op, ins[2], what, 2 * n)
    N, H, W, C = _shape4(x.shape)
    OB, OH, OW, OC = _shape4(y.shape)
    if OC != C:
        fail(op, "output %s depth %d differs from input %s depth %d"
             % (y.label(), OC, x.label(), C))
    pad = y.zero_point & 0xFF if s2b and y.type == _INT8 else 0
    g = array("i", [n, N, H, W, C * x.itemsize, OB, OH, OW, 1, 1, 0, 0,
                    pad, int(s2b)] + [0] * 6)
    fn = _s2b if s2b else _b2s
    dynamic = (ctx.const_ints(op, ins[1], "block_shape") is None
               or ctx.const_ints(op, ins[2], what) is None)
    if not dynamic:
        g[8], g[9], g[10], g[11] = _const_params(op, ins, ctx, n, what, x,
                                                 y, s2b)
        return _eval, (fn, x.data, y.data, g)
    err = InvokeError("%s: block_shape %s / %s %s do not fit input %s "
                      "shape %s and output %s shape %s" % (
                          op.label(), ins[1].label(), what, ins[2].label(),
                          x.label(), tuple(x.shape), y.label(),
                          tuple(y.shape)))
    return _eval_dynamic, (fn, x.data, y.data, g, ins[1].data, ins[2].data,
                           err)


def _eval(st):
    st[0](st[1], st[2], st[3])


def _eval_dynamic(st):
    g = st[3]
    n = g[0]
    _words(st[4], n, g, 14)
    _words(st[5], 2 * n, g, 16)
    if not _fits(g):
        raise_made(st[6])  # made at prepare: no allocation under heap_lock
    st[0](st[1], st[2], g)


@micropython.viper
def _words(src, n: int, g, at: int):
    """Copy n int32 values of src (any alignment) to g[at:at + n]."""
    p = ptr8(src)
    q = ptr32(g)
    k: int = 0
    while k < n:
        j: int = 4 * k
        q[at + k] = p[j] | (p[j + 1] << 8) | (p[j + 2] << 16) | (
            p[j + 3] << 24)
        k += 1


@micropython.viper
def _fits(g) -> int:
    """1 if the block sizes and paddings / crops read into g[14:20] fit
    g's shapes (then stored in g[8:12]), else 0. Division-based checks:
    no product of unchecked values."""
    q = ptr32(g)
    one: int = 1
    S: int = one << 31  # ptr32 loads are not sign-extended on 64-bit
    n: int = q[0]
    bh: int = (q[14] ^ S) - S
    bw: int = 1
    top: int = (q[16] ^ S) - S
    bot: int = (q[17] ^ S) - S
    left: int = 0
    right: int = 0
    if n == 2:
        bw = (q[15] ^ S) - S
        left = (q[18] ^ S) - S
        right = (q[19] ^ S) - S
    N: int = q[1]
    H: int = q[2]
    W: int = q[3]
    OB: int = q[5]
    OH: int = q[6]
    OW: int = q[7]
    if bh < 1 or bw < 1 or top < 0 or bot < 0 or left < 0 or right < 0:
        return 0
    big: int = OB  # batches of the batch side: N * bh * bw
    small: int = N
    full_h: int = OH
    full_w: int = OW
    if not q[13]:  # BATCH_TO_SPACE_ND
        big = N
        small = OB
        full_h = H
        full_w = W
    if small < 1 or big % small:
        return 0
    blocks: int = big // small
    if blocks % bh or blocks // bh != bw:
        return 0
    full_h = full_h * bh  # the padded / uncropped height, < 2**28
    full_w = full_w * bw
    if top > full_h or bot > full_h or left > full_w or right > full_w:
        return 0
    if q[13]:
        if H + top + bot != full_h or W + left + right != full_w:
            return 0
    elif full_h - top - bot != OH or full_w - left - right != OW:
        return 0
    q[8] = bh
    q[9] = bw
    q[10] = top
    q[11] = left
    return 1


@micropython.viper
def _s2b(x, y, g):
    """SPACE_TO_BATCH_ND: y in order from x, padding outside it."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(g)
    N: int = q[1]
    H: int = q[2]
    W: int = q[3]
    cb: int = q[4]
    OB: int = q[5]
    OH: int = q[6]
    OW: int = q[7]
    bh: int = q[8]
    bw: int = q[9]
    top: int = q[10]
    left: int = q[11]
    pad: int = q[12]
    o: int = 0
    ib: int = 0  # input batch b % N and shift (sh, sw) of output batch b
    sh: int = 0
    sw: int = 0
    b: int = 0
    while b < OB:
        ih: int = sh - top
        oh: int = 0
        while oh < OH:
            row: int = 1 if 0 <= ih and ih < H else 0
            iw: int = sw - left
            ow: int = 0
            while ow < OW:
                e: int = o + cb
                if row and 0 <= iw and iw < W:
                    i: int = ((ib * H + ih) * W + iw) * cb
                    while o < e:
                        py[o] = px[i]
                        o += 1
                        i += 1
                else:
                    while o < e:
                        py[o] = pad
                        o += 1
                iw += bw
                ow += 1
            ih += bh
            oh += 1
        ib += 1
        if ib == N:
            ib = 0
            sw += 1
            if sw == bw:
                sw = 0
                sh += 1
        b += 1


@micropython.viper
def _b2s(x, y, g):
    """BATCH_TO_SPACE_ND: y in order from x."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(g)
    H: int = q[2]
    W: int = q[3]
    cb: int = q[4]
    OB: int = q[5]
    OH: int = q[6]
    OW: int = q[7]
    bh: int = q[8]
    bw: int = q[9]
    top: int = q[10]
    left: int = q[11]
    o: int = 0
    b: int = 0
    while b < OB:
        ih: int = top // bh  # (ih, sh) = divmod(oh + top, bh)
        sh: int = top - ih * bh
        oh: int = 0
        while oh < OH:
            iw: int = left // bw
            sw: int = left - iw * bw
            ow: int = 0
            while ow < OW:
                ib: int = (sh * bw + sw) * OB + b
                i: int = ((ib * H + ih) * W + iw) * cb
                e: int = o + cb
                while o < e:
                    py[o] = px[i]
                    o += 1
                    i += 1
                sw += 1
                if sw == bw:
                    sw = 0
                    iw += 1
                ow += 1
            sh += 1
            if sh == bh:
                sh = 0
                ih += 1
            oh += 1
        b += 1
