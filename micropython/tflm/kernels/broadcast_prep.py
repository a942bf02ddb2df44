"""Prepare-time half of NumPy-style broadcasting (broadcast.py holds the
eval loops): the checks and the odometer of the binary elementwise
kernels (ADD, SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM, DIV, and
the float32 loops of float_ops and PRELU).

Follows tensorflow/lite/kernels/internal/reference/
process_broadcast_shapes.h (ProcessBroadcastShapes: equal extended shapes
need no broadcast) and reference/broadcast_loop.h
(BroadcastBinaryOpSimple: inputs and output of any rank up to 6
(_MAX_RANK), size-1 dimensions broadcast, loops fused where the strides
allow).

Construction only (interpreter.CONSTRUCTION): kernel modules import it
inside prepare (kernels._LAZY), and a built interpreter drops it.
"""

from array import array

from micropython import const

from ..errors import ModelError, PrepareError

_ACT_RELU6 = const(3)
_ACT_RELU_N1_TO_1 = const(2)

# broadcast_loop.h allows rank 8, but TFLM's RuntimeShape holds at most 6
# dimensions (runtime_shape.h kMaxSmallSize): rank 7 and 8 tensors give
# wrong results there (seen on the oracle), so they are refused.
_MAX_RANK = const(6)


def binary_io(op, ins, outs):
    """(x1, x2, y) of an op with two inputs and one output, all of one
    type; raises PrepareError otherwise."""
    label = op.label()
    if len(ins) != 2 or None in ins or len(outs) != 1:
        raise PrepareError("%s needs two inputs and one output" % label)
    x1, x2, y = ins[0], ins[1], outs[0]
    for t in (x2, y):
        if t.type != x1.type:
            raise PrepareError("%s: %s is %s but %s is %s" % (
                label, t.label(), t.dtype, x1.label(), x1.dtype))
    return x1, x2, y


def int8_io(op, ins, outs, types="int8, float32"):
    """(x1, x2, y): two inputs and one output, all int8 with per-tensor
    quantization and int8 zero points; raises PrepareError otherwise
    (types: what the op's kernels take, for the message)."""
    x1, x2, y = binary_io(op, ins, outs)
    from . import check_int8  # the package: construction only (PARSE)
    check_int8(op, (x1, x2, y), types)
    return x1, x2, y


def activation_range(op, act, y, qmin=-128, qmax=127):
    """(lo, hi) of fused activation act for output y (int8, or int16 with
    qmin / qmax its range), as
    CalculateActivationRangeQuantized (kernel_util.cc), which also fails
    Prepare when round(6 / scale) (RELU6) or round(1 / scale)
    (RELU_N1_TO_1) is outside int32: raises PrepareError then (and when
    that bound plus the zero point reaches 2**31, undefined in TFLM),
    and for unknown activations."""
    from .. import quant
    f = {_ACT_RELU6: 6.0, _ACT_RELU_N1_TO_1: 1.0}.get(act)
    try:
        # TFLM's check lets round(f / scale) == 2**31 ((float)INT32_MAX)
        # through, whose cast to int32_t is undefined, and zero_point + q
        # may overflow int32: refused as well (x86 and Arm builds differ)
        if f is not None and (quant.round_div_f32(f, y.scale)
                              + abs(y.zero_point) >= 1 << 31):
            raise PrepareError("%s: activation bound %r / %s scale %r "
                               "overflows int32" % (op.label(), f, y.label(),
                                                    y.scale))
        return quant.activation_range(act, y.scale, y.zero_point, qmin,
                                      qmax)
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))


