"""PAD and PADV2: a byte copy with a constant border (float32, int8,
int16, int32).

Follows tensorflow/lite/micro/kernels/pad.cc, pad_common.cc (PadPrepare,
PadEval: one kernel for PAD and PADV2) and
kernels/internal/reference/pad.h (PadImpl): input rank <= 5, paddings a
constant int32 [rank, 2] tensor of (before, after) pairs, each output
dimension = input + before + after; the border value is the optional
third input, PADV2's constant_values (one element of the input's type,
constant or not; for int8 it must share the output's scale and zero
point), else 0.0 for float32, the output zero point for int8, 0
otherwise.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)

_TYPES = (_FLOAT32, _INT8, _INT16, _INT32)
_MAX_RANK = const(5)


def _paddings(op, t, rank, ctx):
    """The paddings as a list of (before, after) pairs."""
    if t.type != _INT32 or not t.is_const:
        raise PrepareError("%s: paddings %s must be a constant int32 tensor"
                           % (op.label(), t.label()))
    if t.size != 2 * rank:
        raise PrepareError("%s: paddings %s has %d values for rank %d"
                           % (op.label(), t.label(), t.size, rank))
    v = ctx.const_ints(op, t, "paddings")
    return [(v[2 * i], v[2 * i + 1]) for i in range(rank)]


def _pad_value(op, x, y, cv):
    """A buffer holding the border value (itemsize bytes)."""
    if cv is not None:
        if cv.type != x.type or cv.size != 1:
            raise PrepareError("%s: constant_values %s must be one %s value"
                               % (op.label(), cv.label(), x.dtype))
        if x.type == _INT8 and (cv.zero_point != y.zero_point
                                or cv.scale != y.scale):
            raise PrepareError("%s: constant_values %s must share output %s "
                               "scale and zero point" % (
                                   op.label(), cv.label(), y.label()))
        return cv.data
    if x.type == _INT8:
        if not -128 <= y.zero_point <= 127:
            raise PrepareError("%s: output %s zero point %d is outside int8"
                               % (op.label(), y.label(), y.zero_point))
        return bytes([y.zero_point & 0xFF])
    return bytes(x.itemsize)


def prepare(op, ins, outs, ctx):
    """Check a PAD or PADV2 op and bind its eval.

    ins: [input (rank <= 5), paddings, optional constant_values]; outs:
    [output of the input's type, padded shape]. Raises PrepareError.
    """
    label = op.label()
    if len(ins) not in (2, 3) or None in ins[:2] or len(outs) != 1:
        raise PrepareError("%s needs input, paddings, optional value and "
                           "one output" % label)
    x, y = ins[0], outs[0]
    cv = ins[2] if len(ins) == 3 else None
    if x.type not in _TYPES or y.type != x.type:
        raise PrepareError("%s: input %s is %s, output %s is %s; PAD "
                           "supports float32, int8, int16, int32"
                           % (label, x.label(), x.dtype, y.label(), y.dtype))
    rank = len(x.shape)
    if rank > _MAX_RANK or len(y.shape) != rank:
        raise PrepareError("%s: input %s rank %d (at most %d, output %s "
                           "rank %d)" % (label, x.label(), rank, _MAX_RANK,
                                         y.label(), len(y.shape)))
    pads = _paddings(op, ins[1], rank, ctx)
    for i in range(rank):
        lo, hi = pads[i]
        if lo < 0 or hi < 0 or x.shape[i] + lo + hi != y.shape[i]:
            raise PrepareError("%s: output %s shape %s is not input %s "
                               "shape %s padded by %s" % (
                                   label, y.label(), y.shape, x.label(),
                                   x.shape, pads))
    val = _pad_value(op, x, y, cv)
    n = _MAX_RANK - rank
    dims = [1] * n + list(y.shape)
    lefts = [0] * n + [p[0] for p in pads]
    rights = [0] * n + [p[1] for p in pads]
    g = array("i", dims + lefts + rights + [x.itemsize])
    return _pad, (g, x.data, y.data, val)


@micropython.viper
def _fill(dst, o: int, val, es: int, n: int) -> int:
    """Write n copies of the es-byte value val at dst[o]; returns the new
    offset."""
    d = ptr8(dst)
    v = ptr8(val)
    i: int = 0
    while i < n:
        j: int = 0
        while j < es:
            d[o] = v[j]
            o += 1
            j += 1
        i += 1
    return o


# Geometry: 0..4 output dims (5-D), 5..9 before, 10..14 after, 15 itemsize.

@micropython.viper
def _pad(st):
    g = ptr32(st[0])
    src = ptr8(st[1])
    dst = st[2]
    pd = ptr8(dst)
    val = st[3]
    es: int = g[15]
    D: int = g[4]
    ld: int = g[9]
    rd: int = g[14]
    row: int = (D - ld - rd) * es  # input bytes per depth row
    s: int = 0
    o: int = 0
    i0: int = 0
    while i0 < g[0]:
        in0: int = 1 if g[5] <= i0 and i0 < g[0] - g[10] else 0
        i1: int = 0
        while i1 < g[1]:
            in1: int = in0 if g[6] <= i1 and i1 < g[1] - g[11] else 0
            i2: int = 0
            while i2 < g[2]:
                in2: int = in1 if g[7] <= i2 and i2 < g[2] - g[12] else 0
                i3: int = 0
                while i3 < g[3]:
                    if in2 and g[8] <= i3 and i3 < g[3] - g[13]:
                        o = int(_fill(dst, o, val, es, ld))
                        e: int = s + row
                        while s < e:
                            pd[o] = src[s]
                            o += 1
                            s += 1
                        o = int(_fill(dst, o, val, es, rd))
                    else:
                        o = int(_fill(dst, o, val, es, D))
                    i3 += 1
                i2 += 1
            i1 += 1
        i0 += 1
