"""Shared prepare-time helpers of CONV_2D and DEPTHWISE_CONV_2D.

Output size and padding follow tensorflow/lite/kernels/padding.h
(ComputeOutSizeChecked, ComputePaddingWithOffsetChecked); quantization
follows PopulateConvolutionQuantizationParams in
tensorflow/lite/kernels/kernel_util.cc. Nothing here runs in invoke().
"""

from array import array

import micropython  # under CPython, the tflm package installs a shim

from micropython import const

from .. import schema
from ..heap import keep, persistent, zeros  # noqa: F401 (kernels: keep)
from ..errors import ModelError, PrepareError
from . import WORD  # noqa: F401 (kernels: conv_util.WORD)



def check_near(op, ctx, block, bufs):
    """On a 64-bit port the loops' blocks hold addresses as int32 offsets
    from the block (mac.py): PrepareError unless every buffer of bufs
    (None skipped) starts within 2 GB (less 128 MB for its own size) of
    buffer `block`, as the model, arena and persistent buffers do in one
    GC heap. Checked in the real pass only; nothing to check on 32-bit
    ports or where uctypes is missing."""
    if WORD == 4 or getattr(ctx, "sizing", True):
        return
    try:
        from uctypes import addressof
    except ImportError:
        return
    a = addressof(block)
    for b in bufs:
        if b is not None and abs(addressof(b) - a) >= 0x78000000:
            raise PrepareError(
                "%s: on a 64-bit port the model's bytes must lie within 2 GB "
                "of the arena (the kernel's loops address them with 32-bit "
                "offsets)" % op.label())

_INT32 = const(2)
_INT8 = const(9)
_PADDING_SAME = const(0)
_PADDING_VALID = const(1)

# Added to the shift byte of a channel whose multiplier is negative
# (quant_params): outside every loop's fast path (fixedpoint.requant_i8b
# takes it off again).
NEG_MARK = 64


# TFLM's ConvParams / DepthwiseParams / PaddingValues hold strides,
# dilations, depth multiplier and padding as int16_t (kernels/internal/
# types.h): larger values would be truncated there, so they are rejected.
INT16_MAX = 32767


def out_size(padding, image, filt, stride, dilation):
    """Output size of one spatial dimension (ComputeOutSizeChecked).

    padding: Padding SAME (0) or VALID (1). Returns the size (>= 0),
    or None where TFLM reports an error (bad arguments, negative size).
    """
    if (padding not in (_PADDING_SAME, _PADDING_VALID)
            or image < 0 or filt <= 0 or stride <= 0 or dilation <= 0):
        return None
    eff = (filt - 1) * dilation + 1
    if padding == _PADDING_SAME:
        n = (image + stride - 1) // stride
    else:
        # C++ int64 division truncates toward zero: a numerator in
        # (-stride, 0) still gives size 0; below that TFLM fails.
        num = image + stride - eff
        n = num // stride if num >= 0 else -((-num) // stride)
    return n if n >= 0 else None


def pad_before(stride, dilation, image, filt, out):
    """Padding before the first row/column (ComputePaddingWithOffset):
    max(0, (out - 1) * stride + effective_filter - image) // 2.

    TFLM's reference kernels use only this value (not the odd offset):
    the extra padding of an odd total goes after the last row/column.
    """
    eff = (filt - 1) * dilation + 1
    total = (out - 1) * stride + eff - image
    return total // 2 if total > 0 else 0


def check_type(op, t, ttype, what):
    """Raise PrepareError unless tensor t exists and has type ttype."""
    if t is None:
        raise PrepareError("%s: missing %s tensor" % (op.label(), what))
    if t.type != ttype:
        raise PrepareError("%s: %s %s is %s, expected %s"
                           % (op.label(), what, t.label(), t.dtype,
                              schema.type_name(ttype)))


def check_rank4(op, t, what):
    """Raise PrepareError unless t has rank 4."""
    if len(t.shape) != 4:
        raise PrepareError("%s: %s %s has shape %s, expected rank 4"
                           % (op.label(), what, t.label(), t.shape))


