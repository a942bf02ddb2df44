"""UNIDIRECTIONAL_SEQUENCE_LSTM: int8 activations and weights, int16
cell state (TFLM's 8x8->16 LSTM; lstm.py checks the structure and
dispatches here).

Follows tensorflow/lite/micro/kernels/unidirectional_sequence_lstm.cc,
lstm_eval.h / lstm_eval.cc (LstmStep, CalculateLstmGate, UpdateLstmCell,
UpdateLstmHidden, LstmStepManager), lstm_eval_common.cc
(PrepareGateParametersInteger, CreateGateParams,
CreateInterGateMulParams, CreateLstmCellStateInfo), and
tensorflow/lite/kernels/internal/reference/integer_ops/fully_connected.h,
mul.h (MulElementwise), logistic.h and tanh.h (their int16 versions, with
common.h's sigmoid_table_uint16).

Inputs (lstm_shared.h): 0 input [batch, time, n_input] (time_major:
[time, batch, n_input]); 1-4 input-to-{input, forget, cell, output}
weights [n_state, n_input]; 5-8 recurrent-to-... weights [n_state,
n_state]; 12-15 the four gate biases [n_state] (int32); 18 the hidden
state [batch, n_state] (int8) and 19 the cell state [batch, n_state]
(int16), both variable tensors (they carry over between invokes;
interp.reset() sets the hidden state to its zero point and the cell
state to 0, as TFLM's ResetVariableTensors); peephole (9-11),
projection (16, 17) and layer norm (20-23) inputs must be absent, as
TFLM requires. Output 0: [batch, time, n_state] (the hidden state after
each step).

Each time step (one batch row at a time, or all rows when time_major),
for the forget, input, cell and output gates in turn:

    gate = act(sat16(FC(x_t, W_in, bias) + FC(h, W_rec)))

each FC being TFLM's integer FullyConnected to int16 at scale 2**-12
(MultiplyByQuantizedMultiplier of the int32 sum, clamped to int16), act
TFLM's int16 Logistic (forget, input, output) or Tanh with shift 0 (the
cell gate, with the options' TANH; with any other activation TFLM's
release build applies none, and neither does this); then

    c = sat16(Mul(forget, c) + Mul(input, cell_gate)), clipped to
        +-quantized cell_clip when cell_clip > 0
    h = Mul(Tanh(c), output)  (int8, the hidden state's zero point)
    out[t] = h

Mul is MulElementwise with the multipliers of CreateInterGateMulParams.
The FCs are fc_rows.rows (FULLY_CONNECTED's machine code on Cortex-M),
the sums and activations gate() (thumb_lstm.py or lstm_loops.py);
the gate values live in int32 words of this op's scratch (planned into
the arena). float32 LSTMs run in lstm_f32.py; int16-activation ones are
refused.
"""

import micropython
from micropython import const

from ..heap import persistent
from ..errors import ModelError, PrepareError
from . import THUMB, fc_rows
from .lstm import structure
from .rescale import scale_i32
from .sigmoid_table import TABLE as _SIGMOID

# The gates' sums and activations: Thumb machine code on Cortex-M
# (thumb_lstm.py), viper elsewhere (lstm_loops.py)
gate = None
if THUMB:
    try:
        from .thumb_lstm import gate
    except (ImportError, SyntaxError, ValueError):
        gate = None
if gate is None:
    from .lstm_loops import gate  # noqa: F811

_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)
_ACT_TANH = const(4)

# eval writes the FC parameter blocks fin and frec (their X0 and WO words): a
# compiled model keeps its tail in RAM, never read in place from the model's
# bytes (host_tools/mp_compile.py).
WRITES_KEPT = True

# p (array('i')) slots: 0 batch, 1 time, 2 n_input, 3 n_state,
# 4 time_major, 5 -input zp, 6 -hidden zp, 7 hidden zp, 8 quantized
# cell clip + 1 (0: none), 9 tanh multiplier, 10 tanh shift (the cell's),
# 11.. the (multiplier, shift) pairs: 4 gates x (input FC, recurrent
# FC), then the forget * cell, input * cell gate and tanh(c) * output
# multiplications (slots 5 and 6 are not read by eval: the FCs' offsets
# are in their fc_rows parameters). fin, frec: fc_rows.rows's parameters
# of the input and the recurrent FCs; eval sets X0 and WO (the gate's
# weights offset) before each call.
_FC_X0 = const(0)  # fc_rows's parameter words
_FC_WO = const(6)
_P_PAIRS = const(11)
_P_SIZE = const(33)
_UNIDIRECTIONAL_SEQUENCE_LSTM_CELL_CLIP = const(1)
_UNIDIRECTIONAL_SEQUENCE_LSTM_FUSED_ACTIVATION_FUNCTION = const(0)


