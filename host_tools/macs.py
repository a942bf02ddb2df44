"""Multiply-accumulate counts of a model, from its shapes.

CONV_2D: output elements x KH x KW x CIN (filter [OC, KH, KW, CIN]);
DEPTHWISE_CONV_2D: output elements x KH x KW; FULLY_CONNECTED: output
elements x depth (weights [units, depth]); SVDF: batch x filters x
(input size + memory), its feature and time matmuls;
UNIDIRECTIONAL_SEQUENCE_LSTM: batch x time x 4 gates x state x (input +
state), its gates' two fully connected layers. Taps that fall into
the padding are counted too (the usual convention; the kernels skip
them). Other operators count 0.
"""

from tflm.model import Model

from .opgen import OPS

_CONV_2D, _DEPTHWISE, _FC = (OPS[n] for n in (
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"))
_CONV = (_CONV_2D, _DEPTHWISE, _FC)
_SVDF = OPS["SVDF"]
_LSTM = OPS["UNIDIRECTIONAL_SEQUENCE_LSTM"]


def op_macs(model, op):
    """MACs of one model.Operator of a model.Model (0 if not a conv /
    depthwise / fully connected / SVDF / LSTM operator)."""
    t = model.tensors
    if op.code == _SVDF and op.custom_code is None and \
            len(op.inputs) >= 3 and min(op.inputs[:3]) >= 0:
        x, wt = t[op.inputs[0]], t[op.inputs[2]]
        if len(x.shape) == 2 and len(wt.shape) == 2:
            return x.shape[0] * wt.shape[0] * (x.shape[1] + wt.shape[1])
        return 0
    if op.code == _LSTM and op.custom_code is None and \
            len(op.inputs) > 18 and min(op.inputs[0], op.inputs[18]) >= 0:
        x, h = t[op.inputs[0]], t[op.inputs[18]]
        if len(x.shape) == 3 and len(h.shape) == 2:
            steps = x.shape[0] * x.shape[1]  # batch x time, either order
            return steps * 4 * h.shape[1] * (x.shape[2] + h.shape[1])
        return 0
    if op.code not in _CONV or op.custom_code is not None:
        return 0
    out = t[op.outputs[0]]
    filt = t[op.inputs[1]]
    if op.code == _CONV_2D:
        per = filt.shape[1] * filt.shape[2] * filt.shape[3]
    elif op.code == _DEPTHWISE:
        per = filt.shape[1] * filt.shape[2]
    else:
        per = filt.shape[-1]
    return out.size * per


def per_op(model):
    """[(op index, op name, MACs)] for every operator of a Model, a path
    or model bytes."""
    if not isinstance(model, Model):
        if isinstance(model, str):
            with open(model, "rb") as f:
                model = f.read()
        model = Model(model)
    return [(op.index, op.name, op_macs(model, op))
            for op in model.operators]


def total(model):
    """Total MACs of a model (Model, path or bytes)."""
    return sum(m for _, _, m in per_op(model))
