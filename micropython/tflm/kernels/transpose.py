"""TRANSPOSE: permute the dimensions of a tensor (a real data move).

Follows tensorflow/lite/micro/kernels/transpose.cc, transpose_common.cc
and tensorflow/lite/kernels/internal/reference/transpose.h: output
dimension k is input dimension perm[k], and the values only move (the
kernel copies itemsize bytes per element, like TFLM's TransposeStorageType
trick), so every type with a fixed element size works: int8, uint8, int16,
int32, float32, ... TFLM accepts float32 / int8 / int16 and ranks 1 to 5;
this kernel accepts ranks 0 to 6 (TFLite's limit).

Prepare simplifies the permutation first: size-1 dimensions are dropped,
and output dimensions that are consecutive input dimensions are merged
(NHWC -> NCHW, perm [0, 3, 1, 2], is N transposes of an [H*W][C] matrix).
Eval then walks the output in order: an inner run along the last output
dimension (contiguous bytes when that dimension is the input's last one),
and an odometer over the other dimensions that moves an input offset by
precomputed byte strides. No multiplication in the inner loop, no
allocation, model data read with ptr8 only (a constant input may sit at
any address), all values below 2**28: the same on 32- and 64-bit viper.
"""

from array import array

import micropython
from micropython import const

from ..heap import keep
from ..errors import PrepareError

_MAX_RANK = const(6)
_INT32 = const(2)

# Parameter array (int32): n, s, w (inner run: elements, input byte stride,
# bytes per element), r (outer dimensions), rows (their product), then r
# sizes, r input byte strides and r odometer counters.


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def _perm(op, ins, rank, ctx):
    """The permutation from the constant perm tensor, checked."""
    if len(ins) != 2 or ins[1] is None:
        _fail(op, "needs a data input and a perm input")
    pt = ins[1]
    if len(pt.shape) != 1:
        _fail(op, "perm %s must be 1-D, it has shape %s"
              % (pt.label(), tuple(pt.shape)))
    if pt.type != _INT32:  # TFLM reads any perm as int32 values
        _fail(op, "perm %s must be int32, not %s" % (pt.label(), pt.dtype))
    # An empty perm (rank 0) has no bytes, so a file cannot mark it const.
    perm = ctx.const_ints(op, pt, "perm") if pt.size else ()
    if perm is None:
        _fail(op, "perm %s must be a constant tensor" % pt.label())
    if len(perm) != rank:
        _fail(op, "perm %s has %d entries, the input has rank %d"
              % (pt.label(), len(perm), rank))
    if sorted(perm) != list(range(rank)):
        _fail(op, "perm %s is not a permutation of 0..%d"
              % (list(perm), rank - 1))
    return perm


def simplify(shape, perm):
    """(in_shape, perm) with size-1 dimensions dropped and runs of
    consecutive input dimensions merged; the same data movement."""
    keep = [a for a in range(len(shape)) if shape[a] != 1]
    new = {}
    for k, a in enumerate(keep):
        new[a] = k
    dims = [shape[a] for a in keep]
    groups = []  # input axes of each output axis, in order
    for a in perm:
        if shape[a] == 1:
            continue
        a = new[a]
        if groups and groups[-1][-1] + 1 == a:
            groups[-1].append(a)
        else:
            groups.append([a])
    order = sorted(range(len(groups)), key=lambda g: groups[g][0])
    in_shape = []
    for g in order:
        n = 1
        for a in groups[g]:
            n *= dims[a]
        in_shape.append(n)
    pos = [0] * len(groups)
    for k, g in enumerate(order):
        pos[g] = k
    return in_shape, pos


