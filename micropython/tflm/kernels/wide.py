"""TFLM's int64 MultiplyByQuantizedMultiplier (common.cc), for the 16x8
kernels that accumulate in int64 (fc16, conv16, dw16, tconv16: their
per-channel multipliers, channel_multipliers), and the checks
that the 16x8 CONV_2D and DEPTHWISE_CONV_2D share (check_io16):

    reduced = (m + 2**15) >> 16 if m < 0x7FFF0000 else 0x7FFF
    total_shift = 15 - shift
    out = int32((acc * reduced + 2**(total_shift - 1)) >> total_shift)

in int64 arithmetic (the product wraps there as C's does; m < 0, from a
filter's negative scale, gives a reduced multiplier in [-2**15, -2**14],
which TFLM uses as it is: the product is then negative). The kernels
keep an int64 accumulator as four 16-bit limbs in viper ints (l3 signed,
limbs normalized with carries; they sum at most 64 int8 * int16 products
in one word before adding it), so every product stays below 2**31 and the
code is the same on 32- and 64-bit ports.
"""

import micropython
from micropython import const

from ..errors import PrepareError

_INT8 = const(9)
_INT16 = const(7)


def reduced(m, shift):
    """(reduced multiplier, total shift) of TFLM's int64
    MultiplyByQuantizedMultiplier for QuantizeMultiplier's (m, shift) (m
    of any sign: >> floors as C's arithmetic shift); None when the total
    shift is below 1 (shift > 14: TFLM would shift by a negative
    amount)."""
    if 15 - shift < 1:
        return None
    return ((m + 32768) >> 16 if m < 0x7FFF0000 else 0x7FFF), 15 - shift


def channel_multipliers(op, filt, oc, mults, shifts, ctx, wide=True):
    """(ms, ss): per output channel of a 16x8 CONV_2D, DEPTHWISE_CONV_2D
    or TRANSPOSE_CONV, in the arena's persistent part (heap.persistent;
    left unfilled in the sizing pass), the (reduced multiplier, total
    shift) above for int64 accumulation (wide), else int32
    accumulation's (multiplier, shift). mults, shifts: oc values from
    conv_util.quant_params with neg_ok (shifts as int8 bytes, read
    unsigned from an arena view; a channel with a negative multiplier has
    its shift + conv_util.NEG_MARK, taken off here). Raises PrepareError
    naming op and filter for a shift that int64 accumulation cannot use
    (reduced is None)."""
    from ..heap import persistent
    from .conv_util import NEG_MARK
    sizing = getattr(ctx, "sizing", False)
    ms = persistent(ctx, "i", oc, sizing)
    ss = persistent(ctx, "i", oc, sizing)
    for k in range(0 if sizing else oc):
        m, s = mults[k], shifts[k]
        if s > 127:
            s -= 256
        if m < 0:
            s -= NEG_MARK
        if wide:
            r = reduced(m, s)
            if r is None:
                raise PrepareError("%s: requantization multiplier of "
                                   "filter %s too large for int64 "
                                   "accumulation (shift %d)"
                                   % (op.label(), filt.label(), s))
            m, s = r
        ms[k], ss[k] = m, s
    return ms, ss


def check_io16(op, ins, outs):
    """(input, filter, bias or None, output) of a 16x8 CONV_2D or
    DEPTHWISE_CONV_2D after the checks they share: int16 input and
    output of rank 4, quantized, zero point 0 (TFLM's 16x8 kernels leave
    zero points out of their arithmetic: another one is refused rather
    than computed as if it were 0), an int8 filter of rank 4. Raises
    PrepareError."""
    from .conv_util import check_rank4, check_type
    label = op.label()
    if len(ins) not in (2, 3) or len(outs) != 1:
        raise PrepareError("%s: expected 2 or 3 inputs and 1 output, got "
                           "%d and %d" % (label, len(ins), len(outs)))
    inp, filt, out = ins[0], ins[1], outs[0]
    check_type(op, inp, _INT16, "input")
    check_type(op, filt, _INT8, "filter")
    check_type(op, out, _INT16, "output")
    for t, what in ((inp, "input"), (filt, "filter"), (out, "output")):
        check_rank4(op, t, what)
    for t, what in ((inp, "input"), (out, "output")):
        if not t.scales:
            raise PrepareError("%s: %s %s is not quantized"
                               % (label, what, t.label()))
        if t.zero_point != 0:
            raise PrepareError("%s: %s %s has zero point %d: TFLM's 16x8 "
                               "kernel computes as if it were 0"
                               % (label, what, t.label(), t.zero_point))
    return inp, filt, ins[2] if len(ins) == 3 else None, out


@micropython.viper
def finish(buf, n: int, rms, tss):
    """In place, for k < n: buf[k] = the int32 result for the int64
    accumulator in buf[4k .. 4k + 3] (16-bit limbs, least significant
    first, the last one signed, as the kernels leave them), with
    multiplier rms[k] (reduced, -0x8000 .. 0x7FFF: negative for a
    filter's negative scale) and total shift tss[k] (1 .. 46). buf, rms,
    tss: int32 words (arrays or views).

    The product is summed limb by limb with carries that >> floors, so
    it is acc * rm mod 2**64 for rm of either sign; every partial sum
    stays within [-2**31, 2**31) (|limb * rm| <= 0xFFFF * 0x8000, carry
    <= 2**15)."""
    p = ptr32(buf)
    pm = ptr32(rms)
    ps = ptr32(tss)
    one: int = 1
    S: int = one << 31
    k: int = 0
    while k < n:
        j: int = 4 * k
        l0: int = p[j]
        l1: int = p[j + 1]
        l2: int = p[j + 2]
        l3: int = (p[j + 3] ^ S) - S
        rm: int = (pm[k] ^ S) - S
        ts: int = ps[k]
        # acc * rm, mod 2**64 (|l0 * rm| < 2**31)
        t: int = l0 * rm
        q0: int = t & 0xFFFF
        t = l1 * rm + (t >> 16)
        q1: int = t & 0xFFFF
        t = l2 * rm + (t >> 16)
        q2: int = t & 0xFFFF
        q3: int = (l3 & 0xFFFF) * rm + (t >> 16)
        # + 2**(ts - 1)
        rb: int = ts - 1
        bit: int = one << (rb & 15)
        if rb < 16:
            q0 += bit
        elif rb < 32:
            q1 += bit
        else:
            q2 += bit
        q1 += q0 >> 16
        q0 = q0 & 0xFFFF
        q2 += q1 >> 16
        q1 = q1 & 0xFFFF
        q3 += q2 >> 16
        q2 = q2 & 0xFFFF
        q3 = q3 & 0xFFFF  # bits 48..63 (the rest wraps away)
        ext: int = 0  # the digits above bit 63: its sign
        if q3 & 0x8000:
            ext = 0xFFFF
        # >> ts, then the low 32 bits
        r: int = ts & 15
        qi: int = ts >> 4
        if qi == 0:
            da: int = q0
            db: int = q1
            dc: int = q2
        elif qi == 1:
            da = q1
            db = q2
            dc = q3
        else:
            da = q2
            db = q3
            dc = ext
        lo16: int = ((da >> r) | (db << (16 - r))) & 0xFFFF
        hi16: int = ((db >> r) | (dc << (16 - r))) & 0xFFFF
        p[k] = (((hi16 ^ 0x8000) - 0x8000) << 16) | lo16
        k += 1
