"""MIRROR_PAD: pad a tensor with a reflection of its own border (float32,
int8).

Follows tensorflow/lite/micro/kernels/mirror_pad.cc (MirrorPadPrepare,
MirrorPadEval, GetInputDimension): inputs [input, paddings], paddings a
[rank, 2] int32 or int64 tensor of (left, right) pairs; options
MirrorPadOptions.mode REFLECT (the border element is not repeated,
TFLM's offset 1) or SYMMETRIC (it is, offset 0). Output index d of a
dimension of size n with left pad l reads input index

    d < l:          l + offset - 1 - min(d, l - 1)
    l <= d < l + n: d - l
    d >= l + n:     n - 1 - offset - min(d - l - n, n - 1 - offset)

(TFLM's formula, kept as is: a right pad longer than TensorFlow allows
repeats element 0 there). TFLM's eval supports float32 and int8 only.

Prepare computes, per output dimension, the byte offset in the input of
each output index (one table per dimension, sum of the output dims
entries), and merges the trailing dimensions that have no padding into
the copied element. Eval walks the output in order: an odometer over the
outer dimensions adds their table entries, the inner dimension copies
elements from its own table's offsets. ptr8 reads only (a constant input
may sit at any address), offsets below 2**28: word-size independent.

Refused (PrepareError): paddings that are not constant (TFLM reads them
at eval; here the tables are made at prepare), not [rank, 2], negative,
or that make TFLM read outside the input (a REFLECT pad of n or more, a
SYMMETRIC left pad above n); an output shape other than the input's
padded; a missing MirrorPadOptions table (TFLM leaves its mode unset).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from ..heap import keep

_FLOAT32 = const(0)
_INT32 = const(2)
_INT64 = const(4)
_INT8 = const(9)

_MIRROR_PAD_OPTIONS = const(77)
_MIRROR_PAD_MODE = const(0)
_MODE_REFLECT = const(0)
_MODE_SYMMETRIC = const(1)
_MAX_RANK = const(6)

# Parameter array (int32): r (dimensions), es (bytes per copied element),
# then r sizes, r table starts (indexes into this array), r odometer
# counters, then the tables (input byte offset per output index).
_P_R = const(0)
_P_ES = const(1)
_P_DIMS = const(2)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def source_index(d, left, n, offset):
    """The input index that output index d of a dimension of input size n
    with left pad `left` reads (TFLM's GetInputDimension)."""
    if d < left:
        orig = left + offset - 1
        return orig - min(d, orig - offset)
    d -= left
    if d >= n:
        d -= n
        orig = n - (1 + offset)
        return orig - min(d, orig)
    return d


def _plan(op, x, y, pads, offset):
    """The parameter array for _mirror_pad."""
    shape, out = list(x.shape), list(y.shape)
    es = x.itemsize
    # trailing unpadded dimensions are copied whole, as one element
    while shape and pads[-1] == (0, 0):
        es *= shape.pop()
        out.pop()
        pads = pads[:-1]
    if not shape:
        shape, out, pads = [1], [1], [(0, 0)]
    r = len(shape)
    strides = [es] * r
    for k in range(r - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    tables = []
    for k in range(r):
        n, left = shape[k], pads[k][0]
        for d in range(out[k]):
            i = source_index(d, left, n, offset)
            if not 0 <= i < n:
                _fail(op, "paddings %s too large for input %s shape %s "
                      "(%s mode)" % (pads, x.label(), tuple(x.shape),
                                     "REFLECT" if offset else "SYMMETRIC"))
            tables.append(i * strides[k])
    starts, at = [], _P_DIMS + 3 * r
    for k in range(r):
        starts.append(at)
        at += out[k]
    return array("i", [r, es] + out + starts + [0] * r + tables)


@micropython.viper
def _mirror_pad(x, y, p):
    """Write y (bytes) in order from x, following parameters p."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(p)
    r: int = q[_P_R]
    es: int = q[_P_ES]
    qd: int = _P_DIMS        # q[qd + k]: output size of dimension k
    qt: int = qd + r         # q[qt + k]: start of its table
    qc: int = qt + r         # q[qc + k]: its odometer counter
    last: int = r - 1
    n: int = q[qd + last]
    t: int = q[qt + last]
    rows: int = 1
    k: int = 0
    while k < last:
        q[qc + k] = 0
        rows *= q[qd + k]
        k += 1
    if n == 0:
        rows = 0
    o: int = 0
    row: int = 0
    while row < rows:
        base: int = 0
        k = 0
        while k < last:
            base += q[q[qt + k] + q[qc + k]]
            k += 1
        j: int = 0
        while j < n:
            s: int = base + q[t + j]
            e: int = s + es
            while s < e:
                py[o] = px[s]
                o += 1
                s += 1
            j += 1
        k = last - 1
        while k >= 0:  # advance the odometer over the outer dimensions
            c: int = q[qc + k] + 1
            if c < q[qd + k]:
                q[qc + k] = c
                break
            q[qc + k] = 0
            k -= 1
        row += 1


def _eval(st):
    x, y, p = st
    _mirror_pad(x, y, p)


def prepare(op, ins, outs, ctx):
    """MIRROR_PAD.

    ins: [input float32 / int8 (rank 0-6), paddings (constant int32 or
    int64, shape [rank, 2], (left, right) pairs >= 0)]; outs: [output of
    the input's type, shape input + left + right per dimension].
    MirrorPadOptions.mode: REFLECT or SYMMETRIC. Raises PrepareError
    naming the op and tensor otherwise (see the module docstring).
    Semantics: TFLM kernels/mirror_pad.cc.
    """
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs input, paddings and one output")
    x, pt, y = ins[0], ins[1], outs[0]
    if x.type not in (_FLOAT32, _INT8):
        _fail(op, "input %s is %s; TFLM supports float32 and int8"
              % (x.label(), x.dtype))
    if y.type != x.type:
        _fail(op, "output %s is %s, input %s is %s"
              % (y.label(), y.dtype, x.label(), x.dtype))
    rank = len(x.shape)
    if rank > _MAX_RANK or len(y.shape) != rank:
        _fail(op, "input %s has rank %d (at most %d), output %s rank %d"
              % (x.label(), rank, _MAX_RANK, y.label(), len(y.shape)))
    if tuple(pt.shape) != (rank, 2):
        _fail(op, "paddings %s has shape %s, expected (%d, 2)"
              % (pt.label(), tuple(pt.shape), rank))
    if pt.type not in (_INT32, _INT64):
        _fail(op, "paddings %s is %s; TFLM reads int32 or int64"
              % (pt.label(), pt.dtype))
    v = ctx.const_ints(op, pt, "paddings") if pt.size else ()
    if v is None:
        _fail(op, "paddings %s must be a constant tensor" % pt.label())
    pads = [(v[2 * k], v[2 * k + 1]) for k in range(rank)]
    if op.options_type != _MIRROR_PAD_OPTIONS:
        _fail(op, "has no MirrorPadOptions (TFLM leaves the mode unset)")
    mode = op.opt_byte(_MIRROR_PAD_MODE, 0)
    if mode not in (_MODE_REFLECT, _MODE_SYMMETRIC):
        _fail(op, "unknown mode %d" % mode)
    for k in range(rank):
        lo, hi = pads[k]
        if lo < 0 or hi < 0 or x.shape[k] + lo + hi != y.shape[k]:
            _fail(op, "output %s shape %s is not input %s shape %s padded "
                  "by %s" % (y.label(), tuple(y.shape), x.label(),
                             tuple(x.shape), pads))
    p = _plan(op, x, y, pads, 1 if mode == _MODE_REFLECT else 0)
    return _eval, (x.data, y.data, keep(ctx, p))
