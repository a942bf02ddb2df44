"""gemmlowp fixed-point requantization, word-size independent viper:
requant_i8b, the fused requantize + store of CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED and others (the separate steps, scale_i32 and store_i8, are
in kernels/rescale.py, imported only by the kernels that use them).

MultiplyByQuantizedMultiplier (TFLM double rounding, the default build):
    RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x << ls, m), rs)
from tensorflow/lite/kernels/internal/common.cc and gemmlowp fixedpoint.h.

Viper ints are 32 bits on Cortex-M and 64 on the unix port, so the 64-bit
product x * m is built from 16-bit limbs whose partial products all fit in
31 bits: the same code gives the same bits on both. int32 values are loaded
from ptr32 and sign-extended with (v ^ S) - S, S = 1 << 31 computed at run
time: a no-op on 32-bit, a sign extension on 64-bit. All int32 arrays here
are array('i') objects (always aligned), never model bytes.

Also rel, where an eval finds its buffers without a state object: the
state of an int8 CONV_2D or DEPTHWISE_CONV_2D is its parameter block P
(persistent int32 words, or in a compiled model's bytes: then its
address, an int), whose last words hold, per buffer that eval reads (in
the order of the kernel module's _S_ slots; its PAIRS: the first of these
words and the number of buffers, at most 8), a region (4 bits of the
first word) and a byte offset (a word each). Region 0: the offset is
from P's first byte (plain construction writes these:
context.KernelContext.finish, context.pairs). Regions 1 to 4: from the
first byte of the arena's head, its tail, the persistent words, the
model's bytes (a compiled model: host_tools/mp_compile.py rewrites the
regions and offsets so), whose addresses a compiled interpreter
publishes in BASES while its invoke() runs. Eval adds rel(st, a, k) to
st's address, and passes the loops (mac.py's, thumb.py's: a buffer and
a byte offset) st and the buffer's offset from it, and requant_i8b
offsets from qp (st, wide bit 1): small ints on every board (its flash
and RAM lie within 2**30 bytes of each other), so that invoke()
allocates nothing, also where an address is not a small int (the 32-bit
unix port).
"""

import micropython
from micropython import const

# The invoking compiled interpreter's array('i') of 4 words (see the
# module doc): BASES[r - 1] = the address of region r's first byte less
# BASES's own (int32: exact mod 2**32 on 32-bit ports; within 2 GB on
# 64-bit ones, where all lie in one heap). None while no compiled model
# invokes.
BASES = None
# Taken by that invoke where there are threads (Interpreter.invoke: one
# such invoke at a time; BASES is the process's): a _thread lock,
# made by the first such model's construction (compiled_regions.bases)
LOCK = None


@micropython.viper
def rel(st, a: int, k: int) -> int:
    """The address of buffer k of parameter block st (a buffer, or an
    address) less st's address: its region is bits 4k .. 4k + 3 of int32
    word a, its offset word a + 1 + k (see the module doc)."""
    q = ptr32(st)
    one: int = 1
    S: int = one << 31
    o: int = (q[a + 1 + k] ^ S) - S
    r: int = (q[a] >> (4 * k)) & 15
    if r == 0:
        return o
    b = ptr32(BASES)
    return int(b) + ((b[r - 1] ^ S) - S) + o - int(q)


# requant_i8b's fast path takes |x| <= _FAST (see there).
_FAST = const(1 << 20)
# Added to the shift of a channel whose multiplier is negative
# (kernels/conv_util.py NEG_MARK): shifts are otherwise in [-31, 30].
_NEG_MARK = const(64)


