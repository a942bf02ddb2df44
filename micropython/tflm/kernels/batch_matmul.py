"""BATCH_MATMUL: batches of matrix products, int8, int16 and float32.

Follows tensorflow/lite/micro/kernels/batch_matmul.cc (BatchMatMulPrepare,
BatchMatMulEval), batch_matmul_common.cc (ReshapeOutputTensor) and
tensorflow/lite/kernels/internal/reference/batch_matmul.h:
inputs lhs [..., A, B] (adj_x: [..., B, A]) and rhs [..., B, C] (adj_y:
[..., C, B]) of rank 2 to 5, output [..., A, C] whose batch dimensions
are the broadcast of the inputs' (each pair equal, or one of them 1):

    out[b, i, j] = sum_k lhs[b, i, k] * rhs[b, k, j]

int8 (int32 sum, per-tensor requantization, TFLM's FullyConnectedParams):

    acc = sum_k (lhs - lhs_zp) * (rhs - rhs_zp)               (int32)
    out = clamp(MultiplyByQuantizedMultiplier(acc, m, s) + out_zp,
                -128, 127)

with (m, s) from (double)lhs_scale * (double)rhs_scale / out_scale
(GetQuantizedConvolutionMultipler, QuantizeMultiplier), as
FULLY_CONNECTED's. The sums run in FULLY_CONNECTED's loop, mac.dots
(thumb.py's machine code on Cortex-M, mac.py's viper elsewhere), each
output row's lhs values gathered once (v = lhs - lhs_zp) against the
rhs columns as byte rows: an rhs with adj_y is used where it is; one
without (TFLM transposes it at every eval, once when it is constant) is
transposed into a work buffer per batch, or once at prepare into the
arena's persistent tail when it is a constant; an lhs with adj_x is
transposed into a work buffer per batch (as TFLM does). A batch that
broadcasting repeats is not transposed again.

int16 (bmm16.py): zero points 0, int64 sums, the int64
MultiplyByQuantizedMultiplier. float32 (bmm_f32.py): acc = 0.0, then
acc = fl(acc + fl(lhs * rhs)) for k in order, unclamped, bit-exact.

Refused (PrepareError naming op and tensor): other types or mixed ones
(TFLM: hybrid float / int8 is not supported), ranks outside 2..5, batch
dimensions that do not broadcast, unequal depths, an output of lower
rank or another element count than the product's (TFLM rewrites the
output's dims and checks only those), missing quantization, zero
points outside int8 (int8) or non-zero (int16, as TFLM), a
requantization shift above 30 (int8) or 14 (int16: TFLM's int64
rounding would shift by a negative amount).
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from ..fixedpoint import requant_i8b
from . import DSP, THUMB

# The loop: Thumb machine code on Cortex-M, viper elsewhere (THUMB)
mac = None
if THUMB:
    try:
        if DSP:  # Cortex-M4/M7/M33: SXTB16 and SMLAD
            from . import thumb_dsp as mac
        else:
            from . import thumb as mac
    except (ImportError, SyntaxError, ValueError):
        mac = None
if mac is None:
    from . import mac

_FLOAT32 = const(0)
_INT16 = const(7)
_INT8 = const(9)
_BATCH_MATMUL_OPTIONS = const(101)
_BATCH_MATMUL_ADJ_X = const(0)
_BATCH_MATMUL_ADJ_Y = const(1)
# Depth values gathered at once (window words after the block); deeper
# products are summed in chunks of this many.
_GATHER_MAX = const(128)
# Most output columns whose sums are kept at once (scratch words).
_UNIT_CHUNK = const(128)
# int32 words before the gathered values in the window: the block that
# mac.dots reads (DOTS_BLOCK in thumb.py, then REL), by name
_D_V = const(0)
_D_V8 = const(1)
_D_VE = const(2)
_D_WP = const(3)
_D_WS = const(4)
_D_BP = const(5)
_D_BASE = const(6)
_D_OUT = const(7)
_D_NF = const(8)
_REL = const(9)
_BLK = const(10)

# The geometry words (geometry(), the first _G words of every variant's
# parameter block): the output's batch dimensions D0..D2 (the rank-5
# extended shape's first three), each input's element stride for them
# (0 where it broadcasts: TFLM's extent()), A (output rows), B (depth),
# C (output columns), ADJ_X, ADJ_Y.
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
G_WORDS = 14
# int8 words after the geometry: TX (transpose the lhs per batch), TY
# (transpose the rhs per batch), N (columns per chunk: the scratch), DC
# (depth per gather), XO (-lhs_zp - 128), WO (-rhs_zp - 128), REL (1 on
# 64-bit ports: the block's addresses are relative to it, see mac.py).
_P_TX = const(14)
_P_TY = const(15)
_P_N = const(16)
_P_DC = const(17)
_P_XO = const(18)
_P_WO = const(19)
_P_REL = const(20)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def options(op):
    """(adj_x, adj_y): BatchMatMulOptions' flags, False when the table is
    absent or of another type (TFLM's parser defaults)."""
    if op.options_type != _BATCH_MATMUL_OPTIONS:
        return 0, 0
    return (1 if op.opt_byte(_BATCH_MATMUL_ADJ_X, 0) else 0,
            1 if op.opt_byte(_BATCH_MATMUL_ADJ_Y, 0) else 0)


def _ext(shape, x):
    """TFLM's extent(): 0 where dimension x is 1, else the elements after
    it (shape: rank 5)."""
    if shape[x] == 1:
        return 0
    n = 1
    for d in shape[x + 1:]:
        n *= d
    return n


def geometry(op, ins, outs):
    """(lhs, rhs, out, g) after BatchMatMulPrepare's checks: g the
    geometry words (G_WORDS ints, see _G_*). Raises PrepareError."""
    if len(ins) != 2 or len(outs) != 1 or None in ins or outs[0] is None:
        _fail(op, "needs lhs, rhs and one output")
    x, w, y = ins[0], ins[1], outs[0]
    if x.type not in (_FLOAT32, _INT8, _INT16):
        _fail(op, "lhs %s is %s; only float32, int8 and int16 are "
              "supported" % (x.label(), x.dtype))
    for t, what in ((w, "rhs"), (y, "output")):
        if t.type != x.type:
            _fail(op, "%s %s is %s, lhs %s is %s (mixed types are not "
                  "supported)" % (what, t.label(), t.dtype, x.label(),
                                  x.dtype))
    for t, what in ((x, "lhs"), (w, "rhs")):
        if not 2 <= len(t.shape) <= 5:
            _fail(op, "%s %s has rank %d; BATCH_MATMUL takes ranks 2 to 5"
                  % (what, t.label(), len(t.shape)))
    adj_x, adj_y = options(op)
    rank = max(len(x.shape), len(w.shape))
    ls = (1,) * (5 - len(x.shape)) + tuple(x.shape)
    rs = (1,) * (5 - len(w.shape)) + tuple(w.shape)
    dims = []
    for i in range(5 - rank, 3):
        a, b = ls[i], rs[i]
        if a != b and a != 1 and b != 1:
            _fail(op, "batch dimensions of lhs %s %s and rhs %s %s do not "
                  "broadcast" % (x.label(), x.shape, w.label(), w.shape))
        dims.append(b if a == 1 else a)
    A, B = (ls[4], ls[3]) if adj_x else (ls[3], ls[4])
    C, B2 = (rs[3], rs[4]) if adj_y else (rs[4], rs[3])
    if B != B2:
        _fail(op, "lhs %s %s (adj_x %d) and rhs %s %s (adj_y %d) have "
              "depths %d and %d" % (x.label(), x.shape, adj_x, w.label(),
                                    w.shape, adj_y, B, B2))
    n = A * C
    for d in dims:
        n *= d
    if len(y.shape) < rank or y.size != n:
        _fail(op, "output %s shape %s, expected %s" % (
            y.label(), y.shape, tuple(dims + [A, C])))
    dims = [1] * (3 - len(dims)) + dims
    g = dims + [_ext(ls, 0), _ext(ls, 1), _ext(ls, 2),
                _ext(rs, 0), _ext(rs, 1), _ext(rs, 2), A, B, C, adj_x,
                adj_y]
    return x, w, y, g


def multiplier(op, x, w, y):
    """(m, shift): QuantizeMultiplier((double)lhs_scale * rhs_scale /
    out_scale), GetQuantizedConvolutionMultipler's. Raises PrepareError
    for a tensor without quantization or a bad scale."""
    from .. import quant
    for t in (x, w, y):
        if not t.scales:
            _fail(op, "%s has no quantization" % t.label())
    try:
        return quant.conv_multiplier(x.scale, w.scale, y.scale)
    except ModelError as e:
        _fail(op, str(e))


@micropython.viper
def _t8(src, off: int, dst, rows: int, cols: int):
    """dst[c * rows + r] = src[off + r * cols + c]: a rows x cols byte
    matrix transposed (src at any address)."""
    s = ptr8(src)
    d = ptr8(dst)
    r: int = 0
    while r < rows:
        k: int = off + r * cols
        j: int = r
        e: int = k + cols
        while k < e:
            d[j] = s[k]
            k += 1
            j += rows
        r += 1


def prepare(op, ins, outs, ctx):
    """Check a BATCH_MATMUL op and bind its eval.

    ins: lhs, rhs (float32, int8 or int16, both the output's type, rank
    2-5); outs: the product (see the module doc). BatchMatMulOptions:
    adj_x, adj_y (asymmetric_quantize_inputs: hybrid models only, which
    TFLM refuses). int16 and float32 go to bmm16 / bmm_f32. Raises
    PrepareError.
    """
    from .conv_util import (WORD, check_near, keep, limit_scratch,
                            work_buffer)
    from ..heap import persistent
    x, w, y, g = geometry(op, ins, outs)
    if x.type == _FLOAT32:
        from .bmm_f32 import prepare as prepare_f32
        return prepare_f32(op, x, w, y, g, ctx)
    m, s = multiplier(op, x, w, y)
    if x.type == _INT16:
        from .bmm16 import prepare as prepare16
        return prepare16(op, x, w, y, g, m, s, ctx)
    if s > 30:
        _fail(op, "requantization multiplier too large (shift %d)" % s)
    for t in (x, w, y):
        if not -128 <= t.zero_point <= 127:
            _fail(op, "%s zero point %d is outside int8"
                  % (t.label(), t.zero_point))
    A, B, C = g[_G_A], g[_G_B], g[_G_C]
    adj_x, adj_y = g[_G_ADJ_X], g[_G_ADJ_Y]
    limit_scratch(ctx, min(C, _UNIT_CHUNK))
    dc = min(max(B, 1), _GATHER_MAX)
    win = work_buffer(ctx, _BLK + dc)
    # the lhs, transposed per batch (adj_x)
    tl = work_buffer(ctx, (A * B + 3) // 4, True) if adj_x else None
    rw = w.data
    ty = 0
    if not adj_y:
        if w.is_const:  # transposed once, here (the arena's tail)
            sizing = getattr(ctx, "sizing", False)
            rw = persistent(ctx, "b", max(w.size, 1), sizing)
            if not sizing:
                step = B * C
                for k in range(0, w.size, max(step, 1)):
                    _t8(w.data, k, memoryview(rw)[k:], B, C)
        else:
            ty = 1
    tr = work_buffer(ctx, (B * C + 3) // 4, True) if ty else None
    check_near(op, ctx, win, (ctx.scratch, x.data, rw, tl, tr))
    prm = array("i", g + [adj_x, ty, ctx.scratch_len, dc,
                          -x.zero_point - 128, -w.zero_point - 128,
                          WORD // 8])
    # in the order of the _S_ slots (below)
    state = (keep(ctx, prm), x.data, rw, y.data, ctx.scratch, win,
             y.data if tl is None else tl, y.data if tr is None else tr,
             keep(ctx, array("i", [m])), keep(ctx, array("b", [s]), 1),
             keep(ctx, array("i", [y.zero_point, -128, 127])), mac.dots)
    return _eval, state


# The int8 eval state (prepare's state), by named slot:
_S_PARAMS = const(0)
_S_LHS = const(1)
_S_RHS = const(2)  # the rhs, or its transposed copy (constant, no adj_y)
_S_OUT = const(3)
_S_ACC = const(4)
_S_WIN = const(5)
_S_TL = const(6)
_S_TR = const(7)
_S_MULT = const(8)
_S_SHIFT = const(9)
_S_QP = const(10)
_S_MAC = const(11)


def _eval(st):
    _bmm8(st)


@micropython.viper
def _bmm8(st):
    """Every batch of the output (the broadcast of the inputs' batch
    dimensions): the lhs and rhs batches transposed where TX / TY say
    (not again when broadcasting repeats one), then _rows8."""
    p = ptr32(st[_S_PARAMS])
    lhs = st[_S_LHS]
    rhs = st[_S_RHS]
    tl = st[_S_TL]
    tr = st[_S_TR]
    D0: int = p[_G_D0]
    D1: int = p[_G_D1]
    D2: int = p[_G_D2]
    A: int = p[_G_A]
    B: int = p[_G_B]
    C: int = p[_G_C]
    tx: int = p[_P_TX]
    ty: int = p[_P_TY]
    last_l: int = -1
    last_r: int = -1
    oo: int = 0
    i0: int = 0
    while i0 < D0:
        i1: int = 0
        while i1 < D1:
            i2: int = 0
            while i2 < D2:
                lo: int = (i0 * p[_G_LE0] + i1 * p[_G_LE1]
                           + i2 * p[_G_LE2])
                ro: int = (i0 * p[_G_RE0] + i1 * p[_G_RE1]
                           + i2 * p[_G_RE2])
                if tx:
                    if lo != last_l:
                        _t8(lhs, lo, tl, B, A)
                        last_l = lo
                    lo = 0
                if ty:
                    if ro != last_r:
                        _t8(rhs, ro, tr, B, C)
                        last_r = ro
                    ro = 0
                _rows8(st, lo, ro, oo)
                oo += A * C
                i2 += 1
            i1 += 1
        i0 += 1


@micropython.viper
def _rows8(st, lo: int, ro: int, oo: int):
    """The A output rows of one batch, into out[oo:]: its lhs rows (B
    bytes each) from element lo of the lhs (the transposed copy with
    TX), the rhs columns (byte rows of B) from element ro of the rhs
    (its transposed copy with TY)."""
    p = ptr32(st[_S_PARAMS])
    xa0: int = int(ptr8(st[_S_LHS])) + lo
    if p[_P_TX]:
        xa0 = int(ptr8(st[_S_TL]))
    wa0: int = int(ptr8(st[_S_RHS])) + ro
    if p[_P_TY]:
        wa0 = int(ptr8(st[_S_TR]))
    win = st[_S_WIN]
    blk = ptr32(win)
    out = st[_S_OUT]
    acc = st[_S_ACC]
    mults = st[_S_MULT]
    shifts = st[_S_SHIFT]
    qp = st[_S_QP]
    dots = st[_S_MAC]
    pa: int = int(ptr32(acc))
    one: int = 1
    S: int = one << 31
    A: int = p[_G_A]
    B: int = p[_G_B]
    C: int = p[_G_C]
    N: int = p[_P_N]
    DC: int = p[_P_DC]
    xo: int = (p[_P_XO] ^ S) - S
    wo: int = (p[_P_WO] ^ S) - S
    r0: int = 0  # addresses in the block are relative to r0 (mac.py)
    if p[_P_REL]:
        r0 = int(blk)
    blk[_REL] = p[_P_REL]
    blk[_D_WS] = B
    v0: int = int(blk) + 4 * _BLK
    i: int = 0
    while i < A:
        xrow: int = xa0 + i * B
        u0: int = 0
        while u0 < C:
            n: int = C - u0
            if n > N:
                n = N
            k: int = 0
            while k < n:
                ptr32(pa)[k] = 0
                k += 1
            d0: int = 0
            while d0 < B:
                dn: int = B - d0
                if dn > DC:
                    dn = DC
                s: int = 0
                va: int = v0
                xa: int = xrow + d0
                xe: int = xa + dn
                while xa < xe:
                    v: int = (ptr8(xa)[0] ^ 0x80) + xo
                    ptr32(va)[0] = v
                    s += v
                    va += 4
                    xa += 1
                blk[_D_V] = v0 - r0
                blk[_D_V8] = v0 + 4 * (dn & ~7) - r0
                blk[_D_VE] = v0 + 4 * dn - r0
                blk[_D_WP] = wa0 + u0 * B + d0 - r0
                blk[_D_BP] = pa - r0
                blk[_D_BASE] = wo * s
                blk[_D_OUT] = pa - r0
                blk[_D_NF] = n
                dots(win, 0)
                d0 += dn
            requant_i8b(0, 0, 0, acc, n, 1, mults, shifts, qp, out,
                        oo + i * C + u0, 0)
            u0 += n
        i += 1
