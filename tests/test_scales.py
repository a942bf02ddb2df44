"""Zero and negative filter scales, QUANTIZE int32 -> int16 / int8 and
REDUCE_ALL vs TFLM.

TFLM lets a filter's quantization scale be zero or negative (a public
ImageNet MCUNet has a weight channel of scale -1.98e-08):
PopulateConvolutionQuantizationParams and FULLY_CONNECTED's per-channel
loop call QuantizeMultiplier on the double in * f / out, which gives
(0, 0) for zero and a negative multiplier for a negative double; the
kernels then run MultiplyByQuantizedMultiplier with it. Here:
quant.conv_multiplier_signed against CPython doubles (the same IEEE
arithmetic), fixedpoint.requant_i8b's negative channels against TFLM's
int64 MultiplyByQuantizedMultiplier (the saturating case included), and
CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED and TRANSPOSE_CONV models
with zero and negative channels against the TFLM interpreter, bit for
bit, int8 and 16x8 (whose int32 accumulation rescales with
requant_neg.scale_any, checked against mbqm_sat, and int64 accumulation
with wide.finish's negative reduced multipliers, against mbqm64). What
TFLM refuses, or where its result is undefined (NaN, infinite scales),
is refused. The module runs on the port that TFLM_MICROPYTHON
names (a 32-bit build too).
"""

import math
import random
import struct

import numpy as np
import pytest

from conftest import run_mp
from host_tools import opgen
from host_tools.conformance import gen_core, gen_extra, gen_spatial
from host_tools.oracle import Reference
from test_ops_movement import oracle_case, run_batch
from tflm import quant

T = opgen.Tensor
INT32_MIN = -(1 << 31)


# --- multipliers -------------------------------------------------------------

def tflm_quantize_multiplier(d):
    """QuantizeMultiplier (quantization_util.cc) with CPython doubles, for
    either sign: frexp keeps the sign, TfLiteRound rounds half away from
    zero, and only q_fixed == 2**31 is halved (so -2**31 stays)."""
    if d == 0.0:
        return 0, 0
    q, shift = math.frexp(d)
    v = q * (1 << 31)
    qf = int(math.floor(v + 0.5)) if v > 0 else -int(math.floor(-v + 0.5))
    if qf == 1 << 31:
        qf //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return qf, shift


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", int(bits)))[0]


def test_signed_multiplier_matches_double_arithmetic():
    rng = np.random.default_rng(3)
    n = 40_000
    a, b, c = (rng.integers(1, 0x7F7FFFFF, n, dtype=np.uint32)
               for _ in range(3))
    typical = np.frombuffer(np.float32(2.0 ** rng.uniform(-30, 4, n))
                            .tobytes(), np.uint32)
    b = np.where(rng.random(n) < 0.7, typical, b)
    sign = rng.random(n) < 0.5
    b = b | np.where(sign, np.uint32(1 << 31), np.uint32(0))
    b[::97] = 0  # zero
    b[1::97] = 1 << 31  # -0.0
    for i in range(n):
        x, y, z = f32(a[i]), f32(b[i]), f32(c[i])
        want = tflm_quantize_multiplier(x * y / z)
        assert quant.conv_multiplier_signed(x, y, z) == want, (x, y, z)


def test_negative_multiplier_edges():
    one_up, one_down = 1 + 2.0 ** -23, 1 - 2.0 ** -23  # float32 values
    # in * f = 1 - 2**-46: frexp's fraction rounds to 2**31; positive
    # it is halved, negative it stays -2**31 with its shift
    assert quant.conv_multiplier_signed(one_up, one_down, 1.0) == \
        (1 << 30, 1)
    assert quant.conv_multiplier_signed(one_up, -one_down, 1.0) == \
        (INT32_MIN, 0)
    # the same at 2**-32: the positive one keeps shift -31, the negative
    # one has shift -32 and flushes to (0, 0)
    assert quant.conv_multiplier_signed(one_up, one_down, 2.0 ** 32) == \
        (1 << 30, -31)
    assert quant.conv_multiplier_signed(one_up, -one_down, 2.0 ** 32) == \
        (0, 0)
    assert quant.conv_multiplier_signed(0.5, -0.5, 1.0) == (-(1 << 30), -1)
    assert quant.conv_multiplier_signed(0.5, 0.0, 1.0) == (0, 0)
    assert quant.conv_multiplier_signed(0.5, -0.0, 1.0) == (0, 0)
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(quant.ModelError, match="not finite"):
            quant.conv_multiplier_signed(0.5, bad, 1.0)


