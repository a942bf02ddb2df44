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
kTfLiteAbort, which ends that invoke of the whole graph, until the count
reaches 0 (cycles_max <= 0 is replaced at Prepare by 1 for an output of
5, 13 or 25 slots, else 2, or by a process-wide count of prepares for
[., ., 2, 96] outputs). The abort changes nothing this operator writes;
it only skips the operators after it, and this runtime's invoke() has no
way to stop early (tflm/interpreter.py), so the count is not kept here:
in a model with operators after a CIRCULAR_BUFFER, those run on every
invoke, where TFLM leaves their outputs as they were on the aborted
ones. The Python wrapper of TFLM (PyPI tflite-micro) reports nothing on
an abort.

Refused (PrepareError): other types (TFLM: int8 only), ranks other than
4 (TFLM reads four dimensions of each), shapes that differ as above, an
output that is not a variable tensor (its bytes are the state; TFLM
would start from whatever its arena held).
"""

import micropython
from micropython import const

from ..errors import PrepareError

_INT8 = const(9)


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
    _cycles_max(op)  # the options must be readable, as TFLM reads them
    ctx.variable(y)
    depth = xs[2] * xs[3]
    return _eval, (x.data, y.data, depth, ys[1] * depth)


def _cycles_max(op):
    """cycles_max (CircularBufferInit: 0 without options)."""
    from ..custom import custom_options
    raw = custom_options(op)
    if raw is None or not len(raw):
        return 0
    from . import signal_util as su
    return su.options(op, 1)[0]


def _eval(st):
    _shift(st[0], st[1], st[2], st[3])


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
