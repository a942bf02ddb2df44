"""Model verification: nothing read from a model file is trusted unchecked.

On a board, one bad offset followed by a viper pointer is a hard fault, so
every model is verified before any kernel touches it. The checks happen in
layers, and any failure raises a TFLMError subclass whose message names the
operator (index and builtin name), the tensor (index and name) and the byte
offset in the file where one applies:

1. flatbuf.py: every offset followed (root, tables, vtables, vectors,
   strings, fields) is checked to lie inside the buffer (FormatError);
   vector lengths are capped at MAX_VECTOR and must fit in the buffer.
2. structure() (here, before model.Model parses anything): walks every
   table and vector of every subgraph that the parser may read: opcode
   tables, tensors, quantization tables, operators and their options
   tables. It bounds the counts (MAX_TENSORS, MAX_OPERATORS, shape rank)
   and the total size of all vectors and strings that the parser will
   copy into Python objects to a few times the file size (a read
   budget), so that tables sharing one huge vector cannot make parsing
   quadratic. Sparse tensors are rejected.
3. model.py: tensor, buffer, opcode and operator tensor indices in range;
   subgraph inputs / outputs in range (never -1); shapes: rank <= 8, no
   negative or absurd dimension, element count and byte size bounded
   (MAX_DIM, MAX_BYTES: a 32-bit board's heap is never asked for absurd
   sizes; plain Python ints on the device cannot overflow); a constant's
   buffer holds exactly size * itemsize bytes, inside the file (also when
   Buffer.offset / size place them after the flatbuffer; custom.py checks
   Operator.large_custom_options_offset / size the same way).
4. check_model() (here, after parsing): quantization (finite positive
   scales, finite of any sign in a CONV_2D / DEPTHWISE_CONV_2D /
   FULLY_CONNECTED / TRANSPOSE_CONV filter; as many zero points as
   scales, zero points within int32 as TFLM stores them, per-channel
   counts matching quantized_dimension;
   not for a CONV_2D / DEPTHWISE_CONV_2D / TRANSPOSE_CONV bias, whose
   quantization TFLM never reads: _unread_quantization), operator
   outputs present (-1 is only for omitted optional inputs), no operator
   writing its own input, builtin options of the type the operator's
   kernel reads, subgraph inputs not constant (writing one would write
   into the model: flash on a board).
5. planner.py: every tensor is produced before it is read (so the graph
   has no cycles), outputs are written once, never into a constant;
   check_plan_size() (here, from the Interpreter) bounds the planner's
   quadratic work.
6. check_bindings() (from the Interpreter, before any kernel's prepare):
   every tensor an operator uses is bound to memory of exactly its size.
7. Kernel prepare functions: input / output counts, missing (None)
   inputs, types, shapes, option values (padding, strides, dilations,
   activation) and quantization needed by that kernel (PrepareError).
8. internal_error(): the Interpreter's last line of defence turns any
   other exception escaping construction into a TFLMError (see there).

Nesting depth: the reader does not recurse and is not driven by the data's
structure. Each access is a fixed chain of accessor calls written in the
code (Model -> SubGraph -> Tensor -> QuantizationParameters is the deepest,
4 tables), so a deeply nested file cannot cause recursion; every loop runs
over a vector whose length is bounded as above. Nor can references form a
cycle: a uoffset is unsigned and added to its own position, so each one
points strictly forward (only a table's soffset to its vtable may point
back, and vtables hold no references).
"""

from micropython import const

from . import kernels
from .flatbuf import Table
from .errors import (FormatError, ModelError, PrepareError,
                     out_of_memory, tensor_label)

_ADD = const(0)
_AVERAGE_POOL_2D = const(1)
_CONV_2D = const(3)
_DEPTHWISE_CONV_2D = const(4)
_DEQUANTIZE = const(6)
_DIV = const(42)
_EXPAND_DIMS = const(70)
_FULLY_CONNECTED = const(9)
_INT16 = const(7)
_INT8 = const(9)
_MAX_POOL_2D = const(17)
_MODEL_OPERATOR_CODES = const(1)
_MODEL_SUBGRAPHS = const(2)
_QUANTIZE = const(114)
_DEPTH_TO_SPACE = const(5)
_SPACE_TO_DEPTH = const(26)
_RESHAPE = const(22)
_SOFTMAX = const(25)
_SQUEEZE = const(43)
_SVDF = const(27)
_TRANSPOSE_CONV = const(67)
_UNIDIRECTIONAL_SEQUENCE_LSTM = const(44)
_UINT8 = const(3)

