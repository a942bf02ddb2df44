"""Conformance generators: PADV2, STRIDED_SLICE, SLICE, PACK, UNPACK,
SPLIT, SPLIT_V, SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, DEPTH_TO_SPACE,
SPACE_TO_DEPTH (see the package docstring for the interface).

Shapes have rank 1 to 4 (SLICE up to 5, PACK from 0) with size-1
dimensions; every type TFLM's kernel copies (int8 most often); int8
tensors get random scales and full-range zero points, the output's
sometimes different from the input's (these kernels copy values
unchanged and TFLM checks no quantization, except PADV2's int8
constant_values, which shares the output's). Parameters cover negative
axes and indices, begin / end masks, shrink axes, negative strides,
size -1, SLICE begin / size and the block sizes, paddings and crops of
SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND as model inputs, crops;
SPACE_TO_BATCH_ND gets no padding (TFLM never sets its padding value, so
its padded bytes are whatever its arena held). STRIDED_SLICE sometimes
sets ellipsis_mask, new_axis_mask or offset, which TFLM ignores (the
output shape is then TFLM's). Cases TFLM would run without writing its
output (a shrunk axis with a negative stride or a begin past the end)
are not made.
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor

COPY_TYPES = ("int8", "int8", "int8", "float32", "int16", "int32")


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


def _i32(vals, shape=None):
    vals = [int(v) for v in vals]
    return T([len(vals)] if shape is None else shape, "int32",
             data=np.array(vals, np.int32))


def _shape(rng, size, lo=1, hi=4):
    return rand.shape(rng, size, lo, hi)


# --- PADV2 ------------------------------------------------------------------

def gen_padv2(rng, size):
    """PADV2: rank 1-4 (5 rarely), paddings 0-3 per side (the image-style
    path included), constant_values a constant or a model input; int8
    constant_values share the output's scale and zero point."""
    dtype = rng.choice(("int8", "int8", "float32", "int16", "int32"))
    shape = _shape(rng, size, 1, 5 if rng.random() < 0.1 else 4)
    rank = len(shape)
    pads = [[rng.randint(0, 3), rng.randint(0, 3)] for _ in range(rank)]
    if rank == 4 and rng.random() < 0.3:
        pads[0] = pads[3] = [0, 0]
    out = [d + a + b for d, (a, b) in zip(shape, pads)]
    qi, qo = _io(rng, dtype)
    if dtype == "int8":
        val = np.array([rng.randint(-128, 127)], np.int8)
    elif dtype == "float32":
        val = np.array([rng.uniform(-5, 5)], np.float32)
    elif dtype == "int16":
        val = np.array([rng.randint(-32768, 32767)], np.int16)
    else:
        val = np.array([rng.randint(-2 ** 31, 2 ** 31 - 1)], np.int32)
    const = rng.random() < 0.6
    cshape = [] if rng.random() < 0.5 else [1]
    cv = T(cshape, dtype, data=val if const else None, **qo)
    ins = [T(shape, dtype, **qi),
           _i32(np.array(pads).ravel(), [rank, 2]), cv]
    raw = opgen.single_op("PADV2", ins, [T(out, dtype, **qo)])
    return raw if const else (raw, [None, val])


# --- STRIDED_SLICE -----------------------------------------------------------

def _clamp(v, lo, hi):
    return max(lo, min(hi, v))


