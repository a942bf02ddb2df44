"""The tensor types of every operator in the kernel registry, for
docs/operators.md (host_tools/docs.py renders it).

One row per operator the registry (micropython/tflm/kernels/__init__.py:
_KERNELS by BuiltinOperator code, _CUSTOM_KERNELS by CUSTOM name) maps to
a kernel module, keyed by its TFLite schema name: (types, notes). types
names the tensor types its kernels take ("16x8": int16 activations with
int8 weights); notes is one short line of what a user must know.
tests/test_docs.py fails when a registry entry has no row here (a new
operator: add its row, then `make docs`) or a row has no registry entry.
"""

MOVE = "int8, int16, int32, float32 (byte copies: any type TFLM copies)"

OPS = {
    # convolution and pooling
    "CONV_2D": ("int8, 16x8, float32",
                "per-channel weights; 16x8 with an int64 bias (TFLM's int64 "
                "accumulation) or an int32 one (wrapping as TFLM's); 16x8 "
                "activations need zero point 0"),
    "DEPTHWISE_CONV_2D": ("int8, 16x8, float32",
                          "per-channel weights; 16x8 reads any bias as int64, "
                          "as TFLM's kernel does; 16x8 activations need zero "
                          "point 0"),
    "FULLY_CONNECTED": ("int8, 16x8, float32",
                        "the bias scale is checked against input x filter"),
    "BATCH_MATMUL": ("int8, int16, float32",
                     "ranks 2-5, broadcast batch dimensions, adj_x / adj_y; "
                     "int16 zero points 0"),
    "TRANSPOSE_CONV": ("int8, 16x8",
                       "per-channel weights, optional bias; 16x8: zero points "
                       "0, an int64 or int16 bias or none"),
    "AVERAGE_POOL_2D": ("int8, int16, float32", ""),
    "MAX_POOL_2D": ("int8, int16, float32", ""),
    "L2_POOL_2D": ("float32", "square roots correctly rounded"),
    "LOG_SOFTMAX": ("int8, float32",
                    "last dimension; int8: output 16/256 and 127, "
                    "at most 4095 values a row; float32: expf, logf within "
                    "1 ulp each, outputs within 2 ulp of TFLM"),
    "SOFTMAX": ("int8 -> int8 or int16, int16, float32",
                "int16 output: scale 1/65536, zero point -32768; int16 -> "
                "int16 with TFLM's two 513-entry tables"),
    # elementwise
    "ADD": ("int8, int16, int32, float32",
            "broadcasting up to rank 6, fused activations"),
    "SUB": ("int8, int16, int32, float32",
            "broadcasting up to rank 6, fused activations"),
    "MUL": ("int8, int16, int32, float32",
            "broadcasting up to rank 6, fused activations; int16 needs zero "
            "points 0"),
    "DIV": ("int8, int32, float32",
            "int32 divisor 0: InvokeError; INT32_MIN / -1 = INT32_MIN; an "
            "int8 divisor at its zero point saturates"),
    "SQUARED_DIFFERENCE": ("int8, int32, float32", "broadcasting"),
    "FLOOR_DIV": ("float32", "broadcasting; a zero divisor: InvokeError "
                  "'Division by 0', as TFLM"),
    "FLOOR_MOD": ("float32", "broadcasting"),
    # comparisons and logic (bool outputs)
    "EQUAL": ("bool, int8, int32, int64, float32",
              "broadcasting; int8 rescaled as comparisons.cc (scales < 1)"),
    "NOT_EQUAL": ("bool, int8, int32, int64, float32",
                  "broadcasting; int8 rescaled as comparisons.cc"),
    "GREATER": ("int8, int32, int64, float32",
                "broadcasting; int16 refused (TFLM's result is undefined)"),
    "GREATER_EQUAL": ("int8, int32, int64, float32", "broadcasting"),
    "LESS": ("int8, int32, int64, float32", "broadcasting"),
    "LESS_EQUAL": ("int8, int32, int64, float32", "broadcasting"),
    "LOGICAL_AND": ("bool", "broadcasting"),
    "LOGICAL_OR": ("bool", "broadcasting"),
    "LOGICAL_NOT": ("bool", ""),
    # elementwise unary
    "ABS": ("int8, int16, float32",
            "int8 / int16 quantized (int16 with zero point 0) or not"),
    "NEG": ("float32", ""),
    "CEIL": ("float32", ""),
    "FLOOR": ("float32", ""),
    "ROUND": ("float32", "half to even, as TFLM; [-0.5, 0) gives +0.0"),
    "SQRT": ("float32", "correctly rounded (sqrtf)"),
    "SQUARE": ("float32", ""),
    "EXP": ("float32", "within 1 ulp of TFLM (the C library's expf)"),
    "LOG": ("float32", "within 1 ulp of TFLM (the C library's logf)"),
    "SIN": ("float32", "within 1 ulp of TFLM (the C library's sinf; "
            "Payne-Hanek reduction, any argument)"),
    "COS": ("float32", "within 1 ulp of TFLM (the C library's cosf; "
            "Payne-Hanek reduction, any argument)"),
    "MAXIMUM": ("int8, int32, float32", "broadcasting"),
    "MINIMUM": ("int8, int32, float32", "broadcasting"),
    "CAST": ("int8, int16, int32, uint32, float32, bool",
             "C's conversions; float32 to integer truncates and saturates, "
             "NaN gives 0"),
    "ADD_N": ("int8, float32",
              "int8: TFLM's int32 sum, wrapping; a multiplier >= 1 refused"),
    "SELECT_V2": ("int8, int16, float32; bool condition",
                  "broadcasting up to rank 6"),
    # activations
    "RELU": ("int8, float32", "int8: a 256-entry table built at prepare"),
    "RELU6": ("int8, float32", "int8: a 256-entry table built at prepare"),
    "LEAKY_RELU": ("int8, int16", "int8: a table; int16 per element"),
    "LOGISTIC": ("int8, int16, float32",
                 "int16: zero points 0, output scale 1/32768"),
    "TANH": ("int8, int16, float32",
             "int16: zero points 0, output scale 1/32768"),
    "HARD_SWISH": ("int8", "a 256-entry table built at prepare"),
    "RSQRT": ("int8", "a 256-entry table built at prepare"),
    "PRELU": ("int8", "alpha broadcast"),
    "L2_NORMALIZATION": ("int8", "over the last dimension"),
    "ELU": ("int8, float32",
            "int8: a 256-entry table; float32 within 1 ulp of TFLM (the C "
            "library's expm1f)"),
    # reductions and indexing
    "MEAN": ("int8, float32", "constant axes"),
    "SUM": ("int8, float32", "constant axes"),
    "REDUCE_MAX": ("int8, float32", "constant axes"),
    "ARG_MAX": ("int8, float32 -> int32", ""),
    "ARG_MIN": ("int8, float32 -> int32", ""),
    "GATHER": ("int8, float32; int32 indices",
               "an out-of-range index raises InvokeError"),
    "SHAPE": ("any -> int32", ""),
    "FILL": ("int8, int32, float32", ""),
    "ZEROS_LIKE": ("int8, int32, int64, float32", ""),
    "REDUCE_MIN": ("int8, float32",
                   "constant axes; int8: the same quantization in and out"),
    "REDUCE_ALL": ("bool", "constant axes"),
    "GATHER_ND": ("int8, float32; int32 indices",
                  "an index out of range: InvokeError, output untouched"),
    "EMBEDDING_LOOKUP": ("int8, float32, int8 -> float32 (hybrid)",
                         "an id out of range: InvokeError; hybrid: zero "
                         "point 0"),
    "CUMSUM": ("int8, float32", "exclusive / reverse; constant axis"),
    # data movement
    "TRANSPOSE": (MOVE, ""),
    "CONCATENATION": (MOVE, ""),
    "PAD": (MOVE, ""),
    "PADV2": (MOVE, ""),
    "STRIDED_SLICE": (MOVE, ""),
    "SLICE": (MOVE, ""),
    "PACK": (MOVE, ""),
    "UNPACK": (MOVE, ""),
    "SPLIT": (MOVE, ""),
    "SPLIT_V": (MOVE, ""),
    "SPACE_TO_BATCH_ND": (MOVE, ""),
    "BATCH_TO_SPACE_ND": (MOVE, ""),
    "DEPTH_TO_SPACE": (MOVE, ""),
    "SPACE_TO_DEPTH": (MOVE, ""),
    "RESIZE_NEAREST_NEIGHBOR": ("int8, int16, float32", ""),
    "RESIZE_BILINEAR": ("int8, float32", ""),
    "RESHAPE": ("any", "zero-copy view of its input"),
    "SQUEEZE": ("any", "zero-copy view of its input"),
    "EXPAND_DIMS": ("any", "zero-copy view of its input"),
    "MIRROR_PAD": ("int8, float32",
                   "REFLECT and SYMMETRIC; constant paddings"),
    "REVERSE_V2": ("int8, uint8, int16, int32, int64, float32, bool",
                   "constant, consecutive axes"),
    "BROADCAST_TO": (MOVE, "constant shape, rank <= 5"),
    "BROADCAST_ARGS": ("int32, int64", "shapes that do not broadcast: "
                       "PrepareError (constant) or InvokeError"),
    "DYNAMIC_UPDATE_SLICE": ("int8, int16, int32, float32",
                             "start indices read at invoke, clamped as "
                             "TFLM"),
    # quantization
    "QUANTIZE": ("float32 -> int8; int8 -> int8, uint8, int16; uint8 -> "
                 "int8; int16 -> int8, int16, int32; int32 -> int8, int16",
                 ""),
    "DEQUANTIZE": ("int8, uint8, int16 -> float32", ""),
    # state across invokes
    "SVDF": ("int8 (int16 or int8 state), float32",
             "state in variable tensors; float32 with NONE, RELU, RELU6, "
             "RELU_N1_TO_1"),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (
        "int8 (int16 cell state), float32",
        "batch- or time-major, cell clip; no peephole, projection or layer "
        "norm (as in TFLM); float32 within 1e-6 of TFLM"),
    "VAR_HANDLE": ("resource (int32 id)",
                   "by container and shared_name; VarHandleOptions "
                   "without shared_name refused"),
    "READ_VARIABLE": ("any type (a byte copy)",
                      "a variable no ASSIGN_VARIABLE sets, or of another "
                      "size: refused"),
    "ASSIGN_VARIABLE": ("any type (a byte copy)",
                        "the first one prepared sizes the variable; "
                        "interp.reset() sets it to 0 (int8: zero point)"),
    # subgraphs
    "IF": ("any type (byte copies); bool condition",
           "then / else subgraphs; inputs and outputs must pair up in type "
           "and size for both"),
    "WHILE": ("any type (byte copies)",
              "cond (bool output 0) and body subgraphs; no recursion"),
    "CALL_ONCE": ("none",
                  "its init subgraph runs on the first invoke only, not "
                  "again after interp.reset() (as TFLM)"),
    # TFLM's Signal library (CUSTOM operators, built in)
    "SignalWindow": ("int16", ""),
    "SignalFftAutoScale": ("int16 -> int16, int32 shift", ""),
    "SignalRfft": ("int16, int32, float32",
                   "fft_length / 2 a product of 2, 3, 4 and 5"),
    "SignalEnergy": ("int16 -> uint32", ""),
    "SignalFilterBank": ("uint32 -> uint64", ""),
    "SignalFilterBankSquareRoot": ("uint64 -> uint32", ""),
    "SignalFilterBankSpectralSubtraction": (
        "uint32", "its noise estimate is state: interp.reset() clears it"),
    "SignalPCAN": ("uint32 (int16 table)", ""),
    "SignalFilterBankLog": ("uint32 -> int16", ""),
    "SignalDelay": ("int16", "a delay line per row: interp.reset() clears it"),
    "SignalFramer": ("int16 -> int16, bool valid",
                     "frames not yet complete are not written (valid "
                     "false); prefill; state cleared by interp.reset()"),
    "SignalStacker": ("int16 -> int16, bool valid",
                      "the output is written only when valid; state "
                      "cleared by interp.reset()"),
    "SignalOverlapAdd": ("int16, float32",
                         "int16 saturated; state cleared by interp.reset()"),
    "SignalIrfft": ("int16, int32, float32",
                    "fft_length / 2 a product of 2, 3, 4 and 5; float32: "
                    "a NaN's sign may differ from TFLM's"),
    # TFLM's CIRCULAR_BUFFER (CUSTOM, built in)
    "CIRCULAR_BUFFER": (
        "int8",
        "output a variable tensor; between runs (cycles_max) invoke() "
        "stops there and returns 15, TFLM's kTfLiteAbort; not in a "
        "subgraph other than 0"),
    # TFLM's DETECTION_POSTPROCESS (CUSTOM, built in)
    "TFLite_Detection_PostProcess": (
        "float32",
        "fast and regular NMS; TFLM's kernel dequantizes nothing (int8 / "
        "uint8 refused); box sizes: exp to ~60 bits, then TFLM's double "
        "rounding"),
    # TFLM's DECODE (CUSTOM, built in: compressed constants)
    "TFLM_DECODE": (
        "LUT, Prune: bool, int8, int16, int32, int64, float32; Huffman: "
        "int8, int16",
        "decodes at every invoke into the arena, as TFLM; per-channel along "
        "the first or last axis; the int8 CONV_2D, DEPTHWISE_CONV_2D and "
        "FULLY_CONNECTED read decoded filters, weights and biases at eval "
        "(the other kernels take constant ones)"),
}