# --- requant_i8b with negative multipliers -----------------------------------

def mbqm_sat(x, m, shift):
    """common.cc MultiplyByQuantizedMultiplier (double rounding), one
    value, Python ints, with SaturatingRoundingDoublingHighMul's
    saturation (x == m == INT32_MIN)."""
    ls, rs = max(shift, 0), max(-shift, 0)
    x = ((x << ls) + (1 << 31)) % (1 << 32) - (1 << 31)
    if x == m == INT32_MIN:
        q = (1 << 31) - 1
    else:
        ab = x * m
        t = ab + ((1 << 30) if ab >= 0 else 1 - (1 << 30))
        q = t >> 31 if t >= 0 else -((-t) >> 31)
    mask = (1 << rs) - 1
    return (q >> rs) + ((q & mask) > (mask >> 1) + (q < 0))


def wrap32(v):
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def test_requant_negative_channels(tmp_path):
    """requant_i8b over channels of negative multipliers (shift byte +
    conv_util.NEG_MARK) between positive ones, vs mbqm_sat: left and
    right shifts, m = -2**31 and -2**30, accumulators at the int32 edges
    (x = -2**31 with m = -2**31 saturates)."""
    from tflm.kernels.conv_util import NEG_MARK
    rng = np.random.default_rng(9)
    nch = 7
    m = rng.integers(-(1 << 31), -(1 << 30), nch, endpoint=True)
    m[0], m[2] = INT32_MIN, -(1 << 30)
    m[4] = rng.integers(1 << 30, 1 << 31)  # a positive channel between
    m[6] = 0
    shift = np.array([0, -3, 2, -9, -5, 0, -31])
    n = nch * 600
    bits = rng.integers(0, 32, n)
    x = rng.integers(-(1 << 31), 1 << 31, n) >> bits
    # values near the output range after each channel's shift
    small = rng.integers(-300, 300, n) << np.maximum(-shift[np.arange(n)
                                                           % nch], 0)
    x = np.where(rng.random(n) < 0.5, small, x)
    edges = [INT32_MIN, (1 << 31) - 1, 0, 1, -1, 1 << 20, -(1 << 20) - 1]
    for k, e in enumerate(edges):
        x[k * nch:(k + 1) * nch] = e
    zp, lo, hi = -3, -128, 127
    # + zp is TFLM's int32 sum, which wraps (x86)
    want = np.array([min(max(wrap32(mbqm_sat(int(v), int(m[i % nch]),
                                             int(shift[i % nch])) + zp),
                             lo), hi)
                     for i, v in enumerate(x)], np.int8)
    sb = [int(s) + NEG_MARK if mm < 0 else int(s)
          for mm, s in zip(m, shift)]
    code = """
from array import array
import micropython
from tflm.fixedpoint import requant_i8b
import tflm.kernels.requant_neg  # makes itself fixedpoint._requant_neg
x = array('i', %r)
m = array('i', %r)
s = array('b', %r)
qp = array('i', (%d, %d, %d))
out = bytearray(len(x) + 2)
micropython.heap_lock()
requant_i8b(0, 0, 0, x, len(x), %d, m, s, qp, out, 2, 0)
micropython.heap_unlock()
print(bytes(out).hex())
""" % ([int(v) for v in x], [int(v) for v in m], sb, zp, lo, hi, nch)
    got = np.frombuffer(bytes.fromhex(run_mp(code, tmp_path).split()[-1]),
                        np.int8)
    assert not got[:2].any()
    bad = np.nonzero(got[2:] != want)[0]
    assert not len(bad), [(int(x[i]), int(m[i % nch]), int(shift[i % nch]),
                           int(got[2 + i]), int(want[i])) for i in bad[:5]]
    neg = (m[np.arange(n) % nch] < 0)
    inside = (want > lo) & (want < hi) & neg
    assert inside.sum() > n // 10, inside.sum()  # not all clamped


def mbqm64(x, m, shift):
    """common.cc's int64 MultiplyByQuantizedMultiplier (double rounding),
    as it computes for any sign of m: the reduced multiplier (>> floors),
    the int64 product and sum wrapping, >> total_shift, then the int32
    truncation."""
    r = (m + (1 << 15)) >> 16 if m < 0x7FFF0000 else 0x7FFF
    ts = 15 - shift
    v = (x * r + (1 << (ts - 1))) % (1 << 64)
    v = (v - (1 << 64) if v >> 63 else v) >> ts
    return wrap32(v)


