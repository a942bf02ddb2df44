"""host_tools.opgen builds valid .tflite files.

Each model is checked three ways: tflm's reader parses it (shapes, types,
quantization, constant bytes at 16-byte aligned offsets), TFLM's reference
interpreter runs it (exact hand-computed result for ADD, a float model
within one step for the others), and the official schema reader gives back
every field that was set.
"""

import numpy as np
import pytest

import conftest  # noqa: F401  (puts micropython/ on sys.path)
from host_tools import opgen
from host_tools.oracle import Reference
from tflm.model import Model

s = opgen.s
T = opgen.Tensor
RNG = np.random.default_rng(1234)


def rand_i8(shape, lo=-128, hi=127):
    return RNG.integers(lo, hi + 1, size=shape).astype(np.int8)


def requant(real, scale, zp, lo=-128, hi=127):
    """Float reference: real value -> int8 with round-half-away, clamped."""
    q = real / scale
    q = np.sign(q) * np.floor(np.abs(q) + 0.5) + zp
    return np.clip(q, lo, hi).astype(np.int32)


# ---------------------------------------------------------------- models

def add_model():
    """ADD with broadcast [2,1,3] + [1,4,3] and RELU; scales 0.5, 0.25 ->
    0.25 make TFLM's fixed point exact: out = 2(a-za) + (b-zb) + zo."""
    m = opgen.Model()
    a = m.add_tensor(T([2, 1, 3], scale=0.5, zero_point=3, name="a"))
    b = m.add_tensor(T([1, 4, 3], scale=0.25, zero_point=-2, name="b"))
    o = m.add_tensor(T([2, 4, 3], scale=0.25, zero_point=-5, name="sum"))
    m.add_op("ADD", [a, b], [o], {"activation": "RELU"})
    return m


def conv_model():
    """CONV_2D 5x5x2 -> 3x3x3, 3x3 filter, stride 2, SAME, per-channel."""
    w = rand_i8([3, 3, 3, 2], -127)
    wscale = [0.02, 0.005, 0.011]
    bias = RNG.integers(-300, 300, size=3).astype(np.int32)
    m = opgen.Model()
    x = m.add_tensor(T([1, 5, 5, 2], scale=0.05, zero_point=-7))
    wt = m.add_tensor(T([3, 3, 3, 2], scale=wscale, data=w))
    bt = m.add_tensor(T([3], "int32", scale=[0.05 * k for k in wscale],
                        data=bias))
    y = m.add_tensor(T([1, 3, 3, 3], scale=0.04, zero_point=4))
    m.add_op("CONV_2D", [x, wt, bt], [y],
             {"padding": "SAME", "stride_w": 2, "stride_h": 2,
              "fused_activation_function": "RELU6"}, version=3)
    return m


def fc_model(with_bias=True):
    m = opgen.Model()
    x = m.add_tensor(T([2, 6], scale=0.1, zero_point=10))
    w = m.add_tensor(T([4, 6], scale=0.03, data=rand_i8([4, 6], -127)))
    b = -1
    if with_bias:
        b = m.add_tensor(T([4], "int32", scale=0.003,
                           data=np.array([100, -50, 7, 0], np.int32)))
    y = m.add_tensor(T([2, 4], scale=0.2, zero_point=-3))
    m.add_op("FULLY_CONNECTED", [x, w, b], [y], version=4)
    return m


def reshape_model():
    m = opgen.Model()
    x = m.add_tensor(T([1, 2, 3, 4], scale=0.1, zero_point=1))
    shp = m.add_tensor(T([2], "int32", data=[6, 4]))
    y = m.add_tensor(T([6, 4], scale=0.1, zero_point=1))
    m.add_op("RESHAPE", [x, shp], [y], {"new_shape": [6, 4]})
    return m


def softmax_model():
    m = opgen.Model()
    x = m.add_tensor(T([2, 10], scale=0.1, zero_point=-20))
    y = m.add_tensor(T([2, 10], scale=1 / 256, zero_point=-128))
    m.add_op("SOFTMAX", [x], [y])
    return m


MODELS = {"add": add_model, "conv": conv_model, "fc": fc_model,
          "fc_nobias": lambda: fc_model(False), "reshape": reshape_model,
          "softmax": softmax_model}


# ------------------------------------------------- (1) tflm's reader

