"""DYNAMIC_UPDATE_SLICE: a copy of a tensor with a box overwritten by
another tensor at start indices read at invoke (float32, int8, int16,
int32; indices int32 or int64).

Follows tensorflow/lite/micro/kernels/dynamic_update_slice.cc (Prepare,
EvalImpl, CalculateClampedStartIndices): inputs [operand, update (same
type and rank, each dimension at most the operand's), start_indices
(1-D, one value per dimension, constant or not)], output the operand's
type and shape. Each start is clamped to [0, operand_dim - update_dim]
(int64 arithmetic, so any index value is valid). If update has the
operand's element count, the output is the update; otherwise the
operand is copied and the update written over the box. The values only
move (TFLM checks no quantization).

Eval reads the indices byte by byte (an int64 is clamped from its sign
and whether it exceeds 31 bits, so no value above 2**31 is formed),
then copies with an odometer over the update's outer dimensions and
byte runs along its last one: word-size and alignment independent.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT64 = const(4)
_INT8 = const(9)
_MAX_RANK = const(6)

# Parameter array (int32): rank r, element bytes, index bytes (4 / 8),
# operand bytes, update bytes, then r update dims, r output byte strides,
# r limits (operand - update dims), r starts and r counters (eval's).
_P_R = const(0)
_P_ES = const(1)
_P_IW = const(2)
_P_NX = const(3)
_P_NU = const(4)
_P_DIMS = const(5)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _dus(x, u, c, y, p):
    px = ptr8(x)
    pu = ptr8(u)
    pc = ptr8(c)
    py = ptr8(y)
    q = ptr32(p)
    r: int = q[_P_R]
    es: int = q[_P_ES]
    iw: int = q[_P_IW]
    nx: int = q[_P_NX]
    nu: int = q[_P_NU]
    qd: int = _P_DIMS
    qs: int = qd + r
    ql: int = qs + r
    qb: int = ql + r
    qc: int = qb + r
    i: int = 0
    if nx == nu:  # the update is the whole output
        while i < nu:
            py[i] = pu[i]
            i += 1
        return
    if int(px) != int(py):
        while i < nx:
            py[i] = px[i]
            i += 1
    if nu == 0:
        return
    base: int = 0
    k: int = 0
    while k < r:  # clamped starts: the output offset of the box
        j: int = k * iw
        v: int = 0
        if pc[j + iw - 1] & 0x80:
            v = 0  # negative
        else:
            big: int = pc[j + 3] & 0x80
            m: int = 4
            while m < iw:
                big |= pc[j + m]
                m += 1
            if big:
                v = q[ql + k]
            else:
                v = pc[j] | (pc[j + 1] << 8) | (pc[j + 2] << 16) | (
                    pc[j + 3] << 24)
                if v > q[ql + k]:
                    v = q[ql + k]
        base += v * q[qs + k]
        q[qc + k] = 0
        k += 1
    last: int = r - 1
    run: int = q[qd + last] * es
    rows: int = nu // run
    o: int = 0  # update byte offset
    row: int = 0
    while row < rows:
        d: int = base
        e: int = o + run
        while o < e:
            py[d] = pu[o]
            o += 1
            d += 1
        k = last - 1
        while k >= 0:  # advance the odometer over the outer dimensions
            cnt: int = q[qc + k] + 1
            base += q[qs + k]
            if cnt < q[qd + k]:
                q[qc + k] = cnt
                break
            q[qc + k] = 0
            base -= cnt * q[qs + k]
            k -= 1
        row += 1


def _eval(st):
    x, u, c, y, p = st
    _dus(x, u, c, y, p)


def prepare(op, ins, outs, ctx):
    """DYNAMIC_UPDATE_SLICE.

    ins: [operand float32 / int8 / int16 / int32 (rank 1-6), update (its
    type and rank, dims <= the operand's), start_indices (1-D int32 /
    int64, rank values, constant or not)]; outs: [the operand's type and
    shape]. Raises PrepareError naming the op and tensor otherwise.
    Semantics: TFLM kernels/dynamic_update_slice.cc.
    """
    from ..heap import keep
    if len(ins) != 3 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs operand, update, start_indices and one output")
    x, u, c = ins
    y = outs[0]
    if x.type not in (_FLOAT32, _INT8, _INT16, _INT32):
        _fail(op, "operand %s is %s; TFLM supports float32, int8, int16, "
              "int32" % (x.label(), x.dtype))
    for t in (u, y):
        if t.type != x.type:
            _fail(op, "%s is %s, operand %s is %s"
                  % (t.label(), t.dtype, x.label(), x.dtype))
    rank = len(x.shape)
    if not 1 <= rank <= _MAX_RANK or tuple(y.shape) != tuple(x.shape):
        _fail(op, "operand %s shape %s (rank 1 to %d) and output %s shape "
              "%s must be equal" % (x.label(), tuple(x.shape), _MAX_RANK,
                                    y.label(), tuple(y.shape)))
    if len(u.shape) != rank or any(u.shape[k] > x.shape[k]
                                   for k in range(rank)):
        _fail(op, "update %s shape %s does not fit operand %s shape %s"
              % (u.label(), tuple(u.shape), x.label(), tuple(x.shape)))
    if c.type not in (_INT32, _INT64) or tuple(c.shape) != (rank,):
        _fail(op, "start_indices %s must be int32 or int64 of shape (%d,), "
              "not %s %s" % (c.label(), rank, c.dtype, tuple(c.shape)))
    es = x.itemsize
    strides = [es] * rank
    for k in range(rank - 2, -1, -1):
        strides[k] = strides[k + 1] * x.shape[k + 1]
    p = array("i", [rank, es, c.itemsize, x.nbytes, u.nbytes]
              + list(u.shape) + strides
              + [x.shape[k] - u.shape[k] for k in range(rank)]
              + [0] * (2 * rank))
    return _eval, (x.data, u.data, c.data, y.data, keep(ctx, p))
