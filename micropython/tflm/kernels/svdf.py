"""SVDF: int8 (state and time weights int16 or int8) and float32.

Follows tensorflow/lite/micro/kernels/svdf.cc and svdf_common.cc
(PrepareSvdf, EvalIntegerSvdfReference, EvalFloatSvdfReference).

Tensors: input [batch, input_size], weights_feature [filters,
input_size], weights_time [filters, memory], bias [units], the
activation state [batch, memory * filters] (a variable tensor: it lives
across invokes; interp.reset() sets it back as TFLM does: an int8 state
to its zero point, others to 0) and the
output [batch, units]; filters = units * rank (SVDFOptions.rank). Each
invoke:

1. the state moves one step left (state[k] = state[k + 1] over the whole
   buffer), and each filter's newest slot (memory - 1) gets the feature
   matmul sum_c weights_feature[f, c] * (input[b, c] - input_zp), int8:
   rescaled by effective_scale_1, clamped to the state type's range,
   plus the state's zero point (stored wrapping, as C converts to it);
2. t[b, f] = sum_m weights_time[f, m] * (state[b, f, m] - state_zp);
3. out[b, u] = bias[u] + t[b, u * rank] + ... + t[b, u * rank + rank - 1];
   int8: rescaled by effective_scale_2 plus the output zero point,
   clamped to int8 (the fused activation is not applied: TFLM's integer
   SVDF ignores it); float32: the fused activation, as TFLM's
   ActivationValFloat applies it (fmax / fmin: NaN gives 0 for RELU, 6
   for RELU6, 1 for RELU_N1_TO_1; NONE passes inf and NaN).

int32 sums wrap as TFLM's do on its two's-complement targets. The
effective scales are in_s * wf_s / state_s and state_s * wt_s / out_s in
double, as the PyPI tflite-micro's PrepareSvdf computes them (the
mirror's source casts a float32 result; the oracle does not), and so is
the bias-scale check.
float32 arithmetic is bit-exact integer emulation (f32.dot / f32.vec):
the sums run in TFLM's order. The int8 feature matmul is fc_rows.rows
(FULLY_CONNECTED's machine code on Cortex-M).

TFLM needs the bias (its Prepare reads the bias scale: without one it
crashes), all five inputs, ranks 2, a variable state, state and time
weights of one type, and a bias scale within 1e-5 of
state_scale * weights_time_scale; each is a PrepareError here.
Float32 TANH and SIGN_BIT activations are refused (TFLM calls libm's
tanhf). The state and weights_time may sit anywhere: the state is in the
arena (aligned), an int16 weights_time at an odd place is copied once.
"""

import micropython
from micropython import const

from ..heap import persistent
from ..errors import ModelError, PrepareError
from . import fc_rows
from .rescale import scale_i32, store_i8
from .signal_util import aligned, io, want

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)
_SVDF_OPTIONS = const(6)
_ACT_RELU6 = const(3)
_SVDF_FUSED_ACTIVATION_FUNCTION = const(1)
_SVDF_RANK = const(0)

# 1e-5 as a double: 0x14F8B588E368F1 * 2**-69 (the bias-scale tolerance)
_TOL = (0x14F8B588E368F1, -69)


def _scale(a, b, c):
    """(double)a * (double)b / (double)c of three float32 scales, as (m, e):
    the PyPI tflite-micro build computes PrepareSvdf's effective scales
    in double (its float32-looking source notwithstanding: checked
    against its outputs)."""
    from .. import quant
    return quant.div(quant.mul(quant.from_f32(a), quant.from_f32(b)),
                     quant.from_f32(c))


def _near(a, b):
    """|a - b| < 1e-5 for (m, e) pairs, exactly."""
    e = min(a[1], b[1], _TOL[1])
    d = abs((a[0] << (a[1] - e)) - (b[0] << (b[1] - e)))
    return d < _TOL[0] << (_TOL[1] - e)


