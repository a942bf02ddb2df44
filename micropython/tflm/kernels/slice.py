"""SLICE: a box of the input, copied (byte copy).

Follows tensorflow/lite/micro/kernels/slice.cc and
kernels/internal/reference/slice.h: input rank <= 5; begin and size are
1-D int32 or int64 tensors (one type) with one value per input axis;
along axis i the output takes input indices begin[i] .. begin[i] +
size[i] - 1, or begin[i] .. end of axis when size[i] is -1. Types:
float32, int8, int16, int32, bool; no quantization check (TFLM has
none): values are copied unchanged.

TFLM reads begin and size at invoke and checks none of them. Constant
ones are checked here at prepare; begin / size computed by the graph are
read at invoke (the output shape stored in the model is the box's shape)
and a box that leaves the input or disagrees with that shape raises a
preallocated InvokeError (where TFLM would read outside the input or
write outside the output).
"""

from array import array

import micropython
from micropython import const

from ..heap import keep
from ..errors import InvokeError
from .copy_util import (BOOL, F32, I8, I16, I32, I64, check_types,
                        const_vector, fail, gather, raise_made, strided_plan,
                        strides_of)

_TYPES = (F32, I8, I16, I32, BOOL)
_MAX_RANK = const(5)


def plan(op, shape, begin, size):
    """(output shape, axes, base) of the box begin / size of shape, for
    copy_util.strided_plan. Raises PrepareError for a box outside."""
    out, axes, base = [], [], 0
    st = strides_of(shape)
    for a, dim in enumerate(shape):
        b, n = begin[a], size[a]
        if n == -1:
            n = dim - b
        if not 0 <= b <= dim or n < 0 or b + n > dim:
            fail(op, "axis %d: begin %d, size %d do not fit input size %d"
                 % (a, begin[a], size[a], dim))
        out.append(n)
        axes.append((n, st[a]))
        base += b * st[a]
    return tuple(out), axes, base


def _index_tensors(op, ins, rank):
    """Checks begin and size: 1-D, rank values, int32 / int64, one type."""
    for t, what in ((ins[1], "begin"), (ins[2], "size")):
        if t is None or t.type not in (I32, I64):
            fail(op, "%s must be an int32 or int64 tensor" % what)
        if len(t.shape) != 1 or t.size != rank:
            fail(op, "%s %s has shape %s; [%d] expected"
                 % (what, t.label(), tuple(t.shape), rank))
    if ins[1].type != ins[2].type:
        fail(op, "begin %s and size %s must have one type"
             % (ins[1].label(), ins[2].label()))


def prepare(op, ins, outs, ctx):
    """Check a SLICE op and plan its copy.

    ins: [input (rank <= 5), begin, size (1-D int32 / int64, one value
    per input axis; constant or computed)]; outs: [output of the input's
    type, shape = the sizes]. Raises PrepareError.
    """
    if len(ins) != 3 or ins[0] is None or len(outs) != 1:
        fail(op, "needs input, begin, size and one output")
    x, y = ins[0], outs[0]
    check_types(op, x, outs, _TYPES, "SLICE")
    rank = len(x.shape)
    if rank > _MAX_RANK:
        fail(op, "input %s has rank %d; TFLM supports at most %d"
             % (x.label(), rank, _MAX_RANK))
    _index_tensors(op, ins, rank)
    if len(y.shape) != rank:
        fail(op, "output %s has rank %d, input %s rank %d"
             % (y.label(), len(y.shape), x.label(), rank))
    if ctx.const_ints(op, ins[1], "begin") is None or \
            ctx.const_ints(op, ins[2], "size") is None:
        return _dynamic(op, x, y, ins[1], ins[2])
    begin = const_vector(op, ins[1], "begin", ctx, rank, int64=True)
    size = const_vector(op, ins[2], "size", ctx, rank, int64=True)
    out, axes, base = plan(op, x.shape, begin, size)
    if tuple(y.shape) != out:
        fail(op, "output %s has shape %s; the slice of input %s gives %s"
             % (y.label(), tuple(y.shape), x.label(), out))
    return _eval, (x.data, y.data,
                   keep(ctx, strided_plan(axes, base, x.itemsize)))


def _eval(st):
    gather(st[0], st[1], st[2])


# --- begin / size computed by the graph ------------------------------------
# g (int32): rank, words per value (1: int32, 2: int64), then per axis the
# input size, the output size and the input byte stride.

def _dynamic(op, x, y, bt, st):
    rank = len(x.shape)
    strides = strides_of(x.shape)
    g = [rank, 2 if bt.type == I64 else 1]
    for a in range(rank):
        g += [x.shape[a], y.shape[a], strides[a] * x.itemsize]
    p = strided_plan([(n, s) for n, s in zip(y.shape, strides)], 0,
                     x.itemsize)
    err = InvokeError("%s: begin %s / size %s do not give a box of input "
                      "%s shape %s with output %s shape %s" % (
                          op.label(), bt.label(), st.label(), x.label(),
                          tuple(x.shape), y.label(), tuple(y.shape)))
    return _eval_dynamic, (x.data, y.data, p, bt.data, st.data,
                           array("i", g), err)


@micropython.viper
def _base(bv, sv, g) -> int:
    """Input byte offset of the box begin bv / size sv (int32 or int64
    values, read byte-wise), or -1 if it does not fit the input or the
    output shape."""
    q = ptr32(g)
    pb = ptr8(bv)
    ps = ptr8(sv)
    one: int = 1
    S: int = one << 31
    rank: int = q[0]
    words: int = q[1]
    base: int = 0
    a: int = 0
    while a < rank:
        dim: int = q[2 + 3 * a]
        n: int = q[3 + 3 * a]
        k: int = 4 * words * a
        b: int = pb[k] | (pb[k + 1] << 8) | (pb[k + 2] << 16)
        b = ((b | (pb[k + 3] << 24)) ^ S) - S
        s: int = ps[k] | (ps[k + 1] << 8) | (ps[k + 2] << 16)
        s = ((s | (ps[k + 3] << 24)) ^ S) - S
        if words == 2:  # int64: the high words must extend the low ones
            k += 4
            hb: int = pb[k] | pb[k + 1] | pb[k + 2] | pb[k + 3]
            hs: int = ps[k] & ps[k + 1] & ps[k + 2] & ps[k + 3]
            if b < 0 or hb != 0:  # begin >= 0
                return -1
            if s < 0:
                if hs != 255:
                    return -1
            elif (ps[k] | ps[k + 1] | ps[k + 2] | ps[k + 3]) != 0:
                return -1
        if s == -1:
            s = dim - b
        if b < 0 or b > dim or s != n or b + n > dim:
            return -1
        base += b * q[4 + 3 * a]
        a += 1
    return base


def _eval_dynamic(st):
    base = _base(st[3], st[4], st[5])
    if base < 0:
        raise_made(st[6])  # made at prepare: no allocation under heap_lock
    p = st[2]
    p[5] = base
    gather(st[0], st[1], p)
