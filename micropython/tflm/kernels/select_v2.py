"""SELECT_V2: output = condition ? x : y, elementwise with NumPy-style
broadcasting (float32, int8, int16; condition bool).

Follows tensorflow/lite/micro/kernels/select.cc (SelectPrepare,
CheckBroadcastShape, SelectEval) and tensorflow/lite/kernels/internal/
reference/select.h (Select, BroadcastSelect5DSlow): inputs [condition
bool, x, y] with x and y of one type (float32, int8 or int16: TFLM's
eval fails for the others), output of that type. Shapes are broadcast
from the right: each dimension of each input is 1 or the output's (a 0
makes the output's 0); when all four tensors have one element, TFLM
selects that element whatever their shapes. A byte is true when it is
not 0. The values are copied unchanged (TFLM checks no quantization).

Prepare drops the output dimensions of size 1 and merges dimensions
that are contiguous in all three inputs, so eval runs one loop over the
innermost run and an odometer over the rest, with byte strides (0 along
a broadcast dimension). ptr8 reads only: word-size and alignment
independent.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from ..heap import keep

_BOOL = const(6)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT8 = const(9)
_MAX_RANK = const(6)

# Parameter array (int32): element bytes, outer dimension count r, inner
# count n, its byte strides in condition, x, y, then per outer dimension
# (count, condition, x and y byte strides, odometer counter).
_P_ES = const(0)
_P_R = const(1)
_P_N = const(2)
_P_SC = const(3)
_P_SX = const(4)
_P_SY = const(5)
_P_OUTER = const(6)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def _strides(shape, rank, es):
    """Byte strides of shape extended to rank, 0 along size-1 dims."""
    shape = [1] * (rank - len(shape)) + list(shape)
    st, acc = [0] * rank, es
    for k in range(rank - 1, -1, -1):
        st[k] = acc if shape[k] != 1 else 0
        acc *= shape[k]
    return shape, st


def plan(c, x, y, out):
    """The parameter array for _select (shapes already checked)."""
    es = x.itemsize
    if c.size == x.size == y.size == out.size == 1:
        dims = [(1, 0, 0, 0)]
    else:
        rank = len(out.shape)
        _, sc = _strides(c.shape, rank, 1)
        _, sx = _strides(x.shape, rank, es)
        _, sy = _strides(y.shape, rank, es)
        dims = []
        for k in range(rank):
            n = out.shape[k]
            if n == 1:
                continue
            if dims:
                m, a, b, d = dims[-1]
                if a == n * sc[k] and b == n * sx[k] and d == n * sy[k]:
                    dims[-1] = (m * n, sc[k], sx[k], sy[k])
                    continue
            dims.append((n, sc[k], sx[k], sy[k]))
        if not dims or out.size == 0:
            dims = [(out.size, 0, 0, 0)]
    n, a, b, d = dims.pop()
    p = [es, len(dims), n, a, b, d]
    for m, a, b, d in dims:
        p += [m, a, b, d, 0]
    return array("i", p)


@micropython.viper
def _select(c, x, y, out, p):
    pc = ptr8(c)
    px = ptr8(x)
    py = ptr8(y)
    po = ptr8(out)
    q = ptr32(p)
    es: int = q[_P_ES]
    r: int = q[_P_R]
    n: int = q[_P_N]
    dc: int = q[_P_SC]
    dx: int = q[_P_SX]
    dy: int = q[_P_SY]
    rows: int = 1
    k: int = 0
    while k < r:
        q[_P_OUTER + 5 * k + 4] = 0
        rows *= q[_P_OUTER + 5 * k]
        k += 1
    bc: int = 0
    bx: int = 0
    by: int = 0
    o: int = 0
    row: int = 0
    while row < rows:
        ic: int = bc
        ix: int = bx
        iy: int = by
        j: int = 0
        while j < n:
            if pc[ic]:
                s: int = ix
                e: int = ix + es
                while s < e:
                    po[o] = px[s]
                    o += 1
                    s += 1
            else:
                s = iy
                e = iy + es
                while s < e:
                    po[o] = py[s]
                    o += 1
                    s += 1
            ic += dc
            ix += dx
            iy += dy
            j += 1
        k = r - 1
        while k >= 0:  # advance the odometer over the outer dimensions
            b: int = _P_OUTER + 5 * k
            cnt: int = q[b + 4] + 1
            bc += q[b + 1]
            bx += q[b + 2]
            by += q[b + 3]
            if cnt < q[b]:
                q[b + 4] = cnt
                break
            q[b + 4] = 0
            bc -= cnt * q[b + 1]
            bx -= cnt * q[b + 2]
            by -= cnt * q[b + 3]
            k -= 1
        row += 1


def _eval(st):
    c, x, y, out, p = st
    _select(c, x, y, out, p)


def prepare(op, ins, outs, ctx):
    """SELECT_V2.

    ins: [condition bool, x, y: float32 / int8 / int16, one type; rank
    <= 6, broadcastable]; outs: [output of x's type with the broadcast
    shape]. Raises PrepareError naming the op and tensor otherwise.
    Semantics: TFLM kernels/select.cc.
    """
    if len(ins) != 3 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs condition, x, y and one output")
    c, x, y = ins
    out = outs[0]
    if c.type != _BOOL:
        _fail(op, "condition %s is %s, not bool" % (c.label(), c.dtype))
    if x.type not in (_FLOAT32, _INT8, _INT16):
        _fail(op, "x %s is %s; TFLM supports float32, int8, int16"
              % (x.label(), x.dtype))
    for t in (y, out):
        if t.type != x.type:
            _fail(op, "%s is %s, x %s is %s" % (t.label(), t.dtype,
                                                x.label(), x.dtype))
    ranks = (len(c.shape), len(x.shape), len(y.shape))
    rank = len(out.shape)
    if max(ranks) > _MAX_RANK or rank > _MAX_RANK:
        _fail(op, "rank above %d" % _MAX_RANK)
    if not c.size == x.size == y.size == out.size == 1:
        if rank != max(ranks):
            _fail(op, "output %s has rank %d, the inputs' largest is %d"
                  % (out.label(), rank, max(ranks)))
        shapes = [[1] * (rank - len(t.shape)) + list(t.shape)
                  for t in (c, x, y)]
        for k in range(rank):
            ds = [s[k] for s in shapes]
            m = 0 if min(ds) == 0 else max(ds)
            if any(d != 1 and d != m for d in ds) or out.shape[k] != m:
                _fail(op, "condition %s, x %s, y %s do not broadcast to "
                      "output %s" % (tuple(c.shape), tuple(x.shape),
                                     tuple(y.shape), tuple(out.shape)))
    return _eval, (c.data, x.data, y.data, out.data,
                   keep(ctx, plan(c, x, y, out)))
