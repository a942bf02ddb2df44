"""SOFTMAX, int8 input -> int8 output (scale 1/256, zero point -128) or
int16 output (scale 1/65536 within 0.1%, zero point -32768).

Follows tensorflow/lite/micro/kernels/softmax.cc, softmax_common.cc
(CalculateSoftmaxParams), tensorflow/lite/kernels/internal/
quantization_util.cc (PreprocessSoftmaxScaling, CalculateInputRadius) and
reference/softmax.h with gemmlowp's fixedpoint.h (exp_on_negative_values,
one_over_one_plus_x_for_x_in_0_1) and common.h (GetReciprocal).

Everything TFLM computes per element depends only on the difference
d = max_in_row - x in [0, 255], so prepare tabulates, with exact integer
code, E[d] = exp_on_negative_values(rescaled -d) (a Q0.31 raw value, 0 when
-d < diff_min) and R[d] = Rescale<12>(E[d]). Per row, eval finds the max,
sums R[d], takes GetReciprocal of the sum (gemmlowp Newton-Raphson), and
writes
    clamp(RoundingDivideByPOT(SRDHM(E[d], reciprocal), exponent) - 128)
through fixedpoint.requant_i8b (int16: exponent 8 lower, minus 32768,
rescale.scale_i32 then quantize.store_i16). Excluded elements have E[d] = 0
and so give -128, as TFLM's explicit branch does. Prepare and the tables
are in softmax_prep.py (construction only); this module keeps eval. The
per-row loops (row, reciprocal, gather) are thumb_softmax.py's machine
code on Cortex-M, softmax_loops.py's word-size independent viper
elsewhere: the same functions and block.
"""

from ..fixedpoint import requant_i8b
from . import THUMB

# The loops: Thumb machine code on Cortex-M, viper elsewhere (THUMB)
loop = None
if THUMB:
    try:
        from . import thumb_softmax as loop
    except (ImportError, SyntaxError, ValueError):
        loop = None
if loop is None:
    from . import softmax_loops as loop


def prepare(op, ins, outs, ctx):
    """Check an int8 SOFTMAX op and bind its eval (softmax_prep, which is
    construction only: dropped once an interpreter is built,
    interpreter.CONSTRUCTION)."""
    from .softmax_prep import prepare
    return prepare(op, ins, outs, ctx)


# The state slots that eval only casts to pointers (the input, the
# output, the E and R tables in the tail, the scratch, qp, kept in the
# tail): a compiled model stores there the address of its view of the
# arena or the model, an int, no object (compiled.py T_ADDR).
ADDRESSES = (0, 1, 5, 6, 7, 11)


def _eval(state):
    """Per row: max, sum, reciprocal, then the outputs chunk by chunk.
    int8 output (scale None): requant_i8b (wide=1: s holds an int32
    shift) is rescale's scale_i32 then store_i8 in one pass, so int8
    models do not import rescale; int16: scale_i32, then store_i16. The
    row state st (SM_BLOCK) gets each row's OFF and each chunk's OFF and
    N (small ints: no allocation)."""
    xd, yd, rows, depth, st, e_tab, r_tab, buf, step, m, s, qp, scale, \
        store = state
    row = loop.row
    gather = loop.gather
    off = 0
    r = 0
    while r < rows:
        st[6] = off
        row(xd, r_tab, st)
        loop.reciprocal(st, m, s)
        c = 0
        while c < depth:
            n = depth - c
            if n > step:
                n = step
            st[6] = off + c
            st[8] = n
            gather(buf, xd, e_tab, st)
            if scale is None:
                requant_i8b(0, 0, 0, buf, n, 1, m, s, qp, yd, off + c, 1)
            else:
                scale(buf, n, m, s, 0)
                store(buf, n, yd, off + c, qp)
            c += n
        off += depth
        r += 1
