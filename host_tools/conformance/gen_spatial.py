"""Conformance generators: RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR,
TRANSPOSE_CONV (see the package docstring for the interface).

Shapes are 4-D NHWC with size-1 dimensions included; resize sizes both
up- and down-sample, with every option combination TFLM accepts
(RESIZE_BILINEAR rejects align_corners with half_pixel_centers);
TRANSPOSE_CONV covers SAME / VALID, strides 1-3, per-channel and
per-tensor filters, an optional bias, fused activations and output sizes
other than the usual (H - 1) * stride + K / H * stride. Multipliers stay
below 2**30 (larger shifts are undefined behaviour in TFLM's kernel).
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand
from host_tools.conformance.gen_core import signed_scales

T = opgen.Tensor


def _flag(rng):
    return rng.random() < 0.5


def _out_size(rng, n, size):
    """A resize target: down, same or up (at most ~4x)."""
    r = rng.random()
    if r < 0.15:
        return 1
    if r < 0.3:
        return n
    return rng.randint(1, max(2, 4 * n if n <= size + 1 else 2 * size + 2))


def _io_quant(rng, dtype):
    if dtype == "int8":
        return dict(scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    if dtype == "int16":
        return dict(scale=rand.scale(rng), zero_point=0)
    return {}


def _resize(rng, size, op, dtypes, opts):
    dtype = rng.choice(dtypes)
    b, h, w, c = [rand.dim(rng, size) for _ in range(4)]
    b = min(b, 2)
    oh, ow = _out_size(rng, h, size), _out_size(rng, w, size)
    q = _io_quant(rng, dtype)
    x = T([b, h, w, c], dtype, **q)
    sz = T([2], "int32", data=np.array([oh, ow], np.int32))
    y = T([b, oh, ow, c], dtype, **q)
    return opgen.single_op(op, [x, sz], [y], opts)


def gen_resize_nearest(rng, size):
    """RESIZE_NEAREST_NEIGHBOR: int8 mostly, float32 and int16 too; any
    combination of align_corners and half_pixel_centers."""
    opts = {"align_corners": _flag(rng), "half_pixel_centers": _flag(rng)}
    return _resize(rng, size, "RESIZE_NEAREST_NEIGHBOR",
                   ("int8", "int8", "float32", "int16"), opts)


def gen_resize_bilinear(rng, size):
    """RESIZE_BILINEAR, int8 or float32; align_corners and
    half_pixel_centers not both set (TFLM rejects that)."""
    mode = rng.randint(0, 2)
    opts = {"align_corners": mode == 1, "half_pixel_centers": mode == 2}
    return _resize(rng, size, "RESIZE_BILINEAR", ("int8", "int8", "float32"),
                   opts)


def _tconv_out(rng, n, k, s, padding, size):
    """An output size: TensorFlow's (SAME: n * s, VALID: (n - 1) * s + k)
    usually, sometimes another size TFLM accepts as well."""
    want = n * s if padding == "SAME" else (n - 1) * s + k
    if rng.random() < 0.2:
        return rng.randint(1, want + 2)
    return want


def _multiplier_ok(in_s, f_s, out_s):
    m = in_s * f_s / out_s
    return 2.0 ** -31 < m < 2.0 ** 29


def gen_transpose_conv(rng, size):
    """TRANSPOSE_CONV, int8 input / output, int8 filter [OC, KH, KW, IC]
    (per-channel or per-tensor), optional int32 bias, SAME / VALID,
    strides 1..3, fused activation. 1 time in 5 16x8: int16 input and
    output (zero points 0), an int64 bias (values up to 2**46, now and
    then 2**62), an int16 one or none, int16 inputs over their range."""
    int16 = rng.random() < 0.2
    b = min(rand.dim(rng, size), 2)
    h, w = rand.dim(rng, size), rand.dim(rng, size)
    ic, oc = rand.dim(rng, size), rand.dim(rng, size)
    kh, kw = rng.randint(1, 2 + size), rng.randint(1, 2 + size)
    sh, sw = rng.choice((1, 1, 2, 3)), rng.choice((1, 1, 2, 3))
    padding = rng.choice(("SAME", "VALID"))
    oh = _tconv_out(rng, h, kh, sh, padding, size)
    ow = _tconv_out(rng, w, kw, sw, padding, size)
    in_s = rand.scale(rng, 1e-5, 1e-1) if int16 else rand.scale(rng)
    per_channel = rng.random() < 0.7
    f_s = rand.scales(rng, oc if per_channel else 1)
    if int16:
        return _tconv16(rng, (b, h, w, ic, oc, kh, kw, sh, sw, oh, ow),
                        padding, in_s, f_s, per_channel)
    if rng.random() < 0.6:
        # Near the accumulator's spread: outputs mostly in range.
        spread = in_s * max(f_s) * 64.0 * (kh * kw * ic) ** 0.5
        out_s = float(np.float32(spread * 2.0 ** rng.uniform(-3, 3) / 128))
    else:
        out_s = rand.scale(rng)
    while not all(_multiplier_ok(in_s, f, out_s) for f in f_s):
        out_s = rand.scale(rng)
    f_s = signed_scales(rng, f_s)  # zero or negative channels now and then
    x = T([b, h, w, ic], scale=in_s, zero_point=rand.zero_point(rng))
    filt = T([oc, kh, kw, ic], scale=f_s if per_channel else f_s[0],
             zero_point=0, quantized_dimension=0,
             data=rand.int8_array(rng, [oc, kh, kw, ic]))
    shape = T([4], "int32", data=np.array([b, oh, ow, oc], np.int32))
    ins = [shape, filt, x]
    if rng.random() < 0.7:
        g = np.random.default_rng(rng.getrandbits(32))
        lim = 1 << rng.choice((8, 16, 24, 31))
        bias = g.integers(-lim, lim, size=oc, dtype=np.int64)
        ins.append(T([oc], "int32", data=bias.astype(np.int32),
                     scale=[in_s * s for s in f_s], zero_point=0))
    y = T([b, oh, ow, oc], scale=out_s, zero_point=rand.zero_point(rng))
    opts = {"padding": padding, "stride_h": sh, "stride_w": sw,
            "activation": rand.activation(rng)}
    m = opgen.Model()
    idx = [m.add_tensor(t) for t in ins]
    if len(idx) == 3 and rng.random() < 0.5:
        idx.append(-1)  # bias omitted with an explicit -1
    yi = m.add_tensor(y)
    m.add_op("TRANSPOSE_CONV", idx, [yi], opts)
    m.inputs, m.outputs = [idx[2]], [yi]
    return m.build()


def _tconv16(rng, dims, padding, in_s, f_s, per_channel):
    """The 16x8 TRANSPOSE_CONV of gen_transpose_conv."""
    b, h, w, ic, oc, kh, kw, sh, sw, oh, ow = dims
    spread = in_s * max(f_s) * 16384 * 64.0 * (kh * kw * ic) ** 0.5
    out_s = float(np.float32(spread * 2.0 ** rng.uniform(-3, 3) / 32768))
    # TFLM's int64 rounding needs a total shift 15 - shift >= 1
    while not all(2.0 ** -31 < in_s * f / out_s < 2.0 ** 13 for f in f_s):
        out_s = rand.scale(rng)
    f_s = signed_scales(rng, f_s)  # zero or negative channels too
    x = T([b, h, w, ic], "int16", scale=in_s, zero_point=0)
    filt = T([oc, kh, kw, ic], scale=f_s if per_channel else f_s[0],
             zero_point=0, quantized_dimension=0,
             data=rand.int8_array(rng, [oc, kh, kw, ic]))
    shape = T([4], "int32", data=np.array([b, oh, ow, oc], np.int32))
    ins = [shape, filt, x]
    g = np.random.default_rng(rng.getrandbits(32))
    r = rng.random()
    bs = [float(np.float32(in_s * s)) for s in f_s]
    if r < 0.6:
        bits = rng.choice((8, 24, 40, 46, 62 if rng.random() < 0.25 else 46))
        ins.append(T([oc], "int64", scale=bs, zero_point=0,
                     data=g.integers(-(1 << bits), 1 << bits, size=oc,
                                     dtype=np.int64)))
    elif r < 0.8:
        ins.append(T([oc], "int16", scale=bs, zero_point=0,
                     data=g.integers(-32768, 32768, size=oc,
                                     dtype=np.int16)))
    y = T([b, oh, ow, oc], "int16", scale=out_s, zero_point=0)
    opts = {"padding": padding, "stride_h": sh, "stride_w": sw,
            "activation": rand.activation(rng)}
    m = opgen.Model()
    idx = [m.add_tensor(t) for t in ins]
    if len(idx) == 3 and rng.random() < 0.5:
        idx.append(-1)
    yi = m.add_tensor(y)
    m.add_op("TRANSPOSE_CONV", idx, [yi], opts)
    m.inputs, m.outputs = [idx[2]], [yi]
    return m.build()


GENERATORS = {
    "RESIZE_NEAREST_NEIGHBOR": gen_resize_nearest,
    "RESIZE_BILINEAR": gen_resize_bilinear,
    "TRANSPOSE_CONV": gen_transpose_conv,
}