def _check(op, ins, outs):
    """Shapes, types and options; returns (x, wf, wt, bias, s, y, rank,
    act, (batch, n_in, filters, units, memory))."""
    label = op.label()
    if len(ins) == 5 and ins[3] is None:
        raise PrepareError("%s has no bias: TFLM's SVDF needs one (it "
                           "crashes without)" % label)
    io(op, ins, outs, 5, 1)
    x, wf, wt, bias, s = ins
    y = outs[0]
    if op.options_type != _SVDF_OPTIONS:
        raise PrepareError("%s has no SVDFOptions (rank)" % label)
    rank = op.opt_int(_SVDF_RANK, 0)
    act = op.opt_byte(_SVDF_FUSED_ACTIVATION_FUNCTION, 0)
    for t in (x, wf, wt, s, y):
        if len(t.shape) != 2:
            raise PrepareError("%s: %s has shape %s, expected rank 2"
                               % (label, t.label(), t.shape))
    batch, n_in = x.shape
    filters, memory = wt.shape
    if rank <= 0 or filters % rank:
        raise PrepareError("%s: rank %d does not divide the %d filters"
                           % (label, rank, filters))
    units = filters // rank
    if tuple(wf.shape) != (filters, n_in) or \
            tuple(y.shape) != (batch, units) or \
            tuple(s.shape) != (batch, memory * filters) or \
            not bias.shape or bias.shape[0] != units or bias.size != units:
        raise PrepareError(
            "%s: shapes input %s, weights_feature %s, weights_time %s, "
            "bias %s, state %s, output %s do not fit batch %d, %d "
            "inputs, %d filters, %d units, memory %d" % (
                label, x.shape, wf.shape, wt.shape, bias.shape, s.shape,
                y.shape, batch, n_in, filters, units, memory))
    if batch * filters * n_in == 0 or memory == 0:
        raise PrepareError("%s: empty tensors (batch %d, %d inputs, %d "
                           "filters, memory %d)" % (label, batch, n_in,
                                                    filters, memory))
    if not s.is_variable:
        raise PrepareError("%s: state %s is not a variable tensor"
                           % (label, s.label()))
    for t in (wf, wt, bias):
        if not t.is_const:
            raise PrepareError("%s: %s must be constant" % (label,
                                                           t.label()))
    return x, wf, wt, bias, s, y, rank, act, (batch, n_in, filters,
                                              units, memory)