def broadcast_loops(op, s1, s2, so):
    """Loops that walk the output of a broadcasting binary op.

    Returns [[size, stride1, stride2, stride_out], ...] innermost first
    (strides in elements, 0 where an input is broadcast), with size-1
    dimensions dropped and dimensions fused where all three tensors are
    contiguous across them. Raises PrepareError unless s1 and s2
    broadcast (NumPy rules) to so.
    """
    n = max(len(s1), len(s2), len(so))
    e1 = [1] * (n - len(s1)) + list(s1)
    e2 = [1] * (n - len(s2)) + list(s2)
    eo = [1] * (n - len(so)) + list(so)
    for a, b, o in zip(e1, e2, eo):
        if (a != b and a != 1 and b != 1) or o != (b if a == 1 else a):
            raise PrepareError("%s: shapes %s and %s do not broadcast to "
                               "output %s" % (op.label(), s1, s2, so))
    loops = []
    st = [1, 1, 1]
    for i in range(n - 1, -1, -1):
        dims = (e1[i], e2[i], eo[i])
        if eo[i] != 1:
            s = [st[k] if dims[k] != 1 else 0 for k in range(3)]
            last = loops[-1] if loops else None
            if last and all(s[k] == last[k + 1] * last[0] for k in range(3)):
                last[0] *= eo[i]
            else:
                loops.append([eo[i]] + s)
        st = [st[k] * dims[k] for k in range(3)]
    return loops or [[1, 0, 0, 0]]


def _extend(shape, n):
    return [1] * (n - len(shape)) + list(shape)


def check(op, x1, x2, y):
    """Check that x1 and x2 broadcast (NumPy rules) to y's shape.

    Returns False when no broadcast is needed (equal extended input
    shapes, as ProcessBroadcastShapes; the output must then have as many
    elements), True otherwise. Raises PrepareError naming op.label() and
    the tensors for shapes that do not broadcast, or ranks above 6.
    """
    n = max(len(x1.shape), len(x2.shape), len(y.shape))
    e1, e2, eo = _extend(x1.shape, n), _extend(x2.shape, n), \
        _extend(y.shape, n)
    if n > _MAX_RANK:
        raise PrepareError("%s: rank %d is not supported (TFLM: at most %d)"
                           % (op.label(), n, _MAX_RANK))
    if e1 == e2 and x1.size == y.size:
        return False
    for a, b, o in zip(e1, e2, eo):
        if (a != b and a != 1 and b != 1) or o != (b if a == 1 else a):
            raise PrepareError("%s: inputs %s %s and %s %s do not broadcast "
                               "to output %s %s" % (
                                   op.label(), x1.label(), x1.shape,
                                   x2.label(), x2.shape, y.label(), y.shape))
    return True


def _can_fuse(out_dim, stride, expected, inner_stride):
    """broadcast_loop.h CanFuseLoops: can this dimension extend the loop
    inside it?"""
    if out_dim == 1:
        return True
    if inner_stride == 0:
        return stride == 0
    return stride == expected


def loops(s1, s2, so):
    """Fused broadcast loops, innermost first: a list of
    [size, stride1, stride2] (strides in elements, 0 where that input is
    broadcast), as BroadcastBinaryOpSimple builds them."""
    n = max(len(s1), len(s2), len(so))
    e1, e2, eo = _extend(s1, n), _extend(s2, n), _extend(so, n)
    out = []
    a_acc = b_acc = 1
    for i in range(n - 1, -1, -1):
        d1, d2, do = e1[i], e2[i], eo[i]
        a = 0 if d1 == 1 and do != 1 else a_acc
        b = 0 if d2 == 1 and do != 1 else b_acc
        if (out and _can_fuse(do, a, a_acc, out[-1][1])
                and _can_fuse(do, b, b_acc, out[-1][2])):
            out[-1][0] *= do
        else:
            out.append([do, a, b])
        a_acc *= d1
        b_acc *= d2
    return out or [[1, 0, 0]]


def walker(x1, x2, y, broadcast, add1=0, add2=0, shift=0, width=1):
    """The odometer array('i') that gather() walks.

    Layout: [n_loops, off1, off2, add1, add2, shift, width, (unused)],
    then per loop (innermost first) [size, counter, stride1, stride2].
    width is the element size in bytes: 1 or 2 (int8, int16: gather()
    stores (v + add) << shift) or 4 (int32 / float32 bits; stored as
    they are); multi-byte elements are read byte by byte, little-endian,
    since model data may be unaligned.
    """
    lps = loops(x1.shape, x2.shape, y.shape) if broadcast \
        else [[y.size, 1, 1]]
    st = [len(lps), 0, 0, add1, add2, shift, width, 0]
    for size, a, b in lps:
        st += [size, 0, a, b]
    return array("i", st)
