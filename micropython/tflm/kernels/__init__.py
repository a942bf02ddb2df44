"""Kernel registry (TFLM's op resolver).

Each kernel module defines

    prepare(op, ins, outs, ctx) -> (eval_fn, state)

op is a model.Operator; ins / outs are lists of model.Tensor (None for an
omitted optional input, index -1). Tensors already have .data bound: a
memoryview of the arena for activations, of the model for constants.
prepare checks shapes, types, options and quantization (raising
PrepareError naming op.label() and the tensor), computes everything that
does not depend on tensor values (multipliers, padding, strides), and
returns the eval function and its state. ctx is a context.KernelContext
(TFLM's MicroContext): ctx.scratch (this op's scratch, ctx.scratch_len
int32 words, a bytes view used only during its own eval;
conv_util.scratch_halves splits it), conv_util.work_buffer(ctx, n) (more
scratch words), conv_util.persistent(ctx, typecode, n) (zeros in the
arena's persistent part, for multipliers, shifts, biases: prepare fills
them by index; conv_util.bias_array copies a bias there, counted in
ctx.copied_bytes) and ctx.model (constant data). Smaller arrays that an op keeps for eval (tables,
parameter blocks) go through conv_util.keep(ctx, a): the interpreter
copies them into its arena's tail and puts views of the copies in the
state tuple. Eval code reads both with viper pointers only. prepare runs twice (a sizing pass, then the real one, see
context.py) and must ask for the same buffers both times.

eval_fn(state) is the hot path: it must not allocate (it runs under
micropython.heap_lock()), and its loops are @micropython.viper code that is
correct on 32-bit ports and with model data at any address.

Operators in ALIAS_CODES (RESHAPE and friends) produce an output that
shares its input's bytes; the memory planner gives both one buffer.
"""

import sys

from .. import schema
from ..errors import PrepareError
from ..heap import pack as _pack  # kernels/pack.py is a module here

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
    # [activations] int8 (float32 RELU, RELU6, LOGISTIC, TANH: float_ops)
    schema.RELU: "activations",
    schema.RELU6: "activations",
    schema.LEAKY_RELU: "activations",
    schema.LOGISTIC: "lut",
    schema.TANH: "lut",
    schema.HARD_SWISH: "lut",
    schema.RSQRT: "lut",
    schema.PRELU: "prelu",
    schema.L2_NORMALIZATION: "l2norm",
    # [binary]
    schema.SUB: "sub",
    schema.MUL: "mul",
    schema.SQUARED_DIFFERENCE: "squared_difference",
    schema.MAXIMUM: "maximum_minimum",
    schema.MINIMUM: "maximum_minimum",
    # [reduce]
    schema.MEAN: "reduce",
    schema.SUM: "reduce",
    schema.REDUCE_MAX: "reduce",
    schema.ARG_MAX: "arg_minmax",
    schema.ARG_MIN: "arg_minmax",
    schema.GATHER: "gather",
    schema.SHAPE: "fill",
    schema.FILL: "fill",
    schema.ZEROS_LIKE: "fill",
    # [movement]
    schema.STRIDED_SLICE: "strided_slice",
    schema.SLICE: "slice",
    schema.PACK: "pack",
    schema.UNPACK: "pack",
    schema.SPLIT: "split",
    schema.SPLIT_V: "split",
    schema.SPACE_TO_BATCH_ND: "space_batch",
    schema.BATCH_TO_SPACE_ND: "space_batch",
    # [spatial]
    schema.RESIZE_NEAREST_NEIGHBOR: "resize",
    schema.RESIZE_BILINEAR: "resize",
    schema.TRANSPOSE_CONV: "transpose_conv",
    # byte copies: float32, int8 and the other types TFLM copies
    schema.CONCATENATION: "concatenation",
    schema.PAD: "pad",
    schema.PADV2: "pad",
    schema.DEQUANTIZE: "dequantize",
}

# Operators whose output is a view of their first input (no copy).
ALIAS_CODES = (schema.RESHAPE, schema.SQUEEZE, schema.EXPAND_DIMS)


# Modules that a kernel module imports inside its prepare, for one tensor
# type: (type, module). The interpreter imports them before it parses
# the model when the model has tensors of that type, so that their code,
# which stays in RAM, is not made amid construction's objects (a board's
# heap never moves an object). tests/test_board_heap.py checks this table
# against the kernels' sources.
_F, _I = schema.FLOAT32, schema.INT32
LAZY = {
    "activations": ((_F, "float_ops"),),
    "add": ((_F, "float_ops"),),
    "arg_minmax": ((_F, "f32"),),
    "conv": ((_F, "conv_f32"),),
    "depthwise_conv": ((_F, "conv_f32"),),
    "fully_connected": ((_F, "conv_f32"),),
    "lut": ((_F, "float_ops"),),
    "mul": ((_F, "float_ops"), (_I, "binary_i32")),
    "pooling": ((_F, "pool_f32"),),
    "reduce": ((_F, "pool_f32"), (_F, "f32")),
    "resize": ((_F, "f32"),),
    "softmax": ((_F, "float_ops"),),
    "squared_difference": ((_I, "binary_i32"), (_F, "f32"),
                           (_F, "float_ops")),
    "sub": ((_F, "float_ops"), (_I, "binary_i32")),
}


def _import(name):
    return __import__("tflm.kernels." + name, None, None, [name])


def preload(code, types):
    """Import the kernel module of builtin code and the modules it would
    import inside prepare for the tensor types in `types` (LAZY)."""
    name = MODULES.get(code)
    if name is None:
        return
    _preload(name, types)


def _preload(name, types):
    if "tflm.kernels." + name not in sys.modules:
        _import(name)
        # what an import leaves besides the module is garbage: collected
        # now, the next module's code fills its holes (heap.py)
        _pack()
    for t, sub in LAZY.get(name, ()):
        if t in types:
            _preload(sub, types)


def find(code):
    """The kernel module for a builtin code, or None if unsupported."""
    name = MODULES.get(code)
    if name is None:
        return None
    return _import(name)


def check_int8(op, ts, supported="int8", quantized=True):
    """Raise PrepareError unless every tensor in ts is int8 and, with
    quantized, has per-tensor quantization and a zero point in int8 (what
    TFLM's int8 kernels assume). supported: the types the op's kernels
    take, for the message."""
    label = op.label()
    for t in ts:
        if t.type != schema.INT8:
            raise PrepareError("%s: %s is %s; supported: %s"
                               % (label, t.label(), t.dtype, supported))
        if quantized and not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
        if quantized and not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s zero point %d is outside int8"
                               % (label, t.label(), t.zero_point))
