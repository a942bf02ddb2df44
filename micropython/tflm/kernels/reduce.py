"""MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_ALL: reductions over constant
axes.

Follows tensorflow/lite/micro/kernels/reduce.cc, reduce_common.cc and
tensorflow/lite/kernels/internal/reference/reduce.h:

- axes: negative ones count from the end, repeats are ignored
  (ResolveAxis); the output holds the kept dimensions in order (keep_dims
  only changes its shape, not its bytes).
- int8 MEAN / SUM (QuantizedMeanOrSum): an int32 sum of the raw input
  bytes per output, minus input_zp * count, then
  MultiplyByQuantizedMultiplier(sum, m, s) + output_zp clamped to int8,
  where (m, s) = QuantizeMultiplier((double)in_scale / out_scale) from
  Prepare. For MEAN the count n of reduced elements folds into it:
  k = min(floor(log2 n), 32, 31 + s), m = (m << k) / n (int64, truncated),
  s = s - k. All done here with Python ints and quant's exact doubles.
- int8 REDUCE_MAX / REDUCE_MIN: max of the bytes from -128, min from
  127; TFLM requires the input and output scale and zero point to be
  equal (at eval; here at prepare).
- float32 MEAN and SUM: float sums in input order (pool_f32.prepare_mean,
  f32.dot), MEAN then divides by the count. float32 REDUCE_MAX:
  (in > cur) ? in : cur from -FLT_MAX (NaN never wins, -inf inputs give
  -FLT_MAX, the first of -0.0 / 0.0 stays); REDUCE_MIN (in < cur) ?
  in : cur from FLT_MAX (+inf inputs give FLT_MAX). TFLM's
  MinMaxReducerCompare in reduce_common.cc.
- bool REDUCE_ALL (reduce.cc's PrepareAll / EvalAll: ReduceGeneric<bool>
  from true with in && current): 1 where every reduced byte is non-zero,
  else 0 (a byte other than 0 and 1 counts as true, as C++'s bool test).

Eval walks the output in order: an odometer over the kept dimensions
moves the input base, an odometer over the reduced ones (innermost run a
plain strided loop) visits one output's inputs. Size-1 dimensions are
dropped and neighbours of one kind merged at prepare, so most models need
one loop level of each. int8 sums go to the shared scratch array in
chunks, then fixedpoint.requant_i8b requantizes each chunk. Sums stay
below 2**31 because the reduced count is limited to 2**23 (PrepareError
beyond): the same bits on 32- and 64-bit viper.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from ..fixedpoint import requant_i8b

_FLOAT32 = const(0)
_BOOL = const(6)
_INT32 = const(2)
_INT8 = const(9)
_MEAN = const(40)
_REDUCE_MAX = const(82)
_REDUCE_MIN = const(89)
_REDUCE_ALL = const(140)

_REDUCER_OPTIONS = const(27)
# reduced elements per output: int32 sums cannot wrap
_MAX_COUNT = const(1 << 23)
MODE_SUM8, MODE_MAX8, MODE_MAXF, MODE_MIN8, MODE_MINF, MODE_ALL = \
    0, 1, 2, 3, 4, 5


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def resolve_axes(op, axis, rank, ctx):
    """Resolved axes of a constant int32 axis tensor (ResolveAxis): each
    in [0, rank), in first-seen order, repeats dropped. Raises
    PrepareError for a non-constant or non-int32 tensor or an axis
    outside [-rank, rank). A scalar (rank 0) input has no axes, whatever
    the tensor holds (TFLM's ResolveAxis short-circuits)."""
    if axis.type != _INT32:
        _fail(op, "axis %s must be int32, not %s" % (axis.label(),
                                                     axis.dtype))
    if axis.size == 0 or rank == 0:
        return []  # ResolveAxis ignores the axes of a scalar
    if not axis.is_const:
        _fail(op, "axis %s must be a constant tensor" % axis.label())
    axes = []
    for a in ctx.const_ints(op, axis, "axis"):
        if not -rank <= a < rank:
            _fail(op, "axis %d of %s is out of range for rank %d"
                  % (a, axis.label(), rank))
        if rank and a % rank not in axes:
            axes.append(a % rank)
    return axes


def plan(shape, axes, value=0):
    """array('i') for _walk: merged kept and reduced runs of shape.

    Layout: nk, nr (outer reduced runs), n_in, s_in (innermost reduced
    run: count, element stride), value (a mode's constant), then nk
    counts, strides, counters; nr counts, strides, counters; the base.
    """
    rank = len(shape)
    strides = [1] * rank
    for i in range(rank - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    runs = []  # [count, stride, reduced]
    for i in range(rank):
        if shape[i] == 1:
            continue
        red = i in axes
        if runs and runs[-1][2] == red:
            runs[-1][0] *= shape[i]
            runs[-1][1] = strides[i]
        else:
            runs.append([shape[i], strides[i], red])
    kept = [r for r in runs if not r[2]]
    red = [r for r in runs if r[2]]
    n_in, s_in = (red.pop()[:2]) if red else (1, 0)
    nk, nr = len(kept), len(red)
    return array("i", [nk, nr, n_in, s_in, value]
                 + [r[0] for r in kept] + [r[1] for r in kept] + [0] * nk
                 + [r[0] for r in red] + [r[1] for r in red] + [0] * nr
                 + [0])


@micropython.viper
def _walk(x, p, out, n: int, start: int, mode: int):
    """The next n outputs of a reduction planned by plan().

    mode MODE_SUM8: out[k] (array('i')) = int8 sum - p[4] (input_zp *
    count); MODE_MAX8: out[o] (int8 bytes) = max; MODE_MAXF: out[o]
    (float32 words) = float max; MODE_MIN8, MODE_MINF: the same with
    min; MODE_ALL: out[o] (bool bytes) = 1 if every byte is non-zero,
    else 0. start=1 restarts at output 0; the
    position is kept in p between calls (chunks).
    """
    px = ptr8(x)
    pw = ptr32(x)
    q = ptr32(p)
    po = ptr32(out)
    pb = ptr8(out)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    INF: int = 0xFF * (one << 23)
    lowest: int = INF - 1 + (one << 31)  # -FLT_MAX, 0xFF7FFFFF
    nk: int = q[0]
    nr: int = q[1]
    ni: int = q[2]
    si: int = q[3]
    K: int = 5           # kept counts, strides at K + nk, counters at K + 2nk
    R: int = 5 + 3 * nk  # reduced runs, same layout
    B: int = R + 3 * nr  # the base slot
    d: int = 0
    if start:
        while d < nk:
            q[K + 2 * nk + d] = 0
            d += 1
        q[B] = 0
    base: int = q[B]
    o: int = 0
    while o < n:
        d = 0
        while d < nr:
            q[R + 2 * nr + d] = 0
            d += 1
        off: int = base
        tot: int = 0 - ((q[4] ^ S) - S)
        m: int = 0 - 128
        fm: int = lowest
        km: int = 0 - (INF - 1)  # order key of -FLT_MAX
        if mode == 3:
            m = 127
        elif mode == 5:
            m = 1
        elif mode == 4:
            fm = INF - 1  # FLT_MAX
            km = INF - 1
        while True:
            i: int = off
            j: int = 0
            if mode == 0:
                while j < ni:
                    tot += (px[i] ^ 0x80) - 0x80
                    i += si
                    j += 1
            elif mode == 1:
                while j < ni:
                    v: int = (px[i] ^ 0x80) - 0x80
                    if v > m:
                        m = v
                    i += si
                    j += 1
            elif mode == 3:
                while j < ni:
                    v = (px[i] ^ 0x80) - 0x80
                    if v < m:
                        m = v
                    i += si
                    j += 1
            elif mode == 5:
                while j < ni:
                    if px[i] == 0:
                        m = 0
                    i += si
                    j += 1
            elif mode == 4:
                while j < ni:
                    w: int = pw[i]
                    kv: int = w & MAG
                    if kv <= INF:  # NaN never wins
                        if (w >> 31) & 1:
                            kv = 0 - kv
                        if kv < km:
                            fm = w
                            km = kv
                    i += si
                    j += 1
            else:
                while j < ni:
                    w = pw[i]
                    kv = w & MAG
                    if kv <= INF:  # NaN never wins
                        if (w >> 31) & 1:
                            kv = 0 - kv
                        if kv > km:
                            fm = w
                            km = kv
                    i += si
                    j += 1
            d = nr - 1
            while d >= 0:  # next position of the outer reduced runs
                c: int = q[R + 2 * nr + d] + 1
                off += q[R + nr + d]
                if c < q[R + d]:
                    q[R + 2 * nr + d] = c
                    break
                q[R + 2 * nr + d] = 0
                off -= c * q[R + nr + d]
                d -= 1
            if d < 0:
                break
        if mode == 0:
            po[o] = tot
        elif mode == 1 or mode == 3 or mode == 5:
            pb[o] = m
        else:
            po[o] = fm
        d = nk - 1
        while d >= 0:  # next output: advance the kept odometer
            c = q[K + 2 * nk + d] + 1
            base += q[K + nk + d]
            if c < q[K + d]:
                q[K + 2 * nk + d] = c
                break
            q[K + 2 * nk + d] = 0
            base -= c * q[K + nk + d]
            d -= 1
        o += 1
    q[B] = base


def _eval_sum8(st):
    x, p, y, total, buf, cap, mult, shift, qp = st
    o = 0
    while o < total:
        n = total - o
        if n > cap:
            n = cap
        _walk(x, p, buf, n, 1 if o == 0 else 0, MODE_SUM8)
        requant_i8b(0, 0, 0, buf, n, 1, mult, shift, qp, y, o, 1)
        o += n


def _eval_max(st):
    x, p, y, total, mode = st
    _walk(x, p, y, total, 1, mode)


@micropython.viper
def _sum_f32(st):
    """pool_f32._mean without the division: f32.dot sums each output's
    inputs in input order. st: (p, q, x, y, bases, n, dot)."""
    p = st[0]
    pp = ptr32(p)
    q = st[1]
    x = st[2]
    y = st[3]
    pbase = ptr32(st[4])
    n: int = int(st[5])
    dot = st[6]
    o: int = 0
    while o < n:
        pp[0] = pbase[o]
        pp[12] = o
        dot(p, q, x, q, q, y)
        o += 1


def _check(op, ins, outs):
    if len(ins) != 2 or None in ins or len(outs) != 1 or outs[0] is None:
        _fail(op, "needs an input, an axis and one output")
    x, y = ins[0], outs[0]
    if x.type != y.type:
        _fail(op, "input %s is %s, output %s is %s" % (
            x.label(), x.dtype, y.label(), y.dtype))
    if op.code == _REDUCE_ALL:
        if x.type != _BOOL:  # PrepareAllHelper: TF_LITE_ENSURE_TYPES_EQ
            _fail(op, "input %s is %s; REDUCE_ALL takes bool"
                  % (x.label(), x.dtype))
    elif x.type not in (_INT8, _FLOAT32):
        _fail(op, "input %s is %s; int8 and float32 are supported"
              % (x.label(), x.dtype))
    return x, y


def _count(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _mean_sum_multiplier(op, x, y, count, mean):
    """(multiplier, shift) of QuantizedMeanOrSum, from Prepare's
    QuantizeMultiplier(in_scale / out_scale) and, for MEAN, eval's
    1 / count folding. Raises PrepareError for a shift above 30."""
    from .. import quant
    if not (x.scale > 0 and y.scale > 0):
        _fail(op, "input %s and output %s need positive scales"
              % (x.label(), y.label()))
    m, s = quant.ratio_multiplier(x.scale, y.scale)
    if mean:
        k = min(quant.bitlen(count) - 1, 32, 31 + s)
        m = (m << k) // count
        s -= k
    if s > 30:
        # MultiplyByQuantizedMultiplier's x * (1 << shift) overflows int32
        # from shift 31 on: undefined in TFLM (x86 and Arm disagree)
        _fail(op, "multiplier shift %d is too large (input %s scale %r, "
              "output %s scale %r)" % (s, x.label(), x.scale, y.label(),
                                       y.scale))
    return m, s


def _prepare_f32_identity(op, x, y, ctx):
    """float32 MEAN / SUM over no axes (a scalar input or an empty axis
    tensor): each output is its one input, summed from 0.0 and divided
    by 1 (reduce.h), i.e. fl(0.0 + x): -0.0 becomes 0.0 and a signaling
    NaN is quieted (bit 22 set, as x86 does), all else is copied."""
    if y.size != x.size:
        _fail(op, "output %s has %d elements, expected %d (no axes)"
              % (y.label(), y.size, x.size))
    return _f32_plus_zero, (x.data, y.data, x.size)


@micropython.viper
def _f32_plus_zero(st):
    """out[i] = fl(0.0 + x[i]) on float32 bit patterns, byte by byte (any
    alignment). st: (x, out, n)."""
    px = ptr8(st[0])
    po = ptr8(st[1])
    n: int = int(st[2]) * 4
    i: int = 0
    while i < n:
        b0: int = px[i]
        b1: int = px[i + 1]
        b2: int = px[i + 2]
        b3: int = px[i + 3]
        if b3 == 0x80 and (b0 | b1 | b2) == 0:
            b3 = 0  # -0.0 + 0.0 = 0.0
        elif (b3 & 0x7F) == 0x7F and (b2 & 0x80) and ((b2 & 0x7F) | b1 | b0):
            b2 |= 0x40  # NaN: quiet it
        po[i] = b0
        po[i + 1] = b1
        po[i + 2] = b2
        po[i + 3] = b3
        i += 4


def prepare(op, ins, outs, ctx):
    """MEAN / SUM (int8, float32), REDUCE_MAX and REDUCE_MIN (int8,
    float32), REDUCE_ALL (bool).

    ins: [input (rank 0-8), axis: constant int32 (any count; negative
    and repeated axes allowed)]; outs: [output of the input's type with
    the kept dimensions' element count (keep_dims or not)].
    ReducerOptions: keep_dims. int8 REDUCE_MAX / MIN need the output's scale
    and zero point equal to the input's (TFLM). Raises PrepareError
    naming the operator and tensor otherwise. Semantics: TFLM
    reduce_common.cc, reference/reduce.h (see the module docstring).
    """
    from .conv_util import keep
    x, y = _check(op, ins, outs)
    code = op.code
    minmax = code == _REDUCE_MAX or code == _REDUCE_MIN
    if x.type == _FLOAT32 and not minmax:
        if not resolve_axes(op, ins[1], len(x.shape), ctx):
            return _prepare_f32_identity(op, x, y, ctx)
        from .pool_f32 import prepare_mean
        from .f32 import dot
        fn, st = prepare_mean(op, ins, outs, ctx)
        if code == _MEAN:
            return fn, st
        return _sum_f32, st[:6] + (dot,)
    shape = x.shape
    axes = resolve_axes(op, ins[1], len(shape), ctx)
    count = _count(shape, axes)
    total = x.size // count if count else 0
    if y.size != total or not count:
        _fail(op, "output %s has %d elements, reducing %s over axes %s "
              "gives %d" % (y.label(), y.size, tuple(shape), axes, total))
    if code == _REDUCE_ALL:
        return _eval_max, (x.data, keep(ctx, plan(shape, axes)), y.data,
                           total, MODE_ALL)
    if minmax:
        if x.type == _INT8 and (x.scale != y.scale or
                                x.zero_point != y.zero_point):
            _fail(op, "output %s must have the scale and zero point of "
                  "input %s" % (y.label(), x.label()))
        mn = code == _REDUCE_MIN
        xd, mode = x.data, MODE_MIN8 if mn else MODE_MAX8
        if x.type == _FLOAT32:
            from .f32 import words
            xd = words(x, ctx)  # aligned for ptr32
            mode = MODE_MINF if mn else MODE_MAXF
        return _eval_max, (xd, keep(ctx, plan(shape, axes)), y.data, total,
                           mode)
    if count >= _MAX_COUNT:
        _fail(op, "reduces %d elements per output; at most %d are "
              "supported" % (count, _MAX_COUNT - 1))
    m, s = _mean_sum_multiplier(op, x, y, count, code == _MEAN)
    p = plan(shape, axes, x.zero_point * count)
    qp = array("i", (y.zero_point, -128, 127))
    return _eval_sum8, (x.data, keep(ctx, p), y.data, total, ctx.scratch,
                        ctx.scratch_len, keep(ctx, array("i", (m,))),
                        keep(ctx, array("i", (s,))), keep(ctx, qp))