@pytest.mark.parametrize("name", sorted(MODELS))
def test_reader_parses(name):
    m = MODELS[name]()
    raw = m.build()
    mv = Model(raw)
    assert mv.version == 3
    assert len(mv.tensors) == len(m.tensors)
    assert list(mv.inputs) == m.graph_inputs()
    assert list(mv.outputs) == m.graph_outputs()
    for t, ts in zip(m.tensors, mv.tensors):
        assert list(ts.shape) == t.shape
        assert ts.dtype == t.dtype
        if t.scale is None:
            assert ts.scales == ()
        else:
            assert np.allclose(ts.scales, np.atleast_1d(t.scale), rtol=1e-7)
            assert ts.quantized_dimension == t.quantized_dimension
        if t.data is None:
            assert not ts.is_const
        else:
            assert ts.const_pos % opgen.ALIGN == 0
            assert bytes(raw[ts.const_pos:ts.const_pos + ts.const_len]) \
                == t.data
    for op, ov in zip(m.ops, mv.operators):
        assert ov.name == op.name and ov.version == op.version
        assert list(ov.inputs) == op.inputs
        assert list(ov.outputs) == op.outputs


def test_reader_options():
    ov = Model(conv_model().build()).operators[0]
    # Conv2DOptions: padding(0) stride_w(1) stride_h(2) activation(3)
    assert ov.options_type == s.BuiltinOptions.Conv2DOptions
    # SAME (0) is the schema default: flatbuffers omits the field
    assert ov.opt_byte(0, -1) == -1 and ov.opt_byte(0) == s.Padding.SAME
    assert ov.opt_int(1) == 2 and ov.opt_int(2) == 2
    assert ov.opt_byte(3) == s.ActivationFunctionType.RELU6
    # dilation 1 is the schema default too: omitted, read with default 1
    assert ov.opt_int(4, 0) == 0 and ov.opt_int(4, 1) == 1


# ------------------------------------------- (2) TFLM runs the models

def test_add_exact():
    raw = add_model().build()
    a = rand_i8([2, 1, 3])
    b = rand_i8([1, 4, 3])
    got = Reference(raw).run([a, b])[0]
    want = 2 * (a.astype(np.int32) - 3) + (b.astype(np.int32) + 2) - 5
    want = np.clip(want, -5, 127)  # RELU: real >= 0 <=> q >= zero point
    assert got.dtype == np.int8 and got.shape == (2, 4, 3)
    assert np.array_equal(got, want)


def test_add_single_op_saturates():
    """single_op with scales 1: out = a + b + 1, clamped to int8."""
    raw = opgen.single_op(
        "ADD", [T([1, 4], scale=1.0, zero_point=3),
                T([1, 4], scale=1.0, zero_point=-2)],
        [T([1, 4], scale=1.0, zero_point=1)])
    a = np.array([[3, 100, -128, 0]], np.int8)
    b = np.array([[-2, 100, -128, 5]], np.int8)
    got = Reference(raw).run([a, b])[0]
    assert got.tolist() == [[1, 127, -128, 5]]


def conv_float(x, w, bias, stride, pad):
    n, h, wd, _ = x.shape
    oc, kh, kw, _ = w.shape
    oh, ow = (h + stride - 1) // stride, (wd + stride - 1) // stride
    xp = np.pad(x, ((0, 0), (pad, pad + 1), (pad, pad + 1), (0, 0)))
    out = np.zeros((n, oh, ow, oc))
    for i in range(oh):
        for j in range(ow):
            r, c = i * stride, j * stride
            patch = xp[:, r:r + kh, c:c + kw]
            out[:, i, j] = np.tensordot(patch, w, ([1, 2, 3], [1, 2, 3]))
    return out + bias


def test_conv_per_channel_runs():
    m = conv_model()
    x_t, w_t, b_t, y_t = m.tensors
    x = rand_i8(x_t.shape)
    got = Reference(m.build()).run([x])[0]
    w = np.frombuffer(w_t.data, np.int8).reshape(w_t.shape)
    wscale = np.array(w_t.scale)[:, None, None, None]
    real = conv_float((x.astype(float) + 7) * 0.05, w * wscale,
                      np.frombuffer(b_t.data, np.int32) * 0.05
                      * np.array(w_t.scale), stride=2, pad=1)
    real = np.clip(real, 0, 6)
    want = requant(real, 0.04, 4)
    assert got.shape == (1, 3, 3, 3)
    assert np.abs(got.astype(np.int32) - want).max() <= 1


@pytest.mark.parametrize("with_bias", [True, False])
def test_fully_connected_runs(with_bias):
    m = fc_model(with_bias)
    x = rand_i8([2, 6])
    got = Reference(m.build()).run([x])[0]
    w = np.frombuffer(m.tensors[1].data, np.int8).reshape(4, 6)
    acc = (x.astype(float) - 10) @ w.T.astype(float) * (0.1 * 0.03)
    if with_bias:
        acc += np.array([100, -50, 7, 0]) * 0.003
    want = requant(acc, 0.2, -3)
    assert np.abs(got.astype(np.int32) - want).max() <= 1