def check_io(op, ins, outs):
    """Check input/output counts and int8 types of a conv-like op.

    Returns (input, filter, bias or None, output); all rank 4 but bias.
    """
    if len(ins) not in (2, 3) or len(outs) != 1:
        raise PrepareError("%s: expected 2 or 3 inputs and 1 output, got "
                           "%d and %d" % (op.label(), len(ins), len(outs)))
    inp, filt, out = ins[0], ins[1], outs[0]
    bias = ins[2] if len(ins) == 3 else None
    check_type(op, inp, _INT8, "input")
    check_type(op, filt, _INT8, "filter")
    check_type(op, out, _INT8, "output")
    for t, what in ((inp, "input"), (filt, "filter"), (out, "output")):
        check_rank4(op, t, what)
    for t, what in ((inp, "input"), (out, "output")):
        if not t.scales:
            raise PrepareError("%s: %s %s is not quantized"
                               % (op.label(), what, t.label()))
        if not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s %s has zero point %d outside int8"
                               % (op.label(), what, t.label(),
                                  t.zero_point))
    return inp, filt, bias, out


def geometry(op, inp, filt, out, padding, sh, sw, dh, dw, out_ch):
    """Check options and the output shape; return (pad_h, pad_w).

    The stored output shape must equal [batch, out_h, out_w, out_ch] as
    computed by ComputePaddingHeightWidth (TFLM trusts the stored shape).
    """
    if padding not in (_PADDING_SAME, _PADDING_VALID):
        raise PrepareError("%s: unknown padding %d" % (op.label(), padding))
    if not 1 <= min(sh, sw, dh, dw) <= max(sh, sw, dh, dw) <= INT16_MAX:
        raise PrepareError("%s: strides (%d, %d) and dilations (%d, %d) "
                           "must be in [1, %d]" % (op.label(), sh, sw, dh, dw,
                                                   INT16_MAX))
    _, h, w, _ = inp.shape
    kh, kw = filt.shape[1], filt.shape[2]
    if kh < 1 or kw < 1:
        raise PrepareError("%s: filter %s has empty shape %s"
                           % (op.label(), filt.label(), filt.shape))
    oh = out_size(padding, h, kh, sh, dh)
    ow = out_size(padding, w, kw, sw, dw)
    if oh is None or ow is None:
        raise PrepareError("%s: filter %s (dilated) does not fit input %s "
                           "%s" % (op.label(), filt.label(), inp.label(),
                                   inp.shape))
    want = (inp.shape[0], oh, ow, out_ch)
    if tuple(out.shape) != want:
        raise PrepareError("%s: output %s has shape %s, expected %s"
                           % (op.label(), out.label(), tuple(out.shape),
                              want))
    ph, pw = pad_before(sh, dh, h, kh, oh), pad_before(sw, dw, w, kw, ow)
    if max(ph, pw) > INT16_MAX:
        raise PrepareError("%s: padding (%d, %d) exceeds %d"
                           % (op.label(), ph, pw, INT16_MAX))
    return ph, pw


