"""AVERAGE_POOL_2D (and the checks MAX_POOL_2D shares), int8 NHWC.

MAX_POOL_2D's loop is in max_pool.py, so that a model with average
pooling only (person_detect, KWS, ResNet-8) does not load its machine code
into RAM, and the reverse.

Follows tensorflow/lite/micro/kernels/pooling.cc, pooling_common.cc
(PoolingPrepare: input and output share scale within 1e-6 and zero point)
and tensorflow/lite/kernels/internal/reference/integer_ops/pooling.h:
the window is clipped to the input, the average divides the int32 sum by
the number of in-bounds taps, rounding half away from zero with C
truncating division, and both results are clamped to the fused activation
range of the output. Padding and output size follow
tensorflow/lite/kernels/padding.h (ComputePaddingHeightWidth). The checks
and geometry are in pooling_prep.py (construction only); this module keeps
eval. The loop is thumb_pool.py's machine code on Cortex-M, pool_loops.py's
viper elsewhere: the same function and block.
"""

from . import THUMB

# The loop: Thumb machine code on Cortex-M, viper elsewhere (THUMB)
loop = None
if THUMB:
    try:
        from . import thumb_pool as loop
    except (ImportError, SyntaxError, ValueError):
        loop = None
if loop is None:
    from . import pool_loops as loop
avg_pool = loop.avg_pool


def prepare(op, ins, outs, ctx):
    """Check an AVERAGE_POOL_2D op and bind its eval (pooling_prep, which
    is construction only: dropped once an interpreter is built,
    interpreter.CONSTRUCTION)."""
    from .pooling_prep import prepare_with
    return prepare_with(op, ins, outs, ctx, avg_pool, _eval, True)


# eval's state: (loop, acc, x, y, parameters, channels); the slots it only
# passes to the loop, which casts them to pointers: a compiled model stores
# there the address of its view of the arena or the model, an int, no
# object (compiled.py T_ADDR).
ADDRESSES = (1, 2, 3, 4)


def _eval(state):
    """The loop over all channels at once (pooling_prep gives it a work
    buffer of max(C, 16) words)."""
    fn, acc, xd, yd, p, c = state
    fn(xd, yd, acc, p)