def prepare(op, ins, outs, ctx):
    """SVDF (TFLM's PrepareSvdf). ins: input, weights_feature,
    weights_time, bias, state (see the module doc); outs: [output].
    int8: input, weights_feature, output int8; weights_time and state
    both int16 or both int8; bias int32; all quantized. float32: all
    float32, activation NONE, RELU, RELU_N1_TO_1 or RELU6.
    Raises PrepareError."""
    from .conv_util import bias_words, check_near
    from .. import quant
    x, wf, wt, bias, s, y, rank, act, dims = _check(op, ins, outs)
    batch, n_in, filters, units, memory = dims
    if x.type == _FLOAT32:
        return _prepare_float(op, ctx, x, wf, wt, bias, s, y, rank, act,
                              dims)
    label = op.label()
    want(op, x, _INT8)
    want(op, wf, _INT8)
    want(op, y, _INT8)
    want(op, bias, _INT32)
    if wt.type not in (_INT16, _INT8) or s.type != wt.type:
        raise PrepareError("%s: weights_time %s is %s and state %s is %s: "
                           "both int16 or both int8 are supported"
                           % (label, wt.label(), wt.dtype, s.label(),
                              s.dtype))
    for t in (x, wf, wt, s, y):
        if not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
    size = 2 if s.type == _INT16 else 1
    smax = 32767 if size == 2 else 127
    for t, hi in ((x, 127), (y, 127), (s, smax)):
        if not -hi - 1 <= t.zero_point <= hi:
            raise PrepareError("%s: %s zero point %d is outside its type"
                               % (label, t.label(), t.zero_point))
    # |bias scale - state scale * weights_time scale| < 1e-5, in double
    # (a bias without quantization has scale 0, as in TFLM)
    prod = quant.mul(quant.from_f32(s.scale), quant.from_f32(wt.scale))
    try:
        m1, s1 = quant.quantize_multiplier(_scale(x.scale, wf.scale, s.scale))
        m2, s2 = quant.quantize_multiplier(_scale(s.scale, wt.scale, y.scale))
        ok = _near(quant.from_f32(bias.scale), prod)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    if not ok:
        raise PrepareError("%s: bias %s scale %r is not state scale * "
                           "weights_time scale" % (label, bias.label(),
                                                   bias.scale))
    if s1 > 30 or s2 > 30:  # TFLM shifts by that much: undefined in C
        raise PrepareError("%s: requantization multiplier too large (shift "
                           "%d)" % (label, max(s1, s2)))
    g = persistent(ctx, "i", 16)
    for k, v in enumerate((batch, n_in, filters, units, memory, rank,
                           x.zero_point, s.zero_point, size, -smax - 1,
                           smax, m1, s1, m2, s2)):
        g[k] = v
    qp = persistent(ctx, "i", 3)
    qp[0], qp[1], qp[2] = y.zero_point, -128, 127
    n = batch * memory * filters
    # the feature matmul: TFLM ignores the weights' zero point
    fc = fc_rows.params(ctx, batch, n_in, filters, -x.zero_point, 0, False)
    ctx.variable(s)
    acc = ctx.work(batch * filters)
    win = fc_rows.window(ctx, n_in)
    check_near(op, ctx, win, (wf.data,))  # what the block addresses
    st = (x.data, wf.data, wt.data if size == 1 else aligned(wt, ctx),
          bias_words(op, bias, units, ctx), s.data, y.data, g, qp,
          acc, ctx.work(batch * units),
          g[11:12], g[12:13], g[13:14], g[14:15], n, size, batch * filters,
          batch * units, fc, win, fc_rows.dots, fc_rows.rows)
    return _eval_int, st


def _eval_int(st):
    x, wf, wt, b, s, y, g, qp, acc, oacc, m1, s1, m2, s2, n, size, nf, nu, \
        fc, win, dots, fc_sums = st
    _shift(s, n, size)
    fc_sums(x, wf, acc, acc, fc, win, dots)
    scale_i32(acc, nf, m1, s1, 0)
    _put_state(acc, s, g)
    _time(s, wt, acc, g)
    _reduce(acc, b, oacc, g)
    scale_i32(oacc, nu, m2, s2, 0)
    store_i8(oacc, nu, y, 0, qp)


def _prepare_float(op, ctx, x, wf, wt, bias, s, y, rank, act, dims):
    from . import f32
    batch, n_in, filters, units, memory = dims
    f32.check_float(op, (x, wf, wt, bias, s, y))
    if not 0 <= act <= _ACT_RELU6:
        raise PrepareError("%s: float32 SVDF with fused activation %d is "
                           "not supported (NONE, RELU, RELU_N1_TO_1, RELU6)"
                           % (op.label(), act))
    ctx.variable(s)
    pd = f32.slots(f32.DOT_SLOTS)
    pv = f32.slots(f32.VEC_SLOTS)
    qd = f32.consts(f32.ZERO, f32.NEG_INF, f32.INF, f32.ONE)
    qv = f32.consts(f32.NEG_INF, f32.INF)
    pd[5] = pd[2] = 1  # n1 = n2 = 1
    pd[9] = pd[10] = 1  # the innermost strides
    pd[11] = -1  # no bias term in dot()
    pd[13] = filters
    pv[1] = rank  # a: t[b, u * rank + r]
    pv[2], pv[3] = 3, 0  # b: qd[3], 1.0
    pv[5] = 1
    pv[7] = units
    st = (f32.words(x, ctx), f32.words(wf, ctx), f32.words(wt, ctx),
          f32.words(bias, ctx), s.data, y.data, pd, qd, pv, qv,
          ctx.work(batch * filters), batch, n_in, filters, units, memory,
          rank, act, f32.dot, f32.vec)
    return _eval_float, st