def test_reshape_runs():
    x = rand_i8([1, 2, 3, 4])
    got = Reference(reshape_model().build()).run([x])[0]
    assert np.array_equal(got, x.reshape(6, 4))


def test_softmax_runs():
    x = rand_i8([2, 10])
    got = Reference(softmax_model().build()).run([x])[0]
    z = (x.astype(float) + 20) * 0.1
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert np.abs(got.astype(np.int32) - requant(p, 1 / 256, -128)).max() <= 2


# ---------------------------------- (3) the official schema round trip

def check_roundtrip(m):
    raw = m.build()
    assert raw[4:8] == b"TFL3"
    mt = opgen.parse(raw)
    assert mt.version == 3 and mt.description == b"opgen"
    assert mt.buffers[0].data is None
    sg, = mt.subgraphs
    assert sg.name == b"main"
    assert list(sg.inputs) == m.graph_inputs()
    assert list(sg.outputs) == m.graph_outputs()
    # tensors
    assert len(sg.tensors) == len(m.tensors)
    bufs = set()
    for i, (t, tt) in enumerate(zip(m.tensors, sg.tensors)):
        assert list(tt.shape if tt.shape is not None else []) == t.shape
        assert tt.type == opgen.DTYPES[t.dtype]
        assert tt.name == (t.name or "t%d" % i).encode()
        assert tt.isVariable == t.is_variable
        q = tt.quantization
        if t.scale is None:
            assert q.scale is None and q.zeroPoint is None
        else:
            sc = np.atleast_1d(t.scale)
            assert np.array_equal(q.scale, sc.astype(np.float32))
            zp = np.broadcast_to(np.atleast_1d(t.zero_point), sc.shape)
            assert np.array_equal(q.zeroPoint, zp)
            assert q.quantizedDimension == t.quantized_dimension
        if t.data is None:
            assert tt.buffer == 0
        else:
            assert tt.buffer not in bufs and tt.buffer > 0
            bufs.add(tt.buffer)
            assert bytes(mt.buffers[tt.buffer].data) == t.data
    # data offsets from the official reader too
    fm = s.Model.GetRootAs(raw, 0)
    for b in bufs:
        buf = fm.Buffers(b)
        pos = buf._tab.Vector(buf._tab.Offset(4))
        assert pos % opgen.ALIGN == 0
    # operator codes and operators
    for op, ot in zip(m.ops, sg.operators):
        code = mt.operatorCodes[ot.opcodeIndex]
        assert code.builtinCode == op.code
        assert code.deprecatedBuiltinCode == min(op.code, 127)
        assert code.version == op.version
        assert code.customCode == (op.custom.encode() if op.custom else None)
        assert list(ot.inputs) == op.inputs
        assert list(ot.outputs) == op.outputs
        if op.options is None:
            assert ot.builtinOptionsType == 0 and ot.builtinOptions is None
        else:
            name = type(op.options).__name__
            assert ot.builtinOptionsType == getattr(s.BuiltinOptions,
                                                    name[:-1])
            got = vars(ot.builtinOptions)
            for field, want in vars(op.options).items():
                if isinstance(want, float):
                    assert got[field] == np.float32(want), field
                elif want is None or np.ndim(want) == 0:
                    assert got[field] == want, field
                else:
                    assert list(got[field]) == list(want), field
        if op.custom_options is None:
            assert ot.customOptions is None
        else:
            assert bytes(ot.customOptions) == op.custom_options
    return mt


@pytest.mark.parametrize("name", sorted(MODELS))
def test_roundtrip(name):
    check_roundtrip(MODELS[name]())


def test_roundtrip_option_values():
    sg = check_roundtrip(conv_model()).subgraphs[0]
    o = sg.operators[0].builtinOptions
    assert (o.padding, o.strideW, o.strideH, o.fusedActivationFunction,
            o.dilationWFactor) == (s.Padding.SAME, 2, 2,
                                   s.ActivationFunctionType.RELU6, 1)
    assert sg.tensors[1].quantization.quantizedDimension == 0
    sm = check_roundtrip(softmax_model()).subgraphs[0].operators[0]
    assert sm.builtinOptions.beta == 1.0
    rs = check_roundtrip(reshape_model()).subgraphs[0].operators[0]
    assert list(rs.builtinOptions.newShape) == [6, 4]


