"""Conformance generator: BATCH_MATMUL (see the package docstring for the
interface).

int8 (most cases), float32 and int16; lhs and rhs of rank 2 to 5 each,
batch dimensions that broadcast (equal, or 1 on either side, the lower
rank padded with leading 1s); adj_x and adj_y at random; the rhs (and
sometimes the lhs) a constant at times, so that the kernel's
prepare-time transpose runs; depths up to 2 * size + 1, sometimes past
the 128-value gather chunk (then with small other dimensions, so that
every model runs at a 192 KiB heap). int8: scales log-uniform, zero points over
the whole range, the output scale from a requantization multiplier
2**-16 .. 2 times the input scales' product; int16: zero points 0, a
multiplier 2**-24 .. 4. Sometimes an output of higher rank with the
same element count (TFLM only compares element counts).
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor


def _const(rng, shape, dtype):
    g = np.random.default_rng(rng.getrandbits(32))
    if dtype == "float32":
        return (g.standard_normal(shape) * 3).astype(np.float32)
    if dtype == "int16":
        return g.integers(-32768, 32768, size=shape).astype(np.int16)
    return rand.int8_array(rng, shape)


def gen_batch_matmul(rng, size):
    """BATCH_MATMUL: int8 / float32 / int16, ranks 2-5 with broadcast
    batch dimensions, adj_x / adj_y, constant operands."""
    dtype = rng.choice(("int8", "int8", "int8", "float32", "int16"))
    A, C = rand.dim(rng, size), rand.dim(rng, size)
    B = rand.dim(rng, size)
    deep = rng.random() < 0.1
    if deep:  # past the gather chunk; small elsewhere (a 192 KiB heap)
        B = rng.randint(100, 300)
        A, C = min(A, 5), min(C, 5)
    nb = rng.randint(0, 1 if deep else 3)  # batch dimensions of the output
    batch = [rand.dim(rng, 1 if deep else size) for _ in range(nb)]
    item = {"int8": 1, "int16": 2}.get(dtype, 4)
    while batch and (int(np.prod(batch)) * max(A * B, B * C, A * C) * item
                     > 24576):
        batch.pop(0)  # every tensor within 24 KiB
    nb = len(batch)
    lb, rb = [], []
    for d in batch:
        u = rng.random()
        lb.append(1 if u < 0.2 else d)
        rb.append(1 if 0.2 <= u < 0.4 else d)
    # drop some leading batch dimensions of one side (broadcast by rank)
    kl = rng.randint(0, nb) if rng.random() < 0.3 else 0
    kr = rng.randint(0, nb) if rng.random() < 0.3 else 0
    lb, rb = lb[kl:], rb[kr:]
    batch = [max(a, b) for a, b in zip([1] * (nb - len(lb)) + lb,
                                       [1] * (nb - len(rb)) + rb)]
    batch = batch[nb - max(len(lb), len(rb)):]
    adj_x, adj_y = rng.random() < 0.4, rng.random() < 0.4
    lshape = lb + ([B, A] if adj_x else [A, B])
    rshape = rb + ([C, B] if adj_y else [B, C])
    out = batch + [A, C]
    if len(out) < 5 and rng.random() < 0.05:
        out = [1] + out
    if dtype == "int8":
        ql = dict(scale=rand.scale(rng), zero_point=rand.zero_point(rng))
        qr = dict(scale=rand.scale(rng), zero_point=rand.zero_point(rng))
        m = 2.0 ** rng.uniform(-16, 1)
        qo = dict(scale=float(np.float32(ql["scale"] * qr["scale"] / m)),
                  zero_point=rand.zero_point(rng))
    elif dtype == "int16":
        ql = dict(scale=rand.scale(rng), zero_point=0)
        qr = dict(scale=rand.scale(rng), zero_point=0)
        m = 2.0 ** rng.uniform(-24, 2)
        qo = dict(scale=float(np.float32(ql["scale"] * qr["scale"] / m)),
                  zero_point=0)
    else:
        ql = qr = qo = {}
    lhs = T(lshape, dtype, **ql)
    rhs = T(rshape, dtype, **qr)
    if rng.random() < 0.4:
        rhs = T(rshape, dtype, data=_const(rng, rshape, dtype), **qr)
    elif rng.random() < 0.15:
        lhs = T(lshape, dtype, data=_const(rng, lshape, dtype), **ql)
    return opgen.single_op("BATCH_MATMUL", [lhs, rhs], [T(out, dtype, **qo)],
                           {"adj_x": adj_x, "adj_y": adj_y})


GENERATORS = {"BATCH_MATMUL": gen_batch_matmul}
STRICT = tuple(GENERATORS)
