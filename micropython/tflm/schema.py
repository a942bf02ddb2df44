"""TFLite schema names (from tensorflow/lite/schema/schema.fbs).

Names are kept as one space-separated string each, so that they cost a single
object on the device; builtin_name() and type_name() split on demand.
"""

# Operator names, indexed by BuiltinOperator code; "~" stands for the
# prefix "STABLEHLO_" (builtin_name), 414 bytes less on a board's flash.
_OP_NAMES = (
    "ADD AVERAGE_POOL_2D CONCATENATION CONV_2D DEPTHWISE_CONV_2D "
    "DEPTH_TO_SPACE DEQUANTIZE EMBEDDING_LOOKUP FLOOR "
    "FULLY_CONNECTED HASHTABLE_LOOKUP L2_NORMALIZATION "
    "L2_POOL_2D LOCAL_RESPONSE_NORMALIZATION LOGISTIC "
    "LSH_PROJECTION LSTM MAX_POOL_2D MUL RELU RELU_N1_TO_1 RELU6 "
    "RESHAPE RESIZE_BILINEAR RNN SOFTMAX SPACE_TO_DEPTH SVDF "
    "TANH CONCAT_EMBEDDINGS SKIP_GRAM CALL CUSTOM "
    "EMBEDDING_LOOKUP_SPARSE PAD UNIDIRECTIONAL_SEQUENCE_RNN "
    "GATHER BATCH_TO_SPACE_ND SPACE_TO_BATCH_ND TRANSPOSE MEAN "
    "SUB DIV SQUEEZE UNIDIRECTIONAL_SEQUENCE_LSTM STRIDED_SLICE "
    "BIDIRECTIONAL_SEQUENCE_RNN EXP TOPK_V2 SPLIT LOG_SOFTMAX "
    "DELEGATE BIDIRECTIONAL_SEQUENCE_LSTM CAST PRELU MAXIMUM "
    "ARG_MAX MINIMUM LESS NEG PADV2 GREATER GREATER_EQUAL "
    "LESS_EQUAL SELECT SLICE SIN TRANSPOSE_CONV SPARSE_TO_DENSE "
    "TILE EXPAND_DIMS EQUAL NOT_EQUAL LOG SUM SQRT RSQRT SHAPE "
    "POW ARG_MIN FAKE_QUANT REDUCE_PROD REDUCE_MAX PACK "
    "LOGICAL_OR ONE_HOT LOGICAL_AND LOGICAL_NOT UNPACK "
    "REDUCE_MIN FLOOR_DIV REDUCE_ANY SQUARE ZEROS_LIKE FILL "
    "FLOOR_MOD RANGE RESIZE_NEAREST_NEIGHBOR LEAKY_RELU "
    "SQUARED_DIFFERENCE MIRROR_PAD ABS SPLIT_V UNIQUE CEIL "
    "REVERSE_V2 ADD_N GATHER_ND COS WHERE RANK ELU "
    "REVERSE_SEQUENCE MATRIX_DIAG QUANTIZE MATRIX_SET_DIAG ROUND "
    "HARD_SWISH IF WHILE NON_MAX_SUPPRESSION_V4 "
    "NON_MAX_SUPPRESSION_V5 SCATTER_ND SELECT_V2 DENSIFY "
    "SEGMENT_SUM BATCH_MATMUL PLACEHOLDER_FOR_GREATER_OP_CODES "
    "CUMSUM CALL_ONCE BROADCAST_TO RFFT2D CONV_3D IMAG REAL "
    "COMPLEX_ABS HASHTABLE HASHTABLE_FIND HASHTABLE_IMPORT "
    "HASHTABLE_SIZE REDUCE_ALL CONV_3D_TRANSPOSE VAR_HANDLE "
    "READ_VARIABLE ASSIGN_VARIABLE BROADCAST_ARGS "
    "RANDOM_STANDARD_NORMAL BUCKETIZE RANDOM_UNIFORM MULTINOMIAL "
    "GELU DYNAMIC_UPDATE_SLICE RELU_0_TO_1 UNSORTED_SEGMENT_PROD "
    "UNSORTED_SEGMENT_MAX UNSORTED_SEGMENT_SUM ATAN2 "
    "UNSORTED_SEGMENT_MIN SIGN BITCAST BITWISE_XOR RIGHT_SHIFT "
    "~LOGISTIC ~ADD ~DIVIDE "
    "~MULTIPLY ~MAXIMUM ~RESHAPE "
    "~CLAMP ~CONCATENATE "
    "~BROADCAST_IN_DIM ~CONVOLUTION "
    "~SLICE ~CUSTOM_CALL ~REDUCE "
    "~ABS ~AND ~COSINE "
    "~EXPONENTIAL ~FLOOR ~LOG "
    "~MINIMUM ~NEGATE ~OR "
    "~POWER ~REMAINDER ~RSQRT "
    "~SELECT ~SUBTRACT ~TANH "
    "~SCATTER ~COMPARE ~CONVERT "
    "~DYNAMIC_SLICE ~DYNAMIC_UPDATE_SLICE "
    "~PAD ~IOTA ~DOT_GENERAL "
    "~REDUCE_WINDOW ~SORT ~WHILE "
    "~GATHER ~TRANSPOSE DILATE "
    "~RNG_BIT_GENERATOR REDUCE_WINDOW "
    "~COMPOSITE ~SHIFT_LEFT ~CBRT "
    "~CASE"
)

