"""UNIDIRECTIONAL_SEQUENCE_LSTM: the operator's structure checks and its
dispatch by type (tensorflow/lite/micro/kernels/
unidirectional_sequence_lstm.cc, lstm_shared.h): int8 activations and
weights with an int16 cell state in lstm_int8.py, float32 in
lstm_f32.py. Each is imported by prepare only for a model that has such
an LSTM (kernels._LAZY), so that a board keeps in RAM the code of the
variant it runs only.
"""

from micropython import const

from ..errors import PrepareError

_FLOAT32 = const(0)
_UNIDIRECTIONAL_SEQUENCE_LSTM_OPTIONS = const(71)
_UNIDIRECTIONAL_SEQUENCE_LSTM_TIME_MAJOR = const(3)


def structure(op, ins, outs):
    """(x, h, c, y, time_major, batch, steps, n_input, n_state) of an
    UNIDIRECTIONAL_SEQUENCE_LSTM of any type (also lstm_f32.py's): 24
    inputs, the CIFG / peephole / projection / layer-norm ones as TFLM
    requires, options, ranks and shapes (lstm_shared.h). Raises
    PrepareError."""
    label = op.label()
    if len(ins) != 24 or len(outs) != 1 or outs[0] is None:
        raise PrepareError("%s needs 24 inputs and 1 output" % label)
    for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 13, 14, 15, 18, 19):
        if ins[i] is None:
            raise PrepareError("%s: input %d is missing (the input gate, "
                               "CIFG, is required, as TFLM requires it)"
                               % (label, i))
    for i in (9, 10, 11, 16, 17, 20, 21, 22, 23):
        if ins[i] is not None:
            raise PrepareError("%s: input %d (peephole, projection or layer "
                               "norm) is not supported, as in TFLM"
                               % (label, i))
    if op.options_type != _UNIDIRECTIONAL_SEQUENCE_LSTM_OPTIONS:
        raise PrepareError("%s has no UnidirectionalSequenceLSTMOptions"
                           % label)
    x, h, c, y = ins[0], ins[18], ins[19], outs[0]
    for t in (h, c):
        if not t.is_variable:
            raise PrepareError("%s: state %s is not a variable tensor"
                               % (label, t.label()))
    if len(x.shape) != 3 or len(y.shape) != 3:
        raise PrepareError("%s: input %s and output %s must have rank 3"
                           % (label, x.label(), y.label()))
    major = op.opt_byte(_UNIDIRECTIONAL_SEQUENCE_LSTM_TIME_MAJOR, 0) != 0
    batch, steps = (x.shape[1], x.shape[0]) if major else x.shape[:2]
    n_in = x.shape[2]
    n = h.shape[1] if len(h.shape) == 2 else -1
    ok = n > 0 and h.size == batch * n and c.size == batch * n and \
        tuple(y.shape) == (x.shape[0], x.shape[1], n)
    for i in range(1, 9):
        ok = ok and tuple(ins[i].shape) == (n, n_in if i < 5 else n)
    for i in range(12, 16):
        ok = ok and tuple(ins[i].shape) == (n,)
    if not ok or batch * steps * n_in == 0:
        raise PrepareError("%s: shapes do not fit input %s and state %s"
                           % (label, x.shape, h.shape))
    return x, h, c, y, major, batch, steps, n_in, n


def prepare(op, ins, outs, ctx):
    """UNIDIRECTIONAL_SEQUENCE_LSTM (TFLM's
    UnidirectionalSequenceLstmPrepare): a float32 input runs
    lstm_f32.py, any other lstm_int8.py (int8 x int8 -> int16 cell).
    ins: the 24 inputs (None for the absent ones); outs: [output].
    Raises PrepareError."""
    if ins and ins[0] is not None and ins[0].type == _FLOAT32:
        from . import lstm_f32  # (both declared in kernels._LAZY)
        return lstm_f32.prepare(op, ins, outs, ctx)
    from . import lstm_int8
    return lstm_int8.prepare(op, ins, outs, ctx)
