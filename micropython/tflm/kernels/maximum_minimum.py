"""MAXIMUM and MINIMUM: int8, int32 and float32, NumPy-style broadcasting.

Follows tensorflow/lite/micro/kernels/maximum_minimum.cc (no Prepare: no
quantization checks, int8 values compare raw, ignoring scales and zero
points) and reference/maximum_minimum.h (MaximumMinimumBroadcastSlow):

    MAXIMUM: out = x1 > x2 ? x1 : x2      MINIMUM: out = x1 < x2 ? x1 : x2

float32 compares as IEEE 754 does (on integer bit patterns: -0.0 == 0.0,
any comparison with NaN is false, so ties and NaNs give x2). Eval walks
the output in chunks (broadcast.gather), selects, stores.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .rescale import store_i8
from . import broadcast

_FLOAT32 = const(0)
_INT32 = const(2)
_INT8 = const(9)
_MAXIMUM = const(55)

# tensor type -> (element bytes, float compare)
_TYPES = {_INT8: (1, 0), _INT32: (4, 0), _FLOAT32: (4, 1)}


def prepare(op, ins, outs, ctx):
    """Check a MAXIMUM / MINIMUM op and bind its eval.

    ins: two tensors of the output's type (int8, int32 or float32) whose
    shapes broadcast to the output's. Raises PrepareError otherwise.
    """
    from . import broadcast_prep as bp
    from .conv_util import keep, scratch_halves
    x1, x2, y = bp.binary_io(op, ins, outs)
    if y.type not in _TYPES:
        raise PrepareError("%s: %s is %s; only int8, int32 and float32 are "
                           "supported" % (op.label(), y.label(), y.dtype))
    width, flt = _TYPES[y.type]
    bc = bp.check(op, x1, x2, y)
    st = bp.walker(x1, x2, y, bc, width=width)
    sa, sb, half = scratch_halves(ctx)
    mode = (1 if op.code == _MAXIMUM else 0) | (2 if flt else 0)
    qp = array("i", [0, -128, 127]) if width == 1 else None
    return _eval, (x1.data, x2.data, y.data, y.size, ctx.scratch, sb, half,
                   keep(ctx, st), mode, keep(ctx, qp))


# eval's state (d1, d2, yd, total, sa, sb, half, walker, mode, qp): the
# views only cast to pointers (by broadcast.py's, _select's and
# store_i8's viper code); a compiled model stores there the address of its
# view of the arena or the model, an int, no object (compiled.py T_ADDR).
ADDRESSES = (0, 1, 2, 4, 5, 7, 9)


def _eval(state):
    d1, d2, yd, total, sa, sb, half, st, mode, qp = state
    broadcast.reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, st)
        _select(sa, sb, n, mode)
        if qp is None:
            broadcast.store_w32(sa, n, yd, off)
        else:
            store_i8(sa, n, yd, off, qp)
        off += n


@micropython.viper
def _select(a, b, n: int, mode: int):
    """a[i] = a[i] > b[i] ? a[i] : b[i] (mode bit 0 set: MAXIMUM) or
    a[i] < b[i] ? a[i] : b[i] (MINIMUM), for i < n. mode bit 1: the
    words are float32 bit patterns, compared as floats: each maps to the
    signed key +-magnitude, and a NaN compares false."""
    pa = ptr32(a)
    pb = ptr32(b)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    INF: int = 0xFF * (one << 23)
    is_max: int = mode & 1
    flt: int = mode & 2
    i: int = 0
    while i < n:
        u: int = pa[i]
        v: int = pb[i]
        ka: int = (u ^ S) - S
        kb: int = (v ^ S) - S
        if flt:
            ka = u & MAG
            kb = v & MAG
            if ka > INF or kb > INF:  # NaN: the comparison is false
                pa[i] = v
                i += 1
                continue
            if (u >> 31) & 1:
                ka = 0 - ka
            if (v >> 31) & 1:
                kb = 0 - kb
        if is_max:
            if not ka > kb:
                pa[i] = v
        elif not ka < kb:
            pa[i] = v
        i += 1