def quant_params(op, inp, filt, out, act, n_ch, same_zp_count, ctx=None,
                 qmin=-128, qmax=127, neg_ok=False):
    """PopulateConvolutionQuantizationParams for int8 (qmin, qmax: the
    output type's range, int16's for the 16x8 kernels).

    n_ch: output channels (filter dimension 0 for conv, 3 for depthwise).
    same_zp_count: also require as many filter zero points as scales (a
    check DepthwiseConvPrepare makes and ConvPrepare does not).
    Returns (mults, shifts, qp): n_ch int32 multipliers and n_ch int8
    shifts (per-tensor filters are broadcast), in the arena's persistent
    part when ctx is given (persistent(): do not keep() them), and array('i')
    [output zero point, activation min, activation max] for
    fixedpoint.requant_i8b.
    The filter zero point is ignored, as TFLM's int8 kernels ignore it.

    A filter scale may be zero (multiplier (0, 0)) or negative, as in
    TFLM: its multiplier is then negative (quant.quantize_multiplier's
    neg) and, with neg_ok (the int8 kernels, whose requantization is
    fixedpoint.requant_i8b), its shift byte holds shift + NEG_MARK, which
    is outside [-31, 30]: the loops' fast paths (conv.py's pixels,
    depthwise_conv.py) send such a channel to requant_i8b, which reads
    the multiplier's sign. Without neg_ok (the 16x8 kernels) a negative
    multiplier raises PrepareError. NaN or infinite filter scales raise
    PrepareError (TFLM's multiplier is undefined for them).
    """
    from .. import quant
    n_sc, scale = filt.scale_reader()
    if n_sc not in (1, n_ch):
        raise PrepareError("%s: filter %s has %d scales for %d channels"
                           % (op.label(), filt.label(), n_sc, n_ch))
    qd = filt.quantized_dimension
    if n_sc > 1 and not (0 <= qd < len(filt.shape)
                                and filt.shape[qd] == n_ch):
        # TFLM only checks that the quantized dimension has n_ch entries.
        raise PrepareError("%s: filter %s is quantized along dimension %d, "
                           "which does not have %d entries"
                           % (op.label(), filt.label(), qd, n_ch))
    if same_zp_count and filt.zero_point_count() != n_sc:
        raise PrepareError("%s: filter %s has %d scales but %d zero points"
                           % (op.label(), filt.label(), n_sc,
                              filt.zero_point_count()))
    # The sizing pass (ctx.sizing) needs only the sizes: the multipliers,
    # most of a board's construction time for a CNN (tens of thousands
    # of instructions each), are computed in the real pass only, where
    # a too large one raises the same PrepareError. (So a model broken
    # in several ways may report a later operator's sizing-pass error,
    # or an ArenaError, before this one.)
    sizing = getattr(ctx, "sizing", False)
    mults = persistent(ctx, "i", n_ch, sizing)
    shifts = persistent(ctx, "b", n_ch, sizing)  # [-31, 30]: bytes save RAM
    top = 0
    in_s, out_s = inp.scale, out.scale  # read once: they are model reads
    try:
        # Only the last scale's result is reused: a cache of every
        # channel's would keep small objects alive across the big-number
        # garbage of conv_multiplier, scattering them over a board's heap.
        last = ms = None
        ia = oa = None
        if not sizing:
            ia, oa = quant.from_f32(in_s), quant.from_f32(out_s)
        for c in range(0 if sizing else n_ch):
            s = scale(c if n_sc > 1 else 0)
            if s != last:
                # quant.conv_multiplier_signed, with the input and output
                # scales taken apart once
                ms = quant.channel_multiplier(ia, oa, s)
                last = s
                if ms[0] < 0 and not neg_ok:
                    raise PrepareError(
                        "%s: filter %s has a negative scale %r in channel "
                        "%d: its negative multiplier is supported by the "
                        "int8 kernels only" % (op.label(), filt.label(),
                                               s, c))
            top = max(top, ms[1])
            if top <= 30:  # shifts are in [-31, 30]: they fit a byte
                mults[c] = ms[0]
                shifts[c] = ms[1] + NEG_MARK if ms[0] < 0 else ms[1]
                if ms[0] < 0:  # requant_i8b's negative channels
                    from . import requant_neg  # noqa: F401
        lo, hi = quant.activation_range(act, out_s, out.zero_point, qmin,
                                        qmax)
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    if top > 30:
        # TFLM's left shift x * (1 << shift) is undefined beyond 30 bits.
        raise PrepareError("%s: requantization multiplier of filter %s "
                           "too large (shift %d)"
                           % (op.label(), filt.label(), top))
    if lo > hi:
        raise PrepareError("%s: empty activation range [%d, %d] of output %s"
                           % (op.label(), lo, hi, out.label()))
    return mults, shifts, array("i", (out.zero_point, lo, hi))


def bias_array(op, bias, n_ch, ctx):
    """The bias as n_ch aligned int32 values (zeros if absent), a copy in
    the arena's persistent part (persistent(): do not keep() it) that
    prepare may change; counted in ctx.copied_bytes.

    Raises PrepareError unless the bias is a constant int32 tensor of
    n_ch elements.
    """
    if bias is None:
        return persistent(ctx, "i", n_ch)
    check_type(op, bias, _INT32, "bias")
    if bias.size != n_ch:
        raise PrepareError("%s: bias %s has %d elements, expected %d"
                           % (op.label(), bias.label(), bias.size, n_ch))
    if not bias.is_const:
        raise PrepareError("%s: bias %s is not constant"
                           % (op.label(), bias.label()))
    a = persistent(ctx, "i", n_ch)
    fb = bias.data
    for k in range(n_ch):  # little-endian int32 at any address
        j = 4 * k
        a[k] = wrap32(fb[j] | fb[j + 1] << 8 | fb[j + 2] << 16
                      | fb[j + 3] << 24)
    if hasattr(ctx, "copied_bytes"):
        ctx.copied_bytes += 4 * n_ch
    return a


@micropython.viper
def _low_bits(buf) -> int:
    """The address of buffer buf's first byte, modulo 16."""
    return int(ptr8(buf)) & 15


def bias_words(op, bias, n_ch, ctx):
    """The bias for eval, n_ch int32 values that viper reads with ptr32:
    the model's own bytes when they are 4-byte aligned (no RAM: TFLM too
    reads the bias in place), or the arena's (a bias that an earlier
    operator writes), else bias_array's aligned copy in the arena's
    persistent part (zeros when there is no bias); not to be kept()
    nor changed. Raises PrepareError as bias_array."""
    if bias is not None and bias.data is not None \
            and bias.type == _INT32 and bias.size == n_ch \
            and _low_bits(bias.data) & 3 == 0:
        # in place: a constant's bytes, or an activation in the arena
        # that an earlier operator writes (TFLM's DECODE of a compressed
        # bias), read at eval as TFLM reads it
        return bias.data
    return bias_array(op, bias, n_ch, ctx)