def _check(op, ins, outs):
    label = op.label()
    x, h, c, y, major, batch, steps, n_in, n = structure(op, ins, outs)
    if x.type != _INT8:
        raise PrepareError("%s: input %s is %s: int8 and float32 LSTMs "
                           "are supported"
                           % (label, x.label(), x.dtype))
    for t in (h, y) + tuple(ins[1:9]):
        if t.type != _INT8:
            raise PrepareError("%s: %s is %s, expected int8"
                               % (label, t.label(), t.dtype))
    if c.type != _INT16:
        raise PrepareError("%s: cell state %s is %s, expected int16"
                           % (label, c.label(), c.dtype))
    for t in ins[12:16]:
        if t.type != _INT32 or not t.is_const:
            raise PrepareError("%s: bias %s must be a constant int32 tensor"
                               % (label, t.label()))
    for t in ins[1:9]:
        if not t.is_const:
            raise PrepareError("%s: weights %s must be constant"
                               % (label, t.label()))
        if not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: weights %s zero point %d is outside "
                               "int8" % (label, t.label(), t.zero_point))
        if len(t.scales) != 1:
            raise PrepareError("%s: weights %s need one scale" % (
                label, t.label()))
    for t in (x, h, c):
        if not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
    for t in (x, h):
        if not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s zero point %d is outside int8"
                               % (label, t.label(), t.zero_point))
    return x, h, c, y, major, batch, steps, n_in, n


def _log2_round(scale):
    """TFLM's CheckedLog2: round(log2(scale)) (half away from zero).
    TFLM computes it as logf(x) * (1 / logf(2)) in float32, which can
    round either way within a few ulps of 2**(k + 1/2): a scale within
    2**-14 (relative) of one is refused (ModelError); elsewhere the exact
    answer is TFLM's. scale = m * 2**e is past 2**(k + 1/2) when
    m**2 >= 2**(2k + 1 - 2e)."""
    from .. import quant
    m, e = quant.from_f32(scale)
    k = quant.bitlen(m) - 1 + e  # 2**k <= scale < 2**(k + 1)
    sq = m * m << 14
    half = 1 << (2 * k + 1 - 2 * e + 14)
    if abs(sq - half) <= half >> 13:
        raise ModelError("cell state scale %r is too close to 2**%d.5, "
                         "where TFLM's float log2 may round either way"
                         % (scale, k))
    return k + 1 if sq >= half else k


