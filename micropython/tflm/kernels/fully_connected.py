"""FULLY_CONNECTED, int8 input / weights / output, int32 bias.

Follows tensorflow/lite/micro/kernels/fully_connected.cc,
fully_connected_common.cc (CalculateOpDataFullyConnected) and
tensorflow/lite/kernels/internal/reference/integer_ops/fully_connected.h:

    acc = bias[u] + sum_d w[u, d] * (x[b, d] - input_zp)
    out[b, u] = clamp(MultiplyByQuantizedMultiplier(acc, m, shift) + out_zp)

The input may have any rank: it is read as batches x depth rows, depth being
the weights' last dimension. The multiplier is (double)in_scale *
(double)w_scale / out_scale, per tensor or per unit (more than one weights
scale): what the TFLM build used as the oracle computes, although
kernel_util.cc reads as if the per-tensor product were taken in float32.

The dot product is computed on offset weight bytes wu = w + 128 =
w_byte ^ 0x80 (no sign extension in the inner loop) and v = x - input_zp:

    sum w * v = sum wu * v - 128 * sum v

where -128 * sum v is computed once per input row and chunk. The row's v
are gathered into an int32 array shared by a chunk of units (a work
buffer in the arena's head, with the chunk's accumulators: its size
elastic, conv_util.elastic_work), in chunks of at most GATHER_MAX
values, so the inner loop is one weight byte xor 0x80 times one word:
mac.dots (thumb.py's machine code on Cortex-M, thumb_dsp.py's on
Cortex-M4/M7/M33, mac.py's viper elsewhere), called once per chunk of
inputs and units. On Cortex-M4/M7/M33 (kernels.DSP) fc_dsp.py's copy
of _fc gathers and requantizes in machine code too (thumb_rq_dsp.py).
The bias is read where the model has it (conv_util.bias_words): no
per-unit copy when it is 4-byte aligned.
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from ..fixedpoint import requant_i8b
from . import DSP, THUMB

# The loops: Thumb machine code on Cortex-M, viper elsewhere (THUMB)
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

_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)

_FULLY_CONNECTED_OPTIONS = const(8)
# Longest run of input values gathered at once (words of the op's work
# buffer, planned into the arena's head); deeper inputs are processed in
# chunks of this many (a few instructions per unit and chunk).
GATHER_MAX = 128
# Most units whose accumulators are kept at once (words of the work
# buffer too): wider layers are requantized in chunks of this many (one
# requant_i8b call per chunk and input row; each chunk gathers the row
# again).
UNIT_CHUNK = 128
# Where the work buffer of those sizes would raise the arena's peak (the
# op is where the most activations live: the first layers of an
# autoencoder), the planner grants what room there is, at least a
# block, this many values and this many units (conv_util.elastic_work).
_GATHER_LEAST = const(64)
_UNIT_LEAST = const(64)
# int32 words before the gathered values in the work buffer: the block
# that mac.dots reads (DOTS_BLOCK in thumb.py, then REL)
_BLK = const(10)
_REL = const(9)
_FULLY_CONNECTED_FUSED_ACTIVATION_FUNCTION = const(0)
_FULLY_CONNECTED_KEEP_NUM_DIMS = const(2)
_FULLY_CONNECTED_WEIGHTS_FORMAT = const(1)
_FLOAT32 = const(0)


def _options(op):
    """(activation, weights_format, keep_num_dims); TFLM defaults when the
    options table is absent or of another type."""
    if op.options_type != _FULLY_CONNECTED_OPTIONS:
        return 0, 0, 0
    return (op.opt_byte(_FULLY_CONNECTED_FUSED_ACTIVATION_FUNCTION, 0),
            op.opt_byte(_FULLY_CONNECTED_WEIGHTS_FORMAT, 0),
            op.opt_byte(_FULLY_CONNECTED_KEEP_NUM_DIMS, 0))


def _check(op, ins, outs):
    """Type, shape and quantization checks; returns (x, w, bias, y)."""
    label = op.label()
    if len(ins) < 2 or ins[0] is None or ins[1] is None or len(outs) != 1:
        raise PrepareError("%s needs input, weights, optional bias and one "
                           "output" % label)
    x, w, y = ins[0], ins[1], outs[0]
    bias = ins[2] if len(ins) > 2 else None
    for t in (x, w, y):
        if t.type != _INT8:
            raise PrepareError("%s: %s is %s; only int8 input, weights and "
                               "output are supported" % (label, t.label(),
                                                         t.dtype))
        if not t.scales:
            raise PrepareError("%s: %s has no quantization" % (label,
                                                              t.label()))
    for t in (x, y):
        if not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s zero point %d is outside int8"
                               % (label, t.label(), t.zero_point))
    # weights and bias may be written by an earlier operator (TFLM's
    # DECODE of compressed ones): eval reads both where they are
    if bias is not None and bias.type != _INT32:
        raise PrepareError("%s: bias %s must be an int32 tensor"
                           % (label, bias.label()))
    if any(zp != 0 for zp in w.zero_points):
        raise PrepareError("%s: weights %s have a non-zero zero point "
                           "(TFLM requires symmetric weights)"
                           % (label, w.label()))
    return x, w, bias, y


def _shapes(op, x, w, bias, y):
    """(batches, units, depth) after checking every shape."""
    label = op.label()
    if len(w.shape) < 2 or len(y.shape) < 1:
        raise PrepareError("%s: weights %s must have rank >= 2, shape %s"
                           % (label, w.label(), w.shape))
    units, depth = w.shape[-2], w.shape[-1]
    if depth <= 0 or x.size % depth:
        raise PrepareError("%s: input %s shape %s is not a whole number of "
                           "rows of depth %d" % (label, x.label(), x.shape,
                                                 depth))
    batches = x.size // depth
    if y.shape[-1] != units or y.size != batches * units:
        raise PrepareError("%s: output %s shape %s, expected %d rows of %d "
                           "units" % (label, y.label(), y.shape, batches,
                                      units))
    if w.size != units * depth:
        raise PrepareError("%s: weights %s shape %s must be [units, depth]"
                           % (label, w.label(), w.shape))
    if bias is not None and bias.size != units:
        raise PrepareError("%s: bias %s has %d elements, expected %d"
                           % (label, bias.label(), bias.size, units))
    return batches, units, depth


def _multipliers(op, x, w, bias, y, units):
    """(mults, shifts, per_channel): array('i') and array('b') (shifts
    are in [-31, 30], plus conv_util.NEG_MARK for a unit whose scale, and
    multiplier, is negative), like TFLM's CalculateOpDataFullyConnected.
    A zero unit scale gives (0, 0); a negative per-tensor scale is
    refused as TFLM refuses it."""
    from .. import quant
    from ..heap import zeros
    from .conv_util import NEG_MARK
    label = op.label()
    # one scale at a time, into arrays made first: a list of per-unit
    # results, each made amid its computation's garbage, scatters small
    # objects through a board's heap (hundreds of units left no 4 KB
    # block free)
    n_sc, scale = w.scale_reader()
    neg = False
    try:
        if n_sc > 1:
            qd = w.quantized_dimension
            if (not 0 <= qd < len(w.shape) or n_sc != w.shape[qd]
                    or n_sc != units):
                raise PrepareError("%s: weights %s have %d scales for shape "
                                   "%s" % (label, w.label(), n_sc, w.shape))
            # A unit's scale may be negative or zero, as in TFLM (a
            # negative multiplier: its shift byte gets NEG_MARK)
            mults, shifts = zeros("i", n_sc), zeros("b", n_sc)
            # (quant.conv_multiplier_signed, the input and output scales
            # taken apart once)
            xs, ys = quant.from_f32(x.scale), quant.from_f32(y.scale)
            for k in range(n_sc):
                m, sh = quant.channel_multiplier(xs, ys, scale(k))
                _check_shift(label, sh)
                mults[k] = m
                shifts[k] = sh + NEG_MARK if m < 0 else sh
                neg = neg or m < 0
            per_channel = 1
        else:
            if not w.scale >= 0.0:
                # GetQuantizedConvolutionMultipler: TF_LITE_ENSURE(
                # input_product_scale >= 0); NaN fails it too
                raise PrepareError("%s: weights %s have the per-tensor "
                                   "scale %r: TFLM requires input scale * "
                                   "weights scale >= 0" % (label, w.label(),
                                                           w.scale))
            _check_bias_scale(op, x, w, bias, y)
            # The oracle (PyPI tflite-micro) rounds (double)in * (double)w,
            # not the float32 product kernel_util.cc shows: fuzzing found
            # outputs one off with the float32 product (tests/test_fuzz.py).
            m, sh = quant.conv_multiplier(x.scale, w.scale, y.scale)
            _check_shift(label, sh)
            mults, shifts = array("i", [m]), array("b", [sh])
            per_channel = 0
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    if neg:  # requant_i8b's negative units
        from . import requant_neg  # noqa: F401
    return mults, shifts, per_channel


def _check_shift(label, shift):
    """PrepareError for a multiplier of 2**31 or more (shift > 30)."""
    if shift > 30:
        raise PrepareError("%s: requantization multiplier too large "
                           "(shift %d)" % (label, shift))


def _check_bias_scale(op, x, w, bias, y):
    """GetQuantizedConvolutionMultipler's check that the bias scale matches
    in_scale * w_scale: |in * w - bias| / out <= 0.02, decided exactly."""
    from .. import quant
    if bias is None:
        return
    p = quant.mul(quant.from_f32(x.scale), quant.from_f32(w.scale))
    neg, b = quant.from_f32_signed(bias.scale) if bias.scales else \
        (False, quant.ZERO)
    o = quant.from_f32(y.scale)
    # Compare |p - b| * 50 <= o exactly, all as integers times 2**e (the
    # weights' scale is >= 0 here, the bias's of any sign).
    e = min(p[1], b[1], o[1])
    bv = b[0] << (b[1] - e)
    diff = abs((p[0] << (p[1] - e)) - (-bv if neg else bv))
    if diff * 50 > o[0] << (o[1] - e):
        raise PrepareError("%s: bias %s scale %r does not match input scale "
                           "* weights scale" % (op.label(), bias.label(),
                                                bias.scale))


def prepare(op, ins, outs, ctx):
    """Check a FULLY_CONNECTED op and bind its eval.

    ins: input (int8, any rank), weights (int8 [units, depth], constant,
    zero point 0, per-tensor or per-unit scales), optional bias (constant
    int32 [units]). outs: int8 with batches * units elements, last dim
    units. Options: fused activation, weights_format (DEFAULT only),
    keep_num_dims (only shapes matter). Raises PrepareError.
    """
    from .conv_util import (WORD, bias_words, check_near, elastic_work,
                            keep, persistent, word_view)
    from .. import quant
    if ins and ins[0] is not None and ins[0].type == _FLOAT32:
        from .conv_f32 import prepare_fc
        return prepare_fc(op, ins, outs, ctx)
    if ins and ins[0] is not None and ins[0].type == _INT16:  # 16x8
        from .fc16 import prepare as prepare16
        return prepare16(op, ins, outs, ctx)
    label = op.label()
    act, fmt, _ = _options(op)
    if fmt != 0:
        raise PrepareError("%s: weights_format %d is not supported"
                           % (label, fmt))
    x, w, bias, y = _check(op, ins, outs)
    batches, units, depth = _shapes(op, x, w, bias, y)
    # The largest block this prepare may ask for (an aligned copy of an
    # unaligned bias), first: in the sizing pass it is a heap array,
    # which the garbage of the quantization arithmetic below could
    # otherwise leave no room for.
    bias_w = bias_words(op, bias, units, ctx) if bias is not None else None
    mults, shifts, per_channel = _multipliers(op, x, w, bias, y, units)
    # into the tail (read-only for eval: a compiled model's stay in the
    # model's bytes); the chunks' views are views of it
    pm = persistent(ctx, "i", len(mults))
    ps = persistent(ctx, "b", len(shifts))
    for k in range(len(mults)):
        pm[k] = mults[k]
        ps[k] = shifts[k]
    mults, shifts = pm, ps
    try:
        lo, hi = quant.activation_range(act, y.scale, y.zero_point)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    qp = array("i", [y.zero_point, lo, hi])
    # One work buffer: mac.dots's block, a chunk of the gathered input
    # (dchunk words) and the accumulators of a chunk of units (n words),
    # each chunk as long as the buffer granted allows (_split).
    # Per-unit multipliers over more than one chunk of units: _S_MULTS
    # holds chunks (chunks[2 * k], chunks[2 * k + 1]: the multipliers and
    # shifts of chunk k, one flat tuple) and _S_SHIFTS None; else they
    # are the multipliers and shifts themselves.
    nmax, dmax = min(units, UNIT_CHUNK), min(depth, GATHER_MAX)
    nmin, dmin = min(nmax, _UNIT_LEAST), min(dmax, _GATHER_LEAST)
    work, words = elastic_work(ctx, _BLK + dmax + nmax, _BLK + dmin + nmin)
    n, dchunk = _split(words - _BLK, nmax, dmax, nmin, dmin)
    acc = word_view(work, _BLK + dchunk, words)
    if per_channel and units > n:
        chunks = []
        for u0 in range(0, units, n):
            chunks.append(memoryview(mults)[u0:])
            chunks.append(memoryview(shifts)[u0:])
        mults, shifts = tuple(chunks), None
    prm = array("i", (batches, units, depth, n, per_channel, dchunk,
                      -x.zero_point - 128, 0 if bias is None else 1,
                      WORD // 8))
    check_near(op, ctx, work, (acc, x.data, w.data, y.data, bias_w))
    # in the order of the _S_ slots (below)
    state = (acc, x.data, w.data, y.data,
             acc if bias_w is None else bias_w,
             keep(ctx, prm), keep(ctx, qp), mults, work, shifts)
    return _eval, state


def _split(room, nmax, dmax, nmin, dmin):
    """(units, values) per chunk in room words (at least nmin + dmin):
    nmax and dmax when they fit, else the room shared between them (the
    values first: each chunk of them costs mac.dots a call per unit,
    each chunk of units a gather of the row), the values a multiple of 8
    (mac.dots takes 8 at a time) unless all."""
    d = min(dmax, dmin + (room - nmin - dmin) * 4 // 7)
    n = min(nmax, room - d)
    d = min(dmax, room - n)
    if d < dmax:
        d = max(dmin, d & ~7)
    return min(nmax, room - d), d


# The eval state (prepare's state), by named slot (as conv.py's; the
# names fold to the numbers):
_S_ACC = const(0)
_S_X = const(1)
_S_W = const(2)
_S_OUT = const(3)
_S_BIAS = const(4)
_S_PARAMS = const(5)
_S_QP = const(6)
_S_MULTS = const(7)  # (or the chunks: see prepare)
_S_WIN = const(8)
_S_SHIFTS = const(9)
# The slots that eval only casts to pointers (viper ptr8 / ptr32, machine
# code arguments): a compiled model stores there the address of its view
# of the arena or the model, an int, no object (compiled.py T_ADDR; the
# chunks' tuple stays a tuple).
ADDRESSES = (_S_ACC, _S_X, _S_W, _S_OUT, _S_BIAS, _S_PARAMS, _S_QP,
             _S_MULTS, _S_WIN, _S_SHIFTS)
# st[_S_PARAMS]: these words (prm in the viper code). N: units per
# chunk (the scratch words); DC: depth values per gathered chunk; OFF:
# -input_zero_point - 128; REL: 1 on 64-bit ports (the block's
# addresses are relative to it, see mac.py).
_P_BATCHES = const(0)
_P_UNITS = const(1)
_P_DEPTH = const(2)
_P_N = const(3)
_P_PER_CHANNEL = const(4)
_P_DC = const(5)
_P_OFF = const(6)
_P_HAS_BIAS = const(7)
_P_REL = const(8)


def _eval(state):
    _fc(state)


@micropython.viper
def _fc(st):
    """For each input row b and unit u:
    acc[u] = bias[u] - 128 * sum_d v[b, d] + sum_d wu[u, d] * v[b, d],
    then requant_i8b per chunk of units. The depth is walked in chunks
    of at most DC values: each chunk's v are gathered into the work
    array after the block, then mac.dots sums it with the
    chunk's units, from the bias (or zeros) for the first chunk and from
    the partial sums in acc for the others. Weights are read with ptr8
    only (any alignment); the int32 store of each sum matches C's int32
    arithmetic.
    """
    acc = st[_S_ACC]
    pa: int = int(ptr32(acc))
    x0: int = int(ptr8(st[_S_X]))
    w0: int = int(ptr8(st[_S_W]))
    yd = st[_S_OUT]
    pb: int = int(ptr32(st[_S_BIAS]))
    prm = ptr32(st[_S_PARAMS])
    qp = st[_S_QP]
    mults = st[_S_MULTS]
    shifts = st[_S_SHIFTS]
    win = st[_S_WIN]
    dots = mac.dots
    blk = ptr32(win)
    batches: int = prm[_P_BATCHES]
    units: int = prm[_P_UNITS]
    depth: int = prm[_P_DEPTH]
    N: int = prm[_P_N]
    per_channel: int = prm[_P_PER_CHANNEL]
    DC: int = prm[_P_DC]
    one: int = 1
    S: int = one << 31
    off: int = (prm[_P_OFF] ^ S) - S  # -input_zero_point - 128
    has_bias: int = prm[_P_HAS_BIAS]
    chunked: int = 0  # _S_MULTS holds the chunks (see prepare)
    if per_channel and units > N:
        chunked = 1
    r0: int = 0  # addresses in the block are relative to r0 (mac.py)
    if prm[_P_REL]:
        r0 = int(blk)
    blk[_REL] = prm[_P_REL]
    v0: int = int(blk) + 4 * _BLK
    blk[0] = v0 - r0
    blk[4] = depth
    b: int = 0
    while b < batches:
        xrow: int = x0 + b * depth
        u0: int = 0
        kc: int = 0
        while u0 < units:
            n: int = units - u0
            if n > N:
                n = N
            d0: int = 0
            while d0 < depth:
                dn: int = depth - d0
                if dn > DC:
                    dn = DC
                # Gather v of this chunk, and -128 * sum v.
                s: int = 0
                va: int = v0
                xa: int = xrow + d0
                xe: int = xa + dn
                while xa < xe:
                    u: int = (ptr8(xa)[0] ^ 0x80) + off
                    ptr32(va)[0] = u
                    s += u
                    va += 4
                    xa += 1
                # the n sums: from the partial sums, the bias or zeros
                blk[5] = pa - r0
                if d0 == 0:
                    if has_bias:
                        blk[5] = pb + 4 * u0 - r0
                    else:
                        k: int = 0
                        while k < n:
                            ptr32(pa)[k] = 0
                            k += 1
                blk[1] = v0 + 4 * (dn & ~7) - r0
                blk[2] = v0 + 4 * dn - r0
                blk[3] = w0 + u0 * depth + d0 - r0
                blk[6] = 0 - s * 128
                blk[7] = pa - r0
                blk[8] = n
                dots(win, 0)
                d0 += dn
            if chunked:
                requant_i8b(0, 0, 0, acc, n, n, mults[2 * kc],
                            mults[2 * kc + 1], qp, yd, b * units + u0, 0)
            else:
                requant_i8b(0, 0, 0, acc, n, n if per_channel else 1, mults,
                            shifts, qp, yd, b * units + u0, 0)
            u0 += n
            kc += 1
        b += 1


# Cortex-M4/M7/M33 (kernels.DSP: thumb_dsp has gather): _fc with its
# gather and requantization in machine code, fc_dsp.py (in DSP builds
# only, romfs.DSP_ONLY: the other builds do not carry it)
if hasattr(mac, "gather"):
    from .fc_dsp import fc as _fc  # noqa: F811