def check_scratch(op, ctx, n):
    """Raise PrepareError unless ctx.scratch holds n int32 values."""
    if ctx.scratch_len < n:
        raise PrepareError("%s: needs %d scratch words, interpreter has %d"
                           % (op.label(), n, ctx.scratch_len))


def wrap32(v):
    """v reduced to a signed 32-bit value (C int32 arithmetic)."""
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def work_buffer(ctx, n, untouched=False):
    """A buffer of at least n int32 words that this op uses during its
    own eval only (CONV_2D gathers an output pixel's input window into
    it, ADD its lookup tables): ctx.work(n), a scratch buffer that the
    interpreter plans into the arena's head (context.KernelContext.work),
    read by eval with viper pointers. untouched: prepare neither reads
    nor writes it (the sizing pass then allocates nothing for it). A
    context without work() (kernel tests) gets a fresh array('i')."""
    w = getattr(ctx, "work", None)
    if w is not None:
        return w(n, untouched)
    return zeros("i", max(n, 1))


def elastic_work(ctx, n, least, untouched=False):
    """(buffer, words): an elastic work buffer (ctx.work(n, least=...)),
    for speed only: n int32 words where the arena's head has room for
    them during this op, else what room it has there, at least least
    words (the interpreter's planner decides: planner.grow), so that the
    buffer raises the head's peak by no more than least words; words is
    what prepare may use (n in the sizing pass, whose results are
    dropped). untouched as work_buffer. A context without work()
    (kernel tests) gets a fresh array('i') of n words."""
    w = getattr(ctx, "work", None)
    if w is None:
        return zeros("i", max(n, 1)), n
    v = w(n, untouched, least)
    if getattr(ctx, "sizing", False):
        return v, n
    return v, len(v) // 4


def word_view(buf, k, words):
    """A view of buf from its int32 word k on: buf holds words int32
    words, a bytes view (the arena's) or an array('i') (kernel tests)."""
    mv = memoryview(buf)
    return mv[k if len(mv) == words else 4 * k:]


# the states that packed() made at once (a context without pack():
# kernel tests, benches): their buffers, held for good
HELD = []


def block(ctx, words, pairs):
    """A parameter block for packed(): the int32 words, then 1 + pairs
    zeros (fixedpoint.rel: the buffers' regions, their offsets), in the
    persistent words (heap.persistent: not the arena's tail; a compiled
    model keeps them in its bytes)."""
    p = persistent(ctx, "i", len(words) + 1 + pairs)
    for k, v in enumerate(words):
        p[k] = v
    return p


def packed(ctx, st, first):
    """The state of an int8 CONV_2D or DEPTHWISE_CONV_2D (no object:
    fixedpoint.rel): st = (P, buffer, ...), P the parameter block
    (block(): persistent words, whose words first .. first + len(st) - 1
    are left for the buffers' regions and offsets); the state is P, with
    region 0 and the offset from P of each buffer of st[1:] there,
    written once the kept arrays have their places (ctx.pack:
    context.KernelContext.finish). A context without pack()
    (kernel tests, benches) gets P with its pairs at once, and HELD
    keeps st (until the caller clears it: tests/mp/conv_runner.py).
    Raises PrepareError where context.pairs raises ValueError."""
    f = getattr(ctx, "pack", None)
    if f is not None:
        return f(st, first)
    from ..context import pairs
    HELD.append(st)
    try:
        return pairs(st, first, [])  # (HELD holds st's buffers)
    except ValueError as e:
        raise PrepareError(str(e))


def limit_scratch(ctx, n):
    """ctx.limit_scratch(n): the op uses at most n scratch words (a
    context without it, as in kernel tests, keeps its scratch_len)."""
    f = getattr(ctx, "limit_scratch", None)
    if f is not None:
        f(n)


def scratch_halves(ctx):
    """(scratch, upper half, half): ctx.scratch, a view of its second
    half, and the words in each half (ctx.scratch_len // 2). The scratch
    is a bytes view in the interpreter and an array('i') in kernel
    tests: the upper half starts at word `half` in both."""
    s = ctx.scratch
    half = ctx.scratch_len // 2
    mv = memoryview(s)
    return s, mv[half if len(mv) == ctx.scratch_len else 4 * half:], half
