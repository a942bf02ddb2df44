"""int32 ADD, SUB, MUL and SQUARED_DIFFERENCE, NumPy-style broadcasting.

Follows micro/kernels/add.cc (int32: reference_ops Add /
BroadcastAdd4DSlow with the activation range set to the whole int32
range, whatever the fused activation says), reference/sub.h
(SubWithActivation, BroadcastSubSlow),
reference/mul.h (Mul, BroadcastMul6DSlow with WrappingMul) and
micro/kernels/squared_difference.cc (SquaredDifference<int32_t>):

    ADD: x1 + x2                    SUB: clamp(x1 - x2, lo, hi)
    MUL: clamp(x1 * x2, lo, hi)
    SQUARED_DIFFERENCE: (x1 - x2) * (x1 - x2)

every result wrapped to int32 as the x86 build computes it (two's
complement), lo / hi from CalculateActivationRange<int32_t> (RELU [0,
INT32_MAX], RELU6 [0, 6], RELU_N1_TO_1 [-1, 1], else the int32 range).
Eval walks the output in chunks (broadcast.gather, 4-byte elements),
combines and stores bytes (any alignment).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from . import broadcast

_ACT_RELU = const(1)
_ACT_RELU6 = const(3)
_ACT_RELU_N1_TO_1 = const(2)
_ADD = const(0)
_INT32 = const(2)
_MUL = const(18)
_SQUARED_DIFFERENCE = const(99)
_SUB = const(41)

SUB, MUL, SQDIFF, ADD = 0, 1, 2, 3
_MODES = {_SUB: SUB, _MUL: MUL, _SQUARED_DIFFERENCE: SQDIFF, _ADD: ADD}
_RANGES = {_ACT_RELU: (0, 0x7FFFFFFF), _ACT_RELU6: (0, 6),
           _ACT_RELU_N1_TO_1: (-1, 1)}


def prepare(op, ins, outs, ctx, act=0):
    """Bind an int32 ADD / SUB / MUL / SQUARED_DIFFERENCE (op.code) with
    fused activation act (ignored by ADD, as add.cc ignores it). ins: two
    int32 tensors whose shapes broadcast to the int32 output's. SUB needs
    tensors without quantization (sub.cc), ADD inputs without (add.cc).
    Raises PrepareError otherwise.
    """
    from .conv_util import keep, scratch_halves
    from . import broadcast_prep as bp
    x1, x2, y = bp.binary_io(op, ins, outs)
    if y.type != _INT32:
        raise PrepareError("%s: %s is %s; expected int32" % (
            op.label(), y.label(), y.dtype))
    mode = _MODES[op.code]
    if mode in (SUB, ADD):
        for t in (x1, x2, y) if mode == SUB else (x1, x2):
            if t.scales:
                raise PrepareError("%s: int32 %s must not be quantized"
                                   % (op.label(), t.label()))
    bc = bp.check(op, x1, x2, y)
    lo, hi = _RANGES.get(act, (-0x80000000, 0x7FFFFFFF))
    if mode in (SQDIFF, ADD):
        lo, hi = -0x80000000, 0x7FFFFFFF
    st = bp.walker(x1, x2, y, bc, width=4)
    sa, sb, half = scratch_halves(ctx)
    return _eval, (x1.data, x2.data, y.data, y.size, ctx.scratch, sb, half,
                   keep(ctx, st), mode, keep(ctx, array("i", [lo, hi])))


# eval's state (d1, d2, yd, total, sa, sb, half, walker, mode, lohi): the
# views only cast to pointers (by broadcast.py's and _combine's viper
# code); a compiled model stores there the address of its view of the
# arena or the model, an int, no object (compiled.py T_ADDR).
ADDRESSES = (0, 1, 2, 4, 5, 7, 9)


def _eval(state):
    d1, d2, yd, total, sa, sb, half, st, mode, lohi = state
    broadcast.reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, st)
        _combine(sa, sb, n, mode, lohi)
        broadcast.store_w32(sa, n, yd, off)
        off += n


@micropython.viper
def _combine(a, b, n: int, mode: int, lohi):
    """a[i] = clamp(wrap(a[i] - b[i]) (mode SUB), wrap(a[i] * b[i])
    (MUL), wrap(d * d), d = wrap(a[i] - b[i]) (SQDIFF) or wrap(a[i] +
    b[i]) (ADD), lo, hi) for
    i < n; wrap() keeps the low 32 bits (16-bit halves: the same on 32-
    and 64-bit viper ints)."""
    pa = ptr32(a)
    pb = ptr32(b)
    q = ptr32(lohi)
    one: int = 1
    S: int = one << 31
    lo: int = (q[0] ^ S) - S
    hi: int = (q[1] ^ S) - S
    i: int = 0
    while i < n:
        u: int = (pa[i] ^ S) - S
        v: int = (pb[i] ^ S) - S
        x: int = u - v
        if mode == 1:
            x = u * v
        elif mode == 3:
            x = u + v
        x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
             | (x & 0xFFFF))
        if mode == 2:
            x = x * x
            x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (x & 0xFFFF))
        if x < lo:
            x = lo
        if x > hi:
            x = hi
        pa[i] = x
        i += 1
