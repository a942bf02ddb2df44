"""UNIDIRECTIONAL_SEQUENCE_LSTM, float32 (lstm.py checks the structure and
imports this one for a float32 input: kernels._LAZY; the int8 kernel is
lstm_int8.py).

Follows tensorflow/lite/micro/kernels/lstm_eval.h (LstmStep,
CalculateLstmGate, UpdateLstmCell, UpdateLstmHidden) with the float
overloads of lstm_eval.cc (FullyConnected, AddElementWise, Sigmoid, Tanh,
Mul, Clipping) and lstm_eval_common.cc (CreateGateParamsFloat,
CreateInterGateMulParamsFloat, CreateLstmCellStateInfoFloat). Inputs and
shapes as lstm.py's (lstm.structure), every tensor float32: weights and
biases constant, the hidden state (18) and cell state (19) variable
tensors that carry over between invokes (reset() zeroes them).

Each time step (one batch row at a time, or all rows when time_major),
for the forget, input, cell and output gates:

    gate = act(fl(clamp(fl(sum x_t * W_in) + bias) + clamp(sum h * W_rec)))

each sum TFLM's float FullyConnected (reference_ops: `total += x * w`
in order, then total + bias, clamped to [lowest, FLT_MAX] as
CalculateActivationRange(kTfLiteActNone) makes every clamp here; the
recurrent FC adds no bias: its 0.0f leaves a total that is never -0.0),
act the float Logistic (forget, input, output gates) or Tanh (the cell
gate, with the options' TANH; any other activation leaves the gate as it
is, as the int8 kernel and TFLM's release build do); then

    c = fl(clamp(fl(forget * c)) + clamp(fl(input * cell_gate))),
        then clamped to +-cell_clip when cell_clip > 0 (a NaN stays
        NaN: the oracle's build compiles std::max(std::min(clip, c),
        -clip) to min / max instructions that pass it through, where
        the C++ source would give clip)
    h = clamp(fl(tanh(c) * output)); out[t] = h

Every sum and product is f32.dot / f32.vec (float32 bits, bit-exact;
on Cortex-M4F/M7/M33 thumb_fpu's, the same bits from the FPU, as
float_ops chooses them);
Logistic and Tanh are float_ops' (f32_math's exp and tanh, within 1 ulp
of the exact value, where TFLM calls the C library's expf / tanhf:
results can differ from TFLM's in the last bits, as float32 LOGISTIC and
TANH do). The gates live in int32 words of this op's scratch (planned
into the arena); invoke() allocates nothing.
"""

import micropython
from micropython import const

from . import f32
from .f32_math import vtanh, EXP_Q31, TANH_Q30
from .float_ops import _eval_logistic, _unary_state, dot as _dot, vec as _vec
from .lstm import structure

_ACT_TANH = const(4)
_UNIDIRECTIONAL_SEQUENCE_LSTM_CELL_CLIP = const(1)
_UNIDIRECTIONAL_SEQUENCE_LSTM_FUSED_ACTIVATION_FUNCTION = const(0)


def prepare(op, ins, outs, ctx):
    """Float32 UNIDIRECTIONAL_SEQUENCE_LSTM (called by lstm.prepare).

    ins: the 24 inputs (None for the absent ones, as lstm.structure
    requires), all float32; outs: [float32 output [batch, time, n_state]
    (time_major: [time, batch, n_state])]. Options: cell_clip (float),
    fused activation of the cell gate, time_major. Raises PrepareError.
    """
    from ..errors import PrepareError
    x, h, c, y, major, batch, steps, n_in, n = structure(op, ins, outs)
    label = op.label()
    f32.check_float(op, (x, h, c, y) + tuple(ins[1:9])
                    + tuple(ins[12:16]))
    for t in tuple(ins[1:9]) + tuple(ins[12:16]):
        if not t.is_const:
            raise PrepareError("%s: weights and biases must be constant "
                               "(%s is not)" % (label, t.label()))
    act = op.opt_byte(_UNIDIRECTIONAL_SEQUENCE_LSTM_FUSED_ACTIVATION_FUNCTION,
                      0)
    tanh_gate = act == _ACT_TANH
    clip = op.opt_float(_UNIDIRECTIONAL_SEQUENCE_LSTM_CELL_CLIP, 0.0)
    rows = batch if major else 1
    words = rows * n
    ctx.variable(h)
    ctx.variable(c)
    # gate buffers forget, input, cell, output, then the pre-activation
    # sum and the recurrent FC's output (the products' temporary too)
    bufs = tuple(ctx.work(words) for _ in range(6))
    order = (2, 6, 1, 5, 3, 7, 4, 8)  # (W_in, W_rec) per gate
    weights = tuple(f32.words(ins[i], ctx) for i in order)
    biases = tuple(f32.words(ins[i], ctx) for i in (13, 12, 14, 15))
    lo, hi = f32.act_range(0)
    # dot(): one call per row; the weights move a row per unit
    pin = f32.slots(f32.DOT_SLOTS)
    prec = f32.slots(f32.DOT_SLOTS)
    for p, depth, bias in ((pin, n_in, 0), (prec, n, -1)):
        p[2] = p[5] = p[9] = p[10] = 1
        p[8] = p[16] = depth
        p[11] = bias
        p[13] = n
    qd = f32.consts(f32.ZERO, lo, hi, f32.ONE)
    # vec(): a * b + c over `words` elements, all strides 1 but c's
    pv = f32.slots(f32.VEC_SLOTS)
    pv[1] = pv[3] = 1
    pv[7] = words
    clamp = f32.consts(lo, hi)
    unclamped = f32.consts(f32.NEG_INF, f32.INF)
    k = f32.consts(f32.NEG_ZERO, f32.ONE)  # -0.0 (identity of +), 1.0
    us = _unary_state()
    a = bufs[4]
    acts = tuple((a, bufs[j], words, us) for j in range(4))
    pe = f32.slots(4)  # vtanh: x offset, stride, output offset, count
    pe[1] = 1
    pe[3] = words
    g = f32.slots(8)
    for j, v in enumerate((batch, steps, n_in, n, 1 if major else 0,
                           1 if tanh_gate else 0, 1 if clip > 0 else 0)):
        g[j] = v
    cq = f32.consts(f32.bits(clip) if clip > 0 else 0)
    # (a constant input may sit at any address: words() aligns it)
    return _eval, (f32.words(x, ctx), h.data, c.data, y.data, g, bufs,
                   weights, biases, pin, prec, qd, pv, clamp, unclamped, k,
                   acts, pe, us[1], cq)


