"""MultiplyByQuantizedMultiplier (TFLM's int32 one, common.cc, double
rounding) for negative multipliers (TFLM's QuantizeMultiplier of a
negative double, a filter channel's negative scale: m in [-2**31, -2**30]):
- requant_i8_neg: fixedpoint.requant_i8b's loop for such a channel of an
  int8 CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED or TRANSPOSE_CONV;
  importing this module makes it fixedpoint._requant_neg, which
  requant_i8b calls for a channel whose shift carries conv_util.NEG_MARK;
- scale_any: the 16x8 CONV_2D and FULLY_CONNECTED with int32 accumulation
  (conv16.py, fc16.py) use it in place of rescale.scale_i32.

Imported by those kernels' prepare only when a channel needs it
(conv_util.quant_params, fully_connected), and by a compiled model's
construction when its block names it (host_tools/mp_compile.py,
romfs.ON_DEMAND), so that a model without
negative scales keeps none of this in RAM (the int64 accumulation of the
16x8 kernels needs no module: wide.finish takes a negative reduced
multiplier as it is).
"""

import micropython

from .. import fixedpoint


@micropython.viper
def scale_any(buf, n: int, mults, shifts, per_channel: int):
    """In place: buf[i] = MultiplyByQuantizedMultiplier(buf[i], m, shift)
    for m = mults[c], shift = shifts[c], c = i if per_channel else 0
    (rescale.scale_i32's contract, with m of any sign).

    SaturatingRoundingDoublingHighMul(x, m) is floor((x * m + 2**30) /
    2**31) for any signs (gemmlowp's nudge 1 - 2**30 for a negative
    product, then C's division toward zero, is that floor): for m < 0 it
    is (-x) * (-m) through the 16-bit limbs, but for the two values
    without a negation in int32: x = -2**31 gives -m (or 2**31 - 1, the
    saturating case, for m = -2**31), m = -2**31 gives -x. x is first
    x * 2**shift wrapped to int32 (shift > 0), the result then
    RoundingDivideByPOT(., -shift) (shift < 0). Word-size independent
    (viper int of 32 or 64 bits). buf, mults, shifts: int32 words."""
    p = ptr32(buf)
    pm = ptr32(mults)
    ps = ptr32(shifts)
    one: int = 1
    S: int = one << 31
    R: int = one << 30
    i: int = 0
    c: int = 0
    while i < n:
        x: int = (p[i] ^ S) - S
        m: int = (pm[c] ^ S) - S
        sh: int = (ps[c] ^ S) - S
        e: int = 0
        if sh > 0:
            # x * 2**sh wrapped to int32, as C computes it
            x = x << sh
            x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (x & 0xFFFF))
        else:
            e = 0 - sh
        mul: int = 1
        if m < 0:
            mul = 0
            if m == 0 - S:
                if x == 0 - S:
                    x = S - 1  # the saturating case (wraps to it on 32-bit)
                else:
                    x = 0 - x
            elif x == 0 - S:
                x = 0 - m
            else:
                x = 0 - x
                m = 0 - m
                mul = 1
        if mul:
            mh: int = m >> 16
            ml: int = m & 0xFFFF
            xh: int = x >> 16  # signed high limb, |xh| <= 2**15
            xl: int = x & 0xFFFF
            t: int = (xl & 0xFF) * ml + R
            t = (xl >> 8) * ml + (t >> 8)
            hb: int = xh * ml
            hc: int = xl * mh
            t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
            x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        if e:
            # RoundingDivideByPOT(x, e); x >> 31 is -1 for negative x
            mask: int = (one << e) - 1
            if (x & mask) > (mask >> 1) - (x >> 31):
                x = (x >> e) + 1
            else:
                x = x >> e
        p[i] = x
        i += 1
        if per_channel:
            c = i


@micropython.viper
def requant_i8_neg(buf, mults, qp, out, c: int, n: int, nch: int,
                   off: int, sh: int, rel: int):
    """fixedpoint.requant_i8b's loop for channel c, whose multiplier m =
    mults[c] is negative (TFLM's QuantizeMultiplier of a negative double: m
    in [-2**31, -2**30]), shift sh. SaturatingRoundingDoublingHighMul(x, m)
    is floor((x * m + 2**30) / 2**31) for any signs (gemmlowp's nudge 1 -
    2**30 for a negative product, then C's division toward zero, is that
    floor), which is (-x) * (-m) through requant_i8b's 16-bit limbs; the
    two values without a negation in int32: x = -2**31 gives -m (or 2**31 -
    1, the saturating case, for m = -2**31), m = -2**31 gives -x. Then
    RoundingDivideByPOT, the int32 sum with the zero point and the clamp as
    requant_i8b. Rare (one channel in a model, if any): no fast path.
    rel: 1 where buf, mults and out are byte offsets from qp (requant_i8b's
    wide bit 1)."""
    q = ptr32(qp)
    r: int = 0
    if rel:
        r = int(q)
    p = ptr32(r + int(ptr32(buf)))
    o = ptr8(r + int(ptr8(out)))
    one: int = 1
    S: int = one << 31
    R: int = one << 30
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    zp: int = (q[0] ^ S) - S
    lo: int = (q[1] ^ S) - S
    hi: int = (q[2] ^ S) - S
    m: int = (ptr32(r + int(ptr32(mults)))[c] ^ S) - S
    mp: int = 0 - m  # in (0, 2**31) unless m = -2**31
    mh: int = mp >> 16
    ml: int = mp & 0xFFFF
    ls: int = 0
    e: int = 0
    if sh > 0:
        ls = sh
    else:
        e = 0 - sh
    mask: int = (one << e) - 1
    half: int = mask >> 1
    i: int = c
    while i < n:
        x: int = (p[i] ^ S) - S
        if ls:
            # x * 2**ls wrapped to int32, as C computes it
            x = x << ls
            x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (x & 0xFFFF))
        if m == 0 - S:
            if x == 0 - S:
                x = S - 1  # the saturating case (wraps to it on 32-bit)
            else:
                x = 0 - x
        elif x == 0 - S:
            x = mp
        else:
            x = 0 - x
            xh: int = x >> 16  # signed high limb, |xh| < 2**15
            xl: int = x & 0xFFFF
            t: int = (xl & 0xFF) * ml + R
            t = (xl >> 8) * ml + (t >> 8)
            hb: int = xh * ml
            hc: int = xl * mh
            t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
            x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        # RoundingDivideByPOT(x, e); x >> 31 is -1 for negative x.
        t = x & mask
        if t > half - (x >> 31):
            x = (x >> e) + 1
        else:
            x = x >> e
        x = ((x + zp + S) & M) - S  # TFLM's int32 sum with the zero point
        if x < lo:
            x = lo
        elif x > hi:
            x = hi
        o[off + i] = x
        i += nch


fixedpoint._requant_neg = requant_i8_neg
