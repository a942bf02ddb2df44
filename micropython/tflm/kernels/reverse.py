"""REVERSE_V2: reverse a tensor along a run of consecutive axes (a byte
copy: float32, int8, uint8, int16, int32, int64, bool).

Follows tensorflow/lite/micro/kernels/reverse.cc (ReverseV2Prepare,
ReverseV2Eval) and tensorflow/lite/kernels/internal/reference/reverse.h:
inputs [input (rank <= 6), axis (1-D int32)], output of the input's type
and shape. Negative axes count from the end; after sorting, the axes
must be consecutive (TFLM's eval fails otherwise: "Non-contiguous `axes`
not supported", which also refuses a repeated axis). Reversing a run of
axes is reversing each of them.

Here the axis tensor must be constant and hold at least one axis (TFLM
reads axes[num_axes - 1] of an empty one, out of bounds); everything
else TFLM checks at eval is checked at prepare, as PrepareError. Eval is
copy_util's strided gather with negative strides along the reversed
axes (runs merged where contiguous; ptr8 only).
"""

from micropython import const

from ..heap import keep
from .copy_util import (BOOL, F32, I8, I16, I32, I64, fail, gather_eval,
                        strided_plan, strides_of)

_INT32 = const(2)
_UINT8 = const(3)
_MAX_RANK = const(6)

_TYPES = (F32, I8, _UINT8, I16, I32, I64, BOOL)


def prepare(op, ins, outs, ctx):
    """REVERSE_V2.

    ins: [input float32 / int8 / uint8 / int16 / int32 / int64 / bool
    (rank 1-6), axis (constant 1-D int32, 1 to rank distinct values in
    [-rank, rank), consecutive once made non-negative)]; outs: [output of
    the input's type, quantization and shape]. Raises PrepareError naming
    the op and tensor otherwise. Semantics: TFLM kernels/reverse.cc.
    """
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        fail(op, "needs input, axis and one output")
    x, at, y = ins[0], ins[1], outs[0]
    if x.type not in _TYPES:
        fail(op, "input %s is %s; TFLM supports float32, int8, uint8, "
             "int16, int32, int64, bool" % (x.label(), x.dtype))
    if y.type != x.type or tuple(y.shape) != tuple(x.shape):
        fail(op, "output %s (%s %s) must have input %s type and shape "
             "(%s %s)" % (y.label(), y.dtype, tuple(y.shape), x.label(),
                          x.dtype, tuple(x.shape)))
    rank = len(x.shape)
    if rank > _MAX_RANK:
        fail(op, "input %s has rank %d; at most %d" % (x.label(), rank,
                                                       _MAX_RANK))
    if at.type != _INT32 or len(at.shape) != 1:
        fail(op, "axis %s must be a 1-D int32 tensor, not %s %s"
             % (at.label(), at.dtype, tuple(at.shape)))
    axes = ctx.const_ints(op, at, "axis") if at.size else ()
    if axes is None:
        fail(op, "axis %s must be a constant tensor" % at.label())
    if not 1 <= len(axes) <= rank:
        fail(op, "axis %s has %d values for input %s of rank %d (1 to "
             "rank)" % (at.label(), len(axes), x.label(), rank))
    norm = []
    for a in axes:
        if not -rank <= a < rank:
            fail(op, "axis %d is out of range for rank %d" % (a, rank))
        norm.append(a + rank if a < 0 else a)
    norm.sort()
    for k in range(1, len(norm)):
        if norm[k] != norm[k - 1] + 1:
            fail(op, "axes %s are not consecutive (TFLM: non-contiguous "
                 "axes not supported)" % (list(axes),))
    st = strides_of(x.shape)
    base = 0
    plan = []
    for k in range(rank):
        c, s = x.shape[k], st[k]
        if norm[0] <= k <= norm[-1] and c:
            base += (c - 1) * s
            s = -s
        plan.append((c, s))
    return gather_eval, (x.data, y.data,
                         keep(ctx, strided_plan(plan, base, x.itemsize)))
