"""STRIDED_SLICE: a strided view of the input, copied (byte copy).

Follows tensorflow/lite/micro/kernels/strided_slice.cc,
strided_slice_common.cc and kernels/internal/reference/strided_slice.h,
strided_slice_logic.h: input rank <= 4; begin, end and strides are
constant int32 tensors (the first rank values are used); strides are not
0. Per axis, begin and end count from the end when negative and are
clamped to [0, size] (stride > 0) or [-1, size - 1] (stride < 0);
begin_mask / end_mask bits take the whole axis; a shrink_axis_mask bit
takes the one element at begin and drops the axis from the output. As in
TFLM, ellipsis_mask, new_axis_mask and offset are ignored (TFLM's
BuildStridedSliceParams sets them to 0/false), and the output shape stored
in the model must be the one these rules give. Types: float32, int8,
int16, int32, bool; no quantization check (TFLM has none): values are
copied unchanged.

A shrunk axis with a negative stride, or whose begin is past the end of
the axis, makes TFLM's Eval write nothing at all (its output keeps stale
bytes): rejected here with a PrepareError.
"""

from micropython import const

from .copy_util import (BOOL, F32, I8, I16, I32, check_types, const_vector,
                        fail, gather_eval, strided_plan, strides_of)

_TYPES = (F32, I8, I16, I32, BOOL)
_MAX_RANK = const(4)
_STRIDED_SLICE_OPTIONS = const(32)  # BuiltinOptions.StridedSliceOptions
_STRIDED_SLICE_BEGIN_MASK = const(0)
_STRIDED_SLICE_END_MASK = const(1)
_STRIDED_SLICE_SHRINK_AXIS_MASK = const(4)
_INT_MIN, _INT_MAX = -(1 << 31), (1 << 31) - 1


def _clamp(v, lo, hi):
    return hi if v > hi else lo if v < lo else v


def _start(b, size, stride, masked):
    """TFLM's StartForAxis (begin_mask applied before the clamp)."""
    if masked:
        b = _INT_MIN if stride > 0 else _INT_MAX
    if b < 0:
        b += size
    return _clamp(b, 0, size) if stride > 0 else _clamp(b, -1, size - 1)


def _stop(e, size, stride, masked):
    """TFLM's StopForAxis for an axis that is not shrunk."""
    if masked:
        e = _INT_MAX if stride > 0 else _INT_MIN
    if e < 0:
        e += size
    return _clamp(e, 0, size) if stride > 0 else _clamp(e, -1, size - 1)


def _count(start, stop, stride):
    """Iterations of `for i = start; stride > 0 ? i < stop : i > stop`."""
    if stride > 0:
        n = (stop - start + stride - 1) // stride
    else:
        n = (start - stop - stride - 1) // -stride
    return n if n > 0 else 0


def plan(op, shape, begin, end, strides, masks, itemsize):
    """(output shape, gather plan) of a strided slice of shape.

    masks: (begin_mask, end_mask, shrink_axis_mask). Raises PrepareError
    for a zero stride or an axis whose shrink TFLM would not write.
    """
    bm, em, sm = masks
    axes, out, base = [], [], 0
    st = strides_of(shape)
    for a, size in enumerate(shape):
        k = strides[a]
        if k == 0:
            fail(op, "stride of axis %d is 0 (TFLM: stride value has to be "
                 "non-zero)" % a)
        start = _start(begin[a], size, k, bm >> a & 1)
        if sm >> a & 1:
            if k < 0 or start >= size:
                fail(op, "shrink_axis on axis %d with begin %d, stride %d: "
                     "TFLM writes no output" % (a, begin[a], k))
            base += start * st[a]
            continue
        n = _count(start, _stop(end[a], size, k, em >> a & 1), k)
        out.append(n)
        axes.append((n, k * st[a]))
        base += start * st[a]
    return tuple(out), axes, base


def prepare(op, ins, outs, ctx):
    """Check a STRIDED_SLICE op and plan its copy.

    ins: [input (rank <= 4), begin, end, strides (constant int32 tensors
    of at least rank values)]; StridedSliceOptions: begin_mask, end_mask,
    shrink_axis_mask (ellipsis_mask, new_axis_mask, offset ignored as in
    TFLM). outs: [output of the input's type with the sliced shape].
    Raises PrepareError.
    """
    if len(ins) != 4 or ins[0] is None or len(outs) != 1:
        fail(op, "needs input, begin, end, strides and one output")
    x, y = ins[0], outs[0]
    check_types(op, x, outs, _TYPES, "STRIDED_SLICE")
    rank = len(x.shape)
    if rank > _MAX_RANK:
        fail(op, "input %s has rank %d; TFLM supports at most %d"
             % (x.label(), rank, _MAX_RANK))
    vals = []
    for t, what in zip(ins[1:], ("begin", "end", "strides")):
        v = const_vector(op, t, what, ctx)
        if len(v) < rank:
            fail(op, "%s %s has %d values for input rank %d"
                 % (what, t.label(), len(v), rank))
        vals.append(v)
    # TFLM reads the masks only from a StridedSliceOptions table (another
    # union type, or none: all 0).
    masks = (op.opt_int(_STRIDED_SLICE_BEGIN_MASK),
             op.opt_int(_STRIDED_SLICE_END_MASK),
             op.opt_int(_STRIDED_SLICE_SHRINK_AXIS_MASK)) if \
        op.options_type == _STRIDED_SLICE_OPTIONS else (0, 0, 0)
    out, axes, base = plan(op, x.shape, vals[0], vals[1], vals[2], masks,
                           x.itemsize)
    if tuple(y.shape) != out:
        fail(op, "output %s has shape %s; slicing input %s shape %s "
             "gives %s" % (y.label(), tuple(y.shape), x.label(),
                           tuple(x.shape), out))
    return gather_eval, (x.data, y.data, strided_plan(axes, base,
                                                      x.itemsize))