# Counts a microcontroller model never approaches (tens to hundreds); they
# keep the planner's O(n^2) work and the parser's RAM use bounded.
MAX_TENSORS = 8192
MAX_OPERATORS = 2048
_MAX_RANK = const(8)
_MAX_PLAN_WORK = const(1 << 17)  # see check_plan_size()
# The vectors and strings the parser copies may total at most this many
# times the file size (plus _READ_SLACK bytes). Without sharing between
# tables they total less than the file size.
_READ_FACTOR = const(2)
_READ_SLACK = const(4096)

# Schema field indices (tensorflow/lite/schema/schema.fbs). const(): on
# MicroPython these cost no RAM (the compiler inlines them).
_OPCODE_CUSTOM_CODE = const(1)
_SG_TENSORS = const(0)
_SG_INPUTS = const(1)
_SG_OUTPUTS = const(2)
_SG_OPERATORS = const(3)
_SG_NAME = const(4)
_T_SHAPE = const(0)
_T_NAME = const(3)
_T_QUANTIZATION = const(4)
_T_SPARSITY = const(6)
_Q_SCALE = const(2)
_Q_ZERO_POINT = const(3)
_OP_INPUTS = const(1)
_OP_OUTPUTS = const(2)
_OP_BUILTIN_OPTIONS = const(4)

# BuiltinOptions union type each kernel reads (0, NONE, is also accepted:
# the kernel then uses the schema defaults, as TFLM does).
_CONV2D_OPTIONS = const(1)
_DEPTHWISE_CONV2D_OPTIONS = const(2)
_POOL2D_OPTIONS = const(5)
_FULLY_CONNECTED_OPTIONS = const(8)
_SOFTMAX_OPTIONS = const(9)
_ADD_OPTIONS = const(11)
_DIV_OPTIONS = const(29)
_RESHAPE_OPTIONS = const(17)
_SQUEEZE_OPTIONS = const(30)
_DEQUANTIZE_OPTIONS = const(38)
_EXPAND_DIMS_OPTIONS = const(52)
_QUANTIZE_OPTIONS = const(89)
_SPACE_TO_DEPTH_OPTIONS = const(19)
_DEPTH_TO_SPACE_OPTIONS = const(94)
# The options table type the kernels of these operators read: a bytes
# literal stays in the .mpy (ROMFS) on a board, where a dict costs a few
# hundred bytes of RAM.
# (BuiltinOperator, BuiltinOptions) byte pairs, in this order:
#   _CONV_2D _CONV2D_OPTIONS
#   _DEPTHWISE_CONV_2D _DEPTHWISE_CONV2D_OPTIONS
#   _AVERAGE_POOL_2D _POOL2D_OPTIONS
#   _MAX_POOL_2D _POOL2D_OPTIONS
#   _FULLY_CONNECTED _FULLY_CONNECTED_OPTIONS
#   _SOFTMAX _SOFTMAX_OPTIONS
#   _ADD _ADD_OPTIONS
#   _DIV _DIV_OPTIONS
#   _RESHAPE _RESHAPE_OPTIONS
#   _SQUEEZE _SQUEEZE_OPTIONS
#   _DEQUANTIZE _DEQUANTIZE_OPTIONS
#   _EXPAND_DIMS _EXPAND_DIMS_OPTIONS
#   _QUANTIZE _QUANTIZE_OPTIONS
#   _DEPTH_TO_SPACE _DEPTH_TO_SPACE_OPTIONS
#   _SPACE_TO_DEPTH _SPACE_TO_DEPTH_OPTIONS
# (tests/test_verifier.py checks them against the constants above).
_OPTION_TYPES = (
    b"\x03\x01\x04\x02\x01\x05\x11\x05\x09\x08\x19\x09\x00\x0b\x2a\x1d"
    b"\x16\x11\x2b\x1e\x06\x26\x46\x34\x72\x59\x05\x5e\x1a\x13"
)

_INT32_MIN = const(-(1 << 31))
_INT32_MAX = const((1 << 31) - 1)