def test_16x8_rescaling_negative_multipliers(tmp_path):
    """requant_neg.scale_any (int32 accumulation) against mbqm_sat and
    wide.finish with negative reduced multipliers (int64 accumulation,
    wide.channel_multipliers) against mbqm64, channels of both signs, m =
    -2**31 and -2**30, 0, shifts -31 .. 14, accumulators at the int32 /
    int64 edges (the saturating case x = m = -2**31, shift 0, among
    them), under heap_lock."""
    rng = np.random.default_rng(21)
    nch = 9
    m = rng.integers(-(1 << 31), -(1 << 30), nch, endpoint=True)
    m[0], m[1], m[2] = INT32_MIN, -(1 << 30), 0
    m[3] = rng.integers(1 << 30, 1 << 31)
    m[4] = (1 << 31) - 1
    shift = np.array([0, -3, 2, -9, -5, 0, -31, 14, -15])
    n = nch * 300
    x32 = rng.integers(-(1 << 31), 1 << 31, n) >> rng.integers(0, 32, n)
    x64 = rng.integers(-(1 << 62), 1 << 62, n) >> rng.integers(0, 62, n)
    x64 = x64 * np.where(rng.random(n) < 0.1, 2, 1)  # beyond 2**62 too
    for k, e in enumerate([INT32_MIN, (1 << 31) - 1, 0, 1, -1]):
        x32[k * nch:(k + 1) * nch] = e
    for k, e in enumerate([-(1 << 63), (1 << 63) - 1, 0, -1, 1 << 47]):
        x64[k * nch:(k + 1) * nch] = e
    want32 = [mbqm_sat(int(v), int(m[i % nch]), int(shift[i % nch]))
              for i, v in enumerate(x32)]
    want64 = [mbqm64(int(v), int(m[i % nch]), int(shift[i % nch]))
              for i, v in enumerate(x64)]
    limbs = []
    for v in x64:
        u = int(v) % (1 << 64)
        limbs += [(u >> 16 * j) & 0xFFFF for j in range(3)]
        limbs.append(wrap32(u >> 48) if u >> 63 == 0 else (u >> 48) - 65536)
    from tflm.kernels.conv_util import NEG_MARK
    sb = [int(v) + NEG_MARK if mm < 0 else int(v)
          for mm, v in zip(m, shift)]
    code = """
from array import array
import micropython
from tflm.kernels.requant_neg import scale_any
from tflm.kernels.wide import channel_multipliers, finish
x = array('i', %r)
m = array('i', %r)
s = array('i', %r)
sb = array('b', %r)
l = array('i', %r)
class Op:
    def label(self):
        return 'op'
rms, tss = channel_multipliers(Op(), Op(), len(m), m, sb, None)
nch = len(m)
views = [memoryview(x)[k:] for k in range(0, len(x), nch)]
lv = [memoryview(l)[k:] for k in range(0, len(l), 4 * nch)]
micropython.heap_lock()
for v in views:
    scale_any(v, nch, m, s, 1)
for v in lv:
    finish(v, nch, rms, tss)
micropython.heap_unlock()
print('A', ','.join(str(v) for v in x))
# finish leaves channel k's result in word k of its group's words
print('B', ','.join(str(l[4 * nch * (i // nch) + i %% nch])
                    for i in range(len(l) // 4)))
""" % ([int(v) for v in x32], [int(v) for v in m],
       [int(v) for v in shift], sb, limbs)
    out = run_mp(code, tmp_path).split()
    got32 = [int(v) for v in out[out.index("A") + 1].split(",")]
    got64 = [int(v) for v in out[out.index("B") + 1].split(",")]
    bad = [i for i in range(n) if got32[i] != want32[i]]
    assert not bad, [(int(x32[i]), int(m[i % nch]), int(shift[i % nch]),
                      got32[i], want32[i]) for i in bad[:5]]
    bad = [i for i in range(n) if got64[i] != want64[i]]
    assert not bad, [(int(x64[i]), int(m[i % nch]), int(shift[i % nch]),
                      got64[i], want64[i]) for i in bad[:5]]
    assert want32[0] == (1 << 31) - 1  # the saturating case is there


# --- models vs TFLM ----------------------------------------------------------

SIGNED = [3e-3, -2.5e-3, 0.0, 1.7e-3, -1.98e-08, -0.0, -1.0]


def _w(g, shape):
    return g.integers(-127, 128, shape).astype(np.int8)


