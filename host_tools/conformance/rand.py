"""Random shapes and quantization parameters for conformance generators.

All functions take a random.Random, so that a case is reproducible from
its seed. Scales are log-uniform over [1e-4, 10] (the issue's range) and
zero points cover the full int8 range, extremes included.
"""

import math

import numpy as np

SCALE_LO, SCALE_HI = 1e-4, 10.0


def scale(rng, lo=SCALE_LO, hi=SCALE_HI):
    """A log-uniform scale in [lo, hi], as a float32-representable float."""
    v = math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return float(np.float32(v))


def scales(rng, n, lo=SCALE_LO, hi=SCALE_HI):
    """n log-uniform scales (per-channel quantization)."""
    return [scale(rng, lo, hi) for _ in range(n)]


def zero_point(rng, lo=-128, hi=127):
    """An int8 zero point; the extremes come up 1 time in 5."""
    if rng.random() < 0.2:
        return rng.choice((lo, hi))
    return rng.randint(lo, hi)


def dim(rng, size):
    """One dimension for a size budget 1..4: 1 often, up to 2 * size + 1."""
    if rng.random() < 0.25:
        return 1
    return rng.randint(1, 2 * size + 1)


def shape(rng, size, rank_lo=1, rank_hi=4):
    """A shape of rank in [rank_lo, rank_hi] with dim() dimensions."""
    return [dim(rng, size) for _ in range(rng.randint(rank_lo, rank_hi))]


def int8_array(rng, shape_):
    """Seeded int8 data of a shape (weights, constant inputs)."""
    seed = rng.getrandbits(32)
    g = np.random.default_rng(seed)
    return g.integers(-128, 128, size=shape_, dtype=np.int64).astype(np.int8)


def activation(rng, allowed=("NONE", "RELU", "RELU6", "RELU_N1_TO_1")):
    """A fused activation function name."""
    return rng.choice(allowed)
