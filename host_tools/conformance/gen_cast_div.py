"""Conformance generators for CAST and DIV.

CAST: every pair of input type (int8, int16, int32, uint32, float32,
bool) and output type (the same, bool included), shapes of
rank 1-4 (the output sometimes stored with another shape of as many
elements), the input a constant 1 time in 6, CastOptions naming the
types, the schema defaults or absent. Values mix the full range with
the edges: INT32_MIN / MAX, 0xFFFFFFFF, integers near 2**24 (float32
rounding ties), and for float32 +-0, subnormals, +-inf, NaN, values just
around 2**7, 2**15, 2**31 and 2**32 and halves (truncation), huge ones.

DIV: float32, int32 and int8 (1 time in 3 each), shapes as
gen_binary.shapes (NumPy broadcasting, lower ranks, equal shapes), either
input a constant 1 time in 6, a random fused activation. float32 values
with +-0, subnormals, +-inf, NaN, huge and tiny ones (x / 0, overflow,
underflow: all defined in IEEE 754). int32 values over the full range
with INT32_MIN / MAX, small ones and exact multiples. int8: scales
log-uniform over [1e-4, 10] (1 time in 8 the extremes 1e-9 .. 1e6), or
1 model in 3 round values such as 0.05 (quotients that tie exactly),
zero points over int8. Never generated, since TFLM fails or has no
defined result there (kernels/div.py says what tflm gives): a zero int32
divisor, INT32_MIN / -1, an int8 divisor equal to its zero point.
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand
from host_tools.conformance.gen_binary import _const_index, shapes

T = opgen.Tensor

CAST_IN = ("int8", "int16", "int32", "uint32", "float32", "bool")
CAST_OUT = ("int8", "int16", "int32", "uint32", "float32", "bool")

_F32_EDGES = np.array(
    [0.0, -0.0, 1e-45, -1e-45, 1.2e-38, -3e-39, np.inf, -np.inf, np.nan,
     -np.nan, 0.5, -0.5, 0.99999994, -0.99999994, 1.5, -1.5, 2.5, -2.5,
     127.0, 127.99999, 128.0, 128.5, -128.0, -128.5, -129.0, 255.0, 256.0,
     32767.5, 32768.0, -32768.0, -32769.0, 65535.0, 65536.0,
     16777216.0, 16777218.0, -16777216.0, 2147483520.0, 2147483648.0,
     -2147483648.0, -2147483904.0, 4294967040.0, 4294967296.0, 1e10,
     -1e10, 3e38, -3e38], np.float32)
_INT_EDGES = [0, 1, -1, 127, 128, -128, -129, 255, 256, 32767, 32768,
              -32768, -32769, 65535, 65536, 16777215, 16777216, 16777217,
              16777218, 16777219, -16777217, -16777219, 33554435,
              1 << 30, (1 << 30) + 65, 2147483583, 2147483584, 2147483647,
              -2147483648, -2147483647, 2147483648, 2147483649,
              4294967167, 4294967168, 4294967295]


def _g(rng):
    return np.random.default_rng(rng.getrandbits(32))


def cast_values(rng, dtype, shape):
    """Values of an input dtype: the full range mixed with edge cases."""
    g = _g(rng)
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        return g.integers(0, 2, n).astype(bool).reshape(shape)
    if dtype == "float32":
        x = (g.standard_normal(n) * 10.0 ** g.uniform(-3, 11, n)).astype(
            np.float32)
        pick = g.random(n) < 0.35
        x[pick] = _F32_EDGES[g.integers(0, len(_F32_EDGES),
                                        int(pick.sum()))]
        near = g.random(n) < 0.1  # +-1 ulp around an edge
        x[near] = np.nextafter(x[near], np.float32(
            np.inf) * g.choice([-1, 1], int(near.sum())).astype(np.float32))
        return x.reshape(shape)
    info = np.iinfo(dtype)
    x = g.integers(int(info.min), int(info.max), n, endpoint=True,
                   dtype=np.int64)
    edges = np.array([v for v in _INT_EDGES
                      if info.min <= v <= info.max], np.int64)
    pick = g.random(n) < 0.35
    x[pick] = edges[g.integers(0, len(edges), int(pick.sum()))]
    return x.astype(dtype).reshape(shape)


def gen_cast(rng, size):
    """A CAST model and its input: (bytes, [input])."""
    ti, to = rng.choice(CAST_IN), rng.choice(CAST_OUT)
    shape = rand.shape(rng, size)
    out_shape = shape
    if rng.random() < 0.2:  # same elements, another shape
        n = int(np.prod(shape))
        out_shape = rng.choice([[n], [1, n], [n, 1], shape[::-1]])
    x = cast_values(rng, ti, shape)
    const = rng.random() < 1 / 6
    opts = rng.choice([None, {}, {"in_data_type": ti, "out_data_type": to}])
    qi = {"scale": rand.scale(rng), "zero_point": rand.zero_point(rng)} \
        if ti == "int8" and rng.random() < 0.5 else {}
    xt = T(shape, ti, data=x if const else None, **qi)
    m = opgen.Model()
    if opts is None:  # no options table at all
        m.add_op("CAST", [xt], [T(out_shape, to)])
        m.ops[0].options = None
    else:
        m.add_op("CAST", [xt], [T(out_shape, to)], opts)
    return m.build(), ([] if const else [x])


# ---- DIV ----

def _f32_values(g, shape):
    n = int(np.prod(shape, dtype=np.int64))
    x = (g.standard_normal(n) * 10.0 ** g.uniform(-6, 6, n)).astype(
        np.float32)
    special = np.array([0.0, -0.0, 1e-45, -3e-39, 1.0, -1.0, 3e38, -2e38,
                        1e-30, np.inf, -np.inf, np.nan], np.float32)
    pick = g.random(n) < 0.2
    x[pick] = special[g.integers(0, len(special), int(pick.sum()))]
    return x.reshape(shape)


def _i32_values(g, shape, divisor=False):
    n = int(np.prod(shape, dtype=np.int64))
    x = g.integers(-(1 << 31), 1 << 31, n, dtype=np.int64)
    r = g.random(n)
    small = r < 0.4
    x[small] = g.integers(-9, 10, int(small.sum()))
    edge = (r >= 0.4) & (r < 0.55)
    x[edge] = g.choice([-(1 << 31), (1 << 31) - 1, -(1 << 31) + 1, -1, 1,
                        1 << 16, -(1 << 16), 46341], int(edge.sum()))
    if divisor:
        x[x == 0] = g.choice([1, -1, 2, 7], int(np.sum(x == 0)))
    return x.astype(np.int32).reshape(shape)


def _no_min_over_minus_one(a, b):
    """Replace INT32_MIN in a where b holds -1 (C's INT32_MIN / -1 traps
    in TFLM): with -INT32_MAX, for any broadcast."""
    if (b == -1).any():
        a = a.copy()
        a[a == np.iinfo(np.int32).min] = -np.iinfo(np.int32).max
    return a


def _int8_divisor(g, shape, zp):
    """int8 values of input2 that never equal its zero point."""
    x = g.integers(-128, 128, size=shape, dtype=np.int64)
    x[x == zp] = zp + 1 if zp < 127 else zp - 1
    return x.astype(np.int8)


_ROUND_SCALES = (0.01, 0.02, 0.05, 0.1, 0.125, 0.2, 0.25, 0.5, 1.0, 2.0)


def _scales(rng):
    """The three scales of an int8 DIV: 1 time in 3 all round ones (0.05,
    0.25, ...: many real quotients are exact ties, where a multiplier one
    ulp off changes the output), else each log-uniform, 1 time in 8 from
    [1e-9, 1e6]."""
    if rng.random() < 1 / 3:
        return [float(np.float32(rng.choice(_ROUND_SCALES)))
                for _ in range(3)]
    return [rand.scale(rng, 1e-9, 1e6) if rng.random() < 1 / 8 else
            rand.scale(rng) for _ in range(3)]


def gen_div(rng, size):
    """A DIV model (float32, int32 or int8) and its inputs."""
    dtype = rng.choice(("float32", "int32", "int8"))
    a, b, o = shapes(rng, size)
    c = _const_index(rng)
    g = _g(rng)
    act = rand.activation(rng)
    if dtype == "int8":
        q = [{"scale": sc, "zero_point": rand.zero_point(rng)}
             for sc in _scales(rng)]
        vals = [rand.int8_array(rng, a),
                _int8_divisor(g, b, q[1]["zero_point"])]
        if act in ("RELU6", "RELU_N1_TO_1") and q[2]["scale"] < 1e-8:
            act = "RELU"  # 6 / scale beyond int32: TFLM's Prepare fails
    else:
        q = [{}, {}, {}]
        if dtype == "float32":
            vals = [_f32_values(g, a), _f32_values(g, b)]
        else:
            vals = [_i32_values(g, a), _i32_values(g, b, divisor=True)]
            vals[0] = _no_min_over_minus_one(vals[0], vals[1])
    ins = [T(s, dtype, data=(v if k == c else None), **qk)
           for k, (s, v, qk) in enumerate(zip((a, b), vals, q))]
    raw = opgen.single_op("DIV", ins, [T(o, dtype, **q[2])],
                          {"activation": act})
    return raw, [v for k, v in enumerate(vals) if k != c]


GENERATORS = {"CAST": gen_cast, "DIV": gen_div}

# Our runtime has kernels for every model these make.
STRICT = set(GENERATORS)
