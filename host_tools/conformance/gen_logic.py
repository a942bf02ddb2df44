"""Conformance generators for the comparisons, logical and one-input
elementwise operators (issue 35): EQUAL, NOT_EQUAL, GREATER,
GREATER_EQUAL, LESS, LESS_EQUAL, LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT,
ABS, NEG, CEIL, FLOOR, ROUND, SQRT, SQUARE, and FLOOR_DIV / FLOOR_MOD.

Shapes are gen_binary.shapes (rank 1-4, NumPy broadcasting, equal shapes
1 time in 4), either input may be a constant. Comparisons come in int8
(2 times in 5, or 6 for EQUAL / NOT_EQUAL: per-tensor scales log-uniform
over [1e-4, 0.99], since TFLM aborts on a scale of 1 or more, equal
scales or a 2:1 ratio 1 time in 3 so that rescaled values tie), int32,
int64 (high words that tie, so that the low words decide) and float32
(signed zeros, NaN, infinities, copied values for ties), and bool for
EQUAL / NOT_EQUAL.
LOGICAL_AND / LOGICAL_OR take bool inputs.

The unary ops take shapes of rank 1-4 (the same in and out). ABS comes
in int8 (half the time: scales over [1e-4, 10], equal scales 1 time in 4,
full-range zero points), int16 (quantized with zero points 0, or not
quantized) and float32; the float32 ops get values around the integers
and halves, signed zeros, NaNs (signaling ones too), infinities,
subnormals and random bit patterns. EXP and LOG are left out: their
float32 results are within 1 ulp of the C library's expf / logf, not
bit-exact (kernels/elementwise_f32.py; tests/test_ops_unary.py measures
them).

FLOOR_DIV and FLOOR_MOD are float32 (TFLM has no other type) with
broadcasting: quotients near integers (small integers and halves), values
over the whole float32 range, signed zeros, infinities and NaNs; FLOOR_DIV
gets no zero divisor (TFLM fails the invoke then: tested in
tests/test_ops_floor_div.py).
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import gen_binary, rand

T = opgen.Tensor


def _ties(rng, vals):
    """Copy some elements of one input into the other (equal values)."""
    a, b = vals
    if a.size and b.size and rng.random() < 0.7:
        g = np.random.default_rng(rng.getrandbits(32))
        fa = a.reshape(-1)
        fb = b.reshape(-1)
        k = min(fa.size, fb.size)
        pick = g.random(k) < 0.4
        fb[:k][pick] = fa[:k][pick]
    return a, b


def _int64_values(rng, shape):
    """int64 values: full range, high words that tie (low words then
    decide, compared unsigned), small values around 0."""
    g = np.random.default_rng(rng.getrandbits(32))
    x = g.integers(-(1 << 63), (1 << 63) - 1, size=shape, dtype=np.int64,
                   endpoint=True)
    r = g.random(shape)
    hi = g.integers(-2, 2, size=shape, dtype=np.int64) << 32
    lo = g.integers(0, 1 << 32, size=shape, dtype=np.int64)
    x[r < 0.4] = (hi + lo)[r < 0.4]
    small = g.integers(-3, 4, size=shape, dtype=np.int64)
    x[r > 0.8] = small[r > 0.8]
    return x


def _bools(rng, shape):
    g = np.random.default_rng(rng.getrandbits(32))
    return g.integers(0, 2, size=shape).astype(bool)


def compare(op, rng, size):
    """A comparison model (bool output) and its inputs."""
    kinds = ["int8", "int8", "int32", "int64", "float32"]
    if op in ("EQUAL", "NOT_EQUAL"):
        kinds.append("bool")
    dtype = rng.choice(kinds)
    a, b, o = gen_binary.shapes(rng, size)
    c = gen_binary._const_index(rng)
    if dtype == "int8":
        vals = [rand.int8_array(rng, s) for s in (a, b)]
        if rng.random() < 0.5:  # few distinct values: many ties
            vals = [(v // 32).astype(np.int8) for v in vals]
    elif dtype == "int32":
        vals = [gen_binary._int32_values(rng, s) for s in (a, b)]
    elif dtype == "int64":
        vals = [_int64_values(rng, s) for s in (a, b)]
    elif dtype == "float32":
        vals = [gen_binary._float_values(rng, s) for s in (a, b)]
    else:
        vals = [_bools(rng, s) for s in (a, b)]
    vals = list(_ties(rng, vals))
    qs = [{}, {}]
    if dtype == "int8":
        s1 = rand.scale(rng, 1e-4, 0.99)
        r = rng.random()
        s2 = s1 if r < 0.2 else (
            float(np.float32(s1 / 2)) if r < 0.33 else
            rand.scale(rng, 1e-4, 0.99))
        z1 = rand.zero_point(rng)
        z2 = z1 if rng.random() < 0.3 else rand.zero_point(rng)
        qs = [{"scale": s1, "zero_point": z1}, {"scale": s2, "zero_point": z2}]
    ins = [T(s, dtype, data=(v if k == c else None), **q)
           for k, (s, v, q) in enumerate(zip((a, b), vals, qs))]
    raw = opgen.single_op(op, ins, [T(o, "bool")])
    return raw, [v for k, v in enumerate(vals) if k != c]


def logical(op, rng, size):
    """A LOGICAL_AND / LOGICAL_OR model (bool inputs and output)."""
    a, b, o = gen_binary.shapes(rng, size)
    c = gen_binary._const_index(rng)
    vals = [_bools(rng, s) for s in (a, b)]
    ins = [T(s, "bool", data=(v if k == c else None))
           for k, (s, v) in enumerate(zip((a, b), vals))]
    raw = opgen.single_op(op, ins, [T(o, "bool")])
    return raw, [v for k, v in enumerate(vals) if k != c]


def float_values(rng, shape):
    """float32 values for the rounding functions and SQRT."""
    g = np.random.default_rng(rng.getrandbits(32))
    n = int(np.prod(shape, dtype=np.int64))
    r = g.random(n)
    x = (g.standard_normal(n) * 10 ** g.uniform(-2, 8, n)).astype(np.float32)
    halves = (g.integers(-40, 40, n) / 2).astype(np.float32)
    x[r < 0.3] = halves[r < 0.3]
    bits = g.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    pick = (r >= 0.3) & (r < 0.4)
    x[pick] = bits[pick].view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5,
                        0.49999997, -0.49999997, 8388607.5, -8388608.5,
                        1e-45, -1e-45, 3e38], np.float32)
    pick = r >= 0.9
    x[pick] = special[g.integers(0, len(special), int(pick.sum()))]
    return x.reshape(shape)


def unary(op, rng, size):
    """A one-input model (see the module docstring) and its inputs."""
    shape = rand.shape(rng, size)
    if op == "LOGICAL_NOT":
        v = _bools(rng, shape)
        return opgen.single_op(op, [T(shape, "bool")],
                               [T(shape, "bool")]), [v]
    dtype = "float32"
    if op == "ABS":
        dtype = rng.choice(("int8", "int8", "int16", "float32"))
    g = np.random.default_rng(rng.getrandbits(32))
    qi, qo = {}, {}
    if dtype == "int8":
        v = rand.int8_array(rng, shape)
        qi = {"scale": rand.scale(rng), "zero_point": rand.zero_point(rng)}
        qo = {"scale": qi["scale"] if rng.random() < 0.25 else
              rand.scale(rng), "zero_point": rand.zero_point(rng)}
    elif dtype == "int16":
        v = g.integers(-32768, 32768, size=shape).astype(np.int16)
        if rng.random() < 0.7:
            s = rand.scale(rng, 1e-5, 1e-1)
            qi = {"scale": s, "zero_point": 0}
            qo = {"scale": s if rng.random() < 0.25 else
                  rand.scale(rng, 1e-5, 1e-1), "zero_point": 0}
    else:
        v = float_values(rng, shape)
    raw = opgen.single_op(op, [T(shape, dtype, **qi)],
                          [T(shape, dtype, **qo)])
    return raw, [v]


def floor_op(op, rng, size):
    """A float32 FLOOR_DIV / FLOOR_MOD model and its inputs."""
    a, b, o = gen_binary.shapes(rng, size)
    c = gen_binary._const_index(rng)
    g = np.random.default_rng(rng.getrandbits(32))
    vals = []
    for s in (a, b):
        n = int(np.prod(s, dtype=np.int64))
        x = gen_binary._float_values(rng, s).reshape(-1)
        r = g.random(n)
        small = (g.integers(-24, 25, n) / rng.choice((1, 2, 4))).astype(
            np.float32)
        x[r < 0.5] = small[r < 0.5]
        if op == "FLOOR_DIV":
            x[x == 0] = 3.0
        vals.append(x.reshape(s))
    ins = [T(s, "float32", data=(v if k == c else None))
           for k, (s, v) in enumerate(zip((a, b), vals))]
    raw = opgen.single_op(op, ins, [T(o, "float32")])
    return raw, [v for k, v in enumerate(vals) if k != c]


def _gen(fn, op):
    return lambda rng, size: fn(op, rng, size)


GENERATORS = {op: _gen(compare, op) for op in (
    "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
    "LESS_EQUAL")}
GENERATORS.update({op: _gen(logical, op)
                   for op in ("LOGICAL_AND", "LOGICAL_OR")})

GENERATORS.update({op: _gen(unary, op) for op in (
    "LOGICAL_NOT", "ABS", "NEG", "CEIL", "FLOOR", "ROUND", "SQRT",
    "SQUARE")})

GENERATORS.update({op: _gen(floor_op, op)
                   for op in ("FLOOR_DIV", "FLOOR_MOD")})

# Our runtime has kernels for every model these make.
STRICT = set(GENERATORS)
