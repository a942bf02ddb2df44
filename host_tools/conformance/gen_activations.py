"""Conformance generators for the activation operators (issue 6):
RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH, RSQRT, PRELU,
L2_NORMALIZATION.

int8 models with rank 1-4 shapes (rand.shape: size-1 dimensions
included), log-uniform scales over [1e-4, 10] and full-range zero points.
Outputs whose quantization TFLM fixes or ignores get the usual values most
of the time (LOGISTIC: zero point -128, which TFLM requires, scale 1/256;
TANH and L2_NORMALIZATION: 1/128 and 0) and random ones otherwise.
HARD_SWISH output scales keep input_scale / 128 / output_scale <= 1
(TFLM rejects larger ones). RSQRT inputs are at or above the input zero
point (TFLM fails the invoke below it). LEAKY_RELU gets a random alpha
(negative, zero, small, above 1). PRELU gets a constant int8 alpha that
broadcasts against the input (size-1 dimensions, fewer dimensions), as
converters emit it. RELU and RELU6 also come in float32 (1 time in 8);
LOGISTIC, TANH and LEAKY_RELU in int16 (1 time in 5, int16_unary);
float32 LOGISTIC and TANH are left out: float_ops' exp / tanh (f32_math)
are not bit-exact against the C library's expf / tanhf (1 ulp off now
and then).
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor


def _f32(x):
    return float(np.float32(x))


def _float_values(rng, shape):
    """float32 values around the ReLU thresholds, with signed zeros and
    infinities mixed in."""
    g = np.random.default_rng(rng.getrandbits(32))
    n = int(np.prod(shape, dtype=np.int64))
    x = (g.standard_normal(n) * 4).astype(np.float32)
    special = np.array([0.0, -0.0, 6.0, np.inf, -np.inf, 1.0, -1.0],
                       np.float32)
    pick = g.random(n) < 0.15
    x[pick] = special[g.integers(0, len(special), int(pick.sum()))]
    return x.reshape(shape)


def _int16_values(rng, shape):
    """int16 inputs: full range, or most within +-2**k for a random k
    (the table's interpolation range of LOGISTIC / TANH)."""
    g = np.random.default_rng(rng.getrandbits(32))
    lim = 1 << rng.randint(4, 15)
    x = g.integers(-lim, lim, size=shape, endpoint=True)
    wide = g.random(shape) < 0.2
    x[wide] = g.integers(-32768, 32767, size=int(np.sum(wide)),
                         endpoint=True)
    return np.clip(x, -32768, 32767).astype(np.int16)


def int16_unary(op, rng, size):
    """An int16 (16x8) LOGISTIC, TANH or LEAKY_RELU model and its inputs.
    LOGISTIC / TANH: zero points 0 and output scale 2**-15 as TFLM
    requires (1 time in 5 off by up to 0.05%, inside its CheckedLog2
    tolerance); input scales 2**-12 (TANH: also 2**-11: TFLM's
    power-of-two case; 1 in 10 within 0.05% of one) 1 time in 3, else
    log-uniform over [1e-6, 2.5]. LEAKY_RELU: log-uniform scales over
    [1e-5, 1e-1], zero points 0 (3 times in 4) or anywhere in int16, a
    random alpha."""
    shape = rand.shape(rng, size)
    opts = None
    if op == "LEAKY_RELU":
        s_in = rand.scale(rng, 1e-5, 1e-1)
        s_out = rand.scale(rng, 1e-5, 1e-1) if rng.random() < 0.3 else \
            s_in * float(np.exp(rng.uniform(-1, 1)))

        def zp():
            return 0 if rng.random() < 0.75 else rng.randint(-32768, 32767)
        z_in, z_out = zp(), zp()
        opts = {"alpha": _f32(rng.choice((rng.uniform(-2, 2), 0.0, 0.1,
                                          0.2, -0.5, rng.uniform(1, 4))))}
    else:
        z_in = z_out = 0
        s_out = 2.0 ** -15
        if rng.random() < 0.2:
            s_out *= 1 + rng.uniform(-5e-4, 5e-4)
        r = rng.random()
        if r < 1 / 3:
            s_in = 2.0 ** rng.choice((-12, -11) if op == "TANH" else (-12,))
            if rng.random() < 0.3:
                s_in *= 1 + rng.uniform(-5e-4, 5e-4)
        else:
            s_in = rand.scale(rng, 1e-6, 2.5)
    raw = opgen.single_op(
        op, [T(shape, "int16", scale=_f32(s_in), zero_point=z_in)],
        [T(shape, "int16", scale=_f32(s_out), zero_point=z_out)], opts)
    return raw, [_int16_values(rng, shape)]


def unary(op, rng, size):
    """An int8 (or float32 RELU / RELU6) model of a one-input op; RSQRT
    also returns its inputs. LOGISTIC, TANH and LEAKY_RELU are int16
    (int16_unary) 1 time in 5."""
    if op in ("LOGISTIC", "TANH", "LEAKY_RELU") and rng.random() < 0.2:
        return int16_unary(op, rng, size)
    shape = rand.shape(rng, size)
    if op in ("RELU", "RELU6") and rng.random() < 0.125:
        raw = opgen.single_op(op, [T(shape, "float32")],
                              [T(shape, "float32")])
        return raw, [_float_values(rng, shape)]
    s_in, z_in = rand.scale(rng), rand.zero_point(rng)
    s_out, z_out = rand.scale(rng), rand.zero_point(rng)
    usual = rng.random() < 0.7
    if op == "LOGISTIC":
        z_out = -128
        if usual:
            s_out = 1 / 256
    elif op in ("TANH", "L2_NORMALIZATION") and usual:
        s_out, z_out = 1 / 128, 0
    elif op == "HARD_SWISH":
        s_out = rand.scale(rng, lo=max(rand.SCALE_LO, s_in / 64),
                           hi=max(rand.SCALE_HI, s_in))
    opts = None
    if op == "LEAKY_RELU":
        alpha = rng.choice((rng.uniform(-2, 2), rng.uniform(0, 0.5), 0.0,
                            0.1, 0.2, -0.5, rng.uniform(1, 4)))
        opts = {"alpha": _f32(alpha)}
    raw = opgen.single_op(op, [T(shape, scale=s_in, zero_point=z_in)],
                          [T(shape, scale=s_out, zero_point=z_out)], opts)
    if op == "RSQRT":
        g = np.random.default_rng(rng.getrandbits(32))
        x = g.integers(z_in, 128, size=shape, dtype=np.int64)
        return raw, [x.astype(np.int8)]
    return raw


def prelu(rng, size):
    """An int8 PRELU model with a constant alpha broadcast to the input."""
    shape = rand.shape(rng, size)
    a_shape = [d if rng.random() < 0.5 else 1 for d in shape]
    a_shape = a_shape[rng.randint(0, len(a_shape) - 1):]
    if rng.random() < 0.3:
        a_shape = [1] * len(a_shape)
    alpha = T(a_shape, scale=rand.scale(rng), zero_point=rand.zero_point(rng),
              data=rand.int8_array(rng, a_shape))
    x = T(shape, scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    y = T(shape, scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    return opgen.single_op("PRELU", [x, alpha], [y])


GENERATORS = {op: (lambda o: lambda rng, size: unary(o, rng, size))(op)
              for op in ("RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH",
                         "HARD_SWISH", "RSQRT", "L2_NORMALIZATION")}
GENERATORS["PRELU"] = prelu