def _eval_float(st):
    x, wf, wt, b, s, y, pd, qd, pv, qv, t, nb, ni, nf, nu, nm, rank, act, \
        dot, vec = st
    # (one slot per statement: a, b = ... of 4 or more makes a tuple)
    fm = nf * nm
    _shift(s, nb * fm, 4)
    for k in range(nb):
        # feature matmul: t[f] = sum_c wf[f, c] * x[k, c]
        pd[0] = k * ni
        pd[8] = pd[16] = ni
        pd[12] = pd[14] = pd[15] = 0
        dot(pd, qd, x, wf, qd, t)
        _put_col(t, s, nf, nm, k * fm + nm - 1)
        # time matmul: t[k, f] = sum_m wt[f, m] * state[k, f, m]
        pd[0] = k * fm
        pd[8] = pd[14] = pd[16] = nm
        pd[12] = k * nf
        pd[15] = 1
        dot(pd, qd, s, wt, qd, t)
        # out[k, u] = bias[u] + t[k, u * rank] + ... (in that order)
        pv[6] = k * nu
        for r in range(rank):
            pv[0] = k * nf + r
            if r == 0:
                pv[4] = 0
                vec(pv, qv, t, qd, b, y)
            else:
                pv[4] = k * nu
                vec(pv, qv, t, qd, y, y)
    _act_f32(y, nb * nu, act)


# -- int8 engines (word-size independent viper) ---------------------------
# g (array('i')): 0 batch, 1 n_in, 2 filters, 3 units, 4 memory, 5 rank,
# 6 input zp, 7 state zp, 8 state bytes (1, 2), 9 state min, 10 max,
# 11-14 the two (multiplier, shift) pairs.

@micropython.viper
def _shift(buf, n: int, size: int):
    """buf[k] = buf[k + 1] for k < n - 1, elements of size 1, 2 or 4
    bytes (aligned)."""
    k: int = 0
    if size == 1:
        p8 = ptr8(buf)
        while k < n - 1:
            p8[k] = p8[k + 1]
            k += 1
    elif size == 2:
        p16 = ptr16(buf)
        while k < n - 1:
            p16[k] = p16[k + 1]
            k += 1
    else:
        p32 = ptr32(buf)
        while k < n - 1:
            p32[k] = p32[k + 1]
            k += 1


@micropython.viper
def _put_state(acc, s, g):
    """state[b, f, memory - 1] = clamp(acc[b * F + f]) + state_zp, as the
    state type (wrapping)."""
    pa = ptr32(acc)
    gp = ptr32(g)
    one: int = 1
    S: int = one << 31
    nb: int = gp[0]
    nf: int = gp[2]
    nm: int = gp[4]
    zp: int = (gp[7] ^ S) - S
    size: int = gp[8]
    lo: int = (gp[9] ^ S) - S
    hi: int = gp[10]
    p8 = ptr8(s)
    p16 = ptr16(s)
    k: int = 0
    while k < nb * nf:
        v: int = (pa[k] ^ S) - S
        if v < lo:
            v = lo
        if v > hi:
            v = hi
        v += zp
        i: int = k * nm + nm - 1
        if size == 1:
            p8[i] = v
        else:
            p16[i] = v
        k += 1


