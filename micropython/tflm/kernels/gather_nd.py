"""GATHER_ND: slices of params picked by index tuples (float32, int8;
indices int32).

Follows tensorflow/lite/micro/kernels/gather_nd.cc (GatherNdPrepare,
GatherNd): params of rank >= 1, indices of rank >= 1 whose last
dimension nd (at most 5 and at most params' rank) is the length of each
index tuple; output shape indices.shape[:-1] + params.shape[nd:]. Slice
i starts at the flat params position

    from = sum_j indices[i, j] * prod(params.shape[j+1:])

and copies prod(params.shape[nd:]) elements. As TFLM, only that flat
position is checked (0 <= from and from + slice <= params' size): an
index tuple such as (0, 5) in a [3, 4] tensor reads element 5. A slice
outside makes TFLM's eval fail; here eval checks every slice before it
copies any and raises the InvokeError made at prepare (the output is
left as it was). An index component of 2**27 / prod(...) or more in
magnitude (where TFLM's int32 sum would overflow) is an error too.

ptr8 reads only (constant params or indices may sit at any address),
indices assembled from bytes and sign-extended: word-size independent.
"""

from array import array

import micropython
from micropython import const

from ..errors import InvokeError, PrepareError, raise_made

_FLOAT32 = const(0)
_INT32 = const(2)
_INT8 = const(9)
_MAX_ND = const(5)
_LIMIT = const(0x8000000)  # 2**27: the largest |index term|

# Parameter array (int32): slices, nd, slice bytes, slice elements, params
# elements, then nd element strides and nd index bounds.
_P_SLICES = const(0)
_P_ND = const(1)
_P_BYTES = const(2)
_P_ELEMS = const(3)
_P_FLAT = const(4)
_P_STRIDES = const(5)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _gather_nd(x, c, y, g, copy: int) -> int:
    """With copy 0: 1 if a slice is out of bounds, else 0. With copy 1:
    copy the slices (all checked)."""
    px = ptr8(x)
    pc = ptr8(c)
    py = ptr8(y)
    q = ptr32(g)
    slices: int = q[_P_SLICES]
    nd: int = q[_P_ND]
    row: int = q[_P_BYTES]
    es: int = 0
    if q[_P_ELEMS]:
        es = row // q[_P_ELEMS]
    top: int = q[_P_FLAT] - q[_P_ELEMS]
    qb: int = _P_STRIDES + nd
    k: int = 0
    o: int = 0
    i: int = 0
    while i < slices:
        pos: int = 0
        j: int = 0
        while j < nd:
            v: int = ((((pc[k + 3] ^ 0x80) - 0x80) << 24) | (pc[k + 2] << 16)
                      | (pc[k + 1] << 8) | pc[k])
            if v > q[qb + j] or v < 0 - q[qb + j]:
                return 1
            pos += v * q[_P_STRIDES + j]
            k += 4
            j += 1
        if pos < 0 or pos > top:
            return 1
        if copy:
            s: int = pos * es
            e: int = s + row
            while s < e:
                py[o] = px[s]
                o += 1
                s += 1
        i += 1
    return 0


def _eval(st):
    x, c, y, g, err = st
    if _gather_nd(x, c, y, g, 0):
        raise_made(err)  # a copy: a re-raised err would keep growing
    _gather_nd(x, c, y, g, 1)


def prepare(op, ins, outs, ctx):
    """GATHER_ND.

    ins: [params float32 / int8 (rank >= 1), indices int32 (rank >= 1,
    last dimension nd <= min(5, params rank); constant or not)]; outs:
    [params' type, shape indices.shape[:-1] + params.shape[nd:]]. Raises
    PrepareError naming the op and tensor otherwise; eval raises
    InvokeError for a slice out of bounds. Semantics: TFLM
    kernels/gather_nd.cc.
    """
    from ..heap import keep
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs params, indices and one output")
    x, c, y = ins[0], ins[1], outs[0]
    if x.type not in (_FLOAT32, _INT8):
        _fail(op, "params %s is %s; TFLM supports float32 and int8"
              % (x.label(), x.dtype))
    if c.type != _INT32:
        _fail(op, "indices %s is %s; TFLM supports int32"
              % (c.label(), c.dtype))
    if y.type != x.type:
        _fail(op, "output %s is %s, params %s is %s"
              % (y.label(), y.dtype, x.label(), x.dtype))
    rank, crank = len(x.shape), len(c.shape)
    if rank < 1 or crank < 1:
        _fail(op, "params %s and indices %s must have rank >= 1"
              % (x.label(), c.label()))
    nd = c.shape[-1]
    if nd > rank or nd > _MAX_ND:
        _fail(op, "indices %s tuples have %d entries; at most params %s "
              "rank %d and %d" % (c.label(), nd, x.label(), rank, _MAX_ND))
    want = tuple(c.shape[:-1]) + tuple(x.shape[nd:])
    if tuple(y.shape) != want:
        _fail(op, "output %s has shape %s, expected %s"
              % (y.label(), tuple(y.shape), want))
    strides = [1] * rank
    for k in range(rank - 2, -1, -1):
        strides[k] = strides[k + 1] * x.shape[k + 1]
    elems = strides[nd - 1] if nd else x.size
    slices = 1
    for d in c.shape[:-1]:
        slices *= d
    bounds = [_LIMIT // max(s, 1) for s in strides[:nd]]
    g = array("i", [slices, nd, elems * x.itemsize, elems, x.size]
              + strides[:nd] + bounds)
    err = InvokeError("%s: an index tuple in %s is outside params %s"
                      % (op.label(), c.label(), x.label()))
    return _eval, (x.data, c.data, y.data, keep(ctx, g), err)