def plan(shape, perm, itemsize):
    """The eval parameters (array('i')) for a transpose of shape by perm.

    Sizes and strides are byte counts below 2**28 (model.MAX_BYTES), so
    they fit any viper int.
    """
    in_shape, p = simplify(shape, perm)
    stride = [0] * len(in_shape)
    acc = itemsize
    for a in range(len(in_shape) - 1, -1, -1):
        stride[a] = acc
        acc *= in_shape[a]
    dims = [in_shape[a] for a in p]
    strides = [stride[a] for a in p]
    n, s, w = 1, itemsize, itemsize
    if dims:
        n, s = dims.pop(), strides.pop()
    if s == w:  # inner run is contiguous in the input: copy bytes
        n, s, w = n * w, 1, 1
    rows = 1
    for d in dims:
        rows *= d
    if n == 0:
        rows = 0
    r = len(dims)
    return array("i", [n, s, w, r, rows] + dims + strides + [0] * r)


@micropython.viper
def _transpose(x, y, p):
    """Write y (bytes) in order from x, following parameters p."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(p)
    n: int = q[0]
    s: int = q[1]
    w: int = q[2]
    r: int = q[3]
    rows: int = q[4]
    qd: int = 5              # q[qd + d]: size of outer dimension d
    qs: int = 5 + r          # q[qs + d]: its input byte stride
    qc: int = 5 + r + r      # q[qc + d]: its odometer counter
    k: int = 0
    while k < r:
        q[qc + k] = 0
        k += 1
    o: int = 0
    base: int = 0
    row: int = 0
    while row < rows:
        i: int = base
        if w == 1:
            end: int = o + n
            while o < end:
                py[o] = px[i]
                o += 1
                i += s
        else:
            j: int = 0
            while j < n:
                b: int = 0
                while b < w:
                    py[o + b] = px[i + b]
                    b += 1
                o += w
                i += s
                j += 1
        d: int = r - 1
        while d >= 0:  # advance the odometer over the outer dimensions
            c: int = q[qc + d] + 1
            base += q[qs + d]
            if c < q[qd + d]:
                q[qc + d] = c
                break
            q[qc + d] = 0
            base -= c * q[qs + d]  # c == size: back to this row's start
            d -= 1
        row += 1


def _eval(st):
    x, y, p = st
    _transpose(x, y, p)


def prepare(op, ins, outs, ctx):
    """Check a TRANSPOSE operator and plan its data movement.

    ins: [data (any type with a fixed element size, rank 0-6), perm
    (constant 1-D int32/int64 tensor, a permutation of 0..rank-1)];
    outs: [output of the input's type and quantization, with shape
    input.shape[perm[k]] for each k]. Raises PrepareError naming the op
    and the tensor otherwise. Semantics: TFLM kernels/transpose.cc,
    transpose_common.cc, reference/transpose.h.
    """
    if not ins or ins[0] is None or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs a data input, a perm input and one output")
    src, dst = ins[0], outs[0]
    rank = len(src.shape)
    if rank > _MAX_RANK:
        _fail(op, "input %s has rank %d; at most %d is supported"
              % (src.label(), rank, _MAX_RANK))
    perm = _perm(op, ins, rank, ctx)
    if src.type != dst.type or not src.itemsize:
        _fail(op, "input %s is %s, output %s is %s: types must match and "
              "have a fixed size" % (src.label(), src.dtype, dst.label(),
                                     dst.dtype))
    if (src.scales, src.zero_points) != (dst.scales, dst.zero_points):
        _fail(op, "output %s has quantization %s/%s, input %s has %s/%s: a "
              "transpose cannot requantize"
              % (dst.label(), dst.scales, dst.zero_points, src.label(),
                 src.scales, src.zero_points))
    want = tuple(src.shape[a] for a in perm)
    if tuple(dst.shape) != want:
        _fail(op, "output %s is stored with shape %s but perm %s of input "
              "shape %s gives %s" % (dst.label(), tuple(dst.shape),
                                     list(perm), tuple(src.shape), want))
    # the plan (sizes, strides, the odometer eval moves) goes to the tail
    p = keep(ctx, plan(src.shape, perm, src.itemsize))
    return _eval, (src.data, dst.data, p)
