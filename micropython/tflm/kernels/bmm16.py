"""BATCH_MATMUL int16 (called by batch_matmul.prepare for int16 inputs;
kernels._LAZY).

Follows tensorflow/lite/micro/kernels/batch_matmul.cc (EvalInt16:
reference_ops::BatchMatMul<int16_t, int64_t> of
tensorflow/lite/kernels/internal/reference/batch_matmul.h), zero points
all 0 (TFLM's Prepare requires it):

    acc = sum_k lhs[i, k] * rhs[k, j]                        (int64)
    out = clamp(MultiplyByQuantizedMultiplier(acc, m, s), -32768, 32767)

with the int64 MultiplyByQuantizedMultiplier (wide.finish: the reduced
multiplier, total shift 15 - s; a shift above 14 is refused, where
TFLM's rounding would shift by a negative amount). Each int16 x int16
product (|p| <= 2**30) is split into its low 16 bits and the rest,
summed in two words and carried into 16-bit limbs every 4096 products,
so the code is the same on 32- and 64-bit ports. Operands are read
bytewise where they are (any alignment, no transposed copies).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .quantize import store_i16
from .wide import finish, reduced

# geometry words (batch_matmul.G_WORDS), as batch_matmul's _G_* names
_G_D0 = const(0)
_G_D1 = const(1)
_G_D2 = const(2)
_G_LE0 = const(3)
_G_LE1 = const(4)
_G_LE2 = const(5)
_G_RE0 = const(6)
_G_RE1 = const(7)
_G_RE2 = const(8)
_G_A = const(9)
_G_B = const(10)
_G_C = const(11)
_G_ADJ_X = const(12)
_G_ADJ_Y = const(13)
# after them: NC (outputs per chunk: scratch words // 4)
_P_NC = const(14)
_UNIT_CHUNK = const(128)
_CARRY = const(4096)  # products summed before the limbs are carried


def prepare(op, x, w, y, g, m, s, ctx):
    """int16 BATCH_MATMUL: x (lhs), w (rhs), y (output), g the geometry
    words that batch_matmul.geometry checked, (m, s) the requantization
    multiplier (batch_matmul.multiplier). Raises PrepareError for a
    non-zero zero point or a shift above 14."""
    from .conv_util import keep, limit_scratch
    for t in (x, w, y):
        if t.zero_point != 0:
            raise PrepareError("%s: int16 %s has zero point %d, must be 0"
                               % (op.label(), t.label(), t.zero_point))
    r = reduced(m, s)
    if r is None:
        raise PrepareError("%s: requantization multiplier too large for "
                           "int64 accumulation (shift %d)" % (op.label(), s))
    limit_scratch(ctx, 4 * min(max(g[_G_C], 1), _UNIT_CHUNK))
    nc = max(ctx.scratch_len // 4, 1)
    if ctx.scratch_len < 4:
        raise PrepareError("%s: needs 4 scratch words, interpreter has %d"
                           % (op.label(), ctx.scratch_len))
    # the multiplier and shift per output of a chunk (wide.finish)
    ms = array("i", [r[0]] * nc)
    ss = array("i", [r[1]] * nc)
    # in the order of the _S_ slots (below)
    st = (keep(ctx, array("i", g + [nc])), x.data, w.data, y.data,
          ctx.scratch, keep(ctx, ms), keep(ctx, ss),
          keep(ctx, array("i", [0, -32768, 32767])))
    return _eval, st


_S_G = const(0)
_S_LHS = const(1)
_S_RHS = const(2)
_S_OUT = const(3)
_S_SCRATCH = const(4)
_S_MS = const(5)
_S_SS = const(6)
_S_QP = const(7)


def _eval(st):
    _bmm16(st)


@micropython.viper
def _bmm16(st):
    g = ptr32(st[_S_G])
    D0: int = g[_G_D0]
    D1: int = g[_G_D1]
    D2: int = g[_G_D2]
    A: int = g[_G_A]
    C: int = g[_G_C]
    oo: int = 0
    i0: int = 0
    while i0 < D0:
        i1: int = 0
        while i1 < D1:
            i2: int = 0
            while i2 < D2:
                lo: int = i0 * g[_G_LE0] + i1 * g[_G_LE1] + i2 * g[_G_LE2]
                ro: int = i0 * g[_G_RE0] + i1 * g[_G_RE1] + i2 * g[_G_RE2]
                i: int = 0
                while i < A:
                    _row16(st, lo, ro, i, oo)
                    oo += C
                    i += 1
                i2 += 1
            i1 += 1
        i0 += 1


@micropython.viper
def _row16(st, lo: int, ro: int, i: int, oo: int):
    """Output row i of a batch (lhs from element lo, rhs from element
    ro) into out[oo:], in chunks of NC outputs: 16-bit limbs in the
    scratch, wide.finish, store_i16."""
    g = ptr32(st[_S_G])
    xb = ptr8(st[_S_LHS])
    wb = ptr8(st[_S_RHS])
    out = st[_S_OUT]
    scr = st[_S_SCRATCH]
    sp = ptr32(scr)
    ms = st[_S_MS]
    ss = st[_S_SS]
    qp = st[_S_QP]
    A: int = g[_G_A]
    B: int = g[_G_B]
    C: int = g[_G_C]
    NC: int = g[_P_NC]
    # byte steps: along the depth and between outputs / rows
    xs: int = 2  # lhs along k
    xa0: int = 2 * (lo + i * B)
    if g[_G_ADJ_X]:
        xs = 2 * A
        xa0 = 2 * (lo + i)
    ws: int = 2 * C  # rhs along k
    wj: int = 2  # rhs per output column
    if g[_G_ADJ_Y]:
        ws = 2
        wj = 2 * B
    u0: int = 0
    while u0 < C:
        n: int = C - u0
        if n > NC:
            n = NC
        k: int = 0
        while k < n:
            xa: int = xa0
            wa: int = 2 * ro + (u0 + k) * wj
            l0: int = 0
            l1: int = 0
            l2: int = 0
            l3: int = 0
            d: int = 0
            while d < B:
                e: int = d + _CARRY
                if e > B:
                    e = B
                while d < e:
                    pr: int = ((((xb[xa] | (xb[xa + 1] << 8)) ^ 0x8000)
                                - 0x8000)
                               * (((wb[wa] | (wb[wa + 1] << 8)) ^ 0x8000)
                                  - 0x8000))
                    l0 += pr & 0xFFFF
                    l1 += pr >> 16
                    xa += xs
                    wa += ws
                    d += 1
                l1 += l0 >> 16
                l0 = l0 & 0xFFFF
                l2 += l1 >> 16
                l1 = l1 & 0xFFFF
                l3 += l2 >> 16
                l2 = l2 & 0xFFFF
            j: int = 4 * k
            sp[j] = l0
            sp[j + 1] = l1
            sp[j + 2] = l2
            sp[j + 3] = l3
            k += 1
        finish(scr, n, ms, ss)
        store_i16(scr, n, out, oo + u0, qp)
        u0 += n
