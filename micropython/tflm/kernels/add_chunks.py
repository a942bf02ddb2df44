"""The chunked evals of ADD and SUB (add.py): outputs of fewer than
add.LUT_MIN elements, int16 ones, and broadcasts that are not one loop.

Eval gathers chunks of both operands (broadcast.gather) into the two
halves of the shared scratch array and requantizes them with
rescale.scale_i32, as add.py's docstring describes; eval_lut_chunks runs
a lookup-table kernel (add._add_lut, squared_difference._sqdiff_lut) on
gathered chunks of a broadcast. A module of its own so that a model whose
ADDs all take add.py's one-pass table path (ResNet-style residual adds)
does not keep this code, rescale's and broadcast's in RAM: the kernels
package imports it only for the models that need it (kernels._LAZY,
Model.used_codes' SMALL flag).
"""

import micropython

from .rescale import scale_i32, store_i8  # noqa: F401 (add.prepare_quant)
from . import broadcast


def eval_chunks(state):
    """ADD / SUB eval over chunks of the output (add.prepare_quant)."""
    (d1, d2, yd, total, sa, sb, half, st, m1, s1, m2, s2, mo, so,
     qp, sub, store) = state
    broadcast.reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, st)
        scale_i32(sa, n, m1, s1, 0)
        scale_i32(sb, n, m2, s2, 0)
        sum_into(sa, sb, n, sub)
        scale_i32(sa, n, mo, so, 0)
        store(sa, n, yd, off, qp)
        off += n


@micropython.viper
def sum_into(a, b, n: int, sub: int):
    """a[i] += b[i], or a[i] -= b[i] if sub (int32; the values are below
    2**28 in magnitude, so no overflow)."""
    pa = ptr32(a)
    pb = ptr32(b)
    i: int = 0
    if sub:
        while i < n:
            pa[i] = pa[i] - pb[i]
            i += 1
        return
    while i < n:
        pa[i] = pa[i] + pb[i]
        i += 1


def eval_lut_chunks(state):
    """A lookup-table kernel over chunks of a broadcast (add.bind_lut)."""
    kernel, kst, d1, d2, st, half, total = state
    sa, sb, _, prm, _ = kst
    broadcast.reset(st)
    prm[16] = 0
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, st)
        prm[0] = n
        prm[15] = off
        kernel(0, 0, 0, kst)
        prm[16] = 1  # the tables stay valid for the rest of this eval
        off += n