def conv(g, kh, cin=3, h=5, fs=SIGNED, padding="VALID", stride=1):
    oc = len(fs)
    x = T([1, h, h, cin], scale=0.05, zero_point=3)
    f = T([oc, kh, kh, cin], scale=fs, zero_point=0,
          data=_w(g, (oc, kh, kh, cin)), quantized_dimension=0)
    b = T([oc], "int32", scale=[0.05 * s for s in fs], zero_point=0,
          data=g.integers(-3000, 3000, oc).astype(np.int32))
    oh = (h - kh) // stride + 1 if padding == "VALID" else \
        (h + stride - 1) // stride
    y = T([1, oh, oh, oc], scale=0.02, zero_point=-5)
    return opgen.single_op("CONV_2D", [x, f, b], [y],
                           {"padding": padding, "stride_h": stride,
                            "stride_w": stride})


def depthwise(g, kh, fs=SIGNED, dm=1):
    c = len(fs) // dm
    x = T([1, 6, 6, c], scale=0.05, zero_point=3)
    f = T([1, kh, kh, c * dm], scale=fs, zero_point=0,
          data=_w(g, (1, kh, kh, c * dm)), quantized_dimension=3)
    b = T([c * dm], "int32", scale=[0.05 * s for s in fs], zero_point=0,
          data=g.integers(-3000, 3000, c * dm).astype(np.int32))
    oh = 6 - kh + 1
    y = T([1, oh, oh, c * dm], scale=0.02, zero_point=-5)
    return opgen.single_op("DEPTHWISE_CONV_2D", [x, f, b], [y],
                           {"padding": "VALID", "depth_multiplier": dm})


def fully_connected(g, fs=SIGNED, bias=True):
    units = len(fs)
    x = T([3, 9], scale=0.05, zero_point=3)
    w = T([units, 9], scale=fs, zero_point=0, data=_w(g, (units, 9)),
          quantized_dimension=0)
    ins = [x, w]
    if bias:  # the converter's bias scale: in * w, negative too
        ins.append(T([units], "int32", scale=[0.05 * s for s in fs],
                     zero_point=0,
                     data=g.integers(-3000, 3000, units).astype(np.int32)))
    return opgen.single_op("FULLY_CONNECTED", ins,
                           [T([3, units], scale=0.02, zero_point=-5)])


def transpose_conv(g, fs=SIGNED):
    oc = len(fs)
    shape = T([4], "int32", data=np.array([1, 7, 7, oc], np.int32))
    f = T([oc, 3, 3, 2], scale=fs, zero_point=0, data=_w(g, (oc, 3, 3, 2)),
          quantized_dimension=0)
    x = T([1, 3, 3, 2], scale=0.05, zero_point=3)
    b = T([oc], "int32", scale=[0.05 * s for s in fs], zero_point=0,
          data=g.integers(-3000, 3000, oc).astype(np.int32))
    m = opgen.Model()
    idx = [m.add_tensor(t) for t in (shape, f, x, b)]
    yi = m.add_tensor(T([1, 7, 7, oc], scale=0.02, zero_point=-5))
    m.add_op("TRANSPOSE_CONV", idx, [yi],
             {"padding": "VALID", "stride_h": 2, "stride_w": 2})
    m.inputs, m.outputs = [idx[2]], [yi]
    return m.build()


def hand_models():
    """(name, model bytes): every signed channel kind in each kernel's
    paths (1x1 conv: the pixels loop; 3x3 and strided: windows; 3x3
    depthwise: dw3, 2x2: dw; per-channel FULLY_CONNECTED with and
    without a bias; TRANSPOSE_CONV); every channel negative too; zero
    channels in the 16x8 kernels."""
    g = np.random.default_rng(4)
    neg = [-s for s in (3e-3, 2e-3, 1e-3, 4e-3)]
    return [
        ("conv 1x1", conv(g, 1)),
        ("conv 1x1 wide", conv(g, 1, cin=40)),
        ("conv 3x3", conv(g, 3)),
        ("conv 3x3 same stride 2", conv(g, 3, padding="SAME", stride=2)),
        ("conv all negative", conv(g, 1, fs=neg)),
        ("depthwise 3x3", depthwise(g, 3)),
        ("depthwise 2x2", depthwise(g, 2)),
        ("depthwise 3x3 dm 2", depthwise(g, 3, fs=SIGNED[:6], dm=2)),
        ("depthwise all negative", depthwise(g, 3, fs=neg)),
        ("fully connected", fully_connected(g)),
        ("fully connected no bias", fully_connected(g, bias=False)),
        ("transpose conv", transpose_conv(g)),
        ("conv 16x8 zero channel", conv16(g, "int64", fs=Z16)),
        ("conv 16x8 zero channel, int32 bias", conv16(g, "int32", fs=Z16)),
        ("fully connected 16x8 zero unit", fc16(g, fs=Z16)),
    ] + hand_models16(g)


