"""Conformance generators for the operators that keep state: SVDF.

SVDF (TFLM's kernels/svdf.cc, svdf_common.cc): input [batch, input_size],
weights_feature [filters, input_size], weights_time [filters, memory],
bias [units] (filters = units * rank; always given: TFLM crashes
without one, at Prepare for int8, at Eval for float32), the activation
state, a variable tensor [batch, memory * filters], and the output
[batch, units].

- int8 (3 models in 4): int8 input, weights_feature and output;
  weights_time and state both int16 (zero point 0, as the converter
  writes them) or, 1 time in 4, both int8 with any state zero point;
  int32 bias, its scale state_scale * weights_time_scale. The state
  scale is near what the feature matmul produces 2 times in 3 (so some
  models saturate it), the output scale likewise.
- float32: fused activation NONE, RELU, RELU6 or
  RELU_N1_TO_1 (int8 SVDF ignores the activation: any is written).

1 model in 6 is keyword_model(): QUANTIZE, SVDF, FULLY_CONNECTED and
SOFTMAX in the 16x8 arrangement of TFLM's keyword benchmark.

A single invoke starts from a state of zeros (int8: the zero point), so a
model may hold 1 to 3 SVDF operators in a row over the same input, the
same weights and the same state tensor: each sees the state its
predecessor left, and all their outputs are graph outputs. Longer
histories, over many invokes and with reset(), are tests/test_svdf.py's.

UNIDIRECTIONAL_SEQUENCE_LSTM: lstm_tensors() (int8, an int16 cell
state) also feeds the conformance suite; lstm_f32_tensors() (float32)
feeds tests/test_lstm.py only, which compares to within 1e-6: TFLM's
float Tanh is the C library's tanhf, which ours is not bit-exact with
(float32 TANH stays out of the suite for the same reason).
"""

import math

import numpy as np

from .. import opgen
from . import rand
from .gen_core import _bias, _floats, _near, _weights

T = opgen.Tensor

FLOAT_ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")
ALL_ACTS = FLOAT_ACTS + ("TANH", "SIGN_BIT")


def svdf_dims(rng, size):
    """(batch, input_size, units, rank, memory) for a size budget 1-4."""
    batch = rng.randint(1, 1 + (size >= 2) + (size >= 4))
    input_size = rng.randint(1, 6 * size)
    units = rng.randint(1, 3 * size)
    rank = rng.randint(1, 1 + (size >= 2) + (size >= 3))
    memory = rng.randint(1, 4 * size)
    return batch, input_size, units, rank, memory


def _values(rng, dtype, shape, scale=1.0):
    g = np.random.default_rng(rng.getrandbits(32))
    if dtype == "float32":
        return (g.standard_normal(shape) * scale).astype(np.float32)
    info = np.iinfo(dtype)
    return g.integers(info.min, info.max + 1, size=shape).astype(dtype)