@micropython.viper
def requant_i8b(x: int, i: int, t: int, buf, n: int, nch: int, mults,
                shifts, qp, out, off: int, wide: int):
    """Fused requantize + store of n int32 accumulators, channel-minor:

        out[off + k] = clamp(MultiplyByQuantizedMultiplier(buf[k], m, s)
                             + zp, lo, hi)   with m, s = mults[c], shifts[c],
                                             c = k % nch

    i.e. scale_i32 (per channel) then store_i8 in one pass over a batch of
    n // nch pixels of nch channels, so one call serves many pixels. x, i,
    t are the hot locals (viper keeps the first locals in registers):
    callers pass 0, or i = c0 > 0 to requantize channels c0 .. nch - 1
    only (with n = nch = c0 + 1: buf[c0] alone, into out[off + c0]).
    buf, mults, qp: array('i'); qp = (zp, lo, hi);
    shifts: array('b') (wide bit 0 clear: the kernels keep shifts, all in
    [-31, 30], as bytes to save RAM) or array('i') (bit 0 set);
    out: writable bytes-like. wide bit 1 set: buf, mults, shifts and out
    are byte offsets (small ints) from qp's first byte (the CONV_2D and
    DEPTHWISE_CONV_2D evals, whose buffers are no objects:
    fixedpoint.rel). Channels form the outer loop, so each
    channel's multiplier and shift are decoded once per batch. A channel
    whose shift is above 30 has a negative multiplier and the shift
    + _NEG_MARK (a filter's negative scale, conv_util.quant_params):
    _requant_neg computes it (kernels/requant_neg.py's requant_i8_neg,
    which the prepare that made it imported).

    Same bits as TFLM's int64 code (common.cc, double rounding) on 32- and
    64-bit ports: SaturatingRoundingDoublingHighMul(x, m) for m >= 0 is
    floor((x * m + 2**30) / 2**31) (the saturating case needs m < 0);
    RoundingDivideByPOT adds 1 when the remainder exceeds half the divisor
    (ties away from zero). For |x << ls| <= 2**20 (nearly every
    accumulator of a trained model) the product comes from 11-bit limbs
    of m and the rounding is folded into one shift (about 100 armv6m
    instructions a value, was 218); larger values take the 16-bit limbs
    below.
    """
    q = ptr32(qp)
    r: int = 0
    if wide & 2:  # buf, mults, shifts, out: byte offsets from qp
        r = int(q)
    p = ptr32(r + int(ptr32(buf)))
    pm = ptr32(r + int(ptr32(mults)))
    ps = ptr32(r + int(ptr32(shifts)))
    pb = ptr8(ps)
    o = ptr8(r + int(ptr8(out)))
    one: int = 1
    S: int = one << 31
    R: int = one << 30  # the rounding nudge of the doubling high mul
    zp: int = (q[0] ^ S) - S
    lo: int = (q[1] ^ S) - S
    hi: int = (q[2] ^ S) - S
    hl: int = hi - lo
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    c: int = i  # the first channel: callers pass 0 (see above)
    while c < nch:
        m: int = pm[c]  # in [0, 2**31) here: no sign extension needed
        mh: int = m >> 16
        ml: int = m & 0xFFFF
        sh: int = (pb[c] ^ 0x80) - 0x80
        if wide & 1:
            sh = (ps[c] ^ S) - S
        if sh > 30:  # a negative multiplier (shift + _NEG_MARK)
            _requant_neg(buf, mults, qp, out, c, n, nch, off, sh - _NEG_MARK,
                         wide >> 1)
            c += 1
            continue
        ls: int = 0
        e: int = 0
        if sh > 0:
            ls = sh
        else:
            e = 0 - sh
        # Fast path, |x| <= 2**20: x * m from 11-bit limbs of m (every
        # partial sum fits in 31 bits) with RoundingDivideByPOT folded
        # in: for e > 0, z = RDBPOT(SRDHM(x, m), e) is
        # floor((x * m + 2**30 + 2**(30 + e) - (x < 0) * 2**31)
        # / 2**(31 + e)), i.e. one floor of the limb sum plus
        # kc = 256 + 2**(8 + e) and -512 when x < 0, shifted by 9 + e (for
        # e == 0: kc = 256, shift 9). For e > 21 (kc would not fit) z is
        # 0 on the whole fast path: all limbs and kc are 0 there.
        m0: int = m & 0x7FF
        m1: int = (m >> 11) & 0x7FF
        m2: int = m >> 22
        mask: int = (one << e) - 1
        half: int = mask >> 1
        kc: int = 256
        sm: int = 0
        se: int = 9 + e
        if e > 21:
            m0 = 0
            m1 = 0
            m2 = 0
            kc = 0
        elif e:
            kc = 256 + (one << (8 + e))
            sm = -512
        i = c
        while i < n:
            x = (p[i] ^ S) - S
            if ls:
                # x * 2**ls wrapped to int32, as C computes it
                x = x << ls
                x = ((((((x >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                     | (x & 0xFFFF))
            if uint(x + _FAST) <= uint(2 * _FAST):
                t = (x * m0) >> 11
                t = (x * m1 + t) >> 11
                x = (x * m2 + t + kc + ((x >> 31) & sm)) >> se
            else:
                xh: int = x >> 16  # signed high limb, |xh| <= 2**15
                xl: int = x & 0xFFFF
                t = (xl & 0xFF) * ml + R
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
                # MBQM may be near +-2**31 here: TFLM's x + zp is an int32
                # sum that wraps (64-bit ports would not), so x becomes
                # wrap(x + zp) - zp
                x = (((x + zp + S) & M) - S) - zp
            x += zp
            if uint(x - lo) > uint(hl):  # clamp to [lo, hi]
                if x < lo:
                    x = lo
                else:
                    x = hi
            o[off + i] = x
            i += nch
        c += 1


def _requant_neg(buf, mults, qp, out, c, n, nch, off, sh, rel):
    """requant_i8b's loop for channel c whose multiplier is negative:
    kernels/requant_neg.py's requant_i8_neg takes this name when it is
    imported (by the prepare that made the multiplier, or by a compiled
    model's construction), so that a model without negative scales keeps
    none of its code in RAM."""
    from .errors import InvokeError
    raise InvokeError("channel %d: a negative multiplier, but "
                      "tflm.kernels.requant_neg was not imported" % c)
