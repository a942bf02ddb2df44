"""ARG_MAX, ARG_MIN: index of the largest / smallest value along an axis.

Follows tensorflow/lite/micro/kernels/arg_min_max.cc and
tensorflow/lite/kernels/internal/reference/arg_min_max.h: input int8
(raw values, quantization ignored) or float32; axis an int32 tensor of
one value (negative counts from the end), constant or a model input
(read at each eval); output int32 (TFLM rejects int64 outputs and axes).
For each (outer, inner) position the scan starts at index 0 and a later
value wins only if strictly greater (ARG_MAX) / smaller (ARG_MIN), so
ties keep the first index. float32: TFLM's micro kernel passes
GreaterFn / LessFn (plain C comparisons), so a NaN never wins and, once
the first value is NaN, nothing replaces it (index 0); -0.0 equals 0.0.
Comparisons use the order key of the bits (magnitude, negated when the
sign bit is set).

An axis input whose value does not give the output's shape (TFLM's
undefined behaviour) raises the InvokeError made at prepare (through
errors.raise_made, so repeated failures do not grow it); nothing is
written then.
"""

from array import array

import micropython
from micropython import const

from ..errors import InvokeError, PrepareError, raise_made

_ARG_MIN = const(79)
_FLOAT32 = const(0)
_INT32 = const(2)
_INT8 = const(9)



def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _arg(x, a, y, g, mode: int) -> int:
    """y[outer * inner + k] = the arg index; g = array('i') of (outer,
    size, inner, valid) for each axis, rank at the end, a: the axis (an
    aligned int32 buffer). mode: bit 0 float32, bit 1 ARG_MIN. Returns 1
    for an invalid axis (nothing written), else 0."""
    px = ptr8(x)
    pw = ptr32(x)
    pa = ptr32(a)
    py = ptr32(y)
    q = ptr32(g)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    INF: int = 0xFF * (one << 23)
    rank: int = int(len(g)) // 4
    ax: int = (pa[0] ^ S) - S
    if ax < 0:
        ax += rank
    if ax < 0 or ax >= rank or q[4 * ax + 3] == 0:
        return 1
    outer: int = q[4 * ax]
    size: int = q[4 * ax + 1]
    inner: int = q[4 * ax + 2]
    is_f: int = mode & 1
    is_min: int = mode >> 1
    o: int = 0
    b: int = 0
    while b < outer:
        k: int = 0
        while k < inner:
            i: int = b * size * inner + k
            best: int = 0
            if is_f:
                v: int = pw[i]
                nan: int = 1 if (v & MAG) > INF else 0
                key: int = v & MAG
                if (v >> 31) & 1:
                    key = 0 - key
            else:
                key = (px[i] ^ 0x80) - 0x80
            j: int = 1
            while j < size:
                i += inner
                if is_f:
                    v = pw[i]
                    c: int = v & MAG
                    if c > INF:  # a NaN candidate never wins
                        j += 1
                        continue
                    if nan:  # nothing compares greater or less than NaN
                        j += 1
                        continue
                    if (v >> 31) & 1:
                        c = 0 - c
                else:
                    c = (px[i] ^ 0x80) - 0x80
                win: int = 0
                if is_min:
                    if c < key:
                        win = 1
                elif c > key:
                    win = 1
                if win:
                    key = c
                    best = j
                j += 1
            py[o] = best
            o += 1
            k += 1
        b += 1
    return 0


def _eval(st):
    x, a, y, g, mode, err = st
    if _arg(x, a, y, g, mode):
        raise_made(err)  # a copy: a re-raised err would keep growing


def _table(x_shape, y_shape):
    """array('i'): (outer, size, inner, valid) per axis; valid when the
    input shape without that axis is the output shape."""
    rows = []
    for ax in range(len(x_shape)):
        outer = inner = 1
        for d in x_shape[:ax]:
            outer *= d
        for d in x_shape[ax + 1:]:
            inner *= d
        ok = tuple(x_shape[:ax]) + tuple(x_shape[ax + 1:]) == tuple(y_shape)
        rows += [outer, x_shape[ax], inner, 1 if ok else 0]
    return array("i", rows)


def prepare(op, ins, outs, ctx):
    """ARG_MAX / ARG_MIN.

    ins: [input int8 or float32 of rank >= 1, axis: int32 tensor of one
    element (constant or not)]; outs: [int32, the input's shape without
    the axis]. Raises PrepareError naming the operator and the tensor
    for other types, an int64 output or axis, a constant axis out of
    range or not matching the output shape, or an output shape that no
    axis gives. Semantics: TFLM arg_min_max.cc / reference arg_min_max.h.
    """
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs an input, an axis and one output")
    x, axis, y = ins[0], ins[1], outs[0]
    if x.type not in (_INT8, _FLOAT32):
        _fail(op, "input %s is %s; int8 and float32 are supported"
              % (x.label(), x.dtype))
    if axis.type != _INT32 or axis.size != 1:
        _fail(op, "axis %s must be one int32 value, it is %s %s"
              % (axis.label(), axis.dtype, tuple(axis.shape)))
    if y.type != _INT32:
        _fail(op, "output %s is %s; TFLM supports int32 only"
              % (y.label(), y.dtype))
    rank = len(x.shape)
    if rank == 0:
        _fail(op, "input %s is a scalar" % x.label())
    g = _table(x.shape, y.shape)
    if axis.is_const:
        a = ctx.const_ints(op, axis, "axis")[0]
        if not -rank <= a < rank or not g[4 * (a % rank) + 3]:
            _fail(op, "axis %d of %s does not reduce input %s %s to output "
                  "%s %s" % (a, axis.label(), x.label(), tuple(x.shape),
                             y.label(), tuple(y.shape)))
        adata = array("i", (a,))
    else:
        if not any(g[4 * k + 3] for k in range(rank)):
            _fail(op, "no axis reduces input %s %s to output %s %s"
                  % (x.label(), tuple(x.shape), y.label(), tuple(y.shape)))
        adata = axis.data  # an activation: aligned in the arena
    xd = x.data
    if x.type == _FLOAT32:
        from .f32 import words
        xd = words(x, ctx)
    mode = (1 if x.type == _FLOAT32 else 0) | (
        2 if op.code == _ARG_MIN else 0)
    err = InvokeError("%s: the value of axis %s does not reduce input %s "
                      "%s to output %s %s" % (op.label(), axis.label(),
                                              x.label(), tuple(x.shape),
                                              y.label(), tuple(y.shape)))
    return _eval, (xd, adata, y.data, g, mode, err)  # _arg reads len(g)