def svdf_tensors(rng, size, dtype=None, narrow=None):
    """The SVDF tensors of one seeded case: (input, weights_feature,
    weights_time, bias, state, output, options). dtype: 'int8',
    'float32' or None (random); narrow: int8 weights_time and state
    (True), int16 (False) or random (None)."""
    b, n_in, units, rank, mem = svdf_dims(rng, size)
    filters = units * rank
    dtype = dtype or ("float32" if rng.random() < 0.25 else "int8")
    if dtype == "float32":
        x = T([b, n_in], "float32")
        wf = T([filters, n_in], "float32",
               data=_floats(rng, [filters, n_in], 0.5))
        wt = T([filters, mem], "float32",
               data=_floats(rng, [filters, mem], 0.5))
        bias = T([units], "float32", data=_floats(rng, [units]))
        state = T([b, mem * filters], "float32", is_variable=True)
        y = T([b, units], "float32")
        opts = {"rank": rank, "activation": rand.activation(rng, FLOAT_ACTS)}
        return x, wf, wt, bias, state, y, opts
    if narrow is None:
        narrow = rng.random() < 0.25  # int8 weights_time and state
    sdt = "int8" if narrow else "int16"
    smax = 127 if narrow else 32767
    in_s, in_z = rand.scale(rng), rand.zero_point(rng)
    wf_s = rand.scale(rng)
    # the feature matmul's typical magnitude in real units
    feat = in_s * wf_s * 100 * 60 * math.sqrt(n_in)
    st_s = _near(rng, feat / (smax / 4)) if rng.random() < 2 / 3 \
        else rand.scale(rng)
    st_z = rand.zero_point(rng) if narrow else 0
    wt_s = rand.scale(rng)
    bias_s = float(np.float32(st_s) * np.float32(wt_s))
    wt_data = _weights(rng, [filters, mem]) if narrow else \
        _values(rng, "int16", [filters, mem])
    tm = st_s * smax / 4 * wt_s * (60 if narrow else 16000) * \
        math.sqrt(mem * rank)
    out_s = _near(rng, tm / 40) if rng.random() < 2 / 3 else rand.scale(rng)
    x = T([b, n_in], scale=in_s, zero_point=in_z)
    wf = T([filters, n_in], scale=wf_s, zero_point=0,
           data=_weights(rng, [filters, n_in]))
    wt = T([filters, mem], sdt, scale=wt_s, zero_point=0, data=wt_data)
    bias = T([units], "int32", scale=bias_s, zero_point=0,
             data=_bias(rng, units))
    state = T([b, mem * filters], sdt, scale=st_s, zero_point=st_z,
              is_variable=True)
    y = T([b, units], scale=out_s, zero_point=rand.zero_point(rng))
    opts = {"rank": rank, "activation": rand.activation(rng, ALL_ACTS)}
    return x, wf, wt, bias, state, y, opts


def _svdf_layer(rng, x, units, narrow):
    """An int8 SVDF layer over the int8 tensor x [batch, n]: (its
    tensors list, output tensor), scales chosen so that values vary."""
    batch, n_in = x.shape
    rank = rng.randint(1, 2)
    mem = rng.randint(2, 8)
    filters = units * rank
    smax = 127 if narrow else 32767
    wf_s = rand.scale(rng, 1e-3, 1e-2)
    st_s = _near(rng, x.scale * wf_s * 60 * 50 * math.sqrt(n_in) / smax,
                 0.3)
    wt_s = rand.scale(rng, 1e-3, 1e-2) if narrow else \
        rand.scale(rng, 1e-5, 1e-4)
    sdt = "int8" if narrow else "int16"
    wt = T([filters, mem], sdt, scale=wt_s, zero_point=0,
           data=_weights(rng, [filters, mem]) if narrow else
           _values(rng, "int16", [filters, mem]))
    out_s = _near(rng, st_s * smax / 3 * wt_s * (60 if narrow else 16000)
                  * math.sqrt(mem * rank) / 100, 0.3)
    ts = [x, T([filters, n_in], scale=wf_s, zero_point=0,
               data=_weights(rng, [filters, n_in])), wt,
          T([units], "int32", scale=float(np.float32(st_s) *
                                          np.float32(wt_s)),
            zero_point=0, data=_bias(rng, units)),
          T([batch, mem * filters], sdt, scale=st_s,
            zero_point=rand.zero_point(rng) if narrow else 0,
            is_variable=True)]
    y = T([batch, units], scale=out_s, zero_point=rand.zero_point(rng))
    return ts, y, {"rank": rank, "activation": "RELU"}