class _Budget:
    """Bytes of vectors / strings the parser will copy, capped."""

    def __init__(self, fb):
        self.left = _READ_FACTOR * fb.size + _READ_SLACK

    def take(self, table, field, elem_size):
        """Charge the vector in field of table; returns its length."""
        start, n = table.vector(field, elem_size)
        self.left -= n * elem_size
        if self.left < 0:
            raise FormatError("vector at offset %d (%d elements): the "
                              "model's tables share data, more than %dx the "
                              "file size would be read"
                              % (start - 4, n, _READ_FACTOR))
        return n


def structure(fb):
    """Check what model.Model will read of subgraph 0, before it does.

    fb: flatbuf.FlatBuffer. Constructing each Table checks its vtable and
    extent; each vector is checked to lie in the buffer and is charged to
    the read budget. Raises FormatError or ModelError; a FormatError for
    a file without schema.fbs's identifier "TFL3" at offset 4 says it is
    not a TFLite model (the identifier is optional in FlatBuffers, and
    TFLM runs a valid model without it, so only a broken one is refused).
    """
    try:
        _structure(fb)
    except FormatError as e:
        ident = bytes(fb.mv[4:8])
        if ident == b"TFL3":
            raise
        raise FormatError("not a TFLite model (no file identifier 'TFL3' at "
                          "offset 4, found %r): %s" % (ident, e))


def _structure(fb):
    root = fb.root()
    budget = _Budget(fb)
    start, n = root.vector(_MODEL_OPERATOR_CODES, 4)
    for k in range(n):
        budget.take(root.table_at(start, k), _OPCODE_CUSTOM_CODE, 1)
    start, n = root.vector(_MODEL_SUBGRAPHS, 4)
    for s in range(n):  # (none: model.Model reports it)
        sg = root.table_at(start, s)
        budget.take(sg, _SG_NAME, 1)
        _tensors(sg, budget)
        budget.take(sg, _SG_INPUTS, 4)
        budget.take(sg, _SG_OUTPUTS, 4)
        _operators(sg, budget)


def _tensors(sg, budget):
    start, n = sg.vector(_SG_TENSORS, 4)
    if n > MAX_TENSORS:
        raise ModelError("subgraph has %d tensors (at most %d; vector at "
                         "offset %d)" % (n, MAX_TENSORS, start - 4))
    for k in range(n):
        try:
            _tensor(sg, start, k, budget)
        except FormatError as e:
            raise FormatError("tensor %d: %s" % (k, e))


def _tensor(sg, start, k, budget):
    t = sg.table_at(start, k)
    budget.take(t, _T_NAME, 1)
    rank = budget.take(t, _T_SHAPE, 4)
    if rank > _MAX_RANK:
        raise ModelError("%s has rank %d (at most %d; tensor table at "
                         "offset %d)" % (tensor_label(k, t.string(_T_NAME)),
                                         rank, _MAX_RANK, t.pos))
    if t.has(_T_SPARSITY):
        raise ModelError("%s is sparse (tensor table at offset %d): sparse "
                         "tensors are not supported"
                         % (tensor_label(k, t.string(_T_NAME)), t.pos))
    q = t.table(_T_QUANTIZATION)
    if q is not None:
        budget.take(q, _Q_SCALE, 4)
        budget.take(q, _Q_ZERO_POINT, 8)


def _operators(sg, budget):
    start, n = sg.vector(_SG_OPERATORS, 4)
    if n > MAX_OPERATORS:
        raise ModelError("subgraph has %d operators (at most %d; vector at "
                         "offset %d)" % (n, MAX_OPERATORS, start - 4))
    for k in range(n):
        try:
            t = sg.table_at(start, k)
            budget.take(t, _OP_INPUTS, 4)
            budget.take(t, _OP_OUTPUTS, 4)
            t.table(_OP_BUILTIN_OPTIONS)  # checks the options table's vtable
        except FormatError as e:
            raise FormatError("op %d: %s" % (k, e))


def _at(obj):
    """' (table at offset N)' for a parsed Tensor / Operator."""
    pos = getattr(obj, "pos", None)
    return "" if pos is None else " (table at offset %d)" % pos


