"""Conformance generators: MIRROR_PAD, REVERSE_V2, BROADCAST_TO,
SELECT_V2, ADD_N (see the package docstring for the interface).

Shapes have rank 1 to 4 (REVERSE_V2 up to 6, BROADCAST_TO's output up
to 5) with size-1 dimensions; every type TFLM's kernel takes; int8
tensors get random scales and full-range zero points (the byte-copy
kernels' output sometimes with other ones: TFLM checks none).
MIRROR_PAD: both modes, pads up to the largest TensorFlow allows,
paddings int32 or int64. REVERSE_V2: a random run of consecutive axes,
some negative, in random order. BROADCAST_TO: new leading dimensions and
size-1 input dimensions, shape int32 or int64.
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor


def _quant(rng, dtype):
    if dtype == "int8":
        return dict(scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    if dtype == "int16":
        return dict(scale=rand.scale(rng), zero_point=0)
    return {}


def _io(rng, dtype):
    """Quantization of an input and of an output (mostly the same)."""
    q = _quant(rng, dtype)
    return q, (q if rng.random() < 0.7 else _quant(rng, dtype))


def _ints(vals, dtype="int32", shape=None):
    vals = [int(v) for v in vals]
    return T([len(vals)] if shape is None else shape, dtype,
             data=np.array(vals, dtype))


# --- MIRROR_PAD ---------------------------------------------------------

def gen_mirror_pad(rng, size):
    """MIRROR_PAD: float32 / int8, rank 1-4, REFLECT (pads < dim) or
    SYMMETRIC (pads <= dim), int32 or int64 paddings."""
    dtype = rng.choice(("int8", "int8", "float32"))
    shape = rand.shape(rng, size, 1, 4)
    mode = rng.choice(("REFLECT", "SYMMETRIC"))
    pads = []
    for d in shape:
        top = d - 1 if mode == "REFLECT" else d
        top = min(top, 3)
        pads.append([rng.randint(0, top) if rng.random() < 0.8 else 0
                     for _ in range(2)])
    out = [d + a + b for d, (a, b) in zip(shape, pads)]
    qi, qo = _io(rng, dtype)
    ptype = rng.choice(("int32", "int64"))
    ins = [T(shape, dtype, **qi),
           _ints(np.array(pads).ravel(), ptype, [len(shape), 2])]
    return opgen.single_op("MIRROR_PAD", ins, [T(out, dtype, **qo)],
                           {"mode": mode})


# --- REVERSE_V2 ---------------------------------------------------------

REVERSE_TYPES = ("int8", "int8", "float32", "uint8", "int16", "int32",
                 "int64", "bool")


def gen_reverse_v2(rng, size):
    """REVERSE_V2: every TFLM type, rank 1-6, a run of consecutive axes
    given in random order, some as negative values."""
    dtype = rng.choice(REVERSE_TYPES)
    shape = rand.shape(rng, size, 1, 6 if rng.random() < 0.2 else 4)
    rank = len(shape)
    lo = rng.randrange(rank)
    hi = rng.randint(lo, rank - 1)
    axes = [a - rank if rng.random() < 0.3 else a
            for a in range(lo, hi + 1)]
    rng.shuffle(axes)
    q = _quant(rng, dtype)
    ins = [T(shape, dtype, **q), _ints(axes)]
    return opgen.single_op("REVERSE_V2", ins, [T(shape, dtype, **q)])


# --- BROADCAST_TO -------------------------------------------------------

def gen_broadcast_to(rng, size):
    """BROADCAST_TO: an output of rank 1-5, the input its trailing
    dimensions (0-2 fewer) with some set to 1; int32 or int64 shape."""
    dtype = rng.choice(REVERSE_TYPES)
    out = rand.shape(rng, size, 1, 5 if rng.random() < 0.3 else 4)
    rank = max(0, len(out) - rng.randint(0, 2))
    shape = [1 if rng.random() < 0.5 else d for d in out[len(out) - rank:]]
    q = _quant(rng, dtype)
    ins = [T(shape, dtype, **q),
           _ints(out, rng.choice(("int32", "int64")))]
    return opgen.single_op("BROADCAST_TO", ins, [T(out, dtype, **q)])


GENERATORS = {
    "MIRROR_PAD": gen_mirror_pad,
    "REVERSE_V2": gen_reverse_v2,
    "BROADCAST_TO": gen_broadcast_to,
}

# Our runtime must run every model these generators make.
STRICT = tuple(GENERATORS)