def keyword_model(rng, size, dims=None):
    """A model shaped like TFLM's keyword benchmark (keyword_scrambled):
    int16 audio features -> QUANTIZE to int8 -> SVDF (int8 state) ->
    FULLY_CONNECTED -> SVDF (int16 state) -> FULLY_CONNECTED -> SOFTMAX
    with an int16 output -> QUANTIZE to int32. dims: (features, units of
    the first SVDF, its FULLY_CONNECTED's outputs, units of the second
    SVDF, classes) instead of random ones (the benchmark's model)."""
    n_in = rng.randint(4, 8 * size + 8) if dims is None else dims[0]
    f = T([1, n_in], "int16", scale=rand.scale(rng, 1e-4, 1e-3),
          zero_point=0)
    x = T([1, n_in], scale=_near(rng, f.scale * 200, 0.3),
          zero_point=rand.zero_point(rng))
    m = opgen.Model()
    m.add_op("QUANTIZE", [f], [x])
    classes = rng.randint(2, 4) if dims is None else dims[4]
    for narrow in (True, False):
        units = rng.randint(2, 4 * size + 2) if dims is None else \
            dims[1 if narrow else 3]
        ts, y, opts = _svdf_layer(rng, x, units, narrow)
        m.add_op("SVDF", ts, [y], opts)
        w_s = rand.scale(rng, 1e-3, 1e-2)
        n_out = classes if not narrow else rng.randint(2, 4 * size + 2) \
            if dims is None else dims[2]
        z = T([1, n_out], scale=_near(rng, y.scale * w_s * 60 * 40 *
                                      math.sqrt(units) / 100, 0.3),
              zero_point=rand.zero_point(rng))
        m.add_op("FULLY_CONNECTED", [
            y, T([n_out, units], scale=w_s, zero_point=0,
                 data=_weights(rng, [n_out, units])),
            T([n_out], "int32", scale=float(np.float32(y.scale) *
                                            np.float32(w_s)),
              zero_point=0, data=_bias(rng, n_out))], [z])
        x = z
    p = T([1, classes], "int16", scale=1 / 65536, zero_point=-32768)
    m.add_op("SOFTMAX", [x], [p], {"beta": 1.0})
    m.add_op("QUANTIZE", [p], [T([1, classes], "int32", scale=2 / 65536,
                                 zero_point=0)])
    return m.build()


def gen_svdf(rng, size):
    """An SVDF model: 1 to 3 operators sharing input, weights and state,
    or 1 time in 6 keyword_model()."""
    if rng.random() < 1 / 6:
        return keyword_model(rng, size)
    return svdf_model(svdf_tensors(rng, size), rng.choice((1, 1, 2, 3)))


def svdf_model(tensors, n_ops=1):
    """A model of n_ops SVDF operators over svdf_tensors()'s input,
    weights and state, each with its own output (graph outputs)."""
    x, wf, wt, bias, state, y, opts = tensors
    m = opgen.Model()
    for k in range(n_ops):
        out = y if k == 0 else T(y.shape, y.dtype, scale=y.scale,
                                 zero_point=y.zero_point)
        m.add_op("SVDF", [x, wf, wt, bias, state], [out], opts)
    return m.build()


def lstm_tensors(rng, size, dims=None):
    """The 24 inputs (Tensor or -1), the output and the options of a
    seeded int8 UNIDIRECTIONAL_SEQUENCE_LSTM, quantized as TFLite's
    converter does it for int8 with an int16 cell state: per-tensor
    symmetric weights (1 in 10 with a zero point), int32 biases at input
    scale * weight scale, a power-of-two cell state scale, the output at
    the hidden state's scale and zero point. Weight scales are chosen so
    that the gates' inputs (Q3.12) span a few units, 1 time in 5 far
    larger or smaller. dims: (batch, steps, features, units), batch-major,
    instead of random ones (the benchmark's model)."""
    major = rng.random() < 0.3 if dims is None else False
    batch = rng.randint(1, 1 + (size >= 2) + (size >= 4))
    steps = rng.randint(1, 2 * size + 1)
    n_in = rng.randint(1, 4 * size + 2)
    n = rng.randint(1, 4 * size + 2)
    if dims is not None:
        batch, steps, n_in, n = dims
    x_s, x_z = rand.scale(rng, 1e-3, 0.5), rand.zero_point(rng)
    # the hidden state is tanh(c) * o in [-1, 1]: a scale near 1/128
    h_s = _near(rng, 1 / 128, 1.0) if rng.random() < 0.8 else \
        rand.scale(rng, 1e-3, 0.1)
    h_z = rand.zero_point(rng)
    c_s = 2.0 ** -rng.randint(8, 15)
    x_shape = [steps, batch, n_in] if major else [batch, steps, n_in]
    ins = [T(x_shape, scale=x_s, zero_point=x_z)]

    def w_scale(src_s, depth):
        k = math.exp(rng.uniform(-1, 1)) if rng.random() < 0.8 else \
            math.exp(rng.uniform(-4, 4))
        return float(np.float32(k * 2.0 / (src_s * 60 * 40 *
                                           math.sqrt(depth))))

    w_in = [w_scale(x_s, n_in) for _ in range(4)]
    w_rec = [w_scale(h_s, n) for _ in range(4)]
    # weight zero points: 0 as converters write them, now and then not
    # (TFLM's integer FullyConnected subtracts them)
    wz = [0 if rng.random() < 0.9 else rand.zero_point(rng, -20, 20)
          for _ in range(8)]
    for s_, z in zip(w_in, wz):
        ins.append(T([n, n_in], scale=s_, zero_point=z,
                     data=_weights(rng, [n, n_in])))
    for s_, z in zip(w_rec, wz[4:]):
        ins.append(T([n, n], scale=s_, zero_point=z,
                     data=_weights(rng, [n, n])))
    ins += [-1, -1, -1]
    for s_ in w_in:
        ins.append(T([n], "int32", scale=float(np.float32(x_s) *
                                               np.float32(s_)),
                     zero_point=0, data=_bias(rng, n)))
    ins += [-1, -1]
    ins.append(T([batch, n], scale=h_s, zero_point=h_z, is_variable=True))
    ins.append(T([batch, n], "int16", scale=c_s, zero_point=0,
                 is_variable=True))
    ins += [-1, -1, -1, -1]
    y = T(x_shape[:2] + [n], scale=h_s, zero_point=h_z)
    clip = 0.0 if rng.random() < 0.6 else float(np.float32(
        rng.choice((0.5, 1.0, 3.0, 10.0, 100.0)) * rng.uniform(0.5, 2)))
    opts = {"fused_activation_function": "TANH", "cell_clip": clip,
            "time_major": major}
    return ins, y, opts


