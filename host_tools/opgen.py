"""Build small .tflite models (one operator, or a few) for tests.

Host-side (CPython) tool. Uses the official flatbuffers object API shipped in
tflite-micro (schema_py_generated: ModelT, SubGraphT, TensorT, ...), so the
files are what the TFLite schema says, independent of tflm's own reader.

    from host_tools import opgen
    T = opgen.Tensor
    m = opgen.Model()
    x = m.add_tensor(T([1, 8, 8, 3], scale=0.5, zero_point=-1))
    w = m.add_tensor(T([4, 3, 3, 3], scale=[0.1, 0.2, 0.3, 0.4],
                       data=np.ones((4, 3, 3, 3), np.int8)))
    b = m.add_tensor(T([4], 'int32', scale=[.05, .1, .15, .2],
                       data=np.zeros(4, np.int32)))
    y = m.add_tensor(T([1, 8, 4, 4], scale=1.0))
    m.add_op('CONV_2D', [x, w, b], [y],
             {'padding': 'SAME', 'stride_w': 2, 'activation': 'RELU'})
    raw = m.build()                      # bytes of a .tflite file

    raw = opgen.single_op('ADD', [T([1, 4], scale=.1, zero_point=3),
                                  T([1, 4], scale=.2)],
                          [T([1, 4], scale=.3)])

What build() writes, as the TFLite converter does: schema version 3; buffer 0
empty; every constant tensor in its own buffer, its data 16-byte aligned in
the file (the generated Python code ignores the schema's force_align: 16,
so buffers are packed here); activations use buffer 0; both builtin_code and
deprecated_builtin_code (= min(code, 127)); operator codes deduplicated by
(code, custom name, version) in order of first use; a QuantizationParameters
table on every tensor (empty when scale is None); one subgraph named "main",
then those added with add_subgraph (Model objects of their own).

Options: `options` of add_op is None, an *OptionsT instance (written as is,
its class gives the union type) or a dict of fields. The options table of an
op comes from OPTIONS, else from the op's name (STRIDED_SLICE ->
StridedSliceOptions); ops without a table (RELU, LOGISTIC, ...) get none.
Dict keys are schema names ('stride_w', 'fused_activation_function') or the
object API's ('strideW'); 'activation' is short for the fused activation.
String values are enum names: padding 'SAME' / 'VALID', activations 'NONE',
'RELU', 'RELU6', 'RELU_N1_TO_1', 'TANH', 'SIGN_BIT', dtype names for type
fields ('int32'), weights_format / mirror-pad mode names.
For None or a dict, fields start from the schema defaults except where a
zero would be invalid or is implied by the graph: strides 1, softmax beta
1.0, depthwise depth_multiplier = out channels // in channels, num_splits /
values_count / num from the number of outputs / inputs.
"""

import flatbuffers
import numpy as np
from tflite_micro.tensorflow.lite.micro.python import \
    schema_py_generated as s

ALIGN = 16  # schema.fbs: Buffer.data (force_align: 16)
SCHEMA_VERSION = 3
PLACEHOLDER_FOR_GREATER_OP_CODES = 127


def _enum(cls):
    return {k: v for k, v in vars(cls).items() if not k.startswith("_")}


DTYPES = {k.lower(): v for k, v in _enum(s.TensorType).items()}
_NUMPY_TYPES = ("float16", "float32", "float64", "int8", "int16", "int32",
                "int64", "uint8", "uint16", "uint32", "uint64", "bool",
                "complex64", "complex128")
OPS = _enum(s.BuiltinOperator)
_OPTION_NAMES = {k.lower(): k for k in _enum(s.BuiltinOptions)}

# op name -> BuiltinOptions member, for the common ops and for every op whose
# table is not named after it; other ops are looked up by name.
OPTIONS = {
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "ADD": "AddOptions",
    "SUB": "SubOptions",
    "MUL": "MulOptions",
    "DIV": "DivOptions",
    "SOFTMAX": "SoftmaxOptions",
    "RESHAPE": "ReshapeOptions",
    "SQUEEZE": "SqueezeOptions",
    "CONCATENATION": "ConcatenationOptions",
    "TRANSPOSE": "TransposeOptions",
    "EXPAND_DIMS": "ExpandDimsOptions",
    "PAD": "PadOptions",
    "PADV2": "PadV2Options",
    "STRIDED_SLICE": "StridedSliceOptions",
    "MEAN": "ReducerOptions",
    "SUM": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "REDUCE_MIN": "ReducerOptions",
    "REDUCE_PROD": "ReducerOptions",
    "REDUCE_ANY": "ReducerOptions",
    "REDUCE_ALL": "ReducerOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "RANDOM_UNIFORM": "RandomOptions",
    "RANDOM_STANDARD_NORMAL": "RandomOptions",
    "MULTINOMIAL": "RandomOptions",
}

