"""Conformance generators for the binary elementwise operators (issue 6):
SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM.

Shapes are rank 1-4 (rand.shape) with NumPy broadcasting: size-1
dimensions in either input, inputs of lower rank, or equal shapes. Either
input may be a constant. int8 tensors get log-uniform scales over
[1e-4, 10] and full-range zero points; ADD, SUB and MUL get a random
fused activation. SUB, MUL and SQUARED_DIFFERENCE also come in float32
and int32 (1 time in 5 each), SUB and MUL in int16 (int16s: 1 in 8,
1 in 5), MAXIMUM / MINIMUM in int32 and float32
(float inputs include -0.0, NaN, huge values and, for MAXIMUM / MINIMUM,
infinities).
"""

import math

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor


def shapes(rng, size):
    """(shape1, shape2, out_shape): equal shapes 1 time in 4, else NumPy
    broadcasting with size-1 dimensions and dropped leading dimensions."""
    out = rand.shape(rng, size)
    if rng.random() < 0.25:
        return list(out), list(out), out
    a, b = list(out), list(out)
    for i in range(len(out)):
        r = rng.random()
        if r < 0.3:
            a[i] = 1
        elif r < 0.6:
            b[i] = 1
    if rng.random() < 0.3:
        a = a[rng.randint(0, len(a)):]
    elif rng.random() < 0.3:
        b = b[rng.randint(0, len(b)):]
    return a, b, list(np.broadcast_shapes(tuple(a), tuple(b)))


def _const_index(rng):
    """Which input is a constant: None (both activations) 2 times in 3."""
    r = rng.random()
    return None if r < 2 / 3 else (0 if r < 5 / 6 else 1)


def _float_values(rng, shape, inf=True):
    """float32 values with signed zeros, NaN and (if inf) infinities mixed
    in, and some large enough that squares overflow."""
    g = np.random.default_rng(rng.getrandbits(32))
    n = int(np.prod(shape, dtype=np.int64))
    x = (g.standard_normal(n) * 10 ** g.uniform(-3, 3, n)).astype(np.float32)
    special = [0.0, -0.0, np.nan, 1.0, -1.0, 3e19, -2e38]
    special = np.array(special + ([np.inf, -np.inf] if inf else []),
                       np.float32)
    pick = g.random(n) < 0.15
    x[pick] = special[g.integers(0, len(special), int(pick.sum()))]
    return x.reshape(shape)


def _int32_values(rng, shape):
    g = np.random.default_rng(rng.getrandbits(32))
    x = g.integers(-(1 << 31), 1 << 31, size=shape, dtype=np.int64)
    small = g.random(shape) < 0.5  # many ties and near-ties too
    x[small] = g.integers(-3, 4, size=int(np.sum(small)))
    return x.astype(np.int32)