def prepare(op, ins, outs, ctx):
    """The int8 x int8 -> int16 cell UNIDIRECTIONAL_SEQUENCE_LSTM (called
    by lstm.prepare for an input that is not float32). ins: the 24
    inputs (None for the absent ones); outs: [output]. Raises
    PrepareError."""
    from .conv_util import bias_words, check_near
    from .. import quant
    x, h, c, y, major, batch, steps, n_in, n = _check(op, ins, outs)
    label = op.label()
    p = persistent(ctx, "i", _P_SIZE)
    try:
        q12 = (0x800000, -35)  # 2**-12: the gates' FC output scale
        k = _P_PAIRS
        for g in (2, 1, 3, 4):  # forget, input, cell, output
            for w, src in ((ins[g], x), (ins[g + 4], h)):
                m, s = quant.quantize_multiplier(quant.div(quant.mul(
                    quant.from_f32(src.scale), quant.from_f32(w.scale)),
                    q12))
                p[k], p[k + 1] = m, s
                k += 2
        q15 = (1, -15)
        cs = quant.from_f32(c.scale)
        for a, b, o in ((q15, cs, cs), (q15, q15, cs),
                        (q15, q15, quant.from_f32(h.scale))):
            m, s = quant.quantize_multiplier(quant.div(quant.mul(a, b), o))
            p[k], p[k + 1] = m, s
            k += 2
        power = _log2_round(c.scale)
        # cell_clip > 0: clip to +-(int16)min(clip / scale, 32767) (the
        # double quotient, truncated); p[8] holds that plus 1, 0: no clip
        clip = op.opt_float(_UNIDIRECTIONAL_SEQUENCE_LSTM_CELL_CLIP, 0.0)
        qclip = 0
        if clip > 3e38:  # +inf (or FLT_MAX): the quotient caps at 32767
            qclip = 32768
        elif clip > 0:
            r = quant.div(quant.from_f32(clip), cs)
            qclip = r[0] >> -r[1] if r[1] < 0 else r[0] << r[1]
            qclip = min(qclip, 32767) + 1
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    for j in range(_P_PAIRS + 1, _P_SIZE, 2):
        if p[j] > 30:
            raise PrepareError("%s: requantization multiplier too large "
                               "(shift %d)" % (label, p[j]))
    # Tanh(cell_state_scale_power): left shift 15 + power - 3, or a right
    # shift with multiplier 3 when that is negative (lstm_eval.cc)
    shift = 12 + power
    mult = 0
    if shift < 0:
        shift, mult = -shift, 3
    if mult == 0:  # the int16 Tanh's power of two case
        if shift > 14:  # x * (3 << shift) would overflow int32
            raise PrepareError("%s: cell state scale %r is too large"
                               % (label, c.scale))
        mult, shift = 3 << shift, 0
    elif shift > 31:  # TFLM shifts an int32 by that much: undefined
        raise PrepareError("%s: cell state scale %r is too small"
                           % (label, c.scale))
    for j, v in enumerate((batch, steps, n_in, n, 1 if major else 0,
                           -x.zero_point, -h.zero_point, h.zero_point,
                           qclip, mult, shift)):
        p[j] = v
    # the cell gate's activation: TANH; any other leaves the gate as it
    # is (TFLM's release build passes its TFLITE_ASSERT_FALSE)
    act = op.opt_byte(_UNIDIRECTIONAL_SEQUENCE_LSTM_FUSED_ACTIVATION_FUNCTION,
                      0)
    tanh_gate = act == _ACT_TANH
    rows = batch if major else 1
    words = rows * n
    order = (2, 6, 1, 5, 3, 7, 4, 8)  # forget, input, cell, output gates
    # each gate's input FC (with the gate's bias), then its recurrent one
    fin = fc_rows.params(ctx, rows, n_in, n, -x.zero_point, 0, True)
    frec = fc_rows.params(ctx, rows, n, n, -h.zero_point, 0, False)
    ctx.variable(h)
    ctx.variable(c)
    bufs = tuple(ctx.work(words) for _ in range(6))
    win = fc_rows.window(ctx, max(n_in, n))
    biases = tuple(bias_words(op, ins[i], n, ctx) for i in (13, 12, 14, 15))
    weights = tuple(ins[i].data for i in order)
    w_offsets = tuple(-ins[i].zero_point for i in order)
    pairs = tuple(p[j:j + 1] for j in range(_P_PAIRS, _P_SIZE))
    check_near(op, ctx, win, biases + weights)  # what the block addresses
    # gate()'s blocks (GATE_BLOCK in thumb_lstm.py: N ADD KIND MULT
    # SHIFT): the sigmoid gates, the cell gate (TANH or none), the cell
    # state's sum, tanh(c); top-level state items, as fin and frec (the
    # interpreter remakes those views in low heap blocks)
    return _eval, (x.data, h.data, c.data, y.data, p, fin, frec, bufs,
                   biases, weights, w_offsets, pairs, _SIGMOID,
                   _block(ctx, (words, 1, 1, 0, 0)),
                   _block(ctx, (words, 1, 2 if tanh_gate else 0, 3, 0)),
                   _block(ctx, (words, 1, 0, 0, 0)),
                   _block(ctx, (words, 0, 2, mult, shift)),
                   win, fc_rows.dots, fc_rows.rows, gate)


def _block(ctx, values):
    b = persistent(ctx, "i", len(values))
    for k, v in enumerate(values):
        b[k] = v
    return b