# 16x8 scales: positive, zero; and negative ones. With the input scale
# IN16 and output scale 0.01, S16[6]'s multiplier is -2**31 (in * f / out
# is within 2**-33 of -2**-7: TFLM's QuantizeMultiplier keeps -2**31,
# test_neg16_edge_multiplier), the one whose negation is not an int32.
Z16 = [1e-3, 0.0, 2e-3]
IN16 = 0.009100181981921196
S16 = [1e-3, -2.5e-3, 0.0, -1.98e-08, -0.0, 2e-3, -0.008584992960095406,
       -2 ** -7, -1e-3]


def test_neg16_edge_multiplier():
    assert quant.conv_multiplier_signed(IN16, S16[6], 0.01) == \
        tflm_quantize_multiplier(float(np.float32(IN16)) * S16[6]
                                 / float(np.float32(0.01))) == (INT32_MIN, -7)


def conv16(g, bias, fs=S16, big=False, kh=1):
    """16x8 CONV_2D (int64, int32 or no bias: bias None, or "int32-acc"
    for none with quantized_bias_type INT32). big: accumulators near the
    int32 / int64 edges (full-range weights and inputs, biases of up to
    2**31 / 2**62)."""
    oc = len(fs)
    x = T([1, 3, 3, 2], "int16", scale=IN16, zero_point=0)
    w = _w(g, (oc, kh, kh, 2))
    if big:  # full-range weights; channels 0 and 6 (multiplier -2**31)
        w = np.where(w < 0, -128, 127).astype(np.int8)
        w[0] = w[6] = 0  # accumulate only their bias
    f = T([oc, kh, kh, 2], scale=fs, zero_point=0, data=w,
          quantized_dimension=0)
    ins = [x, f]
    opts = {"padding": "VALID"}
    if bias in ("int32", "int64"):
        lim = (1 << (62 if bias == "int64" else 31)) if big else 3000
        data = g.integers(-lim, lim, oc, dtype=np.int64)
        if big:  # x = -2**31 (with m = -2**31: the saturating case)
            data[0] = data[6] = INT32_MIN if bias == "int32" else -(1 << 62)
        ins.append(T([oc], bias, scale=[IN16 * s for s in fs],
                     zero_point=0, data=data))
    elif bias == "int32-acc":
        opts["quantized_bias_type"] = "int32"
    o = 3 - kh + 1
    y = T([1, o, o, oc], "int16", scale=0.01, zero_point=0)
    return opgen.single_op("CONV_2D", ins, [y], opts)


def depthwise16(g, fs=S16, big=False):
    c = len(fs)
    x = T([1, 4, 4, c], "int16", scale=IN16, zero_point=0)
    f = T([1, 3, 3, c], scale=fs, zero_point=0, data=_w(g, (1, 3, 3, c)),
          quantized_dimension=3)
    lim = (1 << 62) if big else 3000
    b = T([c], "int64", scale=[IN16 * s for s in fs], zero_point=0,
          data=g.integers(-lim, lim, c, dtype=np.int64))
    y = T([1, 2, 2, c], "int16", scale=0.01, zero_point=0)
    return opgen.single_op("DEPTHWISE_CONV_2D", [x, f, b], [y],
                           {"padding": "VALID"})


def fc16(g, fs=Z16, bias="int64", big=False):
    units = len(fs)
    w = T([units, 4], scale=fs if len(fs) > 1 else fs[0], zero_point=0,
          data=_w(g, (units, 4)), quantized_dimension=0)
    ins = [T([2, 4], "int16", scale=IN16, zero_point=0), w]
    opts = {}
    if bias in ("int32", "int64"):
        lim = (1 << (62 if bias == "int64" else 31)) if big else 3000
        data = g.integers(-lim, lim, units, dtype=np.int64)
        ins.append(T([units], bias, scale=[IN16 * s for s in fs],
                     zero_point=0, data=data))
    elif bias == "int32-acc":
        opts["quantized_bias_type"] = "int32"
    return opgen.single_op(
        "FULLY_CONNECTED", ins,
        [T([2, units], "int16", scale=0.01, zero_point=0)], opts)