def gen_lstm(rng, size):
    """An int8 UNIDIRECTIONAL_SEQUENCE_LSTM (lstm_tensors)."""
    ins, y, opts = lstm_tensors(rng, size)
    return opgen.single_op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], opts)


GENERATORS = {"SVDF": gen_svdf, "UNIDIRECTIONAL_SEQUENCE_LSTM": gen_lstm}

# Our runtime has kernels for every model these make.
STRICT = set(GENERATORS)


def lstm_f32_tensors(rng, size):
    """The 24 inputs (Tensor or -1), the output and the options of a
    seeded float32 UNIDIRECTIONAL_SEQUENCE_LSTM (lstm_f32.py): weights
    normal with standard deviation k / sqrt(depth) (k mostly near 1,
    now and then 4 times larger, which saturates the gates), biases
    normal (0, 0.5), the forget gate's shifted by +1 as Keras
    initialises it 1 time in 2, batch-major or time-major, a cell clip
    4 times in 10."""
    g = np.random.default_rng(rng.getrandbits(32))
    major = rng.random() < 0.3
    batch = rng.randint(1, 1 + (size >= 2) + (size >= 4))
    steps = rng.randint(1, 2 * size + 1)
    n_in = rng.randint(1, 4 * size + 2)
    n = rng.randint(1, 4 * size + 2)
    x_shape = [steps, batch, n_in] if major else [batch, steps, n_in]
    ins = [T(x_shape, "float32")]

    def w(shape):
        k = 4.0 if rng.random() < 0.2 else rng.uniform(0.5, 1.5)
        return (g.standard_normal(shape) * k / math.sqrt(shape[1])
                ).astype(np.float32)

    ins += [T([n, n_in], "float32", data=w([n, n_in])) for _ in range(4)]
    ins += [T([n, n], "float32", data=w([n, n])) for _ in range(4)]
    ins += [-1, -1, -1]
    for k in range(4):
        b = g.standard_normal(n) * 0.5
        if k == 1 and rng.random() < 0.5:  # the forget gate's bias
            b = b + 1.0
        ins.append(T([n], "float32", data=b.astype(np.float32)))
    ins += [-1, -1]
    ins.append(T([batch, n], "float32", is_variable=True))
    ins.append(T([batch, n], "float32", is_variable=True))
    ins += [-1, -1, -1, -1]
    y = T(x_shape[:2] + [n], "float32")
    clip = 0.0 if rng.random() < 0.6 else float(np.float32(
        rng.choice((0.5, 1.0, 3.0)) * rng.uniform(0.5, 2)))
    opts = {"fused_activation_function": "TANH", "cell_clip": clip,
            "time_major": major}
    return ins, y, opts
