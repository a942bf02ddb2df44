"""GATHER: rows of the params tensor picked by an int32 index tensor.

Follows tensorflow/lite/micro/kernels/gather.cc: params int8 or float32
(TFLM's Prepare rejects other types), indices int32 (constant or a model
input), options axis (negative counts from the end) and batch_dims
(negative counts from the index rank), with batch_dims <= axis and the
first batch_dims dimensions of params and indices equal. Output shape:
params.shape[:axis] + indices.shape[batch_dims:] + params.shape[axis+1:].
For each (batch, outer, index) the kernel copies one row of
inner = prod(params.shape[axis+1:]) elements.

An index outside [0, params.shape[axis]) makes TFLM's eval fail. Here eval
checks every index before it copies anything and raises the InvokeError
made at prepare (errors.raise_made: a fresh copy of it, or under
heap_lock the object itself, so nothing is allocated then and nothing
accumulates otherwise): nothing is read out of bounds and the output is
left as it was.

All reads are ptr8 (constant params or indices may sit at any address);
an index is assembled from its bytes only when its top byte is 0, so no
value above 2**24 is formed.
"""

from array import array

import micropython
from micropython import const

from ..errors import InvokeError, PrepareError, raise_made

_FLOAT32 = const(0)
_INT32 = const(2)
_INT8 = const(9)

_GATHER_OPTIONS = const(23)
_GATHER_AXIS = const(0)
_GATHER_BATCH_DIMS = const(1)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _check(c, n: int, limit: int) -> int:
    """1 if any of the n little-endian int32 values in c (bytes) is
    outside [0, limit), else 0 (limit < 2**24)."""
    pc = ptr8(c)
    i: int = 0
    while i < 4 * n:
        if pc[i + 3] != 0:
            return 1
        if (pc[i] | (pc[i + 1] << 8) | (pc[i + 2] << 16)) >= limit:
            return 1
        i += 4
    return 0


@micropython.viper
def _gather(x, c, y, g):
    """Copy rows; g = array('i') of (batches, outer, coords, axis size,
    row bytes)."""
    px = ptr8(x)
    pc = ptr8(c)
    py = ptr8(y)
    q = ptr32(g)
    batches: int = q[0]
    outer: int = q[1]
    coords: int = q[2]
    size: int = q[3]
    row: int = q[4]
    o: int = 0
    b: int = 0
    while b < batches:
        m: int = 0
        while m < outer:
            j: int = 0
            while j < coords:
                k: int = 4 * (b * coords + j)
                idx: int = pc[k] | (pc[k + 1] << 8) | (pc[k + 2] << 16)
                i: int = ((b * outer + m) * size + idx) * row
                end: int = o + row
                while o < end:
                    py[o] = px[i]
                    o += 1
                    i += 1
                j += 1
            m += 1
        b += 1


def _eval(st):
    x, c, y, g, n, size, err = st
    if _check(c, n, size):
        raise_made(err)  # a copy: a re-raised err would keep growing
    _gather(x, c, y, g)


def _geometry(op, x, c, y):
    """(axis, batch_dims, array g) from the options, checked as Prepare."""
    rank, crank = len(x.shape), len(c.shape)
    opts = op.options_type == _GATHER_OPTIONS
    a0 = axis = op.opt_int(_GATHER_AXIS, 0) if opts else 0
    b0 = bd = op.opt_int(_GATHER_BATCH_DIMS, 0) if opts else 0
    if axis < 0:
        axis += rank
    if bd < 0:
        bd += crank
    if not 0 <= axis < rank:
        _fail(op, "axis %d is out of range for params %s of rank %d"
              % (a0, x.label(), rank))
    if not (0 <= bd <= axis and bd < rank and bd <= crank):
        _fail(op, "batch_dims %d does not fit axis %d, params %s rank %d and "
              "indices %s rank %d" % (b0, axis, x.label(), rank, c.label(),
                                      crank))
    if tuple(x.shape[:bd]) != tuple(c.shape[:bd]):
        _fail(op, "params %s %s and indices %s %s differ in the first %d "
              "(batch) dimensions" % (x.label(), tuple(x.shape), c.label(),
                                      tuple(c.shape), bd))
    want = tuple(x.shape[:axis]) + tuple(c.shape[bd:]) + tuple(
        x.shape[axis + 1:])
    if tuple(y.shape) != want:
        _fail(op, "output %s has shape %s, expected %s"
              % (y.label(), tuple(y.shape), want))

    def prod(dims):
        n = 1
        for d in dims:
            n *= d
        return n
    g = array("i", (prod(x.shape[:bd]), prod(x.shape[bd:axis]),
                    prod(c.shape[bd:]), x.shape[axis],
                    prod(x.shape[axis + 1:]) * x.itemsize))
    return axis, g


def prepare(op, ins, outs, ctx):
    """GATHER.

    ins: [params int8 / float32, indices int32 (constant or not)];
    outs: [params' type and quantization, shape params.shape[:axis] +
    indices.shape[batch_dims:] + params.shape[axis+1:]]. GatherOptions:
    axis, batch_dims. Raises PrepareError naming the operator and tensor
    otherwise; eval raises InvokeError for an index out of range.
    Semantics: TFLM kernels/gather.cc.
    """
    from .conv_util import keep
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs params, indices and one output")
    x, c, y = ins[0], ins[1], outs[0]
    if x.type not in (_INT8, _FLOAT32):
        _fail(op, "params %s is %s; TFLM supports int8 and float32"
              % (x.label(), x.dtype))
    if c.type != _INT32:
        _fail(op, "indices %s is %s; TFLM supports int32"
              % (c.label(), c.dtype))
    if y.type != x.type:
        _fail(op, "output %s is %s, params %s is %s"
              % (y.label(), y.dtype, x.label(), x.dtype))
    axis, g = _geometry(op, x, c, y)
    size = x.shape[axis]
    if size >= 1 << 24:
        _fail(op, "params %s axis %d has %d entries; at most 2**24 - 1"
              % (x.label(), axis, size))
    err = InvokeError("%s: an index in %s is outside [0, %d)"
                      % (op.label(), c.label(), size))
    return _eval, (x.data, c.data, y.data, keep(ctx, g), c.size, size, err)