def transpose_conv16(g, fs=S16, bias="int64"):
    oc = len(fs)
    shape = T([4], "int32", data=np.array([1, 7, 7, oc], np.int32))
    f = T([oc, 3, 3, 2], scale=fs, zero_point=0, data=_w(g, (oc, 3, 3, 2)),
          quantized_dimension=0)
    x = T([1, 3, 3, 2], "int16", scale=IN16, zero_point=0)
    ts = [shape, f, x]
    if bias is not None:
        ts.append(T([oc], bias, scale=[IN16 * s for s in fs], zero_point=0,
                    data=g.integers(-3000, 3000, oc).astype(bias)))
    m = opgen.Model()
    idx = [m.add_tensor(t) for t in ts]
    yi = m.add_tensor(T([1, 7, 7, oc], "int16", scale=0.01, zero_point=0))
    m.add_op("TRANSPOSE_CONV", idx, [yi],
             {"padding": "VALID", "stride_h": 2, "stride_w": 2})
    m.inputs, m.outputs = [idx[2]], [yi]
    return m.build()


def hand_models16(g):
    """16x8 models with negative channels: each kernel, each accumulator
    (int64: wide.finish with a negative reduced multiplier; int32:
    requant_neg.scale_any), accumulators at the edges."""
    return [
        ("conv 16x8 negative, int64 bias", conv16(g, "int64")),
        ("conv 16x8 negative, int32 bias", conv16(g, "int32")),
        ("conv 16x8 negative, no bias (int64)", conv16(g, None)),
        ("conv 16x8 negative, no bias (int32)", conv16(g, "int32-acc")),
        ("conv 16x8 negative 2x2, int32", conv16(g, "int32", kh=2)),
        ("conv 16x8 negative, int64 edges", conv16(g, "int64", big=True)),
        ("conv 16x8 negative, int32 edges", conv16(g, "int32", big=True)),
        ("depthwise 16x8 negative", depthwise16(g)),
        ("depthwise 16x8 negative, edges", depthwise16(g, big=True)),
        ("fully connected 16x8 negative, int64",
         fc16(g, fs=S16, bias="int64")),
        ("fully connected 16x8 negative, int32",
         fc16(g, fs=S16, bias="int32")),
        ("fully connected 16x8 negative, int32 edges",
         fc16(g, fs=S16, bias="int32", big=True)),
        ("fully connected 16x8 negative, no bias (int32)",
         fc16(g, fs=S16, bias="int32-acc")),
        ("fully connected 16x8 negative, no bias (int64)",
         fc16(g, fs=S16, bias=None)),
        ("transpose conv 16x8 negative, int64",
         transpose_conv16(g)),
        ("transpose conv 16x8 negative, int16 bias",
         transpose_conv16(g, bias="int16")),
        ("transpose conv 16x8 negative, no bias",
         transpose_conv16(g, bias=None)),
    ]


def signed_generated(n_per_op):
    """(name, model, inputs) of the conformance generators' cases that
    have a zero or negative filter scale (gen_core.signed_scales)."""
    gens = dict(gen_core.GENERATORS)
    gens.update(gen_spatial.GENERATORS)
    out = []
    for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED",
               "TRANSPOSE_CONV"):
        found, i = 0, 0
        while found < n_per_op:
            res = gens[op](random.Random("scales:%s:%d" % (op, i)),
                           1 + i % 4)
            i += 1
            raw, inputs = res if isinstance(res, tuple) else (res, None)
            sg = opgen.parse(raw).subgraphs[0]
            q = sg.tensors[sg.operators[0].inputs[1]].quantization
            sc = [] if q is None or q.scale is None else list(q.scale)
            if any(math.copysign(1.0, s) < 0 or s == 0 for s in sc):
                out.append(("%s #%d" % (op, i - 1), raw, inputs))
                found += 1
    return out