def check_model(m):
    """Semantic checks on a parsed model.Model (see the module doc, 4).

    Raises ModelError naming the tensor or operator and its table offset.
    """
    unread, filters = _unread_quantization(m)
    for t in m.tensors:
        if t.index not in unread:
            check_quantization(t, t.index in filters)
    for i in m.inputs:
        t = m.tensors[i]
        if t.is_const:
            raise ModelError("subgraph input %s%s is constant: writing it "
                             "would write into the model"
                             % (t.label(), _at(t)))
    for op in m.operators:
        _check_operator(m, op)


def _unread_quantization(m):
    """Set of the tensor indices whose quantization no kernel reads: the
    biases of CONV_2D and DEPTHWISE_CONV_2D (input 2) and TRANSPOSE_CONV
    (input 3) that nothing else uses (no other input slot, no operator
    output, not a subgraph input or output). Their int8 multipliers come
    from the input and filter scales (PopulateConvolutionQuantizationParams
    reads the bias scale only for uint8, which has no kernel here), and
    the float32 kernels ignore quantization; a converter may leave any
    scale there (a negative one was seen in a model TFLM runs).
    FULLY_CONNECTED compares its bias scale with input * filter scale
    (GetQuantizedConvolutionMultipler): its bias is checked.

    Returns (that set, filters): filters is the set of the tensors used
    only as the filter (input 1) of CONV_2D, DEPTHWISE_CONV_2D,
    FULLY_CONNECTED and TRANSPOSE_CONV (or FULLY_CONNECTED's bias, whose
    scale a converter makes input scale * filter scale), whose scales may
    be zero or negative (check_quantization's signed): TFLM computes the
    channel's multiplier from them, (0, 0) or negative (a public ImageNet
    MCUNet has a weight channel of scale -1.98e-08), and so do those
    kernels here (conv_util.quant_params)."""
    bias, filt, other = set(), set(), set(m.inputs + m.outputs)
    for op in m.operators:
        c = op.code if op.custom_code is None else -1
        k = 2 if c == _CONV_2D or c == _DEPTHWISE_CONV_2D else \
            3 if c == _TRANSPOSE_CONV else -1
        f = 1 if (c == _CONV_2D or c == _DEPTHWISE_CONV_2D or
                  c == _FULLY_CONNECTED or c == _TRANSPOSE_CONV) else -1
        fb = 2 if c == _FULLY_CONNECTED else -1
        for j, i in enumerate(op.inputs):
            (bias if j == k else filt if j == f or j == fb else
             other).add(i)
        other.update(op.outputs)
    return bias - other - filt, filt - other - bias