def quantized(op, rng, size, act=True):
    """An int8 model of op (ADD, SUB, MUL, SQUARED_DIFFERENCE)."""
    a, b, o = shapes(rng, size)
    c = _const_index(rng)
    ins = []
    for k, s in enumerate((a, b)):
        data = rand.int8_array(rng, s) if k == c else None
        ins.append(T(s, "int8", scale=rand.scale(rng),
                     zero_point=rand.zero_point(rng), data=data))
    out = T(o, "int8", scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    opts = {"activation": rand.activation(rng)} if act else None
    return opgen.single_op(op, ins, [out], opts)


def floats(op, rng, size, act=False):
    """A float32 model of op (with a random fused activation if act);
    returns (bytes, inputs). No infinities in the inputs."""
    a, b, o = shapes(rng, size)
    c = _const_index(rng)
    vals = [_float_values(rng, s, inf=False) for s in (a, b)]
    ins = [T(s, "float32", data=(v if k == c else None))
           for k, (s, v) in enumerate(zip((a, b), vals))]
    opts = {"activation": rand.activation(rng)} if act else None
    raw = opgen.single_op(op, ins, [T(o, "float32")], opts)
    return raw, [v for k, v in enumerate(vals) if k != c]


def int32s(op, rng, size, act=False):
    """An int32 model of op (no quantization; a random fused activation
    if act); returns (bytes, inputs). Values are often large, so results
    wrap around (TFLM computes in int32 with two's complement wrapping)."""
    a, b, o = shapes(rng, size)
    c = _const_index(rng)
    vals = [_int32_values(rng, s) for s in (a, b)]
    ins = [T(s, "int32", data=(v if k == c else None))
           for k, (s, v) in enumerate(zip((a, b), vals))]
    opts = {"activation": rand.activation(rng)} if act else None
    raw = opgen.single_op(op, ins, [T(o, "int32")], opts)
    return raw, [v for k, v in enumerate(vals) if k != c]


def int16s(op, rng, size):
    """A 16x8-style int16 model of ADD / SUB / MUL: per-tensor scales over
    1e-5..1e-1 (the two inputs near each other half the time), zero
    points 0 as converters write them, 1 time in 4 others with offsets
    inside TFLM's (-32767, 32767) (MUL: always 0, as TFLM requires), a
    random fused activation. MUL's output scale is s1 * s2 * 2**15 times
    a factor in [e**-2, e**2] (products land around the int16 range)."""
    a, b, o = shapes(rng, size)
    c = _const_index(rng)

    def zp():
        if op == "MUL" or rng.random() < 0.75:
            return 0
        return rng.randint(-32766, 32766)
    s1 = rand.scale(rng, 1e-5, 1e-1)
    s2 = s1 * math.exp(rng.uniform(-1, 1)) if rng.random() < 0.5 else \
        rand.scale(rng, 1e-5, 1e-1)
    g = np.random.default_rng(rng.getrandbits(32))
    ins = []
    for k, (sh, sc) in enumerate(((a, s1), (b, s2))):
        data = g.integers(-32768, 32768, size=sh).astype(np.int16) \
            if k == c else None
        ins.append(T(sh, "int16", scale=float(np.float32(sc)),
                     zero_point=zp(), data=data))
    if op == "MUL":
        so = float(np.float32(s1 * s2 * 32768 * math.exp(rng.uniform(-2, 2))))
    else:
        so = float(np.float32(max(s1, s2) * math.exp(rng.uniform(-1, 1.5))))
    out = T(o, "int16", scale=so, zero_point=zp())
    return opgen.single_op(op, ins, [out],
                           {"activation": rand.activation(rng)})


def _mixed(op, act=True, int16=0.0):
    """op's generator: float32 1 time in 5, int32 1 in 5, int16 with
    probability int16 (SUB: 1 in 8, MUL: 1 in 5), else int8."""
    def gen(rng, size):
        r = rng.random()
        if r < 0.2:
            return floats(op, rng, size, act)
        if r < 0.4:
            return int32s(op, rng, size, act)
        if r < 0.4 + int16:
            return int16s(op, rng, size)
        return quantized(op, rng, size, act)
    return gen


def minmax(op, rng, size):
    """A MAXIMUM / MINIMUM model: int8 (scales ignored by TFLM), int32 or
    float32; returns (bytes, inputs)."""
    dtype = rng.choice(("int8", "int8", "int32", "float32"))
    a, b, o = shapes(rng, size)
    c = _const_index(rng)
    vals = []
    for s in (a, b):
        if dtype == "int8":
            vals.append(rand.int8_array(rng, s))
        elif dtype == "int32":
            vals.append(_int32_values(rng, s))
        else:
            vals.append(_float_values(rng, s))
    if dtype == "int8" and rng.random() < 0.5:  # few values: many ties
        vals = [(v // 64).astype(np.int8) for v in vals]

    def q():
        if dtype != "int8":
            return {}
        return {"scale": rand.scale(rng), "zero_point": rand.zero_point(rng)}
    ins = [T(s, dtype, data=(v if k == c else None), **q())
           for k, (s, v) in enumerate(zip((a, b), vals))]
    raw = opgen.single_op(op, ins, [T(o, dtype, **q())])
    return raw, [v for k, v in enumerate(vals) if k != c]


# ADD's generator is gen_core.py's (quantized("ADD", ...) also works).
GENERATORS = {
    "SUB": _mixed("SUB", int16=0.125),
    "MUL": _mixed("MUL", int16=0.2),
    "SQUARED_DIFFERENCE": _mixed("SQUARED_DIFFERENCE", act=False),
    "MAXIMUM": lambda rng, size: minmax("MAXIMUM", rng, size),
    "MINIMUM": lambda rng, size: minmax("MINIMUM", rng, size),
}

# Our runtime has kernels for every model these make.
STRICT = set(GENERATORS)
