"""CIRCULAR_BUFFER: TFLM's custom operator of its streaming keyword models
(tensorflow/lite/micro/kernels/circular_buffer.cc and
circular_buffer_common.cc, registered by AddCircularBuffer under the
custom name 'CIRCULAR_BUFFER').

    input int8 [B, 1, H, W], output int8 [B, S, H, W], a variable
    tensor (the op's state: set to its zero point at construction and by
    interp.reset(), as TFLM's ResetVariableTensors does). Each invoke
    shifts the output's first S * H * W bytes down by one slot (H * W
    bytes) and writes the input's first H * W bytes into the last slot
    (TFLM's EvalInt8 works on the first batch only, B > 1 included).
    Options (FlexBuffers, may be absent): cycles_max.

TFLM's Eval then counts invokes down from cycles_max and returns
kTfLiteAbort until the count reaches 0 (then it starts again from
cycles_max): MicroInterpreterGraph::InvokeSubgraph stops at that
operator, so the operators after it do not run and their outputs keep
what they held; MicroInterpreter::Invoke returns kTfLiteAbort (15),
which TFLM's Python Interpreter.invoke() returns as it is (no
exception). Here eval returns ABORT (15) on those invokes, and
interp.invoke() stops there and returns 15 (tflm/interpreter.py: only
models with such an operator take that loop). The count is a kernel
state (ctx.state): 0 is TFLM's cycles_until_run = cycles_max, set at
construction and by interp.reset() (CircularBufferReset).
cycles_max <= 0 (or no options) is replaced as TFLM's Prepare does: 1
for an output of 5, 13 or 25 slots, else 2, but 1 for a [., ., 2, 96]
output when it is the fifth such prepare since the process started or
since the last one that took 1 (TFLM's static cb_prepare_count, kept
here per process too: a compiled model has the count of the host that
compiled it).

Refused (PrepareError): other types (TFLM: int8 only), ranks other than
4 (TFLM reads four dimensions of each), shapes that differ as above, an
output that is not a variable tensor (its bytes are the state; TFLM
would start from whatever its arena held).
"""

import micropython
from micropython import const

from ..errors import PrepareError

_INT8 = const(9)
ABORT = const(15)  # kTfLiteAbort

_S_X = const(0)
_S_Y = const(1)
_S_DEPTH = const(2)
_S_N = const(3)
_S_COUNT = const(4)  # array('i', [invokes since the last run])
_S_MAX = const(5)  # cycles_max

# TFLM's static cb_prepare_count (CircularBufferPrepare)
_prepares = [0]


def prepare(op, ins, outs, ctx):
    """Check a CIRCULAR_BUFFER operator (shapes, type, variable output as
    in the module doc; PrepareError otherwise) and bind its eval."""
    label = op.label()
    if len(ins) != 1 or len(outs) != 1 or ins[0] is None or outs[0] is None:
        raise PrepareError("%s needs 1 input and 1 output" % label)
    x, y = ins[0], outs[0]
    for t in (x, y):
        if t.type != _INT8:
            raise PrepareError("%s: %s is %s; supported: int8 (TFLM's only "
                               "type)" % (label, t.label(), t.dtype))
        if len(t.shape) != 4:
            raise PrepareError("%s: %s has %d dimensions, expected 4" % (
                label, t.label(), len(t.shape)))
    xs, ys = x.shape, y.shape
    if xs[0] != ys[0] or xs[1] != 1 or xs[2] != ys[2] or xs[3] != ys[3]:
        raise PrepareError("%s: input %s and output %s: expected [B, 1, H, "
                           "W] and [B, S, H, W]" % (label, tuple(xs),
                                                    tuple(ys)))
    if not y.is_variable:
        raise PrepareError("%s: output %s must be a variable tensor (the "
                           "buffer is its state)" % (label, y.label()))
    cycles = _cycles_max(op)  # CircularBufferInit
    if cycles <= 0:
        count = _prepares[0] + 1  # (the sizing pass leaves it alone)
        if ys[1] in (5, 13, 25) or (count == 5 and ys[2] == 2 and
                                    ys[3] == 96):
            cycles, count = 1, 0
        else:
            cycles = 2
        if not getattr(ctx, "sizing", False):
            _prepares[0] = count
    ctx.variable(y)
    depth = xs[2] * xs[3]
    return _eval, (x.data, y.data, depth, ys[1] * depth,
                   ctx.state("i", 1), cycles)


def _cycles_max(op):
    """cycles_max (CircularBufferInit: 0 without options)."""
    from ..custom import custom_options
    raw = custom_options(op)
    if raw is None or not len(raw):
        return 0
    from . import signal_util as su
    return su.options(op, 1)[0]


def _eval(st):
    """Shift in the input; ABORT (the invoke ends here) until cycles_max
    invokes have passed since the last run, else None."""
    _shift(st[_S_X], st[_S_Y], st[_S_DEPTH], st[_S_N])
    return _count(st[_S_COUNT], st[_S_MAX])


@micropython.viper
def _count(c, cycles: int) -> int:
    """--cycles_until_run != 0: ABORT, else 0 and the count restarts."""
    p = ptr32(c)
    k: int = p[0] + 1
    if k < cycles:
        p[0] = k
        return ABORT
    p[0] = 0
    return 0


@micropython.viper
def _shift(x, y, depth: int, n: int):
    """y[0 : n - depth] = y[depth : n]; y[n - depth : n] = x[0 : depth]."""
    px = ptr8(x)
    py = ptr8(y)
    i: int = 0
    m: int = n - depth
    while i < m:
        py[i] = py[i + depth]
        i += 1
    j: int = 0
    while j < depth:
        py[m + j] = px[j]
        j += 1
