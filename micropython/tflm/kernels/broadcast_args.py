"""BROADCAST_ARGS: the broadcast shape of two shapes (int32, int64).

Follows tensorflow/lite/micro/kernels/broadcast_args.cc and
tensorflow/lite/kernels/internal/reference/broadcast_args.h: inputs two
1-D shape vectors s1, s2 of one type (int32 or int64, constant or not),
output a 1-D vector of that type. Output entry i counted from the end
is, with s1_i and s2_i the entries counted from their ends (1 past
their start):

    s2_i if s1_i == 1, else s1_i if s2_i == 1, else s1_i (== s2_i)

for as many entries as the output holds. As TFLM, int64 entries are
compared and written as their low 32 bits (TFLM keeps them in an int);
two different entries, neither 1, make TFLM abort (TFLITE_CHECK_EQ):
here a PrepareError when both inputs are constant, else an InvokeError
made at prepare (eval checks every entry before it writes any).

ptr8 reads and writes only (constants may sit at any address).
"""

from array import array

import micropython
from micropython import const

from ..errors import InvokeError, PrepareError, raise_made

_INT32 = const(2)
_INT64 = const(4)

_P_N1 = const(0)
_P_N2 = const(1)
_P_N = const(2)
_P_W = const(3)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _bargs(a, b, y, p, write: int) -> int:
    """With write 0: 1 if two entries conflict, else 0. With write 1:
    write the output (entries checked)."""
    pa = ptr8(a)
    pb = ptr8(b)
    py = ptr8(y)
    q = ptr32(p)
    n1: int = q[_P_N1]
    n2: int = q[_P_N2]
    n: int = q[_P_N]
    w: int = q[_P_W]
    i: int = 0
    while i < n:
        u1: int = 1
        u2: int = 1
        if i < n1:
            k: int = (n1 - 1 - i) * w
            u1 = (pa[k] | (pa[k + 1] << 8) | (pa[k + 2] << 16)
                  | (pa[k + 3] << 24))
        if i < n2:
            k = (n2 - 1 - i) * w
            u2 = (pb[k] | (pb[k + 1] << 8) | (pb[k + 2] << 16)
                  | (pb[k + 3] << 24))
        r: int = u1
        if u1 == 1:
            r = u2
        elif u2 != 1 and u2 != u1:
            return 1
        if write:
            j: int = (n - 1 - i) * w
            py[j] = r
            py[j + 1] = r >> 8
            py[j + 2] = r >> 16
            py[j + 3] = r >> 24
            if w == 8:
                hi: int = 0
                if (r >> 31) & 1:
                    hi = 0xFF
                py[j + 4] = hi
                py[j + 5] = hi
                py[j + 6] = hi
                py[j + 7] = hi
        i += 1
    return 0


def _eval(st):
    a, b, y, p, err = st
    if _bargs(a, b, y, p, 0):
        raise_made(err)  # a copy: a re-raised err would keep growing
    _bargs(a, b, y, p, 1)


def prepare(op, ins, outs, ctx):
    """BROADCAST_ARGS.

    ins: [shape1, shape2: 1-D int32 or int64, one type, constant or
    not]; outs: [1-D vector of their type]. Raises PrepareError naming
    the op and tensor otherwise (and for constant shapes that do not
    broadcast); eval raises InvokeError for others. Semantics: TFLM
    kernels/broadcast_args.cc, reference/broadcast_args.h.
    """
    from ..heap import keep
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs two shapes and one output")
    s1, s2, y = ins[0], ins[1], outs[0]
    if s1.type not in (_INT32, _INT64) or s2.type != s1.type or \
            y.type != s1.type:
        _fail(op, "shapes %s (%s), %s (%s) and output %s (%s) must all be "
              "int32 or all int64" % (s1.label(), s1.dtype, s2.label(),
                                      s2.dtype, y.label(), y.dtype))
    for t in (s1, s2, y):
        if len(t.shape) != 1:
            _fail(op, "%s has shape %s; must be 1-D" % (t.label(),
                                                        tuple(t.shape)))
    p = array("i", [s1.size, s2.size, y.size, s1.itemsize])
    err = InvokeError("%s: shapes %s and %s do not broadcast"
                      % (op.label(), s1.label(), s2.label()))
    if s1.const_pos is not None and s2.const_pos is not None and \
            _bargs(s1.data, s2.data, b"", p, 0):
        _fail(op, "shapes %s %s and %s %s do not broadcast" % (
            s1.label(), ctx.const_ints(op, s1, "shape1"), s2.label(),
            ctx.const_ints(op, s2, "shape2")))
    return _eval, (s1.data, s2.data, y.data, keep(ctx, p), err)