def test_signed_scales_match_tflm(tmp_path):
    g = np.random.default_rng(12)
    cases, want, names = [], [], []
    items = [(name, raw, None) for name, raw in hand_models()]
    items += signed_generated(10)
    for name, raw, inputs in items:
        try:
            ins, outs = oracle_case(raw, inputs, g)
        except RuntimeError as e:
            raise AssertionError("TFLM rejects %s: %s" % (name, e))
        cases.append((raw, ins))
        want.append(outs)
        names.append(name)
    # the hand cases are informative: a negative channel's outputs vary
    for name, outs in zip(names, want):
        if name.startswith("conv 1x1") or name == "fully connected":
            y = np.frombuffer(outs[0], np.int8).reshape(-1, len(SIGNED))
            assert len(set(y[:, 1])) > 2, name
            assert len(set(y[:, 6])) > 1, name  # scale -1.0: shift 5
        if "16x8 negative" in name and "edges" not in name:
            y = np.frombuffer(outs[0], np.int16).reshape(-1, len(S16))
            for ch in (1, 6, 7, 8):  # negative channels: varied outputs
                assert len(set(y[:, ch])) > 1, (name, ch)
    got = run_batch(cases, tmp_path)
    for name, w, (st, g_) in zip(names, want, got):
        assert st == "OK", "%s rejected: %s" % (name, g_)
        assert g_ == w, "%s differs from TFLM" % name


def _with_scale(raw, tensor, scale):
    """raw with the scales of tensor index `tensor` replaced."""
    m = opgen.parse(raw)
    m.subgraphs[0].tensors[tensor].quantization.scale = list(scale)
    import flatbuffers
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def reject_cases():
    """(model, error type, words of the message, TFLM rejects it too)."""
    g = np.random.default_rng(5)
    c = []
    nan, inf = float("nan"), float("inf")
    # TFLM's multiplier from a NaN / infinite scale is undefined
    c.append((conv(g, 1, fs=[3e-3, nan]), "ModelError",
              ["nan", "finite", "undefined"], False))
    c.append((depthwise(g, 3, fs=[3e-3, -inf]), "ModelError",
              ["inf", "finite", "undefined"], False))
    # a non-positive scale outside a filter
    raw = conv(g, 1, fs=[3e-3, -1e-3])
    c.append((_with_scale(raw, 0, [-0.05]), "ModelError",
              ["-0.05", "finite and positive", "filter"], False))
    c.append((_with_scale(raw, 3, [0.0]), "ModelError",
              ["finite and positive"], False))
    # FULLY_CONNECTED per-tensor: GetQuantizedConvolutionMultipler
    # requires input scale * weights scale >= 0
    c.append((fully_connected(g, fs=[-2e-3], bias=False), "PrepareError",
              ["per-tensor", ">= 0"], True))
    # a negative per-tensor scale in the 16x8 FULLY_CONNECTED too
    c.append((fc16(g, fs=[-2e-3]), "PrepareError", ["per-tensor", ">= 0"],
              True))
    # REDUCE_ALL takes bool only (PrepareAllHelper)
    c.append((opgen.single_op(
        "REDUCE_ALL", [T([2, 3], scale=1.0, zero_point=0),
                       T([1], "int32", data=[1])],
        [T([2], scale=1.0, zero_point=0)]), "PrepareError",
        ["REDUCE_ALL takes bool"], True))
    return c


def test_rejections(tmp_path):
    rc = reject_cases()
    for k, (raw, _, _, tflm_rejects) in enumerate(rc):
        if tflm_rejects:
            with pytest.raises(RuntimeError):
                Reference(raw)
    got = run_batch([(raw, None) for raw, _, _, _ in rc], tmp_path)
    for k, ((raw, cls, words, _), (st, msg)) in enumerate(zip(rc, got)):
        assert st == "ERR", "case %d accepted" % k
        assert msg.startswith(cls), (k, msg)
        for w in words:
            assert w in msg, (k, w, msg)


# --- QUANTIZE int32 -> int16 / int8, REDUCE_ALL ------------------------------

def _quantize_i32(x, in_s, in_z, out, out_s, out_z):
    return opgen.single_op(
        "QUANTIZE", [T([len(x)], "int32", scale=in_s, zero_point=in_z)],
        [T([len(x)], out, scale=out_s, zero_point=out_z)])


