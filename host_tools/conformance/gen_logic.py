"""Conformance generators for the comparisons and logical operators
(issue 35): EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL,
LOGICAL_AND, LOGICAL_OR.

Shapes are gen_binary.shapes (rank 1-4, NumPy broadcasting, equal shapes
1 time in 4), either input may be a constant. Comparisons come in int8
(half the time: per-tensor scales log-uniform over [1e-4, 0.99], since
TFLM aborts on a scale of 1 or more, equal scales or a 2:1 ratio 1 time
in 3 so that rescaled values tie), int32 and float32 (signed zeros, NaN,
infinities, copied values for ties), and bool for EQUAL / NOT_EQUAL.
LOGICAL_AND / LOGICAL_OR take bool inputs.
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


def _bools(rng, shape):
    g = np.random.default_rng(rng.getrandbits(32))
    return g.integers(0, 2, size=shape).astype(bool)


def compare(op, rng, size):
    """A comparison model (bool output) and its inputs."""
    kinds = ["int8", "int8", "int32", "float32"]
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


def _gen(fn, op):
    return lambda rng, size: fn(op, rng, size)


GENERATORS = {op: _gen(compare, op) for op in (
    "EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
    "LESS_EQUAL")}
GENERATORS.update({op: _gen(logical, op)
                   for op in ("LOGICAL_AND", "LOGICAL_OR")})

# Our runtime has kernels for every model these make.
STRICT = set(GENERATORS)