# TensorType names (lower case, as numpy spells them), indexed by code.
_TYPE_NAMES = (
    "float32 float16 int32 uint8 int64 string bool int16 "
    "complex64 int8 float64 complex128 uint64 resource variant "
    "uint32 uint16 int4 bfloat16 int2 uint4 float8_e4m3fn "
    "float8_e5m2"
)

# Codes the package compares with are not kept here: each module that
# compares with a BuiltinOperator, TensorType, Padding,
# ActivationFunctionType or BuiltinOptions code, or reads a Model field,
# names it as a module-private constant, e.g. `_CONV_2D = const(3)`,
# which the compiler folds in. A public name would cost a qstr and a dict
# entry on the board, and once a session's new qstrs pass 620,
# MicroPython allocates a 640-entry qstr pool (about 4.5 KB) at once.
# Builtin option fields are named the same way, as the options table's
# name without "Options" and the field's (schema.fbs, upper case):
# `_CONV2D_STRIDE_W = const(1)`, read as op.opt_int(_CONV2D_STRIDE_W, 0)
# (opt_int: int32 fields, opt_byte: int8 / uint8 / bool / enum fields,
# opt_float: float32 fields; the default is the schema's).
# tests/test_schema_consts.py checks every such constant against the
# official generated schema, and that no option is read by a bare index,
# with another accessor or another default.

# Element sizes in bytes by TensorType code (0: not supported; a resource
# is its int32 id, as TFLM's TfLiteTypeSizeOf).
TYPE_SIZES = (b"\x04\x02\x04\x01\x08\x00\x01\x02\x08\x01\x08\x10\x08\x04\x00"
              b"\x04\x02\x00\x02")


def _word(words, k):
    """Word k (>= 0) of a string of words separated by single spaces, or
    None; makes no object but the word (split() would make them all:
    kilobytes of garbage per call on a board)."""
    start = 0
    while k > 0:
        start = words.find(" ", start) + 1
        if start == 0:
            return None
        k -= 1
    end = words.find(" ", start)
    w = words[start:] if end < 0 else words[start:end]
    return w or None


def builtin_name(code):
    """Name of a BuiltinOperator code, e.g. 3 -> 'CONV_2D'."""
    name = _word(_OP_NAMES, code) if code >= 0 else None
    if name is None:
        return "BUILTIN_%d" % code
    return "STABLEHLO_" + name[1:] if name.startswith("~") else name


def type_name(code):
    """Name of a TensorType code, e.g. 9 -> 'int8'."""
    name = _word(_TYPE_NAMES, code) if code >= 0 else None
    if name is not None:
        return name
    return "type_%d" % code


def type_size(code):
    """Bytes per element of a TensorType, or 0 if unsupported."""
    if 0 <= code < len(TYPE_SIZES):
        return TYPE_SIZES[code]
    return 0
