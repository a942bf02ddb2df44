"""Multiply-accumulate counts of a model, from its shapes.

CONV_2D: output elements x KH x KW x CIN (filter [OC, KH, KW, CIN]);
DEPTHWISE_CONV_2D: output elements x KH x KW; FULLY_CONNECTED: output
elements x depth (weights [units, depth]). Taps that fall into the padding
are counted too (the usual convention; the kernels skip them). Other
operators count 0.
"""

from tflm import schema
from tflm.model import Model

_CONV_2D, _DEPTHWISE, _FC = (schema.builtin_code(n) for n in (
    "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"))
_CONV = (_CONV_2D, _DEPTHWISE, _FC)


def op_macs(model, op):
    """MACs of one model.Operator of a model.Model (0 if not a conv /
    depthwise / fully connected operator)."""
    if op.code not in _CONV or op.custom_code is not None:
        return 0
    t = model.tensors
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