# Option fields whose string values name members of these enums.
_ENUM_FIELDS = {
    "padding": s.Padding,
    "fusedActivationFunction": s.ActivationFunctionType,
    "weightsFormat": s.FullyConnectedOptionsWeightsFormat,
    "mode": s.MirrorPadMode,
    "combinerType": s.CombinerType,
    "kernelType": s.LSTMKernelType,
}
_ALIASES = {"activation": "fusedActivationFunction"}
# Option fields that hold strings (VarHandleOptions)
_STRING_FIELDS = ("container", "sharedName")


def dtype_code(dtype):
    """TensorType code of a dtype name ('int8'), numpy dtype or code."""
    if isinstance(dtype, int):
        return dtype
    name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
    try:
        return DTYPES[name.lower()]
    except KeyError:
        raise ValueError("unknown tensor type %r" % (dtype,)) from None


def _np_dtype(code):
    """Little-endian numpy dtype of a TensorType, or None (int4, string...)."""
    name = {v: k for k, v in DTYPES.items()}[code]
    if name not in _NUMPY_TYPES:
        return None
    return np.dtype(name).newbyteorder("<")


class Tensor:
    """A tensor to add to a Model.

    shape: list of ints ([] for a scalar). dtype: 'int8', 'int32', 'float32',
    ... (any TensorType name, lower case), a numpy dtype or a code.
    scale: None (no quantization), a float, or a list (per-channel, along
    quantized_dimension). zero_point: int, or a list as long as scale (an
    int is repeated for per-channel scales).
    data: None for an activation, else the constant's value: a numpy array
    or list (cast to dtype; integer values must fit) or raw bytes.
    is_variable: a variable (state) tensor. name: defaults to 't<index>'.
    Raises ValueError on inconsistent arguments.
    """

    def __init__(self, shape, dtype="int8", scale=None, zero_point=0,
                 data=None, quantized_dimension=0, name=None,
                 is_variable=False):
        self.shape = [int(d) for d in shape]
        self.type = dtype_code(dtype)
        self.dtype = {v: k for k, v in DTYPES.items()}[self.type]
        self.scale = scale
        self.zero_point = zero_point
        self.quantized_dimension = int(quantized_dimension)
        self.name = name
        self.is_variable = bool(is_variable)
        self.data = None if data is None else self._bytes(data)
        self._quant()  # validate now, not at build time

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def _bytes(self, data):
        npd = _np_dtype(self.type)
        if isinstance(data, (bytes, bytearray, memoryview)):
            raw = bytes(data)
            if npd is not None and len(raw) != self.size * npd.itemsize:
                raise ValueError("%d bytes of data for shape %s %s"
                                 % (len(raw), self.shape, self.dtype))
            return raw
        if npd is None:
            raise ValueError("give %s data as bytes" % self.dtype)
        arr = np.asarray(data)
        out = arr.astype(npd)
        if arr.size != self.size:
            raise ValueError("%d data values for shape %s"
                             % (arr.size, self.shape))
        if npd.kind in "iub" and not np.array_equal(out, arr):
            raise ValueError("data does not fit %s" % self.dtype)
        return out.tobytes()

    def _quant(self):
        """QuantizationParametersT (empty when scale is None)."""
        q = s.QuantizationParametersT()
        if self.scale is None:
            return q
        scales = [float(x) for x in np.atleast_1d(self.scale)]
        zps = [int(z) for z in np.atleast_1d(self.zero_point)]
        if len(zps) == 1 and len(scales) > 1:
            zps = zps * len(scales)
        if len(zps) != len(scales):
            raise ValueError("%d zero points for %d scales"
                             % (len(zps), len(scales)))
        if len(scales) > 1 and not 0 <= self.quantized_dimension < len(
                self.shape):
            raise ValueError("quantized_dimension %d for shape %s"
                             % (self.quantized_dimension, self.shape))
        q.scale, q.zeroPoint = scales, zps
        q.quantizedDimension = self.quantized_dimension
        return q

    def __repr__(self):
        return "Tensor(%s, %r%s)" % (self.shape, self.dtype,
                                     ", const" if self.data is not None
                                     else "")


class _AlignedBufferT(s.BufferT):
    """BufferT whose data vector starts on an ALIGN-byte boundary."""

    def Pack(self, builder):
        data = None
        if self.data is not None:
            raw = bytes(self.data)
            builder.StartVector(1, len(raw), ALIGN)
            builder.head -= len(raw)
            builder.Bytes[builder.head:builder.head + len(raw)] = raw
            data = builder.EndVector()
        s.BufferStart(builder)
        if data is not None:
            s.BufferAddData(builder, data)
        return s.BufferEnd(builder)


