"""CONCATENATION: a byte copy, for every type TFLM's kernel accepts.

Follows tensorflow/lite/micro/kernels/concatenation.cc and
kernels/internal/reference/concatenation.h: all inputs and the output have
one type (float32, int8, int16, int32, int64 or bool) and rank; dimensions
other than axis match; for each index of the dimensions before axis, each
input's block is copied in turn. int8 inputs must share the output's scale
and zero point and int16 ones have zero point 0 (TFLM's checks: nothing is
requantized). The fused activation must be NONE.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError

_BOOL = const(6)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT64 = const(4)
_INT8 = const(9)

_CONCATENATION_OPTIONS = const(10)
_CONCATENATION_AXIS = const(0)
_CONCATENATION_FUSED_ACTIVATION_FUNCTION = const(1)
_TYPES = (_FLOAT32, _INT8, _INT16, _INT32,
          _INT64, _BOOL)


def _check_quant(op, t, y):
    if t.type == _INT8 and (t.scale != y.scale
                            or t.zero_point != y.zero_point):
        raise PrepareError("%s: input %s scale / zero point %r / %d differ "
                           "from output %s %r / %d" % (
                               op.label(), t.label(), t.scale, t.zero_point,
                               y.label(), y.scale, y.zero_point))
    if t.type == _INT16 and t.zero_point != 0:
        raise PrepareError("%s: int16 %s needs zero point 0"
                           % (op.label(), t.label()))


def prepare(op, ins, outs, ctx):
    """Check a CONCATENATION op and bind its eval.

    ins: one or more tensors of the output's type and rank;
    ConcatenationOptions: axis (negative counts from the end), fused
    activation (NONE only). outs: one tensor whose axis dimension is the
    sum of the inputs'. Raises PrepareError.
    """
    label = op.label()
    if not ins or None in ins or len(outs) != 1:
        raise PrepareError("%s needs inputs and one output" % label)
    y = outs[0]
    if y.type not in _TYPES:
        raise PrepareError("%s: %s type %s is not supported"
                           % (label, y.label(), y.dtype))
    opts = op.options_type == _CONCATENATION_OPTIONS
    axis = op.opt_int(_CONCATENATION_AXIS, 0) if opts else 0
    if opts and op.opt_byte(_CONCATENATION_FUSED_ACTIVATION_FUNCTION, 0) != 0:
        raise PrepareError("%s: fused activation must be NONE" % label)
    rank = len(y.shape)
    if not -rank <= axis < rank:
        raise PrepareError("%s: axis %d out of range for rank %d"
                           % (label, axis, rank))
    axis %= rank
    total = 0
    for t in ins:
        if t.type != y.type or len(t.shape) != rank:
            raise PrepareError("%s: input %s (%s %s) does not match output "
                               "%s (%s %s)" % (label, t.label(), t.dtype,
                                               t.shape, y.label(), y.dtype,
                                               y.shape))
        for i in range(rank):
            if i != axis and t.shape[i] != y.shape[i]:
                raise PrepareError("%s: input %s shape %s does not fit "
                                   "output %s shape %s on axis %d"
                                   % (label, t.label(), t.shape, y.label(),
                                      y.shape, axis))
        total += t.shape[axis]
        _check_quant(op, t, y)
    if total != y.shape[axis]:
        raise PrepareError("%s: inputs give %d along axis %d, output %s "
                           "has %d" % (label, total, axis, y.label(),
                                       y.shape[axis]))
    outer = 1
    for d in y.shape[:axis]:
        outer *= d
    inner = y.itemsize
    for d in y.shape[axis + 1:]:
        inner *= d
    sizes = array("i", [t.shape[axis] * inner for t in ins])
    return _concat, (tuple(t.data for t in ins), sizes, len(ins), outer,
                     y.data)


# _concat's state (inputs' views, sizes, inputs, outer, output): sizes, the
# output and each input's view (a tuple's items: ADDRESS_ITEMS) only cast
# to pointers; a compiled model stores there the address of its view of
# the arena or the model, an int, no object (compiled.py T_ADDR).
ADDRESSES = (1, 4)
ADDRESS_ITEMS = (0,)


@micropython.viper
def _concat(st):
    srcs = st[0]
    sizes = ptr32(st[1])
    n_in: int = int(st[2])
    outer: int = int(st[3])
    dst = ptr8(st[4])
    o: int = 0
    k: int = 0
    while k < outer:
        i: int = 0
        while i < n_in:
            src = ptr8(srcs[i])
            n: int = sizes[i]
            s: int = k * n
            e: int = s + n
            while s < e:
                dst[o] = src[s]
                o += 1
                s += 1
            i += 1
        k += 1
