"""One-input elementwise operators: ABS, NEG, CEIL, FLOOR, ROUND, SQRT,
SQUARE, EXP, LOG, LOGICAL_NOT (RSQRT is lut.py's).

Follows tensorflow/lite/micro/kernels/elementwise.cc (PrepareAbsRsqrt,
AbsEval, AbsEvalQuantized, SqrtEval, SquareEval, LogEval,
LogicalNotEval, GenericPrepare), neg.cc, ceil.cc, floor.cc, round.cc and
exp.cc. Types, as
TFLM takes them:

    ABS          int8 (quantized), int16 (quantized with zero points 0, or
                 not quantized), float32
    LOGICAL_NOT  bool: out = !x
    NEG, CEIL, FLOOR, ROUND, SQRT, SQUARE, EXP, LOG   float32

int8 ABS is a 256-entry table of AbsEvalQuantized (lut_math.abs_table:
|q - zp_in|, rescaled by QuantizeMultiplier((double)(float)(s_in /
s_out)) when the two scales differ, plus zp_out, clamped) looked up by
lookup; int16 ABS is in elementwise16.py, the float32 operators in
elementwise_f32.py (imported by prepare for those types only). Input
and output must have the same type and element count (CEIL, ROUND, EXP:
the same shape, as their Prepare checks); anything else raises
PrepareError naming the op and the tensor.
"""

import micropython
from micropython import const

from ..errors import ModelError, PrepareError

_BOOL = const(6)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT8 = const(9)

_ABS = const(101)
_CEIL = const(104)
_EXP = const(47)
_LOGICAL_NOT = const(87)
_ROUND = const(116)


def prepare(op, ins, outs, ctx):
    """Check an ABS, NEG, CEIL, FLOOR, ROUND, SQRT, SQUARE, EXP, LOG or
    LOGICAL_NOT op and bind its eval.

    ins: one tensor; outs: one tensor of its type and element count
    (CEIL, ROUND, EXP: its shape). ABS: int8 (per-tensor quantization on
    both, zero points in int8, s_in / s_out giving a multiplier shift of
    at most 30), int16 (see elementwise16) or float32; LOGICAL_NOT: bool;
    the others float32. Raises PrepareError otherwise.
    """
    label = op.label()
    code = op.code
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    if y.type != x.type:
        raise PrepareError("%s: output %s is %s but input %s is %s"
                           % (label, y.label(), y.dtype, x.label(), x.dtype))
    same_shape = code in (_CEIL, _ROUND, _EXP)
    if x.size != y.size or (same_shape and
                            tuple(x.shape) != tuple(y.shape)):
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    t = x.type
    if code == _ABS and t == _INT8:
        return _prepare_abs8(op, x, y, ctx)
    if code == _ABS and t == _INT16:
        from . import elementwise16
        return elementwise16.prepare(op, x, y, ctx)
    if code == _LOGICAL_NOT:
        if t != _BOOL:
            raise PrepareError("%s: %s is %s; supported: bool"
                               % (label, x.label(), x.dtype))
        return _eval_not, (x.data, y.data, x.size)
    if t != _FLOAT32:
        raise PrepareError("%s: %s is %s; supported: %s" % (
            label, x.label(), x.dtype,
            "int8, int16, float32" if code == _ABS else "float32"))
    from . import elementwise_f32
    return elementwise_f32.prepare(op, x, y, ctx)


def _prepare_abs8(op, x, y, ctx):
    from . import check_int8, lut_math
    from .conv_util import keep
    label = op.label()
    check_int8(op, (x, y), "int8, int16, float32")
    try:
        rs = lut_math.abs_params(x.scale, y.scale)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    if rs is not None and rs[1] > 30:
        # MultiplyByQuantizedMultiplier shifts left by more than 30: x *
        # (1 << shift) is undefined in C
        raise PrepareError("%s: input scale / output scale (%r / %r) is "
                           "too large" % (label, x.scale, y.scale))
    table = lut_math.abs_table(x.zero_point, y.zero_point, rs)
    return _eval_table, (x.data, y.data, x.size, keep(ctx, table, 1))


def _eval_table(st):
    x, y, n, table = st
    lookup(x, y, n, table)


@micropython.viper
def lookup(x, y, n: int, table):
    """y[i] = table[x[i]] for i < n (bytes; table has 256 entries)."""
    px = ptr8(x)
    py = ptr8(y)
    pt = ptr8(table)
    i: int = 0
    while i < n:
        py[i] = pt[px[i]]
        i += 1


def _eval_not(st):
    x, y, n = st
    logical_not(x, y, n)


@micropython.viper
def logical_not(x, y, n: int):
    """y[i] = 1 if x[i] == 0 else 0, for i < n (bool bytes)."""
    px = ptr8(x)
    py = ptr8(y)
    i: int = 0
    while i < n:
        py[i] = 1 if px[i] == 0 else 0
        i += 1
