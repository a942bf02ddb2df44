"""PACK and UNPACK: stack tensors along a new axis, or take one apart.

Follows tensorflow/lite/micro/kernels/pack.cc and unpack.cc. PACK:
values_count inputs of one shape S become an output of rank len(S) + 1
whose dimension `axis` (negative: counted from the output's end) is
values_count; for each index of the axes before axis, each input's block
of the axes after it is copied in turn. UNPACK is the reverse: an input
with dimension `axis` (counted on the input) equal to num gives num
outputs without that axis. Types: PACK float32, int8, int16, int32,
int64; UNPACK float32, int8, int16, int32 (TFLM's lists). No
quantization check (TFLM has none): values are copied unchanged. TFLM has
no Prepare for these: shapes and counts that it would copy out of bounds
are rejected here.
"""

from array import array

from micropython import const

from .copy_util import (F32, I8, I16, I32, I64, axis_of, check_types, fail,
                        interleave_eval, prod)

_PACK = const(83)
_PACK_OPTIONS = const(59)
_UNPACK_OPTIONS = const(64)
_PACK_VALUES_COUNT = const(0)
_PACK_AXIS = const(1)
_UNPACK_NUM = const(0)
_UNPACK_AXIS = const(1)

_PACK_TYPES = (F32, I8, I16, I32, I64)
_UNPACK_TYPES = (F32, I8, I16, I32)


def _options(op, want, f_count, f_axis):
    """(fields f_count, f_axis) of the op's options table if it is of
    union type want, else (0, 0): TFLM's parser leaves the defaults when
    builtin_options is another table or none (then TFLM copies nothing,
    and the count check below rejects the op)."""
    if op.options_type != want:
        return 0, 0
    return op.opt_int(f_count), op.opt_int(f_axis)


def _blocks(big, axis):
    """(outer, inner) element counts around axis of shape big."""
    return prod(big[:axis]), prod(big[axis + 1:])


def _check_parts(op, big, parts, axis, what):
    want = tuple(big[:axis]) + tuple(big[axis + 1:])
    for t in parts:
        if tuple(t.shape) != want:
            fail(op, "%s %s has shape %s; %s expected" % (
                what, t.label(), tuple(t.shape), want))


def _pack(op, ins, outs):
    if not ins or None in ins or len(outs) != 1 or outs[0] is None:
        fail(op, "needs inputs and one output")
    y = outs[0]
    for t in ins:
        check_types(op, t, outs, _PACK_TYPES, "PACK")
    count, axis = _options(op, _PACK_OPTIONS, _PACK_VALUES_COUNT, _PACK_AXIS)
    if count != len(ins):
        fail(op, "values_count %d but %d inputs" % (count, len(ins)))
    rank = len(y.shape)
    axis = axis_of(op, axis, rank)
    if y.shape[axis] != count:
        fail(op, "output %s dimension %d is %d, not values_count %d"
             % (y.label(), axis, y.shape[axis], count))
    _check_parts(op, y.shape, ins, axis, "input")
    return y, ins, axis, 1


def _unpack(op, ins, outs):
    if len(ins) != 1 or ins[0] is None or not outs or None in outs:
        fail(op, "needs one input and outputs")
    x = ins[0]
    check_types(op, x, outs, _UNPACK_TYPES, "UNPACK")
    num, axis = _options(op, _UNPACK_OPTIONS, _UNPACK_NUM, _UNPACK_AXIS)
    rank = len(x.shape)
    axis = axis_of(op, axis, rank)
    if num != len(outs) or x.shape[axis] != num:
        fail(op, "num %d, %d outputs, input %s dimension %d is %d: they "
             "must agree" % (num, len(outs), x.label(), axis,
                             x.shape[axis]))
    _check_parts(op, x.shape, outs, axis, "output")
    return x, outs, axis, 0


def prepare(op, ins, outs, ctx):
    """Check a PACK or UNPACK op and bind its copy.

    PACK: ins = values_count tensors of one shape and type; PackOptions
    values_count, axis; outs = [the stacked tensor]. UNPACK: ins = [one
    tensor]; UnpackOptions num, axis; outs = num tensors. Raises
    PrepareError.
    """
    if op.code == _PACK:
        big, parts, axis, pack = _pack(op, ins, outs)
    else:
        big, parts, axis, pack = _unpack(op, ins, outs)
    outer, inner = _blocks(big.shape, axis)
    n = len(parts)
    sizes = array("i", [inner * big.itemsize] * n)
    return interleave_eval, (big.data, tuple(t.data for t in parts), sizes,
                             n, outer, pack)
