"""Conformance generators for SIN, COS and LOG_SOFTMAX (issue 35).

SIN / COS (float32, rank 1-4): values over [-10, 10], near multiples of
pi/2 (a few ulps away: the range reduction's hard cases), large ones up
to 3.4e38, random bit patterns, signed zeros, subnormals, infinities and
NaNs (signaling ones too). TFLM calls the C library's sinf / cosf: ours
are within 1 ulp of it (ULP below).

LOG_SOFTMAX (rank 1-4, over the last dimension): int8 two times in three
(input scales log-uniform over [1e-3, 10], full-range zero points; the
output is TFLM's fixed 16/256 and 127), bit for bit; float32 otherwise,
values spread by a random scale from 0.01 to 100 with repeated maxima,
within ULP of TFLM (expf and logf of the C library; see
kernels/log_softmax_f32.py for why an output may move by more than one
of its ulps: the bound here is measured on these generators).
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor


def _trig_values(g, n):
    k = g.integers(0, 8, n)
    x = g.uniform(-10, 10, n).astype(np.float32)
    half_pi = (g.integers(-4000, 4000, n) * (np.pi / 2)).astype(np.float32)
    near = half_pi.view(np.int32) + g.integers(-3, 4, n).astype(np.int32)
    x = np.where(k == 1, near.view(np.float32), x)
    big = (g.choice((-1, 1), n) * 10.0 ** g.uniform(1, 38.5, n))
    x = np.where(k == 2, np.clip(big, -3.4e38, 3.4e38).astype(np.float32), x)
    bits = g.integers(0, 1 << 32, n, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    x = np.where(k == 3, bits, x)
    small = (g.choice((-1, 1), n) * 10.0 ** g.uniform(-45, 0, n))
    x = np.where(k == 4, small.astype(np.float32), x)
    special = np.array([0x0, 0x80000000, 0x1, 0x807FFFFF, 0x7F800000,
                        0xFF800000, 0x7FC00000, 0xFF800001, 0x7F7FFFFF,
                        0x3F490FDB, 0x3FC90FDB, 0x40490FDB],
                       np.uint32).view(np.float32)
    pick = k == 5
    x[pick] = special[g.integers(0, special.size, int(pick.sum()))]
    return x.astype(np.float32)


def gen_unary(op):
    def gen(rng, size):
        """SIN or COS: float32, rank 1-4 (see the module docstring)."""
        shape = rand.shape(rng, size, 1, 4)
        g = np.random.default_rng(rng.getrandbits(32))
        x = _trig_values(g, int(np.prod(shape))).reshape(shape)
        raw = opgen.single_op(op, [T(shape, "float32")],
                              [T(shape, "float32")])
        return raw, [x]
    return gen


def gen_log_softmax(rng, size):
    """LOG_SOFTMAX: int8 (random input quantization, output 16/256 and
    127) or float32 (see the module docstring)."""
    shape = rand.shape(rng, size, 1, 4)
    if rng.random() < 2 / 3:
        qi = dict(scale=rand.scale(rng, 1e-3, 10.0),
                  zero_point=rand.zero_point(rng))
        return opgen.single_op(
            "LOG_SOFTMAX", [T(shape, "int8", **qi)],
            [T(shape, "int8", scale=16.0 / 256, zero_point=127)])
    g = np.random.default_rng(rng.getrandbits(32))
    x = (g.standard_normal(shape) * 10 ** rng.uniform(-2, 2)).astype(
        np.float32)
    if x.size > 1 and rng.random() < 0.3:  # a repeated maximum
        f = x.reshape(-1)
        f[g.integers(0, f.size)] = f.max()
    raw = opgen.single_op("LOG_SOFTMAX", [T(shape, "float32")],
                          [T(shape, "float32")])
    return raw, [x]


GENERATORS = {
    "SIN": gen_unary("SIN"),
    "COS": gen_unary("COS"),
    "LOG_SOFTMAX": gen_log_softmax,
}

# Our runtime must run every model these generators make.
STRICT = tuple(GENERATORS)
# float32 outputs within this many ulps of TFLM's (see the docstring)
ULP = {"SIN": 1, "COS": 1, "LOG_SOFTMAX": 2}
