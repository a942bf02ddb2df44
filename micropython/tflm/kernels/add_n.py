"""ADD_N: the elementwise sum of two or more same-shape tensors (int8,
float32).

Follows tensorflow/lite/micro/kernels/add_n.cc (CalculateOpData, Eval)
and tensorflow/lite/kernels/internal/reference/add_n.h (AddN): all
inputs and the output have one type and the inputs one shape (the
output has their element count); int8 inputs share one scale and zero
point.

float32: x = 0.0, then x += input j for each j in order, each sum
rounded to float32 (f32.vec: fl(x + fl(in_j * 1.0)), bit-exact with
TFLM, -0.0 + 0.0 and NaN operands included); no clamp.

int8, as TFLM computes it (left_shift 20, input multiplier 0.5 exactly
whatever the scale, so every scaled input is (q - zp) * 2**19):

    acc = (-zp) * 2**19 + sum_j (q_j - zp) * 2**19       (int32, wraps)
    out = clamp(MultiplyByQuantizedMultiplierSmallerThanOneExp(
                    acc, m, s) + out_zp, -128, 127)

with (m, s) the multiplier of 2 * in_scale / (2**20 * out_scale) in
double (TFLM starts its accumulator at the input offset, not 0: kept).
Eval sums chunks of the inputs into this op's scratch words and
requantizes them with rescale.scale_i32 / store_i8. Refused like TFLM
aborts: an output multiplier outside (0, 1).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from .rescale import scale_i32, store_i8

_FLOAT32 = const(0)
_INT8 = const(9)
_LEFT_SHIFT = const(20)
_CHUNK = const(64)  # scratch words for the int8 sums


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


@micropython.viper
def _sum_i8(buf, ins, nin: int, off: int, n: int, base: int):
    """buf[i] = int32 wrap of ((base + sum_j ins[j][off + i]) << 19) for
    i < n (ins: tuple of nin int8 buffers)."""
    pb = ptr32(buf)
    i: int = 0
    while i < n:
        pb[i] = base
        i += 1
    j: int = 0
    while j < nin:
        p = ptr8(ins[j])
        i = 0
        while i < n:
            pb[i] = pb[i] + ((p[off + i] ^ 0x80) - 0x80)
            i += 1
        j += 1
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    i = 0
    while i < n:
        v: int = (pb[i] ^ S) - S
        pb[i] = (((v << 19) + S) & M) - S
        i += 1


def _eval_i8(st):
    ins, nin, y, total, buf, chunk, base, m, s, qp, scale, store = st
    off = 0
    while off < total:
        n = total - off
        if n > chunk:
            n = chunk
        _sum_i8(buf, ins, nin, off, n, base)
        scale(buf, n, m, s, 0)
        store(buf, n, y, off, qp)
        off += n


def _eval_f32(st):
    vec, ins, nin, y, p0, p1, q, one, zero = st
    vec(p0, q, ins[0], one, zero, y)
    j = 1
    while j < nin:
        vec(p1, q, ins[j], one, y, y)
        j += 1


def _prepare_i8(op, xs, y, ctx):
    from .. import quant
    from . import check_int8
    from .conv_util import keep
    check_int8(op, xs + [y], "int8, float32")
    x0 = xs[0]
    for t in xs[1:]:
        if (t.scale, t.zero_point) != (x0.scale, x0.zero_point):
            _fail(op, "input %s scale / zero point differ from input %s's"
                  % (t.label(), x0.label()))
    d = quant.div(quant.ldexp(quant.from_f32(x0.scale), 1),
                  quant.ldexp(quant.from_f32(y.scale), _LEFT_SHIFT))
    m, s = quant.quantize_multiplier(d) if d[0] else (0, 1)
    if not d[0] or quant.cmp(d, (1, 0)) >= 0 or s > 0:
        _fail(op, "output multiplier 2 * %s scale / (2**20 * %s scale) "
              "must be in (0, 1)" % (x0.label(), y.label()))
    from .conv_util import limit_scratch
    limit_scratch(ctx, _CHUNK)
    chunk = min(_CHUNK, ctx.scratch_len)
    qp = keep(ctx, array("i", [y.zero_point, -128, 127]))
    return _eval_i8, (tuple(t.data for t in xs), len(xs), y.data, y.size,
                      ctx.scratch, chunk, -x0.zero_point * (len(xs) + 1),
                      keep(ctx, array("i", [m])), keep(ctx, array("i", [s])),
                      qp, scale_i32, store_i8)


def _prepare_f32(op, xs, y, ctx):
    from . import f32
    from .conv_util import keep
    p0 = f32.slots(f32.VEC_SLOTS)
    p0[1] = 1  # a: input j; b: the constant 1.0; c: 0.0, then the sum
    p0[7] = y.size
    p1 = array("i", p0)
    p1[5] = 1
    return _eval_f32, (f32.vec, tuple(f32.words(t, ctx) for t in xs),
                       len(xs), y.data, keep(ctx, p0), keep(ctx, p1),
                       keep(ctx, f32.consts(f32.NEG_INF, f32.INF)),
                       keep(ctx, f32.consts(f32.ONE)),
                       keep(ctx, f32.consts(f32.ZERO)))


def prepare(op, ins, outs, ctx):
    """ADD_N.

    ins: [2 or more inputs, int8 (one scale and zero point) or float32,
    one shape]; outs: [output of their type and element count]. Raises
    PrepareError naming the op and tensor otherwise. Semantics: TFLM
    kernels/add_n.cc, reference/add_n.h.
    """
    if len(ins) < 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs at least two inputs and one output")
    xs, y = list(ins), outs[0]
    x0 = xs[0]
    for t in xs[1:] + [y]:
        if t.type != x0.type:
            _fail(op, "%s is %s, input %s is %s"
                  % (t.label(), t.dtype, x0.label(), x0.dtype))
    for t in xs[1:]:
        if tuple(t.shape) != tuple(x0.shape):
            _fail(op, "input %s shape %s differs from input %s shape %s"
                  % (t.label(), tuple(t.shape), x0.label(),
                     tuple(x0.shape)))
    if y.size != x0.size:
        _fail(op, "output %s has %d elements, the inputs %d"
              % (y.label(), y.size, x0.size))
    if x0.type == _INT8:
        return _prepare_i8(op, xs, y, ctx)
    if x0.type == _FLOAT32:
        return _prepare_f32(op, xs, y, ctx)
    _fail(op, "input %s is %s; TFLM supports int8 and float32"
          % (x0.label(), x0.dtype))
