"""int8 LOGISTIC, TANH, HARD_SWISH and RSQRT as 256-entry lookup tables.

Each output byte depends only on the input byte, so prepare tabulates
TFLM's own integer algorithm for all 256 inputs (lut_math.py, in Python
ints) and eval is one viper table lookup per element (lookup() below, also
used by activations.py for RELU, RELU6 and LEAKY_RELU).

Semantics and Prepare checks follow tensorflow/lite/micro/kernels/
logistic.cc + logistic_common.cc (output zero point must be -128; the
output scale is not read: TFLM's int8 LOGISTIC always produces
q = 256 * sigmoid - 128), tanh.cc (no output checks; TFLM always produces
q = 128 * tanh), hard_swish.cc + hard_swish_common.cc (the output
multiplier's exponent must be <= 0) and elementwise.cc (RSQRT: an input
below its zero point fails the invoke; TFLM's message is "Rsqrt is only
defined for positive values"). float32 LOGISTIC and TANH go to
float_ops.py, int16 ones to lut16.py; other types raise PrepareError.
"""

import micropython
from micropython import const

from ..errors import InvokeError, ModelError, PrepareError, raise_made

_FLOAT32 = const(0)
_HARD_SWISH = const(117)
_INT16 = const(7)
_LOGISTIC = const(14)
_RSQRT = const(76)
_TANH = const(28)


def unary_io(op, ins, outs, what="int8"):
    """Check one input and one output of the same type and element count,
    int8 with per-tensor quantization (zero points in int8); returns
    (x, y). Raises PrepareError."""
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    from . import check_int8  # the package: construction only (PARSE)
    check_int8(op, (x, y), what)
    if x.size != y.size:
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    return x, y


def bind(ctx, table, x, y):
    """(eval_fn, state) writing y[i] = table[x[i] & 0xFF]; the table goes
    to the persistent arena (conv_util.keep)."""
    from .conv_util import keep
    return _eval, (x.data, y.data, x.size, keep(ctx, table, 1))


def prepare(op, ins, outs, ctx):
    """Check an int8 LOGISTIC / TANH / HARD_SWISH / RSQRT op, build its
    table and bind its eval.

    ins: [int8]; outs: [int8, as many elements]. LOGISTIC: output zero
    point -128. HARD_SWISH: input_scale / 128 / output_scale below 1
    (TFLM's output multiplier exponent <= 0) and input_scale / 128 /
    (3 / 32768) below 2**31 (reluish exponent <= 31). RSQRT: 1 /
    (sqrt(input_scale) * output_scale) in [2**-12, 2**50); invoke raises
    InvokeError if an input is below its zero point. float32 LOGISTIC /
    TANH run in float_ops, int16 ones in lut16. Raises PrepareError.
    """
    from . import lut_math
    code = op.code
    t = ins[0].type if ins and ins[0] is not None else None
    if code in (_LOGISTIC, _TANH) and t in (_FLOAT32, _INT16):
        if t == _INT16:
            from . import lut16 as k
        else:
            from . import float_ops as k
        return k.prepare(op, ins, outs, ctx)
    x, y = unary_io(op, ins, outs,
                    "int8, int16, float32" if code in (_LOGISTIC,
                                                       _TANH) else "int8")
    label = op.label()
    try:
        if code == _LOGISTIC or code == _TANH:
            if code == _LOGISTIC and y.zero_point != -128:
                raise PrepareError("%s: output %s zero point must be -128"
                                   % (label, y.label()))
            p = lut_math.sigmoid_params(x.scale)
            if p is None:
                raise PrepareError("%s: input %s scale %r is out of range"
                                   % (label, x.label(), x.scale))
            fn = lut_math.logistic_table if code == _LOGISTIC \
                else lut_math.tanh_table
            return bind(ctx, fn(x.zero_point, *p), x, y)
        if code == _HARD_SWISH:
            p = lut_math.hard_swish_params(x.scale, y.scale)
            if p[1] > 0:
                raise PrepareError("%s: input scale / 128 / output scale "
                                   "(%r, %r) must be below 1"
                                   % (label, x.scale, y.scale))
            if p[3] > 31:
                # SaturatingLeftShift(v, exponent - 1) computes v * (1 <<
                # amount) in int: undefined from amount 31 on (x86 and Arm
                # builds disagree)
                raise PrepareError("%s: input %s scale %r is too large "
                                   "(reluish multiplier exponent %d)"
                                   % (label, x.label(), x.scale, p[3]))
            return bind(ctx, lut_math.hard_swish_table(
                x.zero_point, y.zero_point, *p), x, y)
        if code == _RSQRT:
            return _prepare_rsqrt(op, x, y, ctx)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    raise PrepareError("%s: not a lookup-table op" % label)


def _prepare_rsqrt(op, x, y, ctx):
    from . import lut_math
    from .conv_util import keep
    mult, shift = lut_math.rsqrt_params(x.scale, y.scale)
    # MultiplyByQuantizedMultiplier(data, mult, shift - 20) must not shift
    # right by more than 31, nor left by more than 30 (x * (1 << 31..)
    # overflows int32): both undefined in TFLM.
    if shift - 20 < -31:
        raise PrepareError("%s: 1 / (sqrt(input scale) * output scale) is "
                           "too small" % op.label())
    if shift - 20 > 30:
        raise PrepareError("%s: 1 / (sqrt(input scale) * output scale) is "
                           "too large" % op.label())
    table = lut_math.rsqrt_table(x.zero_point, y.zero_point, mult, shift)
    err = InvokeError("%s: Rsqrt is only defined for positive values "
                      "(input %s below its zero point)"
                      % (op.label(), x.label()))
    return _eval_rsqrt, (x.data, y.data, x.size, keep(ctx, table, 1),
                         x.zero_point, err)


def _eval(state):
    x, y, n, table = state
    lookup(x, y, n, table)


def _eval_rsqrt(state):
    x, y, n, table, zp, err = state
    if _below(x, n, zp):
        raise_made(err)  # a copy: a re-raised err would keep growing
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


@micropython.viper
def _below(x, n: int, zp: int) -> int:
    """1 if some int8 x[i] (i < n) is below zp, else 0."""
    px = ptr8(x)
    i: int = 0
    while i < n:
        if ((px[i] ^ 0x80) - 0x80) < zp:
            return 1
        i += 1
    return 0
