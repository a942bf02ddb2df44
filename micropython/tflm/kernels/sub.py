"""SUB: int8 and int16 (16x8) with NumPy-style broadcasting; float32 via
float_ops, int32 via binary_i32.

Follows tensorflow/lite/micro/kernels/sub.cc, sub_common.cc
(CalculateOpDataSub) and reference/sub.h (SubElementwise,
BroadcastQuantSubSlow): ADD's int8 arithmetic with a - b (the eval lives
in add.py). The multipliers are ADD's double quotients: the sub_common.cc
we read (tflite-micro of August 2026) divides in float32 (scale /
twice_max as float, then widened to double), but the TFLM build we test
against (PyPI tflite-micro, the oracle) computes them in double, as
tests/test_ops_binary.py (test_sub_double_multipliers) shows on models
where the two differ.
"""

from micropython import const

from . import add

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)

_SUB_OPTIONS = const(28)
_SUB_FUSED_ACTIVATION_FUNCTION = const(0)


def prepare(op, ins, outs, ctx):
    """Check a SUB op and bind its eval.

    float32: float_ops; int32: binary_i32. int8: two int8 inputs (int8
    zero points) whose shapes broadcast to the int8 output's; SubOptions
    fused activation. Raises PrepareError for other types, bad shapes,
    and multipliers TFLM would abort on (outside (0, 1)).
    """
    from . import broadcast_prep as bp
    t = ins[0].type if ins and ins[0] is not None else None
    if t == _FLOAT32:
        from . import float_ops
        return float_ops.prepare(op, ins, outs, ctx)
    if t == _INT32:
        from . import binary_i32
        act = (op.opt_byte(_SUB_FUSED_ACTIVATION_FUNCTION, 0)
               if op.options_type == _SUB_OPTIONS else 0)
        return binary_i32.prepare(op, ins, outs, ctx, act)
    if t == _INT16:
        x1, x2, y = add.int16_io(op, ins, outs)
        qs = add.multipliers(op, x1, x2, y, 15)
    else:
        x1, x2, y = bp.int8_io(op, ins, outs,
                              "int8, int16, int32, float32")
        qs = add.multipliers(op, x1, x2, y)
    return add.prepare_quant(op, x1, x2, y, ctx, qs, _SUB_OPTIONS, True)