def _camel(key):
    key = _ALIASES.get(key, key)
    parts = key.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def options_table(op_name):
    """BuiltinOptions member name for an op ('Conv2DOptions'), or None."""
    name = OPTIONS.get(op_name)
    if name is None:
        name = _OPTION_NAMES.get(op_name.replace("_", "").lower() + "options")
    return name


def _option_value(field, value):
    if not isinstance(value, str) or field in _STRING_FIELDS:
        return value
    enum = _ENUM_FIELDS.get(field)
    if enum is not None:
        try:
            return getattr(enum, value.upper())
        except AttributeError:
            raise ValueError("%s: unknown value %r" % (field, value)) from None
    if field.endswith("Type"):
        return dtype_code(value)
    raise ValueError("%s: string value %r not understood" % (field, value))


class _Op:
    def __init__(self, name, code, custom, inputs, outputs, options,
                 version, custom_options):
        self.name, self.code, self.custom = name, code, custom
        self.inputs, self.outputs = inputs, outputs
        self.options, self.version = options, version
        self.custom_options = custom_options


class Model:
    """A one-subgraph model under construction.

    tensors: the Tensor objects in index order; ops: in execution order.
    inputs / outputs: lists of tensor indices, or None for the defaults
    (inputs: tensors no op produces, without data, not variable; outputs:
    tensors some op produces and no op consumes).
    """

    def __init__(self, description="opgen", name="main"):
        self.description = description
        self.name = name
        self.tensors = []
        self.ops = []
        self.inputs = None
        self.outputs = None
        self.subgraphs = []  # subgraphs 1, 2, ...: add_subgraph

    def add_subgraph(self, sg):
        """Append Model sg (its tensors, ops, inputs and outputs; its own
        subgraphs are ignored) as the next subgraph of this model;
        returns its index (1 for the first). IF / WHILE / CALL_ONCE
        options name subgraphs by these indices. Constant buffers and
        operator codes are shared by all subgraphs when built."""
        self.subgraphs.append(sg)
        return len(self.subgraphs)

    def add_tensor(self, t):
        """Add a Tensor; returns its index (the same object added twice
        keeps its first index)."""
        for i, u in enumerate(self.tensors):
            if u is t:
                return i
        if not isinstance(t, Tensor):
            raise TypeError("add_tensor takes an opgen.Tensor, got %r" % (t,))
        self.tensors.append(t)
        return len(self.tensors) - 1

    def _index(self, t):
        if isinstance(t, Tensor):
            return self.add_tensor(t)
        t = int(t)
        if not -1 <= t < len(self.tensors):
            raise ValueError("tensor index %d out of range" % t)
        return t

    def add_op(self, op, inputs, outputs, options=None, version=1,
               custom_options=None):
        """Append an operator; returns its index.

        op: builtin name ('CONV_2D'), BuiltinOperator code, or 'CUSTOM:Name'.
        inputs / outputs: tensor indices or Tensor objects (added on first
        use); -1 in inputs for an omitted optional input.
        options: None, an *OptionsT instance or a dict (see module doc).
        custom_options: bytes for custom ops (flexbuffer format flag).
        """
        custom = None
        if isinstance(op, int):
            code = op
            op = {v: k for k, v in OPS.items()}[code]
        elif op.startswith("CUSTOM:"):
            code, custom = OPS["CUSTOM"], op[len("CUSTOM:"):]
        elif op in OPS:
            code = OPS[op]
        else:
            raise ValueError("unknown builtin op %r" % op)
        ins = [self._index(t) for t in inputs]
        outs = [self._index(t) for t in outputs]
        if -1 in outs:
            raise ValueError("%s: output index -1" % op)
        opt = self._options(op, options, ins, outs) if custom is None \
            else None
        if custom is None and options and opt is None:
            raise ValueError("%s has no options table; pass an *OptionsT "
                             "instance to force one" % op)
        self.ops.append(_Op(op, code, custom, ins, outs, opt, int(version),
                            None if custom_options is None
                            else bytes(custom_options)))
        return len(self.ops) - 1

    def _options(self, op, options, ins, outs):
        if options is not None and not isinstance(options, dict):
            if not hasattr(s.BuiltinOptions, type(options).__name__[:-1]):
                raise TypeError("%s: options must be a dict or an "
                                "*OptionsT instance, got %r" % (op, options))
            return options  # written as given
        name = options_table(op)
        if name is None:
            return None
        opt = getattr(s, name + "T")()
        self._defaults(name, opt, ins, outs)
        for key, value in (options or {}).items():
            field = _camel(key)
            if field not in vars(opt):
                raise ValueError("%s: %s has no field %r (fields: %s)"
                                 % (op, name, key, ", ".join(vars(opt))))
            setattr(opt, field, _option_value(field, value))
        return opt

    def _defaults(self, name, opt, ins, outs):
        """Fields where the schema default (0) is never what one means."""
        for f in ("strideW", "strideH", "strideD"):
            if hasattr(opt, f):
                setattr(opt, f, 1)
        if name == "SoftmaxOptions":
            opt.beta = 1.0
        elif name == "DepthwiseConv2DOptions" and len(ins) > 1 \
                and min(ins[:2]) >= 0:
            cin = self.tensors[ins[0]].shape[-1:]
            cout = self.tensors[ins[1]].shape[-1:]
            if cin and cout and cin[0] > 0:
                opt.depthMultiplier = cout[0] // cin[0]
        elif name in ("SplitOptions", "SplitVOptions"):
            opt.numSplits = len(outs)
        elif name == "PackOptions":
            opt.valuesCount = len(ins)
        elif name == "UnpackOptions":
            opt.num = len(outs)

    def graph_inputs(self):
        """The model inputs: self.inputs, or the default (see class doc)."""
        if self.inputs is not None:
            return [self._index(t) for t in self.inputs]
        produced = {i for op in self.ops for i in op.outputs}
        return [i for i, t in enumerate(self.tensors)
                if i not in produced and t.data is None
                and not t.is_variable]

    def graph_outputs(self):
        """The model outputs: self.outputs, or the default."""
        if self.outputs is not None:
            return [self._index(t) for t in self.outputs]
        consumed = {i for op in self.ops for i in op.inputs}
        produced = [i for op in self.ops for i in op.outputs]
        return sorted({i for i in produced if i not in consumed})

    def model_t(self):
        """The model as a schema ModelT (object API), ready to Pack."""
        buffers = [s.BufferT()]
        codes, code_index = [], {}
        subgraphs = [self._subgraph_t(g, buffers, codes, code_index)
                     for g in [self] + self.subgraphs]
        return s.ModelT(version=SCHEMA_VERSION, operatorCodes=codes,
                        subgraphs=subgraphs, description=self.description,
                        buffers=buffers)

    @staticmethod
    def _subgraph_t(self, buffers, codes, code_index):
        # (first: an input or output that no op uses is added here)
        inputs, outputs = self.graph_inputs(), self.graph_outputs()
        tensors = []
        for i, t in enumerate(self.tensors):
            buf = 0
            if t.data is not None:
                buf = len(buffers)
                buffers.append(_AlignedBufferT(data=t.data))
            tensors.append(s.TensorT(
                shape=list(t.shape), type=t.type, buffer=buf,
                name=t.name if t.name is not None else "t%d" % i,
                quantization=t._quant(), isVariable=t.is_variable))
        operators = []
        for op in self.ops:
            key = (op.code, op.custom, op.version)
            if key not in code_index:
                code_index[key] = len(codes)
                codes.append(s.OperatorCodeT(
                    deprecatedBuiltinCode=min(
                        op.code, PLACEHOLDER_FOR_GREATER_OP_CODES),
                    customCode=op.custom, version=op.version,
                    builtinCode=op.code))
            o = s.OperatorT(opcodeIndex=code_index[key],
                            inputs=list(op.inputs), outputs=list(op.outputs))
            if op.options is not None:
                o.builtinOptionsType = getattr(
                    s.BuiltinOptions, type(op.options).__name__[:-1])
                o.builtinOptions = op.options
            if op.custom_options is not None:
                o.customOptions = list(op.custom_options)
                o.customOptionsFormat = s.CustomOptionsFormat.FLEXBUFFERS
            operators.append(o)
        return s.SubGraphT(tensors=tensors, inputs=inputs, outputs=outputs,
                           operators=operators, name=self.name)

    def build(self):
        """Bytes of the .tflite file (identifier TFL3)."""
        builder = flatbuffers.Builder(1024)
        builder.Finish(self.model_t().Pack(builder), file_identifier=b"TFL3")
        return bytes(builder.Output())


def single_op(op, inputs, outputs, options=None, version=1,
              custom_options=None):
    """Bytes of a model with one operator. inputs / outputs: Tensor objects
    (or -1 for an omitted optional input); tensors without data become the
    model inputs, the outputs its outputs."""
    m = Model()
    m.add_op(op, inputs, outputs, options, version, custom_options)
    return m.build()


def parse(raw):
    """The official reader's view of a .tflite file: a schema ModelT."""
    return s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
