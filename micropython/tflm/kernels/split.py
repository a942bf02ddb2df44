"""SPLIT and SPLIT_V: cut a tensor along one axis into several outputs.

Follows tensorflow/lite/micro/kernels/split.cc and split_v.cc. SPLIT's
inputs are (axis, input), SPLIT_V's (input, size_splits, axis); the axis
is a constant int32 tensor (TFLM requires it constant), negative counting
from the input's end. As in TFLM the output shapes say how the input is
cut (SPLIT: equal parts; SPLIT_V: the outputs' sizes along axis, which
TFLM takes from the output shapes without reading size_splits): for each
index of the axes before axis, each output's block is copied in turn.
Types: float32, int8, int16, int32; no quantization check (TFLM has none):
values are copied unchanged. Output shapes that TFLM would copy out of
bounds are rejected here.
"""

from array import array

from micropython import const

from .copy_util import (F32, I8, I16, I32, axis_of, check_types,
                        const_vector, fail, interleave_eval, prod)

_SPLIT_V = const(102)

_TYPES = (F32, I8, I16, I32)


def prepare(op, ins, outs, ctx):
    """Check a SPLIT or SPLIT_V op and bind its copy.

    SPLIT: ins = [axis (constant int32, one value), input]; SPLIT_V: ins =
    [input, size_splits (not read), axis]. outs: tensors of the input's
    type and rank, equal to it except along axis, where their sizes add
    up to the input's (SPLIT: all equal). Raises PrepareError.
    """
    v = op.code == _SPLIT_V
    if len(ins) != (3 if v else 2) or not outs or None in outs:
        fail(op, "needs %s and outputs" % (
            "input, size_splits, axis" if v else "axis, input"))
    x, at = (ins[0], ins[2]) if v else (ins[1], ins[0])
    if x is None:
        fail(op, "input is missing")
    check_types(op, x, outs, _TYPES, "SPLIT_V" if v else "SPLIT")
    rank = len(x.shape)
    axis = axis_of(op, const_vector(op, at, "axis", ctx, 1)[0], rank)
    total = 0
    for y in outs:
        ok = len(y.shape) == rank and all(
            y.shape[a] == x.shape[a] for a in range(rank) if a != axis)
        if not ok or (not v and tuple(y.shape) != tuple(outs[0].shape)):
            fail(op, "output %s shape %s does not split input %s shape %s "
                 "along axis %d" % (y.label(), tuple(y.shape), x.label(),
                                    tuple(x.shape), axis))
        total += y.shape[axis]
    if total != x.shape[axis]:
        fail(op, "outputs add up to %d along axis %d, input %s has %d"
             % (total, axis, x.label(), x.shape[axis]))
    inner = prod(x.shape[axis + 1:]) * x.itemsize
    sizes = array("i", [y.shape[axis] * inner for y in outs])
    return interleave_eval, (x.data, tuple(y.data for y in outs), sizes,
                             len(outs), prod(x.shape[:axis]), 0)
