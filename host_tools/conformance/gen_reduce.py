"""Conformance generators: MEAN, SUM, REDUCE_MAX, ARG_MAX, ARG_MIN, GATHER,
SHAPE, FILL, ZEROS_LIKE (the "reduce" operator group, issue #6).

Every generator makes one seeded single-operator model that TFLM accepts
(see the package docstring for the interface): shapes of rank 1-4 with
size-1 dimensions (rand.shape), random axes written as positive or
negative numbers (repeats too), keep_dims both ways, scales from
rand.scale and zero points over the full int8 range. The reductions and
GATHER return their inputs: values with ties (and, for float32, a few
infinities, NaNs and signed zeros), valid GATHER indices.
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor


def _q(rng, shape, dtype="int8", scale=None, zp=None):
    """A tensor of dtype; int8 ones get a random (or the given) scale and
    zero point."""
    if dtype != "int8":
        return T(shape, dtype)
    return T(shape, "int8", scale=rand.scale(rng) if scale is None else scale,
             zero_point=rand.zero_point(rng) if zp is None else zp)


def _axes(rng, rank):
    """A non-empty random list of axes for rank: each positive or
    negative, sometimes repeated."""
    chosen = rng.sample(range(rank), rng.randint(1, rank))
    axes = [a - rank if rng.random() < 0.4 else a for a in chosen]
    if rng.random() < 0.15:
        axes.append(axes[0] if rng.random() < 0.5 else axes[0] % rank - rank)
    return axes


def _reduced_shape(shape, axes, keep):
    rank = len(shape)
    red = {a % rank for a in axes}
    return [1 if i in red else d for i, d in enumerate(shape)
            if keep or i not in red]


def _reduce(op, float_share):
    def gen(rng, size):
        shape = rand.shape(rng, size)
        axes = _axes(rng, len(shape))
        keep = rng.random() < 0.5
        dtype = "float32" if rng.random() < float_share else "int8"
        x = _q(rng, shape, dtype)
        out_shape = _reduced_shape(shape, axes, keep)
        if op == "REDUCE_MAX" and dtype == "int8":
            y = _q(rng, out_shape, dtype, x.scale, x.zero_point)
        else:
            y = _q(rng, out_shape, dtype)
        axis = T([len(axes)], "int32", data=axes)
        return (opgen.single_op(op, [x, axis], [y], {"keep_dims": keep}),
                [_random(rng, x)])
    return gen


def _arg(op):
    def gen(rng, size):
        shape = rand.shape(rng, size)
        rank = len(shape)
        a = rng.randrange(rank)
        a_written = a - rank if rng.random() < 0.4 else a
        dtype = "float32" if rng.random() < 0.4 else "int8"
        x = _q(rng, shape, dtype)
        y = T(shape[:a] + shape[a + 1:], "int32")
        if rng.random() < 0.25:  # the axis as a model input
            axis = T([1], "int32")
            return (opgen.single_op(op, [x, axis], [y],
                                    {"output_type": "int32"}),
                    [_random(rng, x), np.array([a_written], np.int32)])
        axis = T([1], "int32", data=[a_written])
        return (opgen.single_op(op, [x, axis], [y], {"output_type": "int32"}),
                [_random(rng, x)])
    return gen


def _random(rng, t):
    """Random values for an input tensor t (int8 or float32), with ties
    and, for float32, a few infinities, NaNs and signed zeros."""
    g = np.random.default_rng(rng.getrandbits(32))
    if t.dtype == "int8":
        hi = 128 if rng.random() < 0.7 else 3  # small ranges give ties
        return g.integers(-hi, hi, size=t.shape, dtype=np.int64).astype(
            np.int8)
    v = g.standard_normal(size=t.shape).astype(np.float32)
    if rng.random() < 0.3:
        v = np.round(v).astype(np.float32)  # ties, +-0.0
        special = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0], np.float32)
        mask = g.random(size=t.shape) < 0.2
        v[mask] = g.choice(special, size=int(mask.sum()))
    return v


def _gather(rng, size):
    shape = rand.shape(rng, size)
    rank = len(shape)
    ishape = rand.shape(rng, size, 1, 3)
    batch_dims = 0
    if rank > 1 and rng.random() < 0.3:
        batch_dims = rng.randint(1, min(rank - 1, len(ishape)))
        ishape[:batch_dims] = shape[:batch_dims]
    axis = rng.randrange(batch_dims, rank)
    dtype = "float32" if rng.random() < 0.4 else "int8"
    x = _q(rng, shape, dtype)
    g = np.random.default_rng(rng.getrandbits(32))
    idx = g.integers(0, shape[axis], size=ishape).astype(np.int32)
    out_shape = shape[:axis] + ishape[batch_dims:] + shape[axis + 1:]
    y = _q(rng, out_shape, dtype, x.scale, x.zero_point)
    opts = {"axis": axis - rank if rng.random() < 0.4 else axis,
            "batch_dims": (batch_dims - len(ishape)
                           if 0 < batch_dims < len(ishape)
                           and rng.random() < 0.3
                           else batch_dims)}
    if rng.random() < 0.3:  # constant indices
        coords = T(ishape, "int32", data=idx)
        return opgen.single_op("GATHER", [x, coords], [y], opts)
    coords = T(ishape, "int32")
    return (opgen.single_op("GATHER", [x, coords], [y], opts),
            [_random(rng, x), idx])


def _shape(rng, size):
    shape = rand.shape(rng, size, 0, 4)
    dtype = rng.choice(("int8", "float32", "int32"))
    x = _q(rng, shape, dtype)
    return opgen.single_op("SHAPE", [x], [T([len(shape)], "int32")],
                           {"out_type": "int32"})


def _fill(rng, size):
    shape = rand.shape(rng, size)
    dtype = rng.choice(("int8", "float32", "int32"))
    dims_type = rng.choice(("int32", "int64"))
    dims = T([len(shape)], dims_type, data=shape)
    if dtype == "int8":
        s, z = rand.scale(rng), rand.zero_point(rng)
        value, y = _q(rng, [], "int8", s, z), _q(rng, shape, "int8", s, z)
    else:
        value, y = T([], dtype), T(shape, dtype)
    if rng.random() < 0.3:  # a constant value
        g = np.random.default_rng(rng.getrandbits(32))
        v = {"int8": lambda: g.integers(-128, 128),
             "int32": lambda: g.integers(-2 ** 31, 2 ** 31),
             "float32": lambda: g.standard_normal()}[dtype]()
        value = T([], dtype, scale=value.scale, zero_point=value.zero_point,
                  data=[v])
    return opgen.single_op("FILL", [dims, value], [y])


def _zeros_like(rng, size):
    shape = rand.shape(rng, size)
    dtype = rng.choice(("int8", "float32", "int32"))
    x = _q(rng, shape, dtype)
    y = _q(rng, shape, dtype, x.scale, x.zero_point) if dtype == "int8" \
        else T(shape, dtype)
    return opgen.single_op("ZEROS_LIKE", [x], [y])


GENERATORS = {
    "MEAN": _reduce("MEAN", 0.25),
    "SUM": _reduce("SUM", 0.25),
    "REDUCE_MAX": _reduce("REDUCE_MAX", 0.3),
    "ARG_MAX": _arg("ARG_MAX"),
    "ARG_MIN": _arg("ARG_MIN"),
    "GATHER": _gather,
    "SHAPE": _shape,
    "FILL": _fill,
    "ZEROS_LIKE": _zeros_like,
}