def hand_cases():
    """(name, model, inputs, expected output values), hand-computed:
    in_scale / out_scale = 0.5 is the multiplier (2**30, 0), whose
    MultiplyByQuantizedMultiplier is floor((x + 1) / 2); the int32
    difference x - zero point wraps."""
    x = np.array([3, -3, 1, -1, 0, 70000, -70000, 65535, -65535, 2,
                  (1 << 31) - 1, INT32_MIN], np.int32)
    half = [2, -1, 1, 0, 0, 32767, -32768, 32767, -32767, 1, 32767,
            -32768]
    c = [("int32 -> int16", _quantize_i32(x, 0.5, 0, "int16", 1.0, 0), [x],
          half)]
    # zero points: out = floor((x - in_z + 1) / 2) + out_z, clamped
    c.append(("int32 -> int16, zero points",
              _quantize_i32(x, 0.5, 1000, "int16", 1.0, -7), [x],
              [max(-32768, min(32767, ((int(v) - 1000 + 1) >> 1) - 7))
               if v != INT32_MIN else
               max(-32768, min(32767,
                               (((int(v) - 1000 + (1 << 31)) % (1 << 32)
                                 - (1 << 31) + 1) >> 1) - 7))
               for v in x]))
    c.append(("int32 -> int8", _quantize_i32(x, 0.5, 0, "int8", 1.0, 5),
              [x], [max(-128, min(127, v + 5)) for v in half]))
    b = np.array([[1, 1, 1], [1, 0, 1]], bool)
    for axes, keep, shape, want in (([1], False, [2], [1, 0]),
                                    ([0], True, [1, 3], [1, 0, 1]),
                                    ([0, -1], False, [], [0]),
                                    ([-2, 0], False, [3], [1, 0, 1])):
        c.append(("REDUCE_ALL %s" % axes, opgen.single_op(
            "REDUCE_ALL", [T([2, 3], "bool"),
                           T([len(axes)], "int32", data=axes)],
            [T(shape, "bool")], {"keep_dims": keep}), [b], want))
    return c


def test_hand_cases(tmp_path):
    hc = hand_cases()
    for name, raw, ins, want in hc:
        got = Reference(raw).run(ins)[0]
        assert [int(v) for v in np.ravel(got)] == want, name  # TFLM agrees
    got = run_batch([(raw, ins) for _, raw, ins, _ in hc], tmp_path)
    for (name, raw, ins, want), (st, g_) in zip(hc, got):
        assert st == "OK", (name, g_)
        ref = Reference(raw).run(ins)[0]
        vals = np.frombuffer(g_[0], np.uint8 if ref.dtype == bool
                             else ref.dtype)
        assert [int(v) for v in vals] == want, name


def test_generated_quantize_i32_and_reduce_all_match_tflm(tmp_path):
    """gen_core's QUANTIZE int32 cases and gen_extra's REDUCE_ALL."""
    g = np.random.default_rng(13)
    cases, want, names = [], [], []
    i = 0
    while len(names) < 24:
        res = gen_core.gen_quantize(random.Random("scales:q:%d" % i),
                                    1 + i % 4)
        i += 1
        raw, inputs = res if isinstance(res, tuple) else (res, None)
        sg = opgen.parse(raw).subgraphs[0]
        if sg.tensors[sg.operators[0].inputs[0]].type != 2:  # INT32
            continue
        ins, outs = oracle_case(raw, inputs, g)
        cases.append((raw, ins))
        want.append(outs)
        names.append("QUANTIZE #%d" % (i - 1))
    for i in range(24):
        raw, inputs = gen_extra.gen_reduce_all(
            random.Random("scales:all:%d" % i), 1 + i % 4)
        ins, outs = oracle_case(raw, inputs, g)
        cases.append((raw, ins))
        want.append(outs)
        names.append("REDUCE_ALL #%d" % i)
    got = run_batch(cases, tmp_path)
    for name, w, (st, g_) in zip(names, want, got):
        assert st == "OK", "%s rejected: %s" % (name, g_)
        assert g_ == w, "%s differs from TFLM" % name


def test_many_per_channel_units_at_a_small_heap(tmp_path):
    """A per-channel FULLY_CONNECTED of 300 units, half of them negative,
    builds on a 512 KB heap and matches TFLM: its multipliers go one unit
    at a time into arrays made first (a list of per-unit results, each
    made amid its computation's garbage, left no 4 KB block free)."""
    g = np.random.default_rng(5)
    fs = [(-1) ** k * (1e-3 + 1e-5 * k) for k in range(300)]
    raw = fully_connected(g, fs=fs)
    ins, want = oracle_case(raw, None, g)
    path = tmp_path / "fc.tflite"
    path.write_bytes(raw)
    code = """
import tflm
it = tflm.Interpreter(%r)
it.input(0).data[:] = bytes.fromhex(%r)
it.invoke()
print(bytes(it.output(0).data).hex())
""" % (str(path), bytes(np.asarray(ins[0]).tobytes()).hex())
    got = run_mp(code, tmp_path, heap="512K").split()[-1]
    assert bytes.fromhex(got) == bytes(want[0])