def _eval(st):
    (x, h, c, y, g, bufs, weights, biases, pin, prec, qd, pv, clamp,
     unclamped, k, acts, pe, est, cq) = st
    dot = _dot  # (float_ops': on the FPU where there is one)
    vec = _vec
    batch = g[0]
    steps = g[1]
    n_in = g[2]
    n = g[3]
    major = g[4]
    rows = batch if major else 1
    words = rows * n
    gf = bufs[0]
    gi = bufs[1]
    gc = bufs[2]
    go = bufs[3]
    a = bufs[4]
    t1 = bufs[5]
    # vec(pv, q, a, b, c, out): out[pv[6] + i] = clamp(fl(c + fl(a * b)))
    # with a from pv[0], b from pv[2] (stride pv[3]), c from pv[4]
    # (stride pv[5]); k = (-0.0, 1.0) serves as b = 1.0 (k[1]) or
    # c = -0.0 (k[0]) with stride 0
    for b in range(1 if major else batch):
        for t in range(steps):
            if major:
                xo = t * batch * n_in
                so = 0
                yo = t * batch * n
            else:
                xo = (b * steps + t) * n_in
                so = b * n
                yo = (b * steps + t) * n
            for j in range(4):
                for r in range(rows):
                    pin[0] = xo + r * n_in
                    pin[12] = r * n
                    dot(pin, qd, x, weights[2 * j], biases[j], a)
                    prec[0] = so + r * n
                    prec[12] = r * n
                    dot(prec, qd, h, weights[2 * j + 1], a, t1)
                # a = a + t1 (AddElementWise: no clamp)
                pv[0] = pv[4] = pv[6] = 0
                pv[2] = 1
                pv[3] = 0
                pv[5] = 1
                vec(pv, unclamped, t1, k, a, a)
                if j == 2:
                    if g[5]:
                        pe[0] = 0
                        vtanh(pe, EXP_Q31, TANH_Q30, est, a, gc)
                    else:  # no activation: the sum is the gate
                        pv[5] = 0
                        vec(pv, unclamped, a, k, k, gc)
                else:
                    _eval_logistic(acts[j])
            # c = clamp(forget * c) + clamp(input * cell gate), clipped
            pv[0] = pv[4] = pv[5] = 0
            pv[2] = pv[6] = so
            pv[3] = 1
            vec(pv, clamp, gf, c, k, c)
            pv[2] = pv[6] = 0
            vec(pv, clamp, gi, gc, k, t1)
            pv[2] = pv[5] = 1
            pv[3] = 0
            pv[4] = pv[6] = so
            vec(pv, unclamped, t1, k, c, c)
            if g[6]:
                _clip(c, so, words, cq)
            # h = clamp(tanh(c) * output); the output row is h
            pe[0] = so
            vtanh(pe, EXP_Q31, TANH_Q30, est, c, t1)
            pv[2] = pv[4] = pv[5] = 0
            pv[3] = 1
            pv[6] = so
            vec(pv, clamp, t1, go, k, h)
            _copy(h, so, y, yo, words)


@micropython.viper
def _clip(c, off: int, n: int, cq):
    """c[off + i] clamped to [-clip, clip] on float32 words, -0.0 kept,
    a NaN kept (as the oracle's compiled Clipping does; see the module
    doc). cq[0]: clip's bits (positive)."""
    pc = ptr32(c)
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    cb: int = ptr32(cq)[0] & MAG
    i: int = 0
    while i < n:
        v: int = pc[off + i]
        m: int = v & MAG
        if m > INF:  # NaN: kept
            pass
        elif (v >> 31) & 1:  # negative (or -0.0): below clip
            if m > cb:
                pc[off + i] = cb | (one << 31)
        elif m >= cb:
            pc[off + i] = cb
        i += 1


@micropython.viper
def _copy(src, so: int, dst, do: int, n: int):
    """dst[do + i] = src[so + i] for i < n (int32 words, dst's bytes may
    sit at any address)."""
    ps = ptr32(src)
    pd = ptr8(dst)
    i: int = 0
    j: int = do * 4
    while i < n:
        v: int = ps[so + i]
        pd[j] = v
        pd[j + 1] = v >> 8
        pd[j + 2] = v >> 16
        pd[j + 3] = v >> 24
        i += 1
        j += 4
