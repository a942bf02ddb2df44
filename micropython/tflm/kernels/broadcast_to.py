"""BROADCAST_TO: repeat a tensor along its size-1 (and new leading)
dimensions to a constant shape (a byte copy of any fixed-size type).

Follows tensorflow/lite/micro/kernels/broadcast_to.cc (BroadcastToPrepare,
ValidateOutputTensor) and tensorflow/lite/kernels/internal/reference/
broadcast_to.h: inputs [input (rank <= 5), shape (constant 1-D int32 or
int64)], output of the input's type with the shape's values (rank <= 5,
at least the input's); each input dimension, aligned to the right, is 1
or equal to the output's. The values only move, so every type with a
fixed element size works, as TFLM's byte-wise BroadcastTo.

Eval is copy_util's strided gather with stride 0 along the broadcast
dimensions (ptr8 only, runs merged where contiguous).
"""

from micropython import const

from ..heap import keep
from .copy_util import fail, gather_eval, strided_plan, strides_of

_INT32 = const(2)
_INT64 = const(4)
_MAX_RANK = const(5)


def prepare(op, ins, outs, ctx):
    """BROADCAST_TO.

    ins: [input (any fixed-size type, rank <= 5), shape (constant 1-D
    int32 / int64, output rank <= 5 values)]; outs: [output of the
    input's type, shape the shape's values, each input dimension 1 or
    equal]. Raises PrepareError naming the op and tensor otherwise.
    Semantics: TFLM kernels/broadcast_to.cc.
    """
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        fail(op, "needs input, shape and one output")
    x, sh, y = ins[0], ins[1], outs[0]
    if y.type != x.type or not x.itemsize:
        fail(op, "input %s is %s, output %s is %s: types must match and "
             "have a fixed size" % (x.label(), x.dtype, y.label(), y.dtype))
    if sh.type not in (_INT32, _INT64) or len(sh.shape) != 1:
        fail(op, "shape %s must be a 1-D int32 or int64 tensor, not %s %s"
             % (sh.label(), sh.dtype, tuple(sh.shape)))
    want = ctx.const_ints(op, sh, "shape") if sh.size else ()
    if want is None:
        fail(op, "shape %s must be a constant tensor (TFLM: non-constant "
             "shape not supported)" % sh.label())
    rank, orank = len(x.shape), len(want)
    if not rank <= orank <= _MAX_RANK:
        fail(op, "input %s rank %d, shape %s has %d values: at most %d and "
             "not below the input rank" % (x.label(), rank, sh.label(),
                                           orank, _MAX_RANK))
    if tuple(y.shape) != tuple(want):
        fail(op, "output %s has shape %s, shape %s says %s"
             % (y.label(), tuple(y.shape), sh.label(), tuple(want)))
    ext = orank - rank
    st = strides_of(x.shape)
    plan = [(want[k], 0) for k in range(ext)]
    for k in range(rank):
        d = x.shape[k]
        if d != 1 and d != want[ext + k]:
            fail(op, "input %s shape %s cannot broadcast to %s"
                 % (x.label(), tuple(x.shape), tuple(want)))
        plan.append((want[ext + k], st[k] if d != 1 else 0))
    return gather_eval, (x.data, y.data,
                         keep(ctx, strided_plan(plan, 0, x.itemsize)))
