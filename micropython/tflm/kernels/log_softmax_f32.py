"""float32 LOG_SOFTMAX (log_softmax.py's float32 half, imported by its
prepare for a float32 input only).

Follows reference_ops::LogSoftmax (kernels/internal/reference/
log_softmax.h, float) per row of the last dimension, in its order:

    max = std::max chain from lowest (float_ops._row_max: NaNs lose)
    sum = 0.0f; sum = fl(sum + expf(fl(x_c - max))) in order
    L = logf(sum); out_c = fl(fl(x_c - max) - L)

The subtractions and the sum are bit-exact float32 (f32.vec, f32.dot);
expf is f32_math.vexp and logf elementwise_f32.vlog, each within 1 ulp
of the exact value (TFLM's C library is too), so L may differ from
TFLM's by an ulp of L (more when a 1-ulp exponential moves the rounded
sum by one of its ulps: L then moves by about 2**-24 * depth at most),
and every output, whose magnitude is at least L, by as much.
The exponentials go to the op's scratch (depth words). Nothing
allocates in invoke().
"""

from . import f32, f32_math
from .elementwise_f32 import vlog
from .f32 import dot, vec
from .f32_math import vexp
from .float_ops import _MINUS_ONE, _row_max

def prepare(op, x, y, ctx, rows, depth):
    """Bind the float32 eval (x, y: float32 tensors of one shape, checked
    by log_softmax.prepare; rows of depth elements). Raises nothing
    itself."""
    from array import array
    pv = f32.slots(f32.VEC_SLOTS)
    pv[5] = 1
    pv[7] = depth
    pe = f32.slots(f32_math.SLOTS)
    pe[1] = 1
    pe[3] = depth
    pd = f32.slots(f32.DOT_SLOTS)
    pd[1] = 3  # weight q[3] = 1.0 with stride 0
    pd[2] = pd[5] = 1
    pd[8] = depth
    pd[9] = 1
    pd[11] = -1
    ctx.limit_scratch(max(depth, 1))
    return _eval, (f32.words(x, ctx), y.data, rows, depth, ctx.scratch,
                   f32.consts(0, 0), pv, pe, array("i", [0, 0, 0]), pd,
                   f32.consts(f32.NEG_INF, f32.INF),
                   f32.consts(f32.ZERO, f32.NEG_INF, f32.INF, f32.ONE))


def _eval(st):
    x, y, rows, depth, ex, tmp, pv, pe, est, pd, none, qd = st
    off = 0
    r = 0
    while r < rows:
        _row_max(x, off, depth, tmp)  # tmp[0] = max
        # y = fl(x + fl(max * -1))
        pv[4] = pv[6] = off
        vec(pv, none, tmp, _MINUS_ONE, x, y)
        # ex = expf(y); tmp[1] = the sum in order from 0.0; its logf
        pe[0] = off
        vexp(pe, f32_math.EXP_Q31, est, y, ex)
        pd[12] = 1
        dot(pd, qd, ex, qd, qd, tmp)
        vlog(tmp, tmp, 2)  # tmp[1] = logf(sum) (tmp[0] as well: unused)
        # y = fl(y + fl(L * -1)), L = tmp[1]
        pv[0] = 1
        vec(pv, none, tmp, _MINUS_ONE, y, y)
        pv[0] = 0
        off += depth
        r += 1