@micropython.viper
def _time(s, wt, acc, g):
    """acc[b * F + f] = wrap32(sum_m wt[f, m] * (state[b, f, m] -
    state_zp)), int8 or int16 elements (sign-extended)."""
    pa = ptr32(acc)
    gp = ptr32(g)
    t: int = 0
    one: int = 1
    S: int = one << 31
    nb: int = gp[0]
    nf: int = gp[2]
    nm: int = gp[4]
    zp: int = (gp[7] ^ S) - S
    size: int = gp[8]
    p8 = ptr8(s)
    w8 = ptr8(wt)
    p16 = ptr16(s)
    w16 = ptr16(wt)
    b: int = 0
    while b < nb:
        f: int = 0
        while f < nf:
            t = 0
            sa: int = (b * nf + f) * nm
            wa: int = f * nm
            m: int = 0
            if size == 1:
                while m < nm:
                    t += (((w8[wa + m] ^ 0x80) - 0x80)
                          * (((p8[sa + m] ^ 0x80) - 0x80) - zp))
                    m += 1
            else:
                while m < nm:
                    t += (((w16[wa + m] ^ 0x8000) - 0x8000)
                          * (((p16[sa + m] ^ 0x8000) - 0x8000) - zp))
                    m += 1
            pa[b * nf + f] = ((((((t >> 16) & 0xFFFF) ^ 0x8000) - 0x8000)
                               << 16) | (t & 0xFFFF))
            f += 1
        b += 1


@micropython.viper
def _reduce(acc, bias, out, g):
    """out[b * U + u] = wrap32(bias[u] + sum_r acc[b * F + u * rank + r])."""
    pa = ptr32(acc)
    po = ptr32(out)
    pb = ptr32(bias)
    gp = ptr32(g)
    nb: int = gp[0]
    nf: int = gp[2]
    nu: int = gp[3]
    rank: int = gp[5]
    one: int = 1
    S: int = one << 31
    b: int = 0
    while b < nb:
        u: int = 0
        while u < nu:
            v: int = (pb[u] ^ S) - S
            r: int = 0
            a: int = b * nf + u * rank
            while r < rank:
                v += (pa[a + r] ^ S) - S
                r += 1
            po[b * nu + u] = ((((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000)
                               << 16) | (v & 0xFFFF))
            u += 1
        b += 1


# -- float32 helpers ------------------------------------------------------

@micropython.viper
def _put_col(src, dst, n: int, stride: int, off: int):
    """dst[off + k * stride] = src[k] for k < n (32-bit words)."""
    ps = ptr32(src)
    pd = ptr32(dst)
    k: int = 0
    while k < n:
        pd[off + k * stride] = ps[k]
        k += 1


@micropython.viper
def _act_f32(buf, n: int, act: int):
    """TFLM's ActivationValFloat on n float32 words in place: RELU
    fmax(0, x), RELU_N1_TO_1 fmax(-1, fmin(x, 1)), RELU6 fmax(0, fmin(x,
    6)); fmin / fmax return the number when the other is NaN."""
    if act == 0:
        return
    p = ptr32(buf)
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)
    SIGN: int = one << 31
    # bounds as (sign, magnitude): hi is +1.0 or +6.0, lo 0 or -1.0
    hi: int = 0x3F800000
    if act == 3:
        hi = 0x103 * (one << 22)  # 6.0: 0x40C00000 is no small int
    lo_neg: int = 1 if act == 2 else 0
    k: int = 0
    while k < n:
        v: int = p[k]
        mag: int = v & MAG
        neg: int = (v >> 31) & 1
        if act == 1:
            if mag > INF or neg:  # NaN, a negative number or -0.0
                p[k] = 0
        elif mag > INF:  # fmin(NaN, hi) = hi
            p[k] = hi
        elif not neg:
            if mag > hi:
                p[k] = hi
        elif lo_neg:  # -1 below
            if mag > 0x3F800000:
                p[k] = SIGN | 0x3F800000
        elif mag:  # below 0: 0 (fmax(0, -0.0) is -0.0 or 0: never made)
            p[k] = 0
        k += 1

