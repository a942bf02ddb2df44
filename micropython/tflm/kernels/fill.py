"""SHAPE, FILL, ZEROS_LIKE: outputs that do not depend on input values
(FILL: on one scalar).

Follows tensorflow/lite/micro/kernels/shape.cc, fill.cc (with reference
fill.h) and zeros_like.cc:

- SHAPE: the input's dimensions as int32 (TFLM supports no other output
  type); the input may have any type.
- FILL: dims must be a constant 1-D int8/int16/int32/int64 tensor equal to
  the output's shape; value a scalar of the output's type, float32, int32
  or int8 (constant or a model input); its bytes are copied to every
  output element (no requantization, as TFLM).
- ZEROS_LIKE: zeros of the input's type (int8, int32, int64, float32) and
  element count.

Eval writes the output on each invoke (the arena is shared): one viper
byte loop repeating a small pattern, read with ptr8 (a constant may sit
at any address).
"""

import micropython
from micropython import const

from ..errors import PrepareError

_FILL = const(94)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT64 = const(4)
_INT8 = const(9)
_SHAPE = const(77)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _repeat(src, w: int, dst, n: int):
    """dst[k] = src[k % w] for k < n (bytes)."""
    ps = ptr8(src)
    pd = ptr8(dst)
    k: int = 0
    j: int = 0
    while k < n:
        pd[k] = ps[j]
        j += 1
        if j == w:
            j = 0
        k += 1


def _eval(st):
    src, w, dst, n = st
    _repeat(src, w, dst, n)


def _io(op, ins, outs, n_in):
    if len(ins) != n_in or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs %d input%s and one output"
              % (n_in, "" if n_in == 1 else "s"))
    return ins, outs[0]


def _shape(op, ins, outs):
    (x,), y = _io(op, ins, outs, 1)
    if y.type != _INT32:
        _fail(op, "output %s is %s; TFLM supports int32" % (y.label(),
                                                           y.dtype))
    if y.size != len(x.shape):
        _fail(op, "output %s has %d elements, input %s has rank %d"
              % (y.label(), y.size, x.label(), len(x.shape)))
    raw = bytearray()
    for d in x.shape:
        raw += d.to_bytes(4, "little")
    return _eval, (raw, len(raw), y.data, y.nbytes)


DIMS_TYPES = (_INT8, _INT16, _INT32, _INT64)


def _fill(op, ins, outs, ctx):
    (dims, value), y = _io(op, ins, outs, 2)
    if len(value.shape) != 0:
        _fail(op, "value %s must be a scalar, it has shape %s"
              % (value.label(), tuple(value.shape)))
    if value.type != y.type:
        _fail(op, "value %s is %s, output %s is %s" % (
            value.label(), value.dtype, y.label(), y.dtype))
    if y.type not in (_FLOAT32, _INT32, _INT8):
        _fail(op, "output %s is %s; TFLM fills float32, int32 and int8"
              % (y.label(), y.dtype))
    if not dims.is_const:
        _fail(op, "dims %s must be a constant tensor (as in TFLM)"
              % dims.label())
    if dims.type not in DIMS_TYPES or len(dims.shape) != 1:
        _fail(op, "dims %s must be a 1-D integer tensor, it is %s %s"
              % (dims.label(), dims.dtype, tuple(dims.shape)))
    vals = ctx.const_ints(op, dims, "dims", True)
    if vals != tuple(y.shape):
        _fail(op, "dims %s is %s, output %s has shape %s"
              % (dims.label(), vals, y.label(), tuple(y.shape)))
    return _eval, (value.data, y.itemsize, y.data, y.nbytes)


ZEROS_TYPES = (_INT8, _INT32, _INT64, _FLOAT32)


def _zeros_like(op, ins, outs):
    (x,), y = _io(op, ins, outs, 1)
    if x.type not in ZEROS_TYPES:
        _fail(op, "input %s is %s; TFLM supports int8, int32, int64 and "
              "float32" % (x.label(), x.dtype))
    if y.type != x.type or y.size != x.size:
        _fail(op, "output %s (%s, %d elements) must match input %s (%s, %d)"
              % (y.label(), y.dtype, y.size, x.label(), x.dtype, x.size))
    return _eval, (bytes(1), 1, y.data, y.nbytes)


def prepare(op, ins, outs, ctx):
    """SHAPE, FILL or ZEROS_LIKE (see the module docstring for the
    tensors each takes). Raises PrepareError naming the operator and the
    tensor for types or shapes TFLM rejects or that do not match."""
    if op.code == _SHAPE:
        return _shape(op, ins, outs)
    if op.code == _FILL:
        return _fill(op, ins, outs, ctx)
    return _zeros_like(op, ins, outs)
