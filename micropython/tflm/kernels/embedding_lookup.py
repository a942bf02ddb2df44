"""EMBEDDING_LOOKUP: rows of a table picked by int32 ids (float32, int8;
int8 rows to float32 as a hybrid op).

Follows tensorflow/lite/micro/kernels/embedding_lookup.cc
(EmbeddingLookUpPrepare, EvalSimple, EvalHybrid): inputs [lookup (1-D
int32), value (rank >= 2, float32 or int8)], output [lookup size] +
value.shape[1:], of value's type, or float32 for an int8 value (TFLM's
hybrid path, which requires value's zero point 0): each element is
(float)q * scale, micro_utils.h's Dequantize. That product is exact in a
double, so it is dequantize.table's float32 (256 entries, made at
prepare); eval copies 4 bytes per element from it.

An id outside [0, rows) makes TFLM's eval fail; here eval checks every
id before it copies anything and raises the InvokeError made at prepare
(the output is left as it was). A value with 0 rows: TFLM's simple path
returns without writing; such a model is refused.

ptr8 reads only (a constant table or ids may sit at any address); an id
is assembled from its bytes only when its top byte is 0.
"""

from array import array

import micropython
from micropython import const

from ..errors import InvokeError, PrepareError, raise_made

_FLOAT32 = const(0)
_INT32 = const(2)
_INT8 = const(9)

_P_IDS = const(0)
_P_ROWS = const(1)
_P_ROW = const(2)   # bytes (simple) or elements (hybrid) per row
_P_HYBRID = const(3)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _lookup(x, c, y, g, tab, copy: int) -> int:
    """With copy 0: 1 if an id is out of range, else 0. With copy 1:
    copy the rows (ids checked), through the float32 table tab (1024
    bytes) for a hybrid lookup."""
    px = ptr8(x)
    pc = ptr8(c)
    py = ptr8(y)
    pt = ptr8(tab)
    q = ptr32(g)
    n: int = q[_P_IDS]
    rows: int = q[_P_ROWS]
    row: int = q[_P_ROW]
    hybrid: int = q[_P_HYBRID]
    o: int = 0
    i: int = 0
    while i < n:
        k: int = 4 * i
        if pc[k + 3] != 0:
            return 1
        idx: int = pc[k] | (pc[k + 1] << 8) | (pc[k + 2] << 16)
        if idx >= rows:
            return 1
        if copy:
            s: int = idx * row
            e: int = s + row
            if hybrid:
                while s < e:
                    t: int = px[s] * 4
                    py[o] = pt[t]
                    py[o + 1] = pt[t + 1]
                    py[o + 2] = pt[t + 2]
                    py[o + 3] = pt[t + 3]
                    o += 4
                    s += 1
            else:
                while s < e:
                    py[o] = px[s]
                    o += 1
                    s += 1
        i += 1
    return 0


def _eval(st):
    x, c, y, g, tab, err = st
    if _lookup(x, c, y, g, tab, 0):
        raise_made(err)  # a copy: a re-raised err would keep growing
    _lookup(x, c, y, g, tab, 1)


def prepare(op, ins, outs, ctx):
    """EMBEDDING_LOOKUP.

    ins: [lookup (1-D int32 ids, constant or not), value (float32 or
    int8, rank >= 2, at least one row)]; outs: [value's type (or float32
    for an int8 value with zero point 0), shape [ids] + value.shape[1:]].
    Raises PrepareError naming the op and tensor otherwise; eval raises
    InvokeError for an id out of range. Semantics: TFLM
    kernels/embedding_lookup.cc.
    """
    from ..heap import keep
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs lookup, value and one output")
    c, x, y = ins[0], ins[1], outs[0]
    if c.type != _INT32 or len(c.shape) != 1:
        _fail(op, "lookup %s must be a 1-D int32 tensor, not %s %s"
              % (c.label(), c.dtype, tuple(c.shape)))
    if x.type not in (_FLOAT32, _INT8) or len(x.shape) < 2:
        _fail(op, "value %s is %s of rank %d; TFLM supports float32 and "
              "int8 of rank >= 2" % (x.label(), x.dtype, len(x.shape)))
    hybrid = x.type == _INT8 and y.type == _FLOAT32
    if y.type != x.type and not hybrid:
        _fail(op, "output %s is %s, value %s is %s"
              % (y.label(), y.dtype, x.label(), x.dtype))
    want = (c.shape[0],) + tuple(x.shape[1:])
    if tuple(y.shape) != want:
        _fail(op, "output %s has shape %s, expected %s"
              % (y.label(), tuple(y.shape), want))
    rows = x.shape[0]
    if rows < 1 or rows >= 1 << 24:
        _fail(op, "value %s has %d rows; 1 to 2**24 - 1 supported"
              % (x.label(), rows))
    cols = x.size // rows
    tab = b""
    if hybrid:
        if not x.scales or x.zero_point != 0:
            _fail(op, "int8 value %s needs a scale and zero point 0 for a "
                  "float32 output" % x.label())
        from .dequantize import table
        from ..errors import ModelError
        try:
            tab = table(x.scale, 0, True, ctx)
        except ModelError as e:
            _fail(op, "value %s: %s" % (x.label(), e))
    g = array("i", [c.size, rows, cols if hybrid else cols * x.itemsize,
                    1 if hybrid else 0])
    err = InvokeError("%s: an id in %s is outside [0, %d)"
                      % (op.label(), c.label(), rows))
    return _eval, (x.data, c.data, y.data, keep(ctx, g), tab, err)