def check_quantization(t, signed=False):
    """Scales finite and > 0 (signed: finite, of any sign, for a
    convolution's filter: _unread_quantization), one zero point per
    scale, zero points within the range of the tensor's type (int8,
    uint8, int16; int32 for the others), per-channel counts equal the
    size of quantized_dimension. Raises ModelError: for a NaN or
    infinite scale TFLM's multiplier is undefined; a zero or negative
    one elsewhere is not computed with here (TFLM divides by an
    activation's scale, or fails a check, or computes something no
    converter produces)."""
    ty = t.type
    lo, hi = ((-128, 127) if ty == _INT8 else
              (0, 255) if ty == _UINT8 else
              (-32768, 32767) if ty == _INT16 else
              (_INT32_MIN, _INT32_MAX))
    # First a scan of the model's bytes that makes no float or int64 per
    # entry (a CNN has thousands of per-channel entries: seconds on a
    # board); a tensor it does not pass (or one changed by hand) is
    # checked value by value below, which names what is wrong.
    n = -1
    fb = t._fb
    if fb is not None and not t._assigned("scales") and \
            not t._assigned("zero_points"):
        q = Table(fb, t.pos).table(4)
        s0, n = (0, 0) if q is None else q.vector(2, 4)
        z0, nz = (0, 0) if q is None else q.vector(3, 8)
        b = fb.mv
        if nz != n:
            n = nz = -1
        for p in range(s0, s0 + 4 * n, 4):
            # finite and > 0: sign clear, exponent not all ones, not 0
            # (signed: finite)
            b3 = b[p + 3]
            if signed:
                b3 &= 0x7F
                if b3 == 0x7F and b[p + 2] & 0x80:
                    n = nz = -1
                    break
            elif b3 & 0x80 or (b3 == 0x7F and b[p + 2] & 0x80) or \
                    not (b3 | b[p + 2] | b[p + 1] | b[p]):
                n = nz = -1
                break
        for p in range(z0, z0 + 8 * nz, 8):
            b3 = b[p + 3]
            ext = 0xFF if b3 & 0x80 else 0
            if b[p + 4] != ext or b[p + 5] != ext or b[p + 6] != ext or \
                    b[p + 7] != ext:
                n = -1  # beyond int32
                break
            if ext:  # as flatbuf's i32: no big int for a small -z
                z = -((b[p] ^ 0xFF) | ((b[p + 1] ^ 0xFF) << 8)
                      | ((b[p + 2] ^ 0xFF) << 16) | ((b3 ^ 0xFF) << 24)) - 1
            else:
                z = b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b3 << 24)
            if not lo <= z <= hi:
                n = -1
                break
    if n < 0:
        scales, zps = t.scales, t.zero_points
        for s in scales:
            # s - s is NaN for inf and NaN (no float32-rounded FLT_MAX
            # literal needed: a board's float parser may round it to inf)
            if not s - s == 0.0:
                raise ModelError("%s%s has quantization scale %r: scales "
                                 "must be finite (TFLM's multiplier from a "
                                 "NaN or infinite one is undefined)"
                                 % (t.label(), _at(t), s))
            if not (signed or s > 0.0):
                raise ModelError("%s%s has quantization scale %r: scales "
                                 "must be finite and positive (zero or "
                                 "negative only in a convolution's or "
                                 "FULLY_CONNECTED's filter)"
                                 % (t.label(), _at(t), s))
        if len(zps) != len(scales):
            raise ModelError("%s%s has %d quantization scales and %d zero "
                             "points" % (t.label(), _at(t), len(scales),
                                         len(zps)))
        # TFLM keeps zero points as int32 and its kernels compute with
        # any of them, wrongly where the zero point is outside the type's
        # range (an int8 MEAN then gives 127 or -128 depending on the
        # word size): such a model is rejected here, naming the tensor.
        for z in zps:
            if not lo <= z <= hi:
                raise ModelError("%s%s has zero point %d, outside %s's "
                                 "range [%d, %d]"
                                 % (t.label(), _at(t), z,
                                    t.dtype if hi < _INT32_MAX
                                    else "int32", lo, hi))
        n = len(scales)
    if n > 1:
        qd, shape = t.quantized_dimension, t.shape
        ok = 0 <= qd < len(shape) and shape[qd] == n
        # The TFLite converter gives biases (rank 1) the quantized
        # dimension of their filter (3 for depthwise convs): accepted when
        # the one dimension has n entries.
        ok = ok or (len(shape) == 1 and 0 <= qd < _MAX_RANK
                    and shape[0] == n)
        if not ok:
            raise ModelError("%s%s has %d per-channel scales but dimension "
                             "%d of shape %s does not have %d entries"
                             % (t.label(), _at(t), n, qd, shape, n))


def _buffered(m, i):
    """True when variable tensor i is a CIRCULAR_BUFFER's output: that
    kernel keeps it (ctx.variable), and the operators after it read it
    as any input (TFLM's streaming models)."""
    for op in m.operators:
        if op.custom_code == "CIRCULAR_BUFFER" and i in op.outputs:
            return True
    return False


def _check_operator(m, op):
    label = op.label()
    ins = set(op.inputs)  # a set: an op may list thousands of tensors
    supported = op.custom_code is None and \
        kernels.module_name(op.code) is not None
    for k, i in enumerate(op.inputs + op.outputs):
        if not supported or i < 0 or not m.tensors[i].is_variable:
            continue
        t = m.tensors[i]
        if not (op.code == _SVDF and k == 4 or
                op.code == _UNIDIRECTIONAL_SEQUENCE_LSTM and k in (18, 19)
                or k < len(op.inputs) and _buffered(m, i)):
            # TFLM gives variables their own memory, reset at
            # construction; only SVDF's and the LSTM's state inputs
            # keep state here (and CIRCULAR_BUFFER's output, which
            # others read).
            raise ModelError("%s%s uses %s, a variable (state) tensor, "
                             "where no supported kernel keeps state"
                             % (label, _at(op), t.label()))
        if t.is_const:
            raise ModelError("%s%s: variable tensor %s has constant data "
                             "(TFLM gives it fresh memory instead: not "
                             "supported)" % (label, _at(op), t.label()))
    for i in op.outputs:
        if i < 0:
            raise ModelError("%s%s has output index %d: only optional "
                             "inputs may be omitted" % (label, _at(op), i))
        if i in ins:
            raise ModelError("%s%s writes %s, which is also one of its "
                             "inputs" % (label, _at(op),
                                         m.tensors[i].label()))
    if op.custom_code is not None:
        return
    table = _OPTION_TYPES
    k = 0
    while k < len(table) and table[k] != op.code:
        k += 2
    if k >= len(table):
        return
    want = table[k + 1]
    if op.options_type not in (0, want):
        raise ModelError("%s%s has builtin options of type %d; its kernel "
                         "reads type %d" % (label, _at(op), op.options_type,
                                            want))
    if op.options_type == 0 and op.options is not None:
        raise ModelError("%s%s has a builtin options table but option type "
                         "NONE" % (label, _at(op)))