def test_multi_op_and_special_codes():
    """Several ops sharing op codes, a code > 127, a custom op with options,
    an OptionsT instance, depthwise defaults and explicit model I/O."""
    m = opgen.Model()
    x = m.add_tensor(T([1, 4, 4, 2], scale=0.1))
    dw = m.add_tensor(T([1, 3, 3, 4], scale=[.1, .2, .3, .4],
                        quantized_dimension=3, data=rand_i8([1, 3, 3, 4])))
    h = m.add_tensor(T([1, 4, 4, 4], scale=0.2))
    m.add_op("DEPTHWISE_CONV_2D", [x, dw, -1], [h], {"padding": "valid"})
    g = m.add_tensor(T([1, 4, 4, 4], scale=0.2))
    m.add_op("GELU", [h], [g])
    c = m.add_tensor(T([1, 4, 4, 4], scale=0.2))
    m.add_op("CUSTOM:MyOp", [g], [c], custom_options=b"\x01\x02\x03")
    d = m.add_tensor(T([1, 4, 4, 4], scale=0.2))
    m.add_op("ADD", [c, g], [d], s.AddOptionsT(fusedActivationFunction=1))
    e = m.add_tensor(T([1, 4, 4, 4], scale=0.2))
    m.add_op("ADD", [d, d], [e])
    mt = check_roundtrip(m)
    codes = [(c.builtinCode, c.deprecatedBuiltinCode, c.customCode)
             for c in mt.operatorCodes]
    gelu = s.BuiltinOperator.GELU
    assert gelu > 127
    assert codes == [(s.BuiltinOperator.DEPTHWISE_CONV_2D,) * 2 + (None,),
                     (gelu, 127, None), (32, 32, b"MyOp"), (0, 0, None)]
    ops = mt.subgraphs[0].operators
    assert ops[0].builtinOptions.depthMultiplier == 2
    assert ops[0].builtinOptions.padding == s.Padding.VALID
    assert ops[1].builtinOptionsType == s.BuiltinOptions.GeluOptions
    assert ops[3].opcodeIndex == ops[4].opcodeIndex == 3
    assert list(mt.subgraphs[0].inputs) == [0]
    assert list(mt.subgraphs[0].outputs) == [6]
    mv = Model(m.build())  # our reader: resolved names, custom code
    assert [o.name for o in mv.operators] == [
        "DEPTHWISE_CONV_2D", "GELU", "MyOp", "ADD", "ADD"]
    m.inputs, m.outputs = [x], [e, d]
    assert list(check_roundtrip(m).subgraphs[0].outputs) == [6, 5]


def test_scalar_and_float_tensors():
    m = opgen.Model()
    x = m.add_tensor(T([3], "float32"))
    k = m.add_tensor(T([], "float32", data=np.float32(0.1)))
    y = m.add_tensor(T([3], "float32"))
    m.add_op("MUL", [x, k], [y])
    check_roundtrip(m)
    got = Reference(m.build()).run([np.array([1, 2, 3], np.float32)])[0]
    assert np.allclose(got, np.float32([0.1, 0.2, 0.3]))


def test_errors():
    with pytest.raises(ValueError):
        T([2], data=[1, 200])  # does not fit int8
    with pytest.raises(ValueError):
        T([3], data=[1, 2])
    with pytest.raises(ValueError):
        T([2, 2], scale=[1, 2], zero_point=[0, 0, 0])
    m = opgen.Model()
    with pytest.raises(ValueError):
        m.add_op("CONV_2D", [T([1])], [T([1])], {"strides": 2})
    with pytest.raises(ValueError):
        m.add_op("CONV_2D", [T([1])], [T([1])], {"padding": "FULL"})
    with pytest.raises(ValueError):
        m.add_op("NO_SUCH_OP", [T([1])], [T([1])])
    with pytest.raises(ValueError):
        m.add_op("RELU", [T([1])], [T([1])], {"x": 1})
    with pytest.raises(TypeError):
        m.add_op("ADD", [T([1])], [T([1])], s.BufferT())
    m.add_op("RELU", [T([1])], [T([1])], {})  # no table, no fields: fine


def test_options_table_names():
    assert opgen.options_table("MAX_POOL_2D") == "Pool2DOptions"
    assert opgen.options_table("STRIDED_SLICE") == "StridedSliceOptions"
    assert opgen.options_table("BIDIRECTIONAL_SEQUENCE_RNN") == \
        "BidirectionalSequenceRNNOptions"
    assert opgen.options_table("MEAN") == "ReducerOptions"
    assert opgen.options_table("RELU") is None
    assert opgen.options_table("LOGISTIC") is None
    for op, name in opgen.OPTIONS.items():
        assert op in opgen.OPS and hasattr(s, name + "T")
