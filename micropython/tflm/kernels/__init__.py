"""Kernel registry (TFLM's op resolver).

Each kernel module defines

    prepare(op, ins, outs, ctx) -> (eval_fn, state)

op is a model.Operator; ins / outs are lists of model.Tensor (None for an
omitted optional input, index -1). Tensors already have .data bound: a
memoryview of the arena for activations, of the model for constants.
prepare checks shapes, types, options and quantization (raising
PrepareError naming op.label() and the tensor), computes everything that
does not depend on tensor values (multipliers, padding, strides), and
returns the eval function and its state. ctx is the Interpreter: kernels
use ctx.scratch (a shared array('i') used only during one op's eval; its
length is ctx.scratch_len) and ctx.int32_array(tensor) (an aligned copy of a
small constant int32 tensor such as a bias, counted in ctx.copied_bytes).

eval_fn(state) is the hot path: it must not allocate (it runs under
micropython.heap_lock()), and its loops are @micropython.viper code that is
correct on 32-bit ports and with model data at any address.

Operators in ALIAS_CODES (RESHAPE and friends) produce an output that
shares its input's bytes; the memory planner gives both one buffer.
"""

from .. import schema

# builtin code -> kernel module name (imported only when a model uses it).
MODULES = {
    schema.ADD: "add",
    schema.AVERAGE_POOL_2D: "pooling",
    schema.MAX_POOL_2D: "pooling",
    schema.CONV_2D: "conv",
    schema.DEPTHWISE_CONV_2D: "depthwise_conv",
    schema.FULLY_CONNECTED: "fully_connected",
    schema.SOFTMAX: "softmax",
    schema.RESHAPE: "reshape",
    schema.SQUEEZE: "reshape",
    schema.EXPAND_DIMS: "reshape",
    schema.TRANSPOSE: "transpose",
    schema.QUANTIZE: "quantize",
    # Operator groups below: each group's kernels own their lines.
    # [activations] float32-only kernels until the int8 ones land:
    schema.RELU: "float_ops",
    schema.RELU6: "float_ops",
    schema.LOGISTIC: "float_ops",
    schema.TANH: "float_ops",
    # [binary]
    schema.SUB: "float_ops",
    schema.MUL: "float_ops",
    # [reduce]
    schema.MEAN: "mean",
    # [movement]
    # [spatial]
    # byte copies: float32, int8 and the other types TFLM copies
    schema.CONCATENATION: "concatenation",
    schema.PAD: "pad",
    schema.DEQUANTIZE: "dequantize",
}

# Operators whose output is a view of their first input (no copy).
ALIAS_CODES = (schema.RESHAPE, schema.SQUEEZE, schema.EXPAND_DIMS)


def find(code):
    """The kernel module for a builtin code, or None if unsupported."""
    name = MODULES.get(code)
    if name is None:
        return None
    mod = __import__("tflm.kernels." + name, None, None, [name])
    return mod