def check_bindings(interp, root):
    """Every tensor an operator uses is bound to exactly nbytes bytes, and
    a view of a constant (RESHAPE of a weight) has the constant's size.

    root: planner.alias_roots() of the model. Called by the Interpreter
    before any kernel's prepare (prepare may read constant data with
    viper pointers). Raises ModelError.
    """
    tensors = interp._tensors  # (allocator._size sets it)
    for op in interp._model.operators:
        for i in op.inputs + op.outputs:
            if i < 0:
                continue
            t, r = tensors[i], tensors[root[i]]
            have = None if t.data is None else len(t.data)
            if r.is_const and r is not t:
                have = r.const_len
            if have != t.nbytes:
                raise ModelError("%s: %s needs %d bytes but is bound to %s"
                                 % (op.label(), t.label(), t.nbytes,
                                    "nothing" if have is None else
                                    "%d bytes of %s" % (have, r.label())))


def check_plan_size(m):
    """Bound the memory planner's work before it runs.

    planner.plan() places each buffer against those alive at the same
    time: about buffers * peak_live steps (times a sort). A graph that
    keeps hundreds of activations alive at once (e.g. every op's output
    a subgraph output) would take minutes to plan on a board; no model
    that fits a microcontroller does this. Raises ModelError when
    buffers * peak_live > _MAX_PLAN_WORK (also, through
    planner.lifetimes, for tensors read before written).
    """
    from .planner import lifetimes
    life = lifetimes(m)
    events = []
    for first, last in life.values():
        events.append((first, 1))
        events.append((last + 1, -1))  # ends sort before starts
    events.sort()
    live = peak = 0
    for _, d in events:
        live += d
        if live > peak:
            peak = live
    if len(life) * peak > _MAX_PLAN_WORK:
        raise ModelError("%d activations with up to %d alive at once: too "
                         "many to plan (buffers x alive must be <= %d)"
                         % (len(life), peak, _MAX_PLAN_WORK))


INTERNAL = "internal error"


def internal_error(e, stage):
    """The TFLMError to raise for an unexpected exception e, caught while
    the Interpreter was `stage` ('parsing the model', 'preparing op 3
    (CONV_2D)', ...).

    Such an exception means a check is missing (or a kernel has a bug),
    yet the caller must still get a TFLMError, so every Exception is
    converted (KeyboardInterrupt
    and SystemExit are not Exceptions and pass through): IndexError,
    KeyError, ValueError (struct.error on MicroPython, UnicodeError),
    TypeError and AttributeError (a missing value where an object was
    expected), OverflowError (a value too big for an array('i')),
    ZeroDivisionError, RuntimeError (RecursionError) become PrepareError
    while preparing an operator and ModelError otherwise, with the
    original type and message and the words 'internal error' (a check is
    missing: please report it). MemoryError becomes ArenaError: the model
    needs more RAM than the heap has free, a property of the board rather
    than a bug.
    """
    if isinstance(e, MemoryError):
        return out_of_memory(stage)
    what = "%s %s" % (type(e).__name__, e) if str(e) else type(e).__name__
    cls = PrepareError if stage.startswith("preparing") else ModelError
    return cls("%s while %s: %s (no check caught this: please report it "
               "with the model)" % (INTERNAL, stage, what))


__all__ = ("structure", "check_model", "check_quantization",
           "check_bindings", "check_plan_size", "internal_error")
