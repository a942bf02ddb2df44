"""Conformance generators for the core kernels (the first ones tflm had).

CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, AVERAGE_POOL_2D,
MAX_POOL_2D, ADD, SOFTMAX, QUANTIZE, DEQUANTIZE, TRANSPOSE,
CONCATENATION, PAD, RESHAPE, SQUEEZE, EXPAND_DIMS.

Mostly int8 (about one model in eight is float32 where our runtime has a
float32 kernel that is bit-exact: conv, depthwise, FC, pools, ADD, and
the byte-moving ops). Scales are log-uniform over [1e-4, 10] and zero
points cover the full range, within what TFLM requires so that it accepts
every model: symmetric int8 weights (zero point 0), bias scale =
float32(input scale * weight scale), pool / concatenation / movement
outputs that share the input's quantization, softmax output scale 1/256
and zero point -128. Output scales are either independent or "matched"
(near the value range the op produces), so both saturated and
fine-grained outputs come up. Every op is STRICT: our runtime must run
every model generated here.
"""

import math

import numpy as np

from .. import opgen
from . import rand

T = opgen.Tensor
ACTS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")


# --- small helpers ------------------------------------------------------

def _clip(s):
    """A scale clipped to [SCALE_LO, SCALE_HI], as a float32 value."""
    return float(np.float32(min(max(s, rand.SCALE_LO), rand.SCALE_HI)))


def _near(rng, base, spread=1.5):
    """A scale near base: base * e**u, u uniform in [-spread, spread]."""
    return _clip(base * math.exp(rng.uniform(-spread, spread)))


def _np(rng):
    """A numpy Generator seeded from rng."""
    return np.random.default_rng(rng.getrandbits(64))


def _floats(rng, shape, scale=1.0):
    return (_np(rng).standard_normal(shape) * scale).astype(np.float32)


def _weights(rng, shape):
    """Symmetric int8 weights: [-127, 127], -128 now and then."""
    lo = -128 if rng.random() < 0.2 else -127
    return _np(rng).integers(lo, 128, size=shape).astype(np.int8)


def _bias(rng, n):
    """int32 bias values of a random magnitude (up to 2**22)."""
    g = _np(rng)
    bits = rng.randint(0, 22)
    return g.integers(-(1 << bits), (1 << bits) + 1, size=n).astype(np.int32)


def _bias64(rng, n):
    """int64 bias values (16x8 kernels) of up to 2**46, now and then of
    up to 2**62 (the int64 product in TFLM's rounding then wraps)."""
    bits = rng.choice((8, 24, 40, 46, 62 if rng.random() < 0.25 else 46))
    return _np(rng).integers(-(1 << bits), 1 << bits, size=n,
                             dtype=np.int64)


def _is_float(rng, p=0.12):
    return rng.random() < p


def _filter_scales(rng, n, per_channel):
    """Weight scales: one, or n around a base (or fully independent)."""
    base = rand.scale(rng)
    if not per_channel:
        return [base]
    if rng.random() < 0.6:
        return [_near(rng, base, 1.0) for _ in range(n)]
    return rand.scales(rng, n)


def signed_scales(rng, fs, p=0.25, negative=True):
    """Per-channel filter scales fs, now and then (probability p, when
    there are 2 or more) with channels of scale zero or negative, as TFLM
    accepts them (a public ImageNet MCUNet has a channel of scale
    -1.98e-08): the multiplier of such a channel is (0, 0) or negative.
    Everything else about the case (output scale, bias scales) is chosen
    from fs as it was, for the int8 and the 16x8 kernels alike.
    negative=False: zeros only."""
    if len(fs) < 2 or rng.random() >= p:
        return fs
    fs = list(fs)
    n = len(fs)
    for i in rng.sample(range(n), rng.randint(1, n)):
        r = rng.random()
        fs[i] = (0.0 if r < 0.25 or not negative else
                 -1.98e-08 if r < 0.35 else -0.0 if r < 0.4 else -fs[i])
    return fs


def _out_scale(rng, typical):
    """An output scale: near typical 60% of the time, else random."""
    if rng.random() < 0.6:
        return _near(rng, typical)
    return rand.scale(rng)