def _ss_count(dim, b, e, k, bm, em):
    """TFLM's output size of one (not shrunk) axis."""
    if bm:
        b = 0 if k > 0 else dim - 1
    else:
        b = b + dim if b < 0 else b
        b = _clamp(b, 0, dim) if k > 0 else _clamp(b, -1, dim - 1)
    if em:
        e = dim if k > 0 else -1
    else:
        e = e + dim if e < 0 else e
        e = _clamp(e, 0, dim) if k > 0 else _clamp(e, -1, dim - 1)
    n = -(-(e - b) // k)
    return max(n, 0)


def gen_strided_slice(rng, size):
    """STRIDED_SLICE: rank 1-4, strides in [-3, 3] \\ {0}, begin / end in
    [-dim - 2, dim + 2], random begin / end masks, shrink axes with a
    begin inside the axis and stride 1; ignored masks / offset sometimes
    set. Outputs of size 0 are avoided."""
    dtype = rng.choice(COPY_TYPES + ("bool",))
    for _ in range(100):
        shape = _shape(rng, size)
        rank = len(shape)
        begin, end, strides, out = [], [], [], []
        bm = em = sm = 0
        for a, d in enumerate(shape):
            if rng.random() < 0.2:  # shrink this axis
                sm |= 1 << a
                begin.append(rng.randint(-d, d - 1))
                end.append(rng.randint(-d - 2, d + 2))
                strides.append(1)
                continue
            k = rng.choice((1, 1, 1, 2, 3, -1, -1, -2, -3))
            b, e = rng.randint(-d - 2, d + 2), rng.randint(-d - 2, d + 2)
            m1, m2 = rng.random() < 0.25, rng.random() < 0.25
            bm |= m1 << a
            em |= m2 << a
            begin.append(b)
            end.append(e)
            strides.append(k)
            out.append(_ss_count(d, b, e, k, m1, m2))
        if all(out):
            break
    else:
        shape, rank, begin, end, strides, out = [2], 1, [0], [2], [1], [2]
        bm = em = sm = 0
    opts = {"begin_mask": bm, "end_mask": em, "shrink_axis_mask": sm}
    r = rng.random()
    if r < 0.05:
        opts["offset"] = True  # ignored by TFLM
    elif r < 0.1:
        opts["ellipsis_mask"] = rng.randint(1, (1 << rank) - 1 or 1)
    elif r < 0.15:
        opts["new_axis_mask"] = rng.randint(1, (1 << rank) - 1 or 1)
    extra = rng.randint(0, 1) if rng.random() < 0.1 else 0
    qi, qo = _io(rng, dtype)
    ins = [T(shape, dtype, **qi), _i32(begin + [0] * extra),
           _i32(end + [1] * extra), _i32(strides + [1] * extra)]
    return opgen.single_op("STRIDED_SLICE", ins, [T(out, dtype, **qo)],
                           opts)


# --- SLICE -------------------------------------------------------------------

def gen_slice(rng, size):
    """SLICE: rank 1-5, begin in [0, dim - 1], size in [1, dim - begin]
    or -1, begin / size int32 or int64, constants or (1 time in 5) model
    inputs."""
    dtype = rng.choice(COPY_TYPES + ("bool",))
    shape = _shape(rng, size, 1, 5 if rng.random() < 0.15 else 4)
    begin, sizes, out = [], [], []
    for d in shape:
        b = rng.randint(0, d - 1)
        n = -1 if rng.random() < 0.25 else rng.randint(1, d - b)
        begin.append(b)
        sizes.append(n)
        out.append(d - b if n == -1 else n)
    it = rng.choice(("int32", "int64"))
    qi, qo = _io(rng, dtype)
    const = rng.random() >= 0.2
    ins = [T(shape, dtype, **qi),
           T([len(shape)], it, data=begin if const else None),
           T([len(shape)], it, data=sizes if const else None)]
    raw = opgen.single_op("SLICE", ins, [T(out, dtype, **qo)])
    if const:
        return raw
    return raw, [None, np.array(begin, it), np.array(sizes, it)]


# --- PACK / UNPACK -----------------------------------------------------------

def gen_pack(rng, size):
    """PACK: 1-4 inputs of rank 0-3 (output rank 1-4), axis in
    [-rank - 1, rank]; int64 among the types."""
    dtype = rng.choice(COPY_TYPES + ("int64",))
    shape = _shape(rng, size, 0, 3)
    n = rng.randint(1, 4)
    axis = rng.randint(-len(shape) - 1, len(shape))
    a = axis % (len(shape) + 1)
    out = shape[:a] + [n] + shape[a:]
    qi, qo = _io(rng, dtype)
    ins = [T(shape, dtype, **qi) for _ in range(n)]
    return opgen.single_op("PACK", ins, [T(out, dtype, **qo)],
                           {"axis": axis})


def gen_unpack(rng, size):
    """UNPACK: input rank 1-4, axis in [-rank, rank - 1], num = the
    input's dimension there."""
    dtype = rng.choice(COPY_TYPES)
    shape = _shape(rng, size, 1, 4)
    axis = rng.randint(-len(shape), len(shape) - 1)
    a = axis % len(shape)
    out = shape[:a] + shape[a + 1:]
    qi, qo = _io(rng, dtype)
    outs = [T(out, dtype, **qo) for _ in range(shape[a])]
    return opgen.single_op("UNPACK", [T(shape, dtype, **qi)], outs,
                           {"axis": axis})


# --- SPLIT / SPLIT_V ---------------------------------------------------------

def gen_split(rng, size):
    """SPLIT: 1-4 equal parts along an axis in [-rank, rank - 1] (the
    axis tensor a scalar or [1])."""
    dtype = rng.choice(COPY_TYPES)
    shape = _shape(rng, size, 1, 4)
    axis = rng.randint(-len(shape), len(shape) - 1)
    a = axis % len(shape)
    n = rng.randint(1, 4)
    shape[a] = n * rng.randint(1, size)
    out = list(shape)
    out[a] //= n
    qi, qo = _io(rng, dtype)
    at = _i32([axis], [] if rng.random() < 0.5 else [1])
    return opgen.single_op("SPLIT", [at, T(shape, dtype, **qi)],
                           [T(out, dtype, **qo) for _ in range(n)])


def gen_split_v(rng, size):
    """SPLIT_V: 1-4 parts of sizes >= 1 along an axis in [-rank, rank -
    1]; size_splits holds them, one sometimes -1."""
    dtype = rng.choice(COPY_TYPES)
    shape = _shape(rng, size, 1, 4)
    axis = rng.randint(-len(shape), len(shape) - 1)
    a = axis % len(shape)
    n = rng.randint(1, 4)
    parts = [rng.randint(1, size + 1) for _ in range(n)]
    shape[a] = sum(parts)
    splits = list(parts)
    if rng.random() < 0.3:
        splits[rng.randrange(n)] = -1
    qi, qo = _io(rng, dtype)
    outs = []
    for p in parts:
        o = list(shape)
        o[a] = p
        outs.append(T(o, dtype, **qo))
    ins = [T(shape, dtype, **qi), _i32(splits),
           _i32([axis], [] if rng.random() < 0.5 else [1])]
    return opgen.single_op("SPLIT_V", ins, outs)


# --- SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND -----------------------------------

def _space_params(rng, rank):
    n = rank - 2
    return [rng.randint(1, 3) for _ in range(n)]


def gen_space_to_batch(rng, size, padded=False):
    """SPACE_TO_BATCH_ND: rank 3 or 4, float32 / int8, blocks 1-3, sizes
    divisible by the block. padded: paddings 0-3 per side that make the
    padded size divisible; not in GENERATORS, because TFLM never sets
    the padding value (SpaceToBatchParams.output_offset is left
    uninitialized): tests/test_ops_movement.py checks padded cases
    against numpy."""
    dtype = rng.choice(("int8", "int8", "float32"))
    rank = rng.choice((3, 4, 4))
    shape = [rand.dim(rng, size) for _ in range(rank)]
    shape[0] = min(shape[0], 3)
    blk = _space_params(rng, rank)
    pads, out = [], [shape[0] * int(np.prod(blk))]
    for i, b in enumerate(blk):
        d = shape[1 + i]
        lo = hi = 0
        if padded:
            lo, hi = rng.randint(0, 3), rng.randint(0, 3)
            hi += (-(d + lo + hi)) % b
        else:
            d = shape[1 + i] = b * rng.randint(1, size)
        pads.append([lo, hi])
        out.append((d + lo + hi) // b)
    out += shape[1 + len(blk):]
    qi, qo = _io(rng, dtype)
    return _space_model(rng, "SPACE_TO_BATCH_ND", T(shape, dtype, **qi),
                        blk, pads, T(out, dtype, **qo))


def _space_model(rng, op, x, blk, pads, y):
    """The model; block_shape and paddings / crops are model inputs 1
    time in 5 (TFLM reads them at invoke)."""
    pads = np.array(pads, np.int32)
    if rng.random() < 0.8:
        ins = [x, _i32(blk), _i32(pads.ravel(), [len(blk), 2])]
        return opgen.single_op(op, ins, [y])
    ins = [x, T([len(blk)], "int32"), T([len(blk), 2], "int32")]
    return (opgen.single_op(op, ins, [y]),
            [None, np.array(blk, np.int32), pads])


def gen_batch_to_space(rng, size):
    """BATCH_TO_SPACE_ND: rank 3 or 4, float32 / int8, blocks 1-3, crops
    that leave at least one row and column."""
    dtype = rng.choice(("int8", "int8", "float32"))
    rank = rng.choice((3, 4, 4))
    blk = _space_params(rng, rank)
    nb = int(np.prod(blk))
    shape = [rand.dim(rng, size) for _ in range(rank)]
    shape[0] = nb * min(shape[0], 2)
    crops, out = [], [shape[0] // nb]
    for i, b in enumerate(blk):
        full = shape[1 + i] * b
        lo = rng.randint(0, min(3, full - 1))
        hi = rng.randint(0, min(3, full - 1 - lo))
        crops.append([lo, hi])
        out.append(full - lo - hi)
    out += shape[1 + len(blk):]
    qi, qo = _io(rng, dtype)
    return _space_model(rng, "BATCH_TO_SPACE_ND", T(shape, dtype, **qi),
                        blk, crops, T(out, dtype, **qo))


# --- DEPTH_TO_SPACE / SPACE_TO_DEPTH ----------------------------------------

def _depth_space(rng, size, op):
    """[B, H, W, bs*bs*C] <-> [B, H*bs, W*bs, C], block sizes 1-4, float32
    or int8 (the output's quantization sometimes differs: TFLM copies the
    bytes unchanged)."""
    dtype = rng.choice(("int8", "int8", "float32"))
    bs = rng.choice((1, 2, 2, 2, 3, 4))
    b = rng.randint(1, 2)
    h, w = rng.randint(1, max(1, size)), rng.randint(1, max(1, size))
    c = rng.randint(1, 4)
    deep, flat = [b, h, w, bs * bs * c], [b, h * bs, w * bs, c]
    x, y = (deep, flat) if op == "DEPTH_TO_SPACE" else (flat, deep)
    qi, qo = _io(rng, dtype)
    return opgen.single_op(op, [T(x, dtype, **qi)], [T(y, dtype, **qo)],
                           {"blockSize": bs})


def gen_depth_to_space(rng, size):
    return _depth_space(rng, size, "DEPTH_TO_SPACE")


def gen_space_to_depth(rng, size):
    return _depth_space(rng, size, "SPACE_TO_DEPTH")


GENERATORS = {
    "PADV2": gen_padv2,
    "STRIDED_SLICE": gen_strided_slice,
    "SLICE": gen_slice,
    "PACK": gen_pack,
    "UNPACK": gen_unpack,
    "SPLIT": gen_split,
    "SPLIT_V": gen_split_v,
    "SPACE_TO_BATCH_ND": gen_space_to_batch,
    "BATCH_TO_SPACE_ND": gen_batch_to_space,
    "DEPTH_TO_SPACE": gen_depth_to_space,
    "SPACE_TO_DEPTH": gen_space_to_depth,
}

# Our runtime must run every model these generators make.
STRICT = tuple(GENERATORS)
