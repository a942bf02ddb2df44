"""BATCH_MATMUL float32 (called by batch_matmul.prepare for float32
inputs; kernels._LAZY).

Follows tensorflow/lite/kernels/internal/reference/batch_matmul.h
(BatchMatMul<float>, which TFLM's batch_matmul.cc calls with the rhs
transposed and the operands swapped): for every output element

    total = 0.0; total = fl(total + fl(lhs[i, k] * rhs[k, j])), k = 0..B-1

in float32, in that order, with no clamp (no activation). f32.dot runs
that loop bit-exactly on every port, reading both operands with strides
where they are: TFLM's transposed copies (adj_x, no adj_y) change the
layout, not the arithmetic, so none is made here. One dot call per
output row (C outputs, the rhs moving a column per output).
"""

from array import array

import micropython
from micropython import const

from . import f32

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
# f32.dot's parameter slots that eval moves (f32.DOT_SLOTS)
_DOT_X = const(0)
_DOT_W = const(1)
_DOT_OUT = const(12)


def prepare(op, x, w, y, g, ctx):
    """float32 BATCH_MATMUL: x (lhs), w (rhs), y (output) and g the
    geometry words that batch_matmul.geometry checked. Constants at an
    unaligned address are copied once (f32.words). Returns (eval, st)."""
    from .conv_util import keep
    A, B, C = g[_G_A], g[_G_B], g[_G_C]
    adj_x, adj_y = g[_G_ADJ_X], g[_G_ADJ_X + 1]
    p = f32.slots(f32.DOT_SLOTS)
    # dot's loops: n2 = n1 = 1, n0 = B over the depth
    p[2] = 1
    p[5] = 1
    p[8] = B
    p[9] = A if adj_x else 1  # lhs stride along the depth
    p[10] = 1 if adj_y else C  # rhs stride along the depth
    p[11] = -1  # no bias
    p[13] = C  # outputs per call: one output row
    p[16] = B if adj_y else 1  # the rhs moves a column per output
    # acc from +0.0, no clamp (-inf .. +inf: NaN and +-inf pass)
    q = f32.consts(f32.ZERO, f32.NEG_INF, f32.INF, f32.ONE)
    # in the order of the _S_ slots (below)
    st = (keep(ctx, array("i", g)), keep(ctx, p), keep(ctx, q),
          f32.words(x, ctx), f32.words(w, ctx), y.data)
    return _eval, st


_S_G = const(0)
_S_DOT = const(1)
_S_Q = const(2)
_S_LHS = const(3)
_S_RHS = const(4)
_S_OUT = const(5)


def _eval(st):
    _bmm(st, f32.dot)


@micropython.viper
def _bmm(st, dot):
    g = ptr32(st[_S_G])
    p = st[_S_DOT]
    pp = ptr32(p)
    q = st[_S_Q]
    x = st[_S_LHS]
    w = st[_S_RHS]
    out = st[_S_OUT]
    D0: int = g[_G_D0]
    D1: int = g[_G_D1]
    D2: int = g[_G_D2]
    A: int = g[_G_A]
    B: int = g[_G_B]
    C: int = g[_G_C]
    xrow: int = B  # lhs step per output row
    if g[_G_ADJ_X]:
        xrow = 1
    if C == 0:  # dot makes one output for a count of 0
        return
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
                    pp[_DOT_X] = lo + i * xrow
                    pp[_DOT_W] = ro
                    pp[_DOT_OUT] = oo
                    dot(p, q, x, w, out, out)
                    oo += C
                    i += 1
                i2 += 1
            i1 += 1
        i0 += 1
