"""Quantized multipliers equal TFLM's double-precision computation."""

import math
import struct

import numpy as np
import pytest

from conftest import fc_multiplier, run_mp
from tflm import quant


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", int(bits)))[0]


def tflm_quantize_multiplier(d):
    """QuantizeMultiplier (quantization_util.cc) with CPython doubles,
    which are IEEE binary64 like C's: the oracle."""
    if d == 0.0:
        return 0, 0
    q, shift = math.frexp(d)
    qf = int(math.floor(q * (1 << 31) + 0.5))  # TfLiteRound, q > 0
    if qf == 1 << 31:
        qf //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return qf, shift


def random_scales(rng, n):
    """float32 bit patterns: mostly typical scales, many extreme ones."""
    typical = rng.uniform(-20, 4, n)  # log2 of the scale
    bits = np.frombuffer(np.float32(2.0 ** typical).tobytes(), np.uint32)
    extreme = rng.integers(1, 0x7F7FFFFF, n, dtype=np.uint32)  # any finite
    pick = rng.random(n) < 0.3
    return np.where(pick, extreme, bits)


def test_conv_multiplier_matches_double_arithmetic():
    rng = np.random.default_rng(1)
    n = 100_000
    a, b, c = (random_scales(rng, n) for _ in range(3))
    for i in range(n):
        x, y, z = f32(a[i]), f32(b[i]), f32(c[i])
        want = tflm_quantize_multiplier(x * y / z)
        assert quant.conv_multiplier(x, y, z) == want, (x, y, z)


def test_channel_multiplier_matches_double_arithmetic():
    """channel_multiplier (the per-channel loop's: input and output
    scales taken apart once, the filter's of either sign) equals TFLM's
    double computation for positive filter scales, and the general
    composition (from_f32_signed, mul, div, quantize_multiplier) for
    every filter scale: negative, zero and subnormal ones included, and
    subnormal input or output scales (which take the general way)."""
    rng = np.random.default_rng(4)
    n = 60_000
    a, b, c = (random_scales(rng, n) for _ in range(3))
    sub = rng.integers(1, 0x800000, n, dtype=np.uint32)  # subnormals
    b = np.where(rng.random(n) < 0.05, sub, b)
    a = np.where(rng.random(n) < 0.02, sub, a)
    b = np.where(rng.random(n) < 0.01, 0, b)
    sign = (rng.random(n) < 0.2).astype(np.uint32) << 31
    for i in range(n):
        x, y, z = f32(a[i]), f32(b[i] | sign[i]), f32(c[i])
        ia, oa = quant.from_f32(x), quant.from_f32(z)
        got = quant.channel_multiplier(ia, oa, y)
        neg, fy = quant.from_f32_signed(y)
        assert got == quant.quantize_multiplier(
            quant.div(quant.mul(ia, fy), oa), neg), (x, y, z)
        if y > 0:
            assert got == tflm_quantize_multiplier(x * y / z), (x, y, z)


def test_fc_multiplier_takes_float32_product():
    rng = np.random.default_rng(2)
    n = 20_000
    a, b, c = (random_scales(rng, n) for _ in range(3))
    checked = 0
    for i in range(n):
        x, y, z = np.float32(f32(a[i])), np.float32(f32(b[i])), f32(c[i])
        with np.errstate(over="ignore", under="ignore"):
            prod = x * y  # float32 product, as TFLM takes it
        if not (np.finfo(np.float32).tiny <= prod < np.inf):
            with pytest.raises(quant.ModelError):
                fc_multiplier(float(x), float(y), z)
            continue
        want = tflm_quantize_multiplier(float(prod) / z)
        assert fc_multiplier(float(x), float(y), z) == want
        checked += 1
    assert checked > n // 2


def test_hand_computed_multipliers():
    # 0.5 = 0.5 * 2**0 -> (2**30, 0); 1/3 rounds 0.666..*2**31 half up.
    assert quant.ratio_multiplier(1.0, 2.0) == (1 << 30, 0)
    assert quant.ratio_multiplier(1.0, 3.0) == (1431655765, -1)
    assert quant.ratio_multiplier(3.0, 1.0) == (3 << 29, 2)
    assert quant.quantize_multiplier(quant.ZERO) == (0, 0)
    # below 2**-31 flushes to zero like TFLM
    assert quant.ratio_multiplier(2.0 ** -40, 1.0) == (0, 0)


def test_activation_range():
    # RELU6 with scale 6/255, zp -128: 6 / scale = 255 -> 127
    assert quant.activation_range(3, 6 / 255, -128) == (-128, 127)
    assert quant.activation_range(1, 0.1, 5) == (5, 127)
    assert quant.activation_range(3, 0.1, -100) == (-100, -40)
    assert quant.activation_range(2, 0.5, 0) == (-2, 2)
    with pytest.raises(quant.ModelError):
        quant.activation_range(4, 0.1, 0)


def test_same_multipliers_on_micropython(tmp_path):
    rng = np.random.default_rng(3)
    n = 3000
    a, b, c = (random_scales(rng, n) for _ in range(3))
    triples = [(int(a[i]), int(b[i]), int(c[i])) for i in range(n)]
    code = """
import struct
from tflm import quant
def f(b):
    return struct.unpack('<f', struct.pack('<I', b))[0]
T = %r
for x, y, z in T:
    print(*quant.conv_multiplier(f(x), f(y), f(z)))
    # the per-channel loop's, of the negated filter scale too
    a, o = quant.from_f32(f(x)), quant.from_f32(f(z))
    print(*(quant.channel_multiplier(a, o, f(y)) +
            quant.channel_multiplier(a, o, f(y | 1 << 31))))
""" % (triples,)
    out = run_mp(code, tmp_path).split("\n")
    for i, (x, y, z) in enumerate(triples):
        want = tflm_quantize_multiplier(f32(x) * f32(y) / f32(z))
        assert out[2 * i] == "%d %d" % want
        neg = quant.conv_multiplier_signed(f32(x), -f32(y), f32(z))
        assert out[2 * i + 1] == "%d %d %d %d" % (want + neg)
