"""Conformance generators: MIRROR_PAD, REVERSE_V2, BROADCAST_TO,
SELECT_V2, ADD_N, GATHER_ND, EMBEDDING_LOOKUP, CUMSUM, REDUCE_MIN,
REDUCE_ALL, BROADCAST_ARGS, DYNAMIC_UPDATE_SLICE, L2_POOL_2D, ELU (int8,
float32; see the package docstring for the interface; each generator's
docstring says what it covers).

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




# --- SELECT_V2 ----------------------------------------------------------

def _bshape(rng, out):
    """A shape that broadcasts to out: trailing dims, some set to 1."""
    rank = rng.randint(0, len(out))
    return [1 if rng.random() < 0.3 else d for d in out[len(out) - rank:]]


def gen_select_v2(rng, size):
    """SELECT_V2: float32 / int8 / int16, condition, x and y of one shape
    or broadcast to a rank 1-4 (sometimes 5) output; sometimes all of
    one element with different ranks (TFLM's mixed-scalar case)."""
    dtype = rng.choice(("int8", "int8", "float32", "int16"))
    r = rng.random()
    if r < 0.1:
        shapes = [[1] * rng.randint(0, 2) for _ in range(3)]
        out = [1] * max(len(s) for s in shapes)
    elif r < 0.4:
        out = rand.shape(rng, size, 1, 4)
        shapes = [out] * 3
    else:
        out = rand.shape(rng, size, 1, 5 if rng.random() < 0.2 else 4)
        shapes = [_bshape(rng, out) for _ in range(3)]
        shapes[rng.randrange(3)] = list(out)
    q = _quant(rng, dtype)
    ins = [T(shapes[0], "bool"), T(shapes[1], dtype, **q),
           T(shapes[2], dtype, **q)]
    if rng.random() < 0.2:  # a constant operand
        k = rng.choice((1, 2))
        n = int(np.prod(shapes[k], dtype=np.int64))
        g = np.random.default_rng(rng.getrandbits(32))
        data = (g.standard_normal(n) * 4 if dtype == "float32" else
                g.integers(-128, 128, n))
        ins[k] = T(shapes[k], dtype, data=np.asarray(data).astype(dtype),
                   **q)
    return opgen.single_op("SELECT_V2", ins, [T(out, dtype, **q)])


# --- ADD_N --------------------------------------------------------------

def gen_add_n(rng, size):
    """ADD_N: 2-6 inputs (rarely up to 20, whose int8 sums wrap int32 as
    TFLM's do) of one rank 1-4 shape; int8 with one input scale and zero
    point and an output scale 2**-18 to 2**3 times it (TFLM's
    multiplier 2 * in / (2**20 * out) stays below 1), or float32 (with
    some +-0.0 and infinities)."""
    dtype = rng.choice(("int8", "int8", "float32"))
    shape = rand.shape(rng, size, 1, 4)
    n = rng.randint(2, 6) if rng.random() < 0.9 else rng.randint(7, 20)
    if dtype == "int8":
        qi = dict(scale=rand.scale(rng), zero_point=rand.zero_point(rng))
        u = rng.uniform(-4, 3) if rng.random() < 0.8 else \
            rng.uniform(-18, -4)
        qo = dict(scale=float(np.float32(qi["scale"] * 2 ** u)),
                  zero_point=rand.zero_point(rng))
    else:
        qi = qo = {}
    ins = [T(shape, dtype, **qi) for _ in range(n)]
    raw = opgen.single_op("ADD_N", ins, [T(shape, dtype, **qo)])
    if dtype != "float32" or rng.random() < 0.6:
        return raw
    g = np.random.default_rng(rng.getrandbits(32))
    m = int(np.prod(shape, dtype=np.int64))
    vals = []
    for _ in range(n):
        v = (g.standard_normal(m) * 3).astype(np.float32)
        k = g.integers(0, 4, m)
        v[k == 0] = -0.0
        v[k == 1] = 0.0
        if rng.random() < 0.3:
            v[g.integers(0, m)] = rng.choice((np.inf, -np.inf))
        vals.append(v)
    return raw, vals




# --- GATHER_ND ----------------------------------------------------------

def gen_gather_nd(rng, size):
    """GATHER_ND: float32 / int8 params of rank 1-4, indices of rank 1-3
    with tuples of 1 to min(rank, 5) entries, in range (sometimes as a
    constant); some tuples out of a dimension's range whose flat
    position TFLM still accepts."""
    dtype = rng.choice(("int8", "int8", "float32"))
    shape = rand.shape(rng, size, 1, 4)
    nd = rng.randint(1, len(shape))
    lead = rand.shape(rng, size, 0, 2)
    g = np.random.default_rng(rng.getrandbits(32))
    n = int(np.prod(lead, dtype=np.int64))
    idx = np.stack([g.integers(0, d, n) for d in shape[:nd]], axis=-1)
    if nd > 1 and rng.random() < 0.2 and shape[nd - 1] > 1:
        # (i, j + d) is (i + 1, j) in the flat order: TFLM accepts it
        rows = np.nonzero(idx[:, nd - 2] < shape[nd - 2] - 1)[0]
        if len(rows):
            r = rows[0]
            idx[r, nd - 2] += 1
            idx[r, nd - 1] -= shape[nd - 1]
    idx = idx.astype(np.int32).reshape(lead + [nd])
    q = _quant(rng, dtype)
    out = lead + shape[nd:]
    const = rng.random() < 0.3
    ins = [T(shape, dtype, **q),
           T(lead + [nd], "int32", data=idx if const else None)]
    raw = opgen.single_op("GATHER_ND", ins, [T(out, dtype, **q)])
    return raw if const else (raw, [None, idx])


# --- EMBEDDING_LOOKUP ---------------------------------------------------

def gen_embedding_lookup(rng, size):
    """EMBEDDING_LOOKUP: a float32 or int8 table of rank 2-4 (a
    constant, as in real models, or an input), ids in range (repeats
    included), and int8 tables with zero point 0 looked up into
    float32 (TFLM's hybrid path)."""
    kind = rng.choice(("int8", "float32", "hybrid"))
    dtype = "float32" if kind == "float32" else "int8"
    shape = [rng.randint(1, 3 * size)] + rand.shape(rng, size, 1, 3)
    n = rng.randint(1, 2 * size + 1)
    ids = np.array([rng.randrange(shape[0]) for _ in range(n)], np.int32)
    q = _quant(rng, dtype)
    if kind == "hybrid":
        q["zero_point"] = 0
    g = np.random.default_rng(rng.getrandbits(32))
    m = int(np.prod(shape, dtype=np.int64))
    data = None
    if rng.random() < 0.6:
        data = (g.standard_normal(m) * 2 if dtype == "float32" else
                g.integers(-128, 128, m)).astype(dtype).reshape(shape)
    yq = {} if kind != "int8" else q
    ins = [T([n], "int32"), T(shape, dtype, data=data, **q)]
    raw = opgen.single_op("EMBEDDING_LOOKUP", ins,
                          [T([n] + shape[1:], "float32" if kind == "hybrid"
                             else dtype, **yq)])
    return raw, [ids] + ([] if data is not None else [None])




# --- CUMSUM -------------------------------------------------------------

def gen_cumsum(rng, size):
    """CUMSUM: float32 / int8 of rank 1-4, any axis (sometimes
    negative), exclusive and reverse at random; int8 output scales 2**-18
    to 2**4 times the input's (the multiplier below 1)."""
    dtype = rng.choice(("int8", "float32"))
    shape = rand.shape(rng, size, 1, 4)
    rank = len(shape)
    axis = rng.randrange(rank)
    if rng.random() < 0.3:
        axis -= rank
    if dtype == "int8":
        qi = dict(scale=rand.scale(rng), zero_point=rand.zero_point(rng))
        u = rng.uniform(-2, 4) if rng.random() < 0.8 else \
            rng.uniform(-18, -2)
        qo = dict(scale=float(np.float32(qi["scale"] * 2 ** u)),
                  zero_point=rand.zero_point(rng))
    else:
        qi = qo = {}
    opts = {"exclusive": rng.random() < 0.5, "reverse": rng.random() < 0.5}
    return opgen.single_op("CUMSUM", [T(shape, dtype, **qi),
                                      _ints([axis], shape=[])],
                           [T(shape, dtype, **qo)], opts)




# --- REDUCE_MIN ---------------------------------------------------------

def gen_reduce_min(rng, size):
    """REDUCE_MIN: as gen_reduce.py's REDUCE_MAX (rank 1-4, random axes,
    repeats, keep_dims; int8 output quantized as the input, as TFLM
    requires; float32 inputs with ties, infinities, NaNs, signed
    zeros)."""
    from host_tools.conformance import gen_reduce as gr
    shape = rand.shape(rng, size)
    axes = gr._axes(rng, len(shape))
    keep = rng.random() < 0.5
    dtype = "float32" if rng.random() < 0.35 else "int8"
    x = gr._q(rng, shape, dtype)
    out = gr._reduced_shape(shape, axes, keep)
    y = gr._q(rng, out, dtype, x.scale, x.zero_point) if dtype == "int8" \
        else T(out, dtype)
    axis = T([len(axes)], "int32", data=axes)
    return (opgen.single_op("REDUCE_MIN", [x, axis], [y],
                            {"keep_dims": keep}), [gr._random(rng, x)])


def gen_reduce_all(rng, size):
    """REDUCE_ALL: bool, rank 0-4 (a scalar: its axes are ignored),
    random axes with repeats and negative ones, keep_dims both ways;
    inputs mostly true (so that some outputs are true), all true or all
    false now and then."""
    from host_tools.conformance import gen_reduce as gr
    shape = rand.shape(rng, size, 0 if rng.random() < 0.05 else 1, 4)
    axes = gr._axes(rng, len(shape)) if shape else [0]
    keep = rng.random() < 0.5
    out = gr._reduced_shape(shape, axes, keep) if shape else []
    g = np.random.default_rng(rng.getrandbits(32))
    p = rng.choice((0.0, 0.02, 0.1, 0.4, 1.0))
    vals = g.random(size=shape) >= p
    axis = T([len(axes)], "int32", data=axes)
    return (opgen.single_op("REDUCE_ALL", [T(shape, "bool"), axis],
                            [T(out, "bool")], {"keep_dims": keep}),
            [np.asarray(vals, bool)])




# --- BROADCAST_ARGS -----------------------------------------------------

def gen_broadcast_args(rng, size):
    """BROADCAST_ARGS: two broadcastable int32 / int64 shapes of 1-5
    entries (0 and 1 among them), each a constant or a model input; the
    output sometimes longer than both (leading 1s)."""
    dtype = rng.choice(("int32", "int64"))
    out = [rng.choice((0, 1, 1, 2, 3, 7, 100)) for _ in range(
        rng.randint(1, 5))]
    shapes = []
    for _ in range(2):
        n = rng.randint(0, len(out))
        shapes.append([1 if rng.random() < 0.4 else d
                       for d in out[len(out) - n:]])
    k = rng.randrange(2)
    if len(shapes[k]) < len(out) or rng.random() < 0.5:
        shapes[k] = list(out)  # one of them sets every entry
    ins, vals = [], []
    for s in shapes:
        if rng.random() < 0.5:
            ins.append(T([len(s)], dtype, data=np.array(s, dtype)))
        else:
            ins.append(T([len(s)], dtype))
            vals.append(np.array(s, dtype))
    n = len(out) + (rng.randint(1, 2) if rng.random() < 0.15 else 0)
    if all(t.data is not None for t in ins):
        # TFLM needs a model input: pass one through an extra shape
        ins[1] = T(ins[1].shape, dtype)
        vals = [np.array(shapes[1], dtype)]
    raw = opgen.single_op("BROADCAST_ARGS", ins, [T([n], dtype)])
    return raw, vals




# --- DYNAMIC_UPDATE_SLICE -----------------------------------------------

def gen_dynamic_update_slice(rng, size):
    """DYNAMIC_UPDATE_SLICE: float32 / int8 / int16 / int32 of rank 1-4,
    an update of dims up to the operand's (sometimes all equal), start
    indices int32 or int64 as a model input (or a constant) with values
    inside, negative or past the end (clamped, int64 ones beyond 32
    bits too)."""
    dtype = rng.choice(("int8", "float32", "int16", "int32"))
    shape = rand.shape(rng, size, 1, 4)
    if rng.random() < 0.1:
        up = list(shape)
    else:
        up = [rng.randint(1, d) for d in shape]
    itype = rng.choice(("int32", "int64"))
    starts = []
    for d, e in zip(shape, up):
        r = rng.random()
        if r < 0.7:
            starts.append(rng.randint(0, d - e))
        elif r < 0.85:
            starts.append(rng.randint(-5, -1))
        elif itype == "int64" and rng.random() < 0.5:
            starts.append(rng.choice((2 ** 31, 2 ** 40, -2 ** 40)))
        else:
            starts.append(d - e + rng.randint(1, 5))
    starts = np.array(starts, itype)
    q = _quant(rng, dtype)
    const = rng.random() < 0.2
    ins = [T(shape, dtype, **q), T(up, dtype, **q),
           T([len(shape)], itype, data=starts if const else None)]
    raw = opgen.single_op("DYNAMIC_UPDATE_SLICE", ins, [T(shape, dtype, **q)])
    return raw, [None, None] + ([] if const else [starts])




# --- L2_POOL_2D ---------------------------------------------------------

def gen_l2_pool(rng, size):
    """L2_POOL_2D (float32 only, as TFLM): NHWC, filter 1-4, stride 1-3,
    SAME or VALID, every fused activation; inputs sometimes with zeros,
    infinities, NaN and subnormals."""
    for _ in range(50):
        n, c = rng.randint(1, 2), rng.randint(1, 2 * size)
        h, w = rng.randint(1, 2 * size + 2), rng.randint(1, 2 * size + 2)
        fh, fw = rng.randint(1, 4), rng.randint(1, 4)
        sh, sw = rng.randint(1, 3), rng.randint(1, 3)
        pad = rng.choice(("SAME", "VALID"))
        if pad == "SAME":
            oh, ow = -(-h // sh), -(-w // sw)
        else:
            oh, ow = (h - fh + sh) // sh, (w - fw + sw) // sw
        if oh >= 1 and ow >= 1:
            break
    else:
        n = c = h = w = fh = fw = sh = sw = oh = ow = 1
        pad = "VALID"
    opts = {"padding": pad, "stride_h": sh, "stride_w": sw,
            "filter_height": fh, "filter_width": fw,
            "activation": rand.activation(rng)}
    raw = opgen.single_op("L2_POOL_2D", [T([n, h, w, c], "float32")],
                          [T([n, oh, ow, c], "float32")], opts)
    if rng.random() < 0.7:
        return raw
    g = np.random.default_rng(rng.getrandbits(32))
    x = (g.standard_normal(n * h * w * c) * 4).astype(np.float32)
    k = g.integers(0, 12, x.size)
    x[k == 0] = 0.0
    x[k == 1] = -0.0
    x[k == 2] = np.float32(1e-42)  # subnormal
    x[k == 3] = np.float32(3e19)  # its square overflows
    if rng.random() < 0.3:
        x[g.integers(0, x.size)] = rng.choice((np.inf, -np.inf, np.nan))
    return raw, [x]




# --- ELU ----------------------------------------------------------------

def gen_elu(rng, size):
    """ELU: rank 1-4; int8 two times in three, with random input and
    output scales and zero points (the output's often near the input's,
    so the table is not all clamps); else float32 (TFLM: expm1f, ours
    within 1 ulp: ULP), values over [-20, 5] and [-1, 0] scaled, tiny
    and huge ones, signed zeros, infinities and NaNs."""
    shape = rand.shape(rng, size, 1, 4)
    if rng.random() < 1 / 3:
        g = np.random.default_rng(rng.getrandbits(32))
        n = int(np.prod(shape))
        k = g.integers(0, 6, n)
        x = g.uniform(-20, 5, n)
        x = np.where(k == 1, -g.random(n) * 10.0 ** g.uniform(-40, 0, n), x)
        x = np.where(k == 2, g.uniform(-1, 0.1, n), x)
        x = x.astype(np.float32)
        sp = np.array([0x0, 0x80000000, 0x80000001, 0xFF800000, 0x7F800000,
                       0x7FC00000, 0xFF800001, 0xC18C0000, 0xBF000000,
                       0xCB000000], np.uint32).view(np.float32)
        pick = k == 3
        x[pick] = sp[g.integers(0, sp.size, int(pick.sum()))]
        return (opgen.single_op("ELU", [T(shape, "float32")],
                                [T(shape, "float32")]),
                [x.reshape(shape)])
    qi = dict(scale=rand.scale(rng, 1e-3, 1.0),
              zero_point=rand.zero_point(rng))
    if rng.random() < 0.6:
        qo = dict(scale=float(np.float32(qi["scale"] * rng.uniform(0.5, 2))),
                  zero_point=rand.zero_point(rng))
    else:
        qo = dict(scale=rand.scale(rng), zero_point=rand.zero_point(rng))
    return opgen.single_op("ELU", [T(shape, "int8", **qi)],
                           [T(shape, "int8", **qo)])


GENERATORS = {
    "MIRROR_PAD": gen_mirror_pad,
    "REVERSE_V2": gen_reverse_v2,
    "BROADCAST_TO": gen_broadcast_to,
    "SELECT_V2": gen_select_v2,
    "ADD_N": gen_add_n,
    "GATHER_ND": gen_gather_nd,
    "EMBEDDING_LOOKUP": gen_embedding_lookup,
    "CUMSUM": gen_cumsum,
    "REDUCE_MIN": gen_reduce_min,
    "REDUCE_ALL": gen_reduce_all,
    "BROADCAST_ARGS": gen_broadcast_args,
    "DYNAMIC_UPDATE_SLICE": gen_dynamic_update_slice,
    "L2_POOL_2D": gen_l2_pool,
    "ELU": gen_elu,
}

# Our runtime must run every model these generators make.
STRICT = tuple(GENERATORS)
# float32 ELU: within 1 ulp of TFLM's expm1f (kernels/elu_f32.py)
ULP = {"ELU": 1}
