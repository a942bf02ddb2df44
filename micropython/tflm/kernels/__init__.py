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
int32 words, a bytes view used only during its own eval, like
RequestScratchBufferInArena; ctx.limit_scratch(n) lowers it;
conv_util.scratch_halves splits it), ctx.work(n) / conv_util.work_buffer
(more scratch words), heap.persistent(ctx, typecode, n) (zeros in the
arena's persistent tail, like AllocatePersistentBuffer, for multipliers,
shifts, biases: prepare fills them by index; conv_util.bias_array copies
a bias there, counted in ctx.copied_bytes) and ctx.const_ints (the
values of a constant integer input: axes, shapes, paddings). Smaller
arrays that an op keeps for eval (tables, parameter blocks) go
through heap.keep(ctx, a): they are copied into the tail and the
state holds views of the copies. Eval code reads all of them with
viper pointers only. prepare runs twice (a sizing pass, then the
real one, see context.py) and must ask for the same buffers both times.

eval_fn(state) is the hot path: it must not allocate (it runs under
micropython.heap_lock()), and its loops are @micropython.viper code that is
correct on 32-bit ports and with model data at any address.

Operators in ALIAS_CODES (RESHAPE and friends) produce an output that
shares its input's bytes; the memory planner gives both one buffer. The
int8 operators in INPLACE_CODES (ADD, SUB) may write their output over
an input that dies there.
"""

import sys

from micropython import const

from ..errors import PrepareError
from ..heap import pack as _pack  # kernels/pack.py is a module here

# THUMB: the port runs Thumb machine code (the native arch in
# sys.implementation._mpy is armv6m .. armv7emdp; False under CPython and
# on the unix port). There CONV_2D, FULLY_CONNECTED and DEPTHWISE_CONV_2D
# (and fc_rows.py's LSTM and SVDF matmuls, BATCH_MATMUL) run their hot
# loops in kernels/thumb.py (thumb_dsp.py where DSP) and thumb_dw.py
# (thumb_dw_dsp.py where DSP),
# SOFTMAX and the int8 AVERAGE_POOL_2D theirs in thumb_softmax.py and
# thumb_pool.py, rescale.scale_i32 in
# thumb_rescale.py, the int8 LSTM's gate loop in thumb_lstm.py; elsewhere
# their viper twins mac.py, mac_dw.py, softmax_loops.py, pool_loops.py,
# rescale_loops.py and lstm_loops.py run: the same functions and blocks
# (romfs.THUMB_ONLY, VIPER_TWINS).
# The kernel modules import them at their own import (not in prepare:
# see preload). WORD: bytes of a machine word (4 on 32-bit
# ports, 8 on 64-bit ones and CPython's host tools, which plan for the
# unix port).
# DSP: the arch is armv7em, armv7emsp or armv7emdp (Cortex-M4, M7, M33:
# the DSP extension's SXTB16 and SMLAD), where CONV_2D, FULLY_CONNECTED,
# BATCH_MATMUL and fc_rows.py take thumb_dsp.py's dots and pixels in
# place of thumb.py's, DEPTHWISE_CONV_2D thumb_dw_dsp.py's dw, dw3 and
# plane in place of thumb_dw.py's; FULLY_CONNECTED also thumb_rq_dsp.py's
# gather and requantization (fc_dsp.py), DEPTHWISE_CONV_2D with one input
# channel thumb_dw_dsp.dwm (dw_dsp.py) (romfs.DSP_ONLY).
# FPU: the arch is armv7emsp or armv7emdp (Cortex-M4F, M7, M33 with a
# single-precision FPU), where the float32 CONV_2D, DEPTHWISE_CONV_2D and
# FULLY_CONNECTED (conv_f32.py) take thumb_fpu.py's dot in place of
# f32.dot: the same bits, in VFP instructions (romfs.FPU_ONLY).
try:
    THUMB = 4 <= (sys.implementation._mpy >> 10) & 0x2F <= 8
    DSP = 6 <= (sys.implementation._mpy >> 10) & 0x2F <= 8
    FPU = 7 <= (sys.implementation._mpy >> 10) & 0x2F <= 8
except AttributeError:
    THUMB = DSP = FPU = False
WORD = 8 if sys.maxsize > 0x7FFFFFFF else 4
# COMPILING: prepare runs for host_tools compile (mp_compile.py sets it):
# what a kernel would rebuild at every eval from constants alone (ADD's
# and SQUARED_DIFFERENCE's tables) it builds once into the persistent
# words, which a compiled model keeps in its bytes (flash on a board)
COMPILING = False
# PLAN_DSP: prepare plans the work buffers that the DSP loops need
# (DEPTHWISE_CONV_2D's dwm: depthwise_conv._least_plane): DSP on a board;
# host_tools compile sets it from its --arch
PLAN_DSP = DSP

_ADD = const(0)
_EXPAND_DIMS = const(70)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)
_RESHAPE = const(22)
_SMALL = const(128)  # Model.used_codes' flag (model.SMALL_FLAG)
_SQUEEZE = const(43)
_SUB = const(41)

# Builtin operator code -> kernel module (imported only when a model uses
# it), as " CODE:module" words: one string is one object on a board,
# where a dict of 53 entries and its names cost a kilobyte of RAM, and
# codes rather than names keep it short (the names are in the comments;
# tests/test_schema_consts.py::test_kernel_table_codes checks them).
_KERNELS = (
    # ADD AVERAGE_POOL_2D MAX_POOL_2D CONV_2D
    " 0:add 1:pooling 17:max_pool 3:conv"
    # DEPTHWISE_CONV_2D FULLY_CONNECTED
    " 4:depthwise_conv 9:fully_connected"
    # SOFTMAX RESHAPE SQUEEZE EXPAND_DIMS
    " 25:softmax 22:reshape 43:reshape 70:reshape"
    # TRANSPOSE QUANTIZE
    " 39:transpose 114:quantize"
    # [activations] int8 (float32 RELU, RELU6, LOGISTIC, TANH: float_ops)
    # RELU RELU6 LEAKY_RELU
    " 19:activations 21:activations 98:activations"
    # LOGISTIC TANH HARD_SWISH RSQRT PRELU
    " 14:lut 28:lut 117:lut 76:lut 54:prelu"
    # L2_NORMALIZATION
    " 11:l2norm"
    # [binary]
    # SUB MUL DIV SQUARED_DIFFERENCE
    " 41:sub 18:mul 42:div 99:squared_difference"
    # MAXIMUM MINIMUM
    " 55:maximum_minimum 57:maximum_minimum"
    # [comparisons, logical] bool output
    # EQUAL NOT_EQUAL GREATER GREATER_EQUAL
    " 71:compare 72:compare 61:compare 62:compare"
    # LESS LESS_EQUAL LOGICAL_AND LOGICAL_OR
    " 58:compare 63:compare 86:compare 84:compare"
    # [unary]
    # ABS NEG CEIL FLOOR
    " 101:elementwise 59:elementwise 104:elementwise 8:elementwise"
    # ROUND SQRT SQUARE EXP
    " 116:elementwise 75:elementwise 92:elementwise 47:elementwise"
    # LOGICAL_NOT LOG FLOOR_DIV FLOOR_MOD
    " 87:elementwise 73:elementwise 90:floor_div 95:floor_div"
    # [reduce]
    # MEAN SUM REDUCE_MAX REDUCE_MIN ARG_MAX
    " 40:reduce 74:reduce 82:reduce 89:reduce 56:arg_minmax"
    # ARG_MIN GATHER SHAPE FILL
    " 79:arg_minmax 36:gather 77:fill 94:fill"
    # ZEROS_LIKE REDUCE_ALL
    " 93:fill 140:reduce"
    # [movement]
    # STRIDED_SLICE SLICE PACK UNPACK
    " 45:strided_slice 65:slice 83:pack 88:pack"
    # SPLIT SPLIT_V SPACE_TO_BATCH_ND
    " 49:split 102:split 38:space_batch"
    # BATCH_TO_SPACE_ND DEPTH_TO_SPACE
    " 37:space_batch 5:depth_space"
    # SPACE_TO_DEPTH
    " 26:depth_space"
    # MIRROR_PAD REVERSE_V2 BROADCAST_TO
    " 100:mirror_pad 105:reverse 130:broadcast_to"
    # SELECT_V2 ADD_N GATHER_ND EMBEDDING_LOOKUP
    " 123:select_v2 106:add_n 107:gather_nd 7:embedding_lookup"
    # CUMSUM BROADCAST_ARGS DYNAMIC_UPDATE_SLICE L2_POOL_2D
    " 128:cumsum 145:broadcast_args 151:dynamic_update_slice 12:l2_pool"
    # ELU SIN COS LOG_SOFTMAX
    " 111:elu 66:trig 108:trig 50:log_softmax"
    # BATCH_MATMUL
    " 126:batch_matmul"
    # [spatial]
    # RESIZE_NEAREST_NEIGHBOR RESIZE_BILINEAR
    " 97:resize 23:resize"
    # TRANSPOSE_CONV
    " 67:transpose_conv"
    # byte copies: float32, int8 and the other types TFLM copies
    # CONCATENATION PAD PADV2 DEQUANTIZE
    " 2:concatenation 34:pad 60:pad 6:dequantize"
    # type conversion: int8, int16, int32, uint32, float32 (bool input)
    # CAST
    " 53:cast"
    # state in variable tensors
    # SVDF UNIDIRECTIONAL_SEQUENCE_LSTM
    " 27:svdf 44:lstm"
    # subgraphs (tflm/graphs.py) and resource variables
    # IF WHILE CALL_ONCE
    " 118:control 119:control 129:control"
    # VAR_HANDLE READ_VARIABLE ASSIGN_VARIABLE
    " 142:resource 143:resource 144:resource"
)

# TFLM's Signal library (audio front-end), CUSTOM operators by name
# (the op resolver's AddCustom entries: tflm.register_op's kernels win).
_CUSTOM_KERNELS = (
    " SignalWindow:signal_basic SignalFftAutoScale:signal_basic"
    " SignalEnergy:signal_basic SignalRfft:signal_fft"
    " SignalFilterBank:signal_bank SignalFilterBankSquareRoot:signal_bank"
    " SignalFilterBankSpectralSubtraction:signal_bank"
    " SignalFilterBankLog:signal_bank SignalPCAN:signal_bank"
    " SignalDelay:signal_stream SignalFramer:signal_stream"
    " SignalStacker:signal_stream SignalOverlapAdd:signal_stream"
    " SignalIrfft:signal_irfft"
    # TFLM's CIRCULAR_BUFFER (streaming keyword models)
    " CIRCULAR_BUFFER:circular_buffer"
    # TFLM's DETECTION_POSTPROCESS (SSD detectors' last op)
    " TFLite_Detection_PostProcess:detection_postprocess"
    # TFLM's DECODE (compressed constants: AddDecode)
    " TFLM_DECODE:decode"
)

# Operators whose output is a view of their first input (no copy).
ALIAS_CODES = (_RESHAPE, _SQUEEZE, _EXPAND_DIMS)
# Operators whose int8 kernels read element i of each input before they
# write element i of the output, in every eval path (add.py: _add_lut,
# the chunked paths gather an input chunk before storing it): their
# output may take the bytes of a same-shape input that dies there
# (planner.in_place).
INPLACE_CODES = (_ADD, _SUB)


# Modules that a kernel module imports inside its prepare, for one tensor
# type, as " module:type:imported" words (type f: FLOAT32, i: INT32, h:
# INT16 among the operator's tensors; H: INT16 among its inputs, for a
# variant that an int16 output alone does not need; s: any type, for an
# operator whose output has fewer than model.SMALL (256) elements or an input
# of another shape than its output (ADD's chunked evals, add_chunks.py);
# *: any type, for the prepare-time helpers that
# interpreter.CONSTRUCTION drops once an interpreter is built). The
# interpreter imports them before it parses the model when the model has
# tensors of that type, so that their code, which stays in RAM, is not
# made amid construction's objects (a board's heap never moves an
# object). tests/test_board_heap.py checks this table against the
# kernels' sources. (kernels/conv_util.py, which most kernels use, is
# imported for every model.)
_LAZY = (
    " activations:f:float_ops add:f:float_ops add:i:binary_i32 add_n:f:f32"
    " cumsum:f:f32"
    " arg_minmax:f:f32 embedding_lookup:f:dequantize"
    " conv:f:conv_f32 depthwise_conv:f:conv_f32 fully_connected:f:conv_f32"
    " div:f:f32 lut:f:float_ops mul:f:float_ops mul:i:binary_i32"
    " pooling_prep:f:pool_f32 pooling_prep:h:pool16"
    " reduce:f:pool_f32 reduce:f:f32 resize:f:f32 softmax_prep:f:float_ops"
    " squared_difference:i:binary_i32 squared_difference:f:f32"
    " squared_difference:f:float_ops sub:f:float_ops sub:i:binary_i32"
    " svdf:f:f32 softmax_prep:h:quantize softmax_prep:H:softmax16_prep"
    " add:h:quantize sub:h:quantize"
    " fully_connected:h:fc16 conv:h:conv16 depthwise_conv:h:dw16"
    " lut:h:lut16 activations:h:act16 mul:h:mul16"
    " transpose_conv:h:tconv16"
    " activations:*:lut_math div:*:gemmlowp"
    " lut:*:lut_math elu:*:lut_math prelu:*:gemmlowp softmax:*:softmax_prep"
    " softmax_prep:*:gemmlowp pooling:*:pooling_prep max_pool:*:pooling_prep"
    " reshape:*:reshape_prep"
    " add:*:broadcast_prep sub:*:broadcast_prep mul:*:broadcast_prep"
    " mul16:*:broadcast_prep div:*:broadcast_prep prelu:*:broadcast_prep"
    " maximum_minimum:*:broadcast_prep squared_difference:*:broadcast_prep"
    " compare:*:broadcast_prep elementwise:f:elementwise_f32"
    " elementwise:h:elementwise16 elementwise:*:lut_math"
    " elementwise16:*:lut_math floor_div:*:broadcast_prep"
    " float_ops:*:broadcast_prep binary_i32:*:broadcast_prep"
    " add:s:add_chunks sub:s:add_chunks squared_difference:s:add_chunks"
    " add:h:add_chunks sub:h:add_chunks lstm:f:lstm_f32 lstm:h:lstm_int8"
    " signal_fft:i:signal_fft32 signal_fft:f:signal_fft32 signal_fft32:f:f32"
    " signal_irfft:i:signal_fft32 signal_irfft:f:signal_fft32"
    " elu:f:elu_f32 log_softmax:f:log_softmax_f32 log_softmax:*:gemmlowp"
    " batch_matmul:f:bmm_f32 batch_matmul:h:bmm16"
    " signal_stream:f:f32 circular_buffer:*:signal_util"
    " decode:*:decode_prep"
)


def _after(table, key):
    """The rest of the word of `table` that follows `key`, or None."""
    i = table.find(key)
    if i < 0:
        return None
    i += len(key)
    j = table.find(" ", i)
    return table[i:] if j < 0 else table[i:j]


def module_name(code):
    """Name of the kernel module of BuiltinOperator `code` (int), e.g.
    3 -> 'conv', or None if no kernel implements it (TFLM's op resolver
    lookup)."""
    return _after(_KERNELS, " %d:" % code)


def custom_module_name(name):
    """Name of the kernel module of built-in CUSTOM operator `name` (str,
    e.g. 'SignalRfft' -> 'signal_fft'), or None."""
    if " " in name or ":" in name:  # the table's separators: no match
        return None
    return _after(_CUSTOM_KERNELS, " %s:" % name)


def lazy(name):
    """[(TensorType code, module name)] that kernel module `name` imports
    inside its prepare for tensors of that type (+ 64: for inputs of that
    type; model.SMALL_FLAG: small or broadcast operators; see
    Model.used_codes), None: of any type (see _LAZY)."""
    out = []
    key = " %s:" % name
    i = _LAZY.find(key)
    while i >= 0:
        rest = _after(_LAZY[i:], key)
        out.append((_FLOAT32 if rest.startswith("f") else
                    _INT16 if rest.startswith("h") else
                    _INT16 | 64 if rest.startswith("H") else
                    _SMALL if rest.startswith("s") else
                    None if rest.startswith("*") else _INT32, rest[2:]))
        i = _LAZY.find(key, i + 1)
    return out


def _import(name):
    return __import__("tflm.kernels." + name, None, None, [name])


def preload(code, model, custom=None):
    """Import the kernel module of builtin code (or of built-in CUSTOM
    operator `custom`) and the modules it would import inside prepare for
    the tensor types of model's operators with that code (lazy();
    model.used_codes(key=...), read only for a module that has such
    imports)."""
    name = _name(code, custom)
    if name is not None:
        _preload(name, model, code if custom is None else custom,
                 custom is not None)


def _preload(name, model, key, custom):
    if "tflm.kernels." + name not in sys.modules:
        # collected before (model.used_codes's objects: the module's
        # code would land above them and leave their holes below) and
        # after: what an import leaves besides the module is garbage,
        # the next module's code fills its holes (heap.py)
        _pack()
        _import(name)
        _pack()
    subs = lazy(name)
    types = ()
    for t, sub in subs:
        if t is not None and not types:
            types = model.used_codes(custom, key)
        if t is None or t in types:
            _preload(sub, model, key, custom)


def find(code, custom=None):
    """The kernel module for a builtin code, or for built-in CUSTOM
    operator `custom` (a str), or None if unsupported."""
    name = _name(code, custom)
    return None if name is None else _import(name)


def _name(code, custom):
    return module_name(code) if custom is None else \
        custom_module_name(custom)


def check_int8(op, ts, supported="int8", quantized=True):
    """Raise PrepareError unless every tensor in ts is int8 and, with
    quantized, has per-tensor quantization and a zero point in int8 (what
    TFLM's int8 kernels assume). supported: the types the op's kernels
    take, for the message."""
    label = op.label()
    for t in ts:
        if t.type != _INT8:
            raise PrepareError("%s: %s is %s; supported: %s"
                               % (label, t.label(), t.dtype, supported))
        if quantized and not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
        if quantized and not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s zero point %d is outside int8"
                               % (label, t.label(), t.zero_point))
