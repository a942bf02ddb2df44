"""CUMSUM: running sums along one axis (int8, float32), inclusive or
exclusive, forward or reverse.

Follows tensorflow/lite/micro/kernels/cumsum.cc (CalculateOpData,
CumSumEval) and tensorflow/lite/kernels/internal/reference/cumsum.h:
inputs [input (rank >= 1), axis (one int32 value, negative counts from
the end)], output of the input's type and shape; CumsumOptions
exclusive (each output leaves its own element out) and reverse (sums
run from the end of the axis).

float32: acc = 0.0, then acc = fl(acc + x) along the axis in order (the
exclusive output is acc before the addition): f32.vec, bit-exact, run
across the longer of the dimensions before or after the axis.

int8, as TFLM computes it (left_shift 20, the input multiplier exactly
0.5, so each scaled input is (q - zp) * 2**19):

    acc = (-zp) * 2**19 (TFLM starts at the input offset, not 0: kept)
    acc += (q - zp) * 2**19                              (int32, wraps)
    out = clamp(MultiplyByQuantizedMultiplierSmallerThanOneExp(
                    acc, m, s) + out_zp, -128, 127)

(m, s) from 2 * in_scale / (2**20 * out_scale) in double. Eval works
line by line: a viper loop forms a chunk of a line's sums in the
interpreter's scratch, rescale.scale_i32 requantizes them, a strided
store writes them back.

Here the axis must be a constant (TFLM reads it at eval; an axis out of
range fails there: a PrepareError here), and an int8 output multiplier
outside (0, 1) is refused (TFLM aborts).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .rescale import scale_i32

_FLOAT32 = const(0)
_INT32 = const(2)
_INT8 = const(9)
_LEFT_SHIFT = const(20)
_CHUNK = const(64)  # scratch words for the int8 sums

_CUMSUM_OPTIONS = const(102)
_CUMSUM_EXCLUSIVE = const(0)
_CUMSUM_REVERSE = const(1)

# int8 parameter array (int32): elements before the axis, after it (the
# stride between a line's steps), the axis size, exclusive, reverse,
# -input zero point, output zero point.
_P_INNER = const(0)
_P_OUTER = const(1)
_P_DEPTH = const(2)
_P_EXCL = const(3)
_P_REV = const(4)
_P_BASE = const(5)
_P_ZP = const(6)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _sums(x, buf, p, start: int, d0: int, n: int, acc: int) -> int:
    """buf[k] = the int32 sum (shifted 19 bits left, wrapped) at the
    (d0 + k)-th step of the line starting at element start, for k < n;
    acc: the sum (not shifted) before step d0. Returns the sum after
    step d0 + n - 1."""
    px = ptr8(x)
    pb = ptr32(buf)
    q = ptr32(p)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    step: int = q[_P_OUTER]
    depth: int = q[_P_DEPTH]
    excl: int = q[_P_EXCL]
    zp: int = (q[_P_BASE] ^ S) - S
    k: int = 0
    while k < n:
        d: int = d0 + k
        if q[_P_REV]:
            d = depth - 1 - d
        y: int = ((px[start + d * step] ^ 0x80) - 0x80) + zp
        if excl:
            pb[k] = (((acc << 19) + S) & M) - S
            acc += y
        else:
            acc += y
            pb[k] = (((acc << 19) + S) & M) - S
        k += 1
    return acc


@micropython.viper
def _store(buf, out, p, start: int, d0: int, n: int):
    """out[start + step * d] = clamp(buf[k] + zp, -128, 127) for the
    (d0 + k)-th step d of the line (reversed if reverse), k < n."""
    pb = ptr32(buf)
    po = ptr8(out)
    q = ptr32(p)
    one: int = 1
    S: int = one << 31
    step: int = q[_P_OUTER]
    depth: int = q[_P_DEPTH]
    zp: int = (q[_P_ZP] ^ S) - S
    k: int = 0
    while k < n:
        d: int = d0 + k
        if q[_P_REV]:
            d = depth - 1 - d
        v: int = ((pb[k] ^ S) - S) + zp
        if v < -128:
            v = -128
        elif v > 127:
            v = 127
        po[start + d * step] = v
        k += 1


def _eval_i8(st):
    x, y, p, buf, chunk, m, s, inner, outer, depth, base = st
    i = 0
    while i < inner:
        o = 0
        while o < outer:
            start = i * depth * outer + o
            acc = base
            d = 0
            while d < depth:
                n = depth - d
                if n > chunk:
                    n = chunk
                acc = _sums(x, buf, p, start, d, n, acc)
                scale_i32(buf, n, m, s, 0)
                _store(buf, y, p, start, d, n)
                d += n
            o += 1
        i += 1


def _eval_f32(st):
    vec, x, y, p, q, one, zero, lines, step, depth, dstep, excl, rev = st
    # p: vec's parameters, the run across lines preset (count, strides)
    k = 0
    while k < lines:
        j = 0
        while j < depth:
            d = depth - 1 - j if rev else j
            pos = k * step + d * dstep
            p[6] = pos
            if j == 0:
                src = zero
                p[4] = p[5] = 0
            else:
                src = y
                p[4] = pos + dstep if rev else pos - dstep
                p[5] = p[8]
            if excl:
                if j == 0:
                    p[0] = p[1] = 0
                    vec(p, q, zero, one, zero, y)
                    j += 1
                    continue
                p[0] = p[4]
                p[1] = p[8]
                vec(p, q, x, one, src, y)
            else:
                p[0] = pos
                p[1] = p[8]
                vec(p, q, x, one, src, y)
            j += 1
        k += 1


def _prepare_f32(op, x, y, inner, outer, depth, excl, rev, ctx):
    from . import f32
    from .conv_util import keep
    p = f32.slots(f32.VEC_SLOTS)
    if outer >= inner:  # vec runs across the elements after the axis
        p[7], p[8] = outer, 1
        lines, step, dstep = inner, depth * outer, outer
    else:  # across the elements before it
        p[7], p[8] = inner, depth * outer
        lines, step, dstep = outer, 1, outer
    return _eval_f32, (f32.vec, f32.words(x, ctx), y.data, p,
                       keep(ctx, f32.consts(f32.NEG_INF, f32.INF)),
                       keep(ctx, f32.consts(f32.ONE)),
                       keep(ctx, f32.consts(f32.ZERO)), lines, step, depth,
                       dstep, excl, rev)


def _prepare_i8(op, x, y, inner, outer, depth, excl, rev, ctx):
    from .. import quant
    from . import check_int8
    from .conv_util import keep, limit_scratch
    check_int8(op, (x, y), "int8, float32")
    d = quant.div(quant.ldexp(quant.from_f32(x.scale), 1),
                  quant.ldexp(quant.from_f32(y.scale), _LEFT_SHIFT))
    m, s = quant.quantize_multiplier(d) if d[0] else (0, 1)
    if not d[0] or quant.cmp(d, (1, 0)) >= 0 or s > 0:
        _fail(op, "output multiplier 2 * %s scale / (2**20 * %s scale) "
              "must be in (0, 1)" % (x.label(), y.label()))
    limit_scratch(ctx, _CHUNK)
    chunk = min(_CHUNK, ctx.scratch_len)
    p = array("i", [inner, outer, depth, excl, rev, -x.zero_point,
                    y.zero_point])
    return _eval_i8, (x.data, y.data, keep(ctx, p), ctx.scratch, chunk,
                      keep(ctx, array("i", [m])), keep(ctx, array("i", [s])),
                      inner, outer, depth, -x.zero_point)


def prepare(op, ins, outs, ctx):
    """CUMSUM.

    ins: [input int8 / float32 (rank >= 1), axis (constant int32, one
    value in [-rank, rank))]; outs: [output of the input's type and
    shape]. CumsumOptions: exclusive, reverse. Raises PrepareError
    naming the op and tensor otherwise. Semantics: TFLM
    kernels/cumsum.cc, reference/cumsum.h.
    """
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs input, axis and one output")
    x, at, y = ins[0], ins[1], outs[0]
    if x.type not in (_FLOAT32, _INT8) or y.type != x.type:
        _fail(op, "input %s is %s, output %s is %s; TFLM supports float32 "
              "and int8, the same for both" % (x.label(), x.dtype,
                                              y.label(), y.dtype))
    if at.type != _INT32 or at.size != 1:
        _fail(op, "axis %s must be one int32 value" % at.label())
    rank = len(x.shape)
    if rank < 1 or tuple(y.shape) != tuple(x.shape):
        _fail(op, "input %s shape %s (rank >= 1) and output %s shape %s "
              "must be equal" % (x.label(), tuple(x.shape), y.label(),
                                 tuple(y.shape)))
    v = ctx.const_ints(op, at, "axis")
    if v is None:
        _fail(op, "axis %s must be a constant tensor" % at.label())
    axis = v[0] + rank if v[0] < 0 else v[0]
    if not 0 <= axis < rank:
        _fail(op, "axis %d is out of range for rank %d" % (v[0], rank))
    opts = op.options_type == _CUMSUM_OPTIONS
    excl = op.opt_byte(_CUMSUM_EXCLUSIVE, 0) if opts else 0
    rev = op.opt_byte(_CUMSUM_REVERSE, 0) if opts else 0
    inner = outer = 1
    for k in range(rank):
        if k < axis:
            inner *= x.shape[k]
        elif k > axis:
            outer *= x.shape[k]
    depth = x.shape[axis]
    if x.size == 0:
        inner = 0
    f = _prepare_i8 if x.type == _INT8 else _prepare_f32
    return f(op, x, y, inner, outer, depth, 1 if excl else 0,
             1 if rev else 0, ctx)