def _eval(st):
    # (no tuple is built here: a, b = c, d of 4 or more names makes one)
    (x, h, c, y, p, fin, frec, bufs, biases, weights, w_off, pairs, tab,
     b_sig, b_cell, b_sum, b_tanh, win, dots, fc_sums, gate) = st
    batch = p[0]
    steps = p[1]
    n_in = p[2]
    n = p[3]
    major = p[4]
    rows = batch if major else 1
    words = rows * n
    gf, gi, gc, go, t1, t2 = bufs
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
            for k in range(4):
                g = bufs[k]
                # input FC (with the gate's bias), then the recurrent one
                fin[_FC_X0] = xo
                fin[_FC_WO] = w_off[2 * k]
                fc_sums(x, weights[2 * k], biases[k], g, fin, win, dots)
                scale_i32(g, words, pairs[4 * k], pairs[4 * k + 1], 0)
                frec[_FC_X0] = so
                frec[_FC_WO] = w_off[2 * k + 1]
                fc_sums(h, weights[2 * k + 1], biases[k], t1, frec, win,
                        dots)
                scale_i32(t1, words, pairs[4 * k + 2], pairs[4 * k + 3], 0)
                # sat16 of the sum, then sigmoid (tanh: the cell gate)
                gate(g, t1, tab, b_cell if k == 2 else b_sig)
            # c = sat16(forget * c + input * cell gate), clipped
            _load16(c, so, t1, words)
            _mul(gf, t1, t1, words)
            scale_i32(t1, words, pairs[16], pairs[17], 0)
            _mul(gi, gc, t2, words)
            scale_i32(t2, words, pairs[18], pairs[19], 0)
            gate(t1, t2, tab, b_sum)  # each product clamped, then summed
            _cell(t1, c, so, words, p)
            # h = tanh(c) * output, int8 at the hidden zero point
            _load16(c, so, t1, words)
            gate(t1, t1, tab, b_tanh)
            _mul(t1, go, t2, words)
            scale_i32(t2, words, pairs[20], pairs[21], 0)
            _hidden(t2, h, so, y, yo, words, p)


# -- engines (word-size independent viper; words hold signed values) -----

@micropython.viper
def _mul(a, b, out, n: int):
    """out[i] = a[i] * b[i] (int16 values in words: no overflow)."""
    pa = ptr32(a)
    pb = ptr32(b)
    po = ptr32(out)
    one: int = 1
    S: int = one << 31
    i: int = 0
    while i < n:
        po[i] = ((pa[i] ^ S) - S) * ((pb[i] ^ S) - S)
        i += 1


@micropython.viper
def _load16(src, off: int, out, n: int):
    """out[i] = the int16 src[off + i] (aligned: a variable tensor)."""
    ps = ptr16(src)
    po = ptr32(out)
    i: int = 0
    while i < n:
        po[i] = (ps[off + i] ^ 0x8000) - 0x8000
        i += 1


@micropython.viper
def _cell(a, c, off: int, n: int, p):
    """c[off + i] = a[i] (the new cell state, gate()'s saturating sum of
    the two MulElementwise products), clipped to +-p[8] - 1 when p[8] > 0."""
    pa = ptr32(a)
    pc = ptr16(c)
    clip: int = ptr32(p)[8] - 1  # -1: no clipping
    one: int = 1
    S: int = one << 31
    i: int = 0
    while i < n:
        x: int = (pa[i] ^ S) - S
        if clip >= 0:
            if x > clip:
                x = clip
            if x < 0 - clip:
                x = 0 - clip
        pc[off + i] = x
        i += 1


@micropython.viper
def _hidden(a, h, off: int, y, yoff: int, n: int, p):
    """h[off + i] = y[yoff + i] = clamp8(a[i] + hidden zp)."""
    pa = ptr32(a)
    ph = ptr8(h)
    py = ptr8(y)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    zp: int = (ptr32(p)[7] ^ S) - S
    i: int = 0
    while i < n:
        v: int = ((pa[i] ^ S) - S) + zp
        if v > 127 or v < -128:
            v = ((v + S) & M) - S  # C's int32 wrap of the sum (64-bit)
            if v > 127:
                v = 127
            else:
                v = -128
        ph[off + i] = v
        py[yoff + i] = v
        i += 1