def _hw(rng, size):
    """A spatial size: 1 now and then, up to 3 at size 1, 11 at size 4."""
    if rng.random() < 0.15:
        return 1
    return rng.randint(1, 8 * size // 3 + 1)


def _padding(rng):
    return rng.choice(("SAME", "VALID"))


def _out_size(padding, n, k, stride, dil):
    """TFLM's ComputeOutSize (padding.h); None if VALID does not fit."""
    eff = (k - 1) * dil + 1
    if padding == "SAME":
        return (n + stride - 1) // stride
    o = (n - eff + stride) // stride
    return o if o >= 1 else None


def _kernel(rng, size, n, padding, dil):
    """A kernel size for an input of n (fits when VALID)."""
    k = rng.randint(1, min(5, size + 1))
    if padding == "VALID":
        k = min(k, (n - 1) // dil + 1)
    return max(k, 1)


def _stride(rng):
    return rng.choice((1, 1, 1, 2, 2, 3))


def _dilation(rng):
    return 1 if rng.random() < 0.7 else rng.choice((2, 2, 3))


def _batch(rng, size):
    return 2 if size >= 2 and rng.random() < 0.2 else 1


def _f32(x):
    return float(np.float32(x))


def _bias_scale(in_s, f_s):
    """float32(in_s * f_s), as TFLM's converter writes bias scales."""
    return float(np.float32(in_s) * np.float32(f_s))


def _int8_q(rng):
    return rand.scale(rng), rand.zero_point(rng)


def _typed(rng, dtypes):
    """(input Tensor kwargs) for a byte-moving op: dtype and, for int8,
    a scale and zero point (int16: zero point 0)."""
    dt = rng.choice(dtypes)
    if dt == "int8":
        s, z = _int8_q(rng)
        return {"dtype": dt, "scale": s, "zero_point": z}
    if dt == "int16" and rng.random() < 0.5:
        return {"dtype": dt, "scale": rand.scale(rng), "zero_point": 0}
    return {"dtype": dt}


# --- convolutions ---------------------------------------------------------

def _conv_common(rng, size):
    """(n, h, w, padding, (sh, sw), (dh, dw), (kh, kw))."""
    n, h, w = _batch(rng, size), _hw(rng, size), _hw(rng, size)
    padding = _padding(rng)
    dh, dw = _dilation(rng), _dilation(rng)
    kh = _kernel(rng, size, h, padding, dh)
    kw = _kernel(rng, size, w, padding, dw)
    return n, h, w, padding, (_stride(rng), _stride(rng)), (dh, dw), (kh, kw)


def gen_conv(rng, size):
    """CONV_2D: per-channel (or per-tensor) int8, grouped now and then,
    strides, dilations, SAME / VALID, fused activation, optional bias;
    float32 sometimes; 16x8 (int16 activations, an int64 or int32 bias)
    1 time in 5."""
    n, h, w, padding, (sh, sw), (dh, dw), (kh, kw) = _conv_common(rng, size)
    wide = size >= 4 and rng.random() < 0.1  # many channels
    cin = rng.randint(16, 64) if wide else rng.randint(1, 2 * size)
    groups = 1
    if cin > 1 and rng.random() < 0.15:
        groups = rng.choice([g for g in range(2, cin + 1) if cin % g == 0])
    cout = groups * rng.randint(1, max(1, (40 if wide else 2 * size)
                                       // groups))
    if wide:
        h, w = min(h, 5), min(w, 5)
        kh, kw = (_kernel(rng, 2, h, padding, dh),
                  _kernel(rng, 2, w, padding, dw))
    oh, ow = (_out_size(padding, h, kh, sh, dh),
              _out_size(padding, w, kw, sw, dw))
    fshape = [cout, kh, kw, cin // groups]
    opts = {"padding": padding, "stride_h": sh, "stride_w": sw,
            "dilation_h_factor": dh, "dilation_w_factor": dw,
            "activation": rand.activation(rng, ACTS)}
    has_bias = rng.random() < 0.8
    if _is_float(rng):
        x = T([n, h, w, cin], "float32")
        f = T(fshape, "float32", data=_floats(rng, fshape, 0.5))
        b = T([cout], "float32", data=_floats(rng, [cout])) \
            if has_bias else -1
        y = T([n, oh, ow, cout], "float32")
        return opgen.single_op("CONV_2D", [x, f, b], [y], opts)
    int16 = rng.random() < 0.2  # 16x8: int16 activations, zero point 0
    in_s, in_z = _int8_q(rng)
    if int16:
        in_s, in_z = rand.scale(rng, 1e-5, 1e-1), 0
    fs = _filter_scales(rng, cout, rng.random() < 0.75)
    k = kh * kw * cin // groups
    gm = math.exp(sum(math.log(s) for s in fs) / len(fs))
    out_s = _out_scale(rng, in_s * gm * 140 * math.sqrt(k))
    fs = signed_scales(rng, fs)  # zero or negative channels now and then
    act = "int16" if int16 else "int8"
    x = T([n, h, w, cin], act, scale=in_s, zero_point=in_z)
    f = T(fshape, scale=fs if len(fs) > 1 else fs[0], zero_point=0,
          data=_weights(rng, fshape), quantized_dimension=0)
    ins = [x, f]
    if has_bias:
        bs = [_bias_scale(in_s, s) for s in fs]
        bs = bs if len(bs) > 1 else bs[0]
        if int16 and rng.random() < 0.6:
            ins.append(T([cout], "int64", scale=bs, zero_point=0,
                         data=_bias64(rng, cout)))
        else:
            ins.append(T([cout], "int32", scale=bs, zero_point=0,
                         data=_bias(rng, cout)))
    elif rng.random() < 0.5:
        ins.append(-1)
    if int16 and not has_bias and rng.random() < 0.5:
        opts = dict(opts, quantized_bias_type="int32")
    y = T([n, oh, ow, cout], act, scale=out_s,
          zero_point=0 if int16 else rand.zero_point(rng))
    return opgen.single_op("CONV_2D", ins, [y], opts)


def gen_depthwise(rng, size):
    """DEPTHWISE_CONV_2D: depth_multiplier 1..3, per-channel scales along
    dimension 3, strides, dilations, padding, activation, bias or not;
    16x8 (int16 activations, an int64 bias) 1 time in 5."""
    n, h, w, padding, (sh, sw), (dh, dw), (kh, kw) = _conv_common(rng, size)
    c = rng.randint(1, 2 * size)
    m = 1 if rng.random() < 0.6 else rng.randint(2, min(3, size + 1))
    if rng.random() < 0.15:
        # micro_speech's shape: one input channel, a multiplier of 4 or
        # 8, rows of 4 or 8 taps (the Cortex-M4's dw_dsp.dwm path)
        c, m, dw = 1, rng.choice([4, 8]), 1
        kw = rng.choice([4, 8])
        w = max(w, kw + rng.randint(0, 5))
    cout = c * m
    oh, ow = (_out_size(padding, h, kh, sh, dh),
              _out_size(padding, w, kw, sw, dw))
    fshape = [1, kh, kw, cout]
    opts = {"padding": padding, "stride_h": sh, "stride_w": sw,
            "dilation_h_factor": dh, "dilation_w_factor": dw,
            "depth_multiplier": m, "activation": rand.activation(rng, ACTS)}
    has_bias = rng.random() < 0.8
    if _is_float(rng):
        x = T([n, h, w, c], "float32")
        f = T(fshape, "float32", data=_floats(rng, fshape, 0.5))
        ins = [x, f]
        if has_bias:
            ins.append(T([cout], "float32", data=_floats(rng, [cout])))
        y = T([n, oh, ow, cout], "float32")
        return opgen.single_op("DEPTHWISE_CONV_2D", ins, [y], opts)
    int16 = rng.random() < 0.2  # 16x8: int16 activations, int64 bias
    in_s, in_z = _int8_q(rng)
    if int16:
        in_s, in_z = rand.scale(rng, 1e-5, 1e-1), 0
    fs = _filter_scales(rng, cout, rng.random() < 0.75)
    gm = math.exp(sum(math.log(s) for s in fs) / len(fs))
    out_s = _out_scale(rng, in_s * gm * 140 * math.sqrt(kh * kw))
    fs = signed_scales(rng, fs)  # zero or negative channels now and then
    act = "int16" if int16 else "int8"
    x = T([n, h, w, c], act, scale=in_s, zero_point=in_z)
    f = T(fshape, scale=fs if len(fs) > 1 else fs[0], zero_point=0,
          data=_weights(rng, fshape), quantized_dimension=3)
    ins = [x, f]
    if has_bias:
        bs = [_bias_scale(in_s, s) for s in fs]
        bs = bs if len(bs) > 1 else bs[0]
        if int16:  # TFLM's 16x8 kernel reads the bias as int64
            ins.append(T([cout], "int64", scale=bs, zero_point=0,
                         data=_bias64(rng, cout)))
        else:
            ins.append(T([cout], "int32", scale=bs, zero_point=0,
                         data=_bias(rng, cout)))
    # No omitted (-1) bias: TFLM's depthwise_conv.cc crashes on it.
    y = T([n, oh, ow, cout], act, scale=out_s,
          zero_point=0 if int16 else rand.zero_point(rng))
    return opgen.single_op("DEPTHWISE_CONV_2D", ins, [y], opts)


def gen_fc(rng, size):
    """FULLY_CONNECTED: input rank 1..4 (rows of the weights' depth),
    keep_num_dims or not, bias or not, per-channel weights sometimes."""
    depth = rng.randint(1, 6 * size - 4)
    lead = rand.shape(rng, size, 0, 3)
    if size >= 4 and rng.random() < 0.1:  # deeper than GATHER_MAX
        depth = rng.randint(1000, 2100)
        lead = lead[:1]
    in_shape = lead + [depth]
    rows = int(np.prod(lead, dtype=np.int64)) if lead else 1
    units = rng.randint(1, 3 * size - 1)
    keep = rng.random() < 0.4
    out_shape = lead + [units] if keep else [rows, units]
    wshape = [units, depth]
    opts = {"activation": rand.activation(rng, ACTS),
            "keep_num_dims": keep}
    has_bias = rng.random() < 0.7
    if _is_float(rng):
        x = T(in_shape, "float32")
        wt = T(wshape, "float32", data=_floats(rng, wshape, 0.5))
        b = T([units], "float32", data=_floats(rng, [units])) \
            if has_bias else -1
        return opgen.single_op("FULLY_CONNECTED", [x, wt, b],
                               [T(out_shape, "float32")], opts)
    if rng.random() < 0.2:
        return _fc16(rng, in_shape, wshape, out_shape, opts, has_bias)
    in_s, in_z = _int8_q(rng)
    fs = _filter_scales(rng, units, rng.random() < 0.3)
    gm = math.exp(sum(math.log(s) for s in fs) / len(fs))
    out_s = _out_scale(rng, in_s * gm * 140 * math.sqrt(depth))
    fs = signed_scales(rng, fs)
    x = T(in_shape, scale=in_s, zero_point=in_z)
    wt = T(wshape, scale=fs if len(fs) > 1 else fs[0], zero_point=0,
           data=_weights(rng, wshape), quantized_dimension=0)
    ins = [x, wt]
    if has_bias:
        bs = [_bias_scale(in_s, s) for s in fs]
        ins.append(T([units], "int32", scale=bs if len(bs) > 1 else bs[0],
                     zero_point=0, data=_bias(rng, units)))
    elif rng.random() < 0.5:
        ins.append(-1)
    y = T(out_shape, scale=out_s, zero_point=rand.zero_point(rng))
    return opgen.single_op("FULLY_CONNECTED", ins, [y], opts)


def _fc16(rng, in_shape, wshape, out_shape, opts, has_bias):
    """FULLY_CONNECTED 16x8: int16 input and output (zero points 0 as
    converters write them, 1 time in 5 others), int8 weights, an int64
    bias (of up to 2**46, now and then 2**62), an int32 one, or none
    (the options' quantized_bias_type then picks int32 or int64
    accumulation)."""
    units, depth = wshape

    def zp():
        return 0 if rng.random() < 0.8 else rng.randint(-32766, 32766)
    in_s = rand.scale(rng, 1e-5, 1e-1)
    fs = _filter_scales(rng, units, rng.random() < 0.3)
    gm = math.exp(sum(math.log(s) for s in fs) / len(fs))
    out_s = _out_scale(rng, in_s * gm * 140 * math.sqrt(depth))
    fs = signed_scales(rng, fs)  # zero or negative units now and then
    x = T(in_shape, "int16", scale=in_s, zero_point=zp())
    wt = T(wshape, scale=fs if len(fs) > 1 else fs[0], zero_point=0,
           data=_weights(rng, wshape), quantized_dimension=0)
    ins = [x, wt]
    bs = [_bias_scale(in_s, s) for s in fs]
    bs = bs if len(bs) > 1 else bs[0]
    r = rng.random()
    if has_bias and r < 0.6:
        ins.append(T([units], "int64", scale=bs, zero_point=0,
                     data=_bias64(rng, units)))
    elif has_bias:
        ins.append(T([units], "int32", scale=bs, zero_point=0,
                     data=_bias(rng, units)))
    else:
        ins.append(-1)
        if rng.random() < 0.5:
            opts = dict(opts, quantized_bias_type="int32")
    y = T(out_shape, "int16", scale=out_s, zero_point=zp())
    return opgen.single_op("FULLY_CONNECTED", ins, [y], opts)


# --- pools ------------------------------------------------------------------

def _gen_pool(op):
    def gen(rng, size):
        n, h, w = _batch(rng, size), _hw(rng, size), _hw(rng, size)
        c = rng.randint(1, 2 * size)
        padding = _padding(rng)
        fh = _kernel(rng, size, h, padding, 1)
        fw = _kernel(rng, size, w, padding, 1)
        sh, sw = _stride(rng), _stride(rng)
        oh, ow = (_out_size(padding, h, fh, sh, 1),
                  _out_size(padding, w, fw, sw, 1))
        opts = {"padding": padding, "stride_h": sh, "stride_w": sw,
                "filter_height": fh, "filter_width": fw,
                "activation": rand.activation(rng, ACTS)}
        if _is_float(rng):
            q = {"dtype": "float32"}
        elif rng.random() < 0.2:  # 16x8 models
            q = {"dtype": "int16", "scale": rand.scale(rng),
                 "zero_point": 0 if rng.random() < 0.5 else
                 rand.zero_point(rng, -32768, 32767)}
        else:
            s, z = _int8_q(rng)
            q = {"scale": s, "zero_point": z}
        return opgen.single_op(op, [T([n, h, w, c], **q)],
                               [T([n, oh, ow, c], **q)], opts)
    gen.__doc__ = ("%s: filter 1..5, strides 1..3, SAME / VALID, fused "
                   "activation; int8, int16 (1 in 5) or float32; output "
                   "quantization = input's." % op)
    return gen


# --- ADD ------------------------------------------------------------------

def _broadcast_shapes(rng, size):
    """(shape1, shape2, out shape): NumPy broadcasting, rank <= 4, size-1
    dimensions, lower-rank inputs."""
    out = rand.shape(rng, size, 1, 4)
    if rng.random() < 0.3:
        return list(out), list(out), out
    shapes = []
    for _ in range(2):
        s = [1 if rng.random() < 0.4 else d for d in out]
        if rng.random() < 0.25:
            s = s[rng.randint(0, len(s)):]  # fewer dimensions
        shapes.append(s)
    a, b = shapes
    r = len(out)
    for k in range(r):  # every output dimension comes from an input
        ka, kb = k - (r - len(a)), k - (r - len(b))
        da = a[ka] if ka >= 0 else 1
        db = b[kb] if kb >= 0 else 1
        if max(da, db) != out[k]:
            if ka >= 0:
                a[ka] = out[k]
            elif kb >= 0:
                b[kb] = out[k]
            else:
                a[:0] = [1] * (-ka)
                a[0] = out[k]
    return a, b, out


def gen_add(rng, size):
    """ADD: broadcasting shapes of rank <= 4, independent scales and zero
    points, fused activation; float32, int32 and int16 sometimes."""
    a, b, out = _broadcast_shapes(rng, size)
    opts = {"activation": rand.activation(rng, ACTS)}
    if rng.random() < 0.5:
        a, b = b, a
    if _is_float(rng):
        return opgen.single_op("ADD", [T(a, "float32"), T(b, "float32")],
                               [T(out, "float32")], opts)
    if rng.random() < 0.15:  # int32 (the fused activation is ignored)
        from .gen_binary import int32s
        return int32s("ADD", rng, size, act=True)
    if rng.random() < 0.15:  # int16 (16x8)
        from .gen_binary import int16s
        return int16s("ADD", rng, size)
    s1, z1 = _int8_q(rng)
    s2 = _near(rng, s1, 2.0) if rng.random() < 0.5 else rand.scale(rng)
    z2 = rand.zero_point(rng)
    so = _out_scale(rng, max(s1, s2) * 1.5)
    x1 = T(a, scale=s1, zero_point=z1)
    x2 = x1 if rng.random() < 0.05 else T(b, scale=s2, zero_point=z2)
    if x2 is x1:  # x + x: one tensor feeds both inputs
        out = a
    return opgen.single_op(
        "ADD", [x1, x2], [T(out, scale=so, zero_point=rand.zero_point(rng))],
        opts)


# --- SOFTMAX, QUANTIZE, DEQUANTIZE ---------------------------------------

def gen_softmax(rng, size):
    """SOFTMAX int8: rank 1..4, beta 1 or log-uniform in [0.1, 10],
    output scale 1/256 and zero point -128 (TFLM's requirement), or 1 time
    in 4 an int16 output: zero point -32768, scale 1/65536 or within 0.1%
    of it, sometimes over rows of up to 4095 near-equal values. 1 time in
    5 int16 -> int16 (_softmax16)."""
    if rng.random() < 0.2:
        return _softmax16(rng, size)
    shape = rand.shape(rng, size, 1, 4)
    if rng.random() < 0.3:
        shape[-1] = rng.randint(1, 20 * size - 18)
    beta = 1.0 if rng.random() < 0.5 else _f32(
        math.exp(rng.uniform(math.log(0.1), math.log(10.0))))
    in_s = rand.scale(rng) if rng.random() < 0.5 else _near(
        rng, 1 / 16.0, 2.0)
    x = T(shape, scale=in_s, zero_point=rand.zero_point(rng))
    if rng.random() < 0.25:
        sc = 1 / 65536.0 if rng.random() < 0.5 else _f32(
            (1 + rng.uniform(-0.00099, 0.00099)) / 65536)
        if size >= 3 and rng.random() < 0.3:
            # long rows of near-equal exponentials: the int32 sum passes
            # 2**28 (int16 outputs have no cap there)
            shape = [1, rng.randint(400, 4095)]
            x = T(shape, scale=rand.scale(rng, 1e-4, 1e-3),
                  zero_point=rand.zero_point(rng))
        y = T(shape, "int16", scale=sc, zero_point=-32768)
    else:
        y = T(shape, scale=1 / 256.0, zero_point=-128)
    return opgen.single_op("SOFTMAX", [x], [y], {"beta": beta})


def _softmax16(rng, size):
    """SOFTMAX int16 -> int16 and its inputs: zero points 0, output scale
    1/32768 (1 time in 4 within 0.1% of it), input scales log-uniform over
    [1e-6, 1] (beta * scale * 6553.5 from tiny to large multipliers), beta
    1 or log-uniform over [0.1, 10] (0 now and then); inputs within
    +-2**k for a random k, a fifth of them anywhere in int16; now and then
    rows of up to 5000 values."""
    shape = rand.shape(rng, size, 1, 4)
    if rng.random() < 0.3:
        shape[-1] = rng.randint(1, 20 * size - 18)
    if size >= 3 and rng.random() < 0.1:
        shape = [1, rng.randint(400, 5000)]
    r = rng.random()
    beta = 1.0 if r < 0.5 else 0.0 if r < 0.55 else _f32(
        math.exp(rng.uniform(math.log(0.1), math.log(10.0))))
    in_s = _f32(math.exp(rng.uniform(math.log(1e-6), 0.0)))
    out_s = 1 / 32768.0 if rng.random() < 0.75 else _f32(
        (1 + rng.uniform(-0.00099, 0.00099)) / 32768)
    g = _np(rng)
    lim = 1 << rng.randint(2, 15)
    x = g.integers(-lim, lim, size=shape, endpoint=True)
    wide = g.random(shape) < 0.2
    x[wide] = g.integers(-32768, 32767, size=int(np.sum(wide)),
                         endpoint=True)
    x = np.clip(x, -32768, 32767).astype(np.int16)
    raw = opgen.single_op(
        "SOFTMAX", [T(shape, "int16", scale=in_s, zero_point=0)],
        [T(shape, "int16", scale=out_s, zero_point=0)], {"beta": beta})
    return raw, [x]


def _uint8_zp(rng):
    return rand.zero_point(rng, 0, 255)


def gen_quantize(rng, size):
    """QUANTIZE: float32 -> int8 (inputs near the grid, ties included),
    int8 -> int8 requantization (equal scales too), int8 -> uint8,
    uint8 -> int8, and the 16x8 ones: int16 -> int8, int8 -> int16,
    int16 -> int16, int16 -> int32 (int16 zero point 0 mostly, as
    converters write it); int32 -> int16 (a SEANet layer's) and int32 ->
    int8, with inputs of every magnitude (zero point 0 mostly, else any
    int32: the difference wraps as C's)."""
    shape = rand.shape(rng, size, 0 if rng.random() < 0.05 else 1, 4)
    kind = rng.choice(("f32", "f32", "i8", "i8", "i8u8", "u8i8", "i16i8",
                       "i8i16", "i16i16", "i16i32", "i32i16", "i32i16",
                       "i32i8"))
    if kind.startswith("i32"):
        return _quantize_i32(rng, shape, kind[3:])
    if "16" in kind:
        dt = ["int16" if kind.startswith("i16") else "int8",
              "int16" if kind.endswith("i16") else
              "int32" if kind.endswith("i32") else "int8"]
        q = [{"scale": rand.scale(rng),
              "zero_point": (0 if rng.random() < 0.7 else
                             rng.randint(-32768, 32767)) if d == "int16"
              else rand.zero_point(rng)} for d in dt]
        if rng.random() < 0.3:  # scales near each other
            q[1]["scale"] = _near(rng, q[0]["scale"], 0.5)
        return opgen.single_op("QUANTIZE", [T(shape, dt[0], **q[0])],
                               [T(shape, dt[1], **q[1])])
    if kind == "f32":
        s, z = _int8_q(rng)
        y = T(shape, scale=s, zero_point=z)
        raw = opgen.single_op("QUANTIZE", [T(shape, "float32")], [y])
        return raw, [_quantize_inputs(rng, shape, s, z)]
    if kind == "u8i8":
        x = T(shape, "uint8", scale=rand.scale(rng), zero_point=_uint8_zp(rng))
    else:
        x = T(shape, scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    r = rng.random()
    so = x.scale if r < 0.15 else (_near(rng, x.scale) if r < 0.6
                                   else rand.scale(rng))
    if kind == "i8u8":
        y = T(shape, "uint8", scale=so, zero_point=_uint8_zp(rng))
    else:
        y = T(shape, scale=so, zero_point=rand.zero_point(rng))
    return opgen.single_op("QUANTIZE", [x], [y])


def _quantize_i32(rng, shape, out):
    """QUANTIZE int32 -> int16 / int8 (Requantize): an output scale 2**0
    to 2**24 times the input's (now and then below it), int32 inputs
    whose magnitudes span 2**0 .. 2**31 (so outputs land in range and
    beyond), zero points 0 mostly."""
    g = _np(rng)
    in_s = rand.scale(rng)
    ratio = 2.0 ** (rng.uniform(-2, 24) if rng.random() < 0.9 else
                    rng.uniform(-30, 30))
    out_s = _clip(in_s * ratio)
    in_z = 0 if rng.random() < 0.7 else rng.randint(-(1 << 31), (1 << 31) - 1)
    lim = 32767 if out == "i16" else 127
    out_z = 0 if rng.random() < 0.6 else rng.randint(-lim - 1, lim)
    x = T(shape, "int32", scale=in_s, zero_point=in_z)
    y = T(shape, "int16" if out == "i16" else "int8", scale=out_s,
          zero_point=out_z)
    n = int(np.prod(shape, dtype=np.int64))
    bits = g.integers(0, 32, n)
    vals = g.integers(-(1 << 31), 1 << 31, n, dtype=np.int64) >> bits
    edges = [0, 1, -1, (1 << 31) - 1, -(1 << 31)]
    vals[:min(n, len(edges))] = edges[:n]
    vals = (vals + in_z + (1 << 31)) % (1 << 32) - (1 << 31)  # near zp
    raw = opgen.single_op("QUANTIZE", [x], [y])
    return raw, [vals.astype(np.int32).reshape(shape)]


def _quantize_inputs(rng, shape, s, z):
    """float32 values whose x / s land across (and a bit beyond) the
    int8 range, a third of them on .5 ties; a few zeros and big values."""
    g = _np(rng)
    n = int(np.prod(shape, dtype=np.int64))
    q = g.uniform(-128 - z - 20, 127 - z + 20, size=n)
    ties = g.random(n) < 0.3
    q[ties] = np.floor(q[ties]) + 0.5
    x = (np.float32(s) * q.astype(np.float32)).astype(np.float32)
    special = g.random(n)
    x[special < 0.03] = 0.0
    x[(special >= 0.03) & (special < 0.05)] = np.float32(-0.0)
    big = (special >= 0.05) & (special < 0.07)
    x[big] = (g.choice([-1.0, 1.0], size=int(big.sum())) * 1e30).astype(
        np.float32)
    return x


def gen_dequantize(rng, size):
    """DEQUANTIZE: int8, uint8 or int16 -> float32, any scale and zero
    point (int16: now and then a scale whose products are subnormal or
    overflow); a scalar now and then."""
    shape = rand.shape(rng, size, 0 if rng.random() < 0.05 else 1, 4)
    r = rng.random()
    if r < 0.6:
        x = T(shape, scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    elif r < 0.8:
        x = T(shape, "uint8", scale=rand.scale(rng),
              zero_point=_uint8_zp(rng))
    else:
        sc = rand.scale(rng) if rng.random() < 0.8 else rng.choice(
            (1e-45, 1e-40, 1.1754942e-38, 1e34, 3.4e38))
        x = T(shape, "int16", scale=float(np.float32(sc)),
              zero_point=rand.zero_point(rng, -32768, 32767))
    return opgen.single_op("DEQUANTIZE", [x], [T(shape, "float32")])


# --- data movement ------------------------------------------------------

MOVE_TYPES = ("int8", "int8", "int8", "float32", "int16", "int32")


def gen_transpose(rng, size):
    """TRANSPOSE: rank 1..4 (5 now and then), a random permutation,
    int8 / float32 / int16."""
    rank = rng.randint(1, 4) if rng.random() < 0.9 else 5
    shape = [rand.dim(rng, size) for _ in range(rank)]
    perm = list(range(rank))
    rng.shuffle(perm)
    q = _typed(rng, ("int8", "int8", "float32", "int16"))
    x = T(shape, **q)
    p = T([rank], "int32", data=np.array(perm, np.int32))
    y = T([shape[k] for k in perm], **q)
    return opgen.single_op("TRANSPOSE", [x, p], [y])


def gen_concatenation(rng, size):
    """CONCATENATION: 1..4 inputs (one constant sometimes), rank 1..4,
    negative axes, int8 (shared quantization) / float32 / int16 / int32 /
    int64 / bool."""
    base = rand.shape(rng, size, 1, 4)
    rank = len(base)
    axis = rng.randint(-rank, rank - 1)
    q = _typed(rng, MOVE_TYPES + ("int64", "bool"))
    k = rng.randint(1, 4)
    ins = []
    total = 0
    const = rng.randrange(k) if k > 1 and rng.random() < 0.2 else -1
    for j in range(k):
        s = list(base)
        s[axis] = rand.dim(rng, size)
        total += s[axis]
        data = None
        if j == const:
            data = _const_data(rng, s, q["dtype"])
        if j and const < 0 and rng.random() < 0.05:
            ins.append(ins[-1])  # one tensor twice
            total += ins[-1].shape[axis] - s[axis]
            continue
        ins.append(T(s, data=data, **q))
    out = list(base)
    out[axis] = total
    return opgen.single_op("CONCATENATION", ins, [T(out, **q)],
                           {"axis": axis})


def _const_data(rng, shape, dtype):
    g = _np(rng)
    if dtype == "float32":
        return g.standard_normal(shape).astype(np.float32)
    if dtype == "bool":
        return g.integers(0, 2, size=shape).astype(bool)
    info = np.iinfo(dtype)
    return g.integers(max(info.min, -1 << 40), min(info.max, 1 << 40),
                      size=shape, endpoint=True).astype(dtype)


def gen_pad(rng, size):
    """PAD: rank 1..4, constant int32 paddings 0..size per side,
    int8 (border = zero point) / float32 / int16 / int32."""
    shape = rand.shape(rng, size, 1, 4)
    pads = [[rng.choice((0, 0, rng.randint(0, size))) for _ in range(2)]
            for _ in shape]
    q = _typed(rng, MOVE_TYPES)
    x = T(shape, **q)
    p = T([len(shape), 2], "int32", data=np.array(pads, np.int32))
    y = T([d + a + b for d, (a, b) in zip(shape, pads)], **q)
    return opgen.single_op("PAD", [x, p], [y])


def _factor_shape(rng, n, rank):
    """A shape of the given rank with n elements (random factors)."""
    dims = [1] * rank
    f, m = 2, n
    while m > 1:
        while m % f:
            f += 1
        dims[rng.randrange(rank)] *= f
        m //= f
    return dims


def gen_reshape(rng, size):
    """RESHAPE: new shape from a constant shape tensor, the options, or
    both; -1 now and then; ranks 1..4, to or from a scalar now and then."""
    shape = rand.shape(rng, size, 1, 4)
    n = int(np.prod(shape, dtype=np.int64))
    out = _factor_shape(rng, n, rng.randint(1, 4))
    if rng.random() < 0.05:  # to or from a scalar
        shape, out = [1] * len(shape), []
        if rng.random() < 0.5:
            shape, out = out, shape
    spec = list(out)
    if spec and rng.random() < 0.3:
        spec[rng.randrange(len(spec))] = -1
    q = _typed(rng, MOVE_TYPES)
    how = rng.choice(("tensor", "tensor", "options", "both"))
    ins = [T(shape, **q)]
    if how != "options":
        ins.append(T([len(spec)], "int32", data=np.array(spec, np.int32)))
    opts = {"new_shape": spec} if how != "tensor" else None
    return opgen.single_op("RESHAPE", ins, [T(out, **q)], opts)


def gen_squeeze(rng, size):
    """SQUEEZE: size-1 dimensions removed, all of them (no squeeze_dims)
    or those listed (negative indices too); output rank >= 1."""
    shape = rand.shape(rng, size, 1, 4)
    for k in range(len(shape)):
        if rng.random() < 0.4:
            shape[k] = 1
    if shape == [1]:
        shape = [rng.randint(2, 2 * size + 1)]
    ones = [k for k, d in enumerate(shape) if d == 1]
    all_ones = len(ones) == len(shape)
    dims = [] if not all_ones and rng.random() < 0.4 else [
        k for k in ones if rng.random() < 0.6]
    if all_ones and (not dims or len(dims) == len(shape)):
        dims = ones[:-1]  # an empty list would squeeze to rank 0
    drop = set(dims) if dims else set(ones)
    out = [d for k, d in enumerate(shape) if k not in drop]
    spec = [k - len(shape) if rng.random() < 0.3 else k for k in dims]
    q = _typed(rng, MOVE_TYPES)
    opts = {"squeeze_dims": spec} if spec else None
    return opgen.single_op("SQUEEZE", [T(shape, **q)], [T(out, **q)], opts)


def gen_expand_dims(rng, size):
    """EXPAND_DIMS: input rank 0..3, constant int32 axis (shape [] or
    [1]) in [-(rank + 1), rank]."""
    shape = rand.shape(rng, size, 0 if rng.random() < 0.05 else 1, 3)
    r = len(shape)
    axis = rng.randint(-(r + 1), r)
    a = axis if axis >= 0 else axis + r + 1
    out = shape[:a] + [1] + shape[a:]
    # TFLM's expand_dims.cc: int8, int16, float32 only.
    q = _typed(rng, ("int8", "int8", "float32", "int16"))
    ax = T([] if rng.random() < 0.5 else [1], "int32",
           data=np.array([axis], np.int32))
    return opgen.single_op("EXPAND_DIMS", [T(shape, **q), ax], [T(out, **q)])


GENERATORS = {
    "CONV_2D": gen_conv,
    "DEPTHWISE_CONV_2D": gen_depthwise,
    "FULLY_CONNECTED": gen_fc,
    "AVERAGE_POOL_2D": _gen_pool("AVERAGE_POOL_2D"),
    "MAX_POOL_2D": _gen_pool("MAX_POOL_2D"),
    "ADD": gen_add,
    "SOFTMAX": gen_softmax,
    "QUANTIZE": gen_quantize,
    "DEQUANTIZE": gen_dequantize,
    "TRANSPOSE": gen_transpose,
    "CONCATENATION": gen_concatenation,
    "PAD": gen_pad,
    "RESHAPE": gen_reshape,
    "SQUEEZE": gen_squeeze,
    "EXPAND_DIMS": gen_expand_dims,
}

# Our runtime has kernels for all of these: any rejection is a failure.
STRICT = set(GENERATORS)
