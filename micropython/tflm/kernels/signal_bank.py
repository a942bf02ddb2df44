"""SignalFilterBank, SignalFilterBankSquareRoot,
SignalFilterBankSpectralSubtraction, SignalPCAN and SignalFilterBankLog
(TFLM Signal library custom ops: the mel filter bank half of the audio
front-end).

Follow signal/micro/kernels/filter_bank.cc, filter_bank_square_root*.cc,
filter_bank_spectral_subtraction.cc, pcan.cc and filter_bank_log.cc with
signal/src/filter_bank.cc, filter_bank_square_root.cc, square_root_32.cc
/ _64.cc, filter_bank_spectral_subtraction.cc, pcan_argc_fixed.cc,
filter_bank_log.cc and log.cc:

    SignalFilterBank (num_channels C)    input uint32 [N], constants
        weights, unweights int16 [W], channel_frequency_starts,
        channel_weight_starts, channel_widths int16 [C + 1]; output
        uint64 [C]: per channel c <= C, acc += w * x and uacc += u * x
        over its width (mod 2**64, int16 weights sign-extended), channel
        c's sum is acc, then acc = uacc, uacc = 0; channels 1..C out.
    SignalFilterBankSquareRoot           input uint64 [C], int32 scalar
        scale_bits; output uint32 [C]: Sqrt64(x) >> scale_bits, Sqrt64
        the integer square root rounded up when the remainder exceeds the
        root (and never past 0xFFFF for x < 2**32, 0xFFFFFFFF above).
    SignalFilterBankSpectralSubtraction (alternate_one_minus_smoothing,
        alternate_smoothing, clamping, min_signal_remaining,
        num_channels, one_minus_smoothing, smoothing, smoothing_bits,
        spectral_subtraction_bits)        input uint32 [C]; outputs
        uint32 [C] and the noise estimate uint32 [C]: a per-channel noise
        estimate (state, kept across invoke() calls, zeroed by
        interp.reset()) smoothed with 64-bit products, subtracted, and
        floored at min_signal_remaining of the input.
    SignalPCAN (snr_shift)                input uint32 [C], noise estimate
        uint32 [C], gain LUT int16 [>= 125]; output uint32 [C]: per-
        channel automatic gain control (WideDynamicFunction, PcanShrink).
    SignalFilterBankLog (input_correction_bits, output_scale)  input
        uint32 [C], output int16 [C]: min(Log32(x << bits, scale),
        32767), 0 for values below 2.

All 64-bit arithmetic (uint64 sums, 32 x 32-bit products, shifts) is done
in 16-bit halves of uint32 words, the same on 32- and 64-bit viper. Where
C leaves a result undefined, this gives what TFLM's x86-64 build gives:
shift counts modulo 32 (uint32) or 64 (uint64), int32 products wrapped.
Where TFLM would read or write past a tensor (channel tables that point
outside the input or the weights, fewer table entries than channels,
outputs of another size, a LUT shorter than 125), or where it reads
tables that are not constants (checked here at prepare), this is a
PrepareError: an output larger than what TFLM writes would hold whatever
its arena held, which no runtime can reproduce.
"""

import micropython
from micropython import const

from ..errors import PrepareError
from . import signal_util as su

_INT16 = const(7)
_INT32 = const(2)
_UINT32 = const(15)
_UINT64 = const(12)

# kLogLut of signal/src/log.cc: 130 uint16, little-endian
_LOG_LUT = bytes(
    b"\x00\x00\xe0\x00\xba\x01\x8e\x02\x5d\x03\x27\x04\xeb\x04\xaa\x05"
    b"\x64\x06\x19\x07\xc8\x07\x73\x08\x19\x09\xba\x09\x56\x0a\xed\x0a"
    b"\x80\x0b\x0f\x0c\x98\x0c\x1e\x0d\x9f\x0d\x1b\x0e\x94\x0e\x08\x0f"
    b"\x78\x0f\xe4\x0f\x4c\x10\xb0\x10\x10\x11\x6c\x11\xc5\x11\x19\x12"
    b"\x6a\x12\xb7\x12\x00\x13\x46\x13\x89\x13\xc7\x13\x03\x14\x3a\x14"
    b"\x6f\x14\xa0\x14\xce\x14\xf8\x14\x20\x15\x44\x15\x65\x15\x83\x15"
    b"\x9d\x15\xb5\x15\xca\x15\xdb\x15\xea\x15\xf6\x15\xff\x15\x05\x16"
    b"\x08\x16\x09\x16\x06\x16\x01\x16\xfa\x15\xef\x15\xe2\x15\xd2\x15"
    b"\xc0\x15\xab\x15\x94\x15\x7a\x15\x5e\x15\x3f\x15\x1e\x15\xfa\x14"
    b"\xd4\x14\xab\x14\x81\x14\x53\x14\x24\x14\xf2\x13\xbe\x13\x88\x13"
    b"\x50\x13\x15\x13\xd9\x12\x9a\x12\x59\x12\x16\x12\xd1\x11\x8a\x11"
    b"\x40\x11\xf5\x10\xa8\x10\x58\x10\x07\x10\xb4\x0f\x5f\x0f\x08\x0f"
    b"\xaf\x0e\x54\x0e\xf7\x0d\x99\x0d\x38\x0d\xd6\x0c\x72\x0c\x0c\x0c"
    b"\xa5\x0b\x3b\x0b\xd0\x0a\x63\x0a\xf5\x09\x85\x09\x13\x09\x9f\x08"
    b"\x2a\x08\xb3\x07\x3b\x07\xc1\x06\x45\x06\xc8\x05\x49\x05\xc8\x04"
    b"\x46\x04\xc3\x03\x3e\x03\xb7\x02\x2f\x02\xa5\x01\x1a\x01\x8e\x00"
    b"\x00\x00\x00\x00")


def prepare(op, ins, outs, ctx):
    """Check one of the five operators (op.name) and bind its eval.
    Shapes, types and options as in the module doc; raises PrepareError
    otherwise."""
    from .conv_util import keep
    name = op.name
    if name == "SignalFilterBank":
        return _prepare_bank(op, ins, outs, ctx)
    if name == "SignalFilterBankSquareRoot":
        su.io(op, ins, outs, 2, 1)
        (x, bits), y = ins, outs[0]
        su.want(op, x, _UINT64, 1)
        su.want(op, bits, _INT32, 0)
        su.want(op, y, _UINT32, 1)
        _at_least(op, y, x.size)
        return _eval_sqrt, (su.aligned(x, ctx), su.aligned(bits, ctx),
                            y.data, x.size)
    if name == "SignalFilterBankSpectralSubtraction":
        return _prepare_subtraction(op, ins, outs, ctx)
    if name == "SignalPCAN":
        su.io(op, ins, outs, 3, 1)
        (x, noise, lut), y = ins, outs[0]
        su.want(op, x, _UINT32, 1)
        su.want(op, noise, _UINT32, 1)
        su.want(op, lut, _INT16, 1)
        su.want(op, y, _UINT32, 1)
        if y.size != x.size or noise.size < x.size or lut.size < 125:
            raise PrepareError(
                "%s: %d inputs need as many outputs (%d), noise estimates "
                "(%d) and a gain LUT of 125 (%d)" % (
                    op.label(), x.size, y.size, noise.size, lut.size))
        p = su.words(2)
        p[0], p[1] = x.size, su.options(op, 1)[0] & 63
        return _eval_pcan, (su.aligned(x, ctx), su.aligned(noise, ctx),
                            su.aligned(lut, ctx),
                            y.data, keep(ctx, p))
    if name != "SignalFilterBankLog":
        raise PrepareError("%s: no Signal kernel here" % op.label())
    su.io(op, ins, outs, 1, 1)
    x, y = ins[0], outs[0]
    su.want(op, x, _UINT32, 1)
    su.want(op, y, _INT16, 1)
    _at_least(op, y, x.size)
    bits, scale = su.options(op, 2)
    p = su.words(3)
    p[0], p[1], p[2] = x.size, bits & 31, scale
    return _eval_log, (su.aligned(x, ctx), y.data, _LOG_LUT, keep(ctx, p))


def _at_least(op, y, n):
    """TFLM writes the first n elements of y: fewer would be written past
    its end, more would stay whatever the arena held (no result)."""
    if y.size != n:
        raise PrepareError("%s: %s has %d elements, expected %d"
                           % (op.label(), y.label(), y.size, n))


def _prepare_bank(op, ins, outs, ctx):
    from .conv_util import keep
    su.io(op, ins, outs, 6, 1)
    x, w, u, fstart, wstart, width = ins
    y = outs[0]
    label = op.label()
    su.want(op, x, _UINT32, 1)
    for t in ins[1:]:
        su.want(op, t, _INT16, 1)
        if not t.is_const:
            raise PrepareError("%s: %s must be a constant" % (label,
                                                             t.label()))
    su.want(op, y, _UINT64, 1)
    c = su.options(op, 1)[0]
    if c < 0 or fstart.size <= c or wstart.size <= c or width.size <= c \
            or y.size > c:
        raise PrepareError("%s: %d channels need %d-entry tables (have %d, "
                           "%d, %d) and at most %d outputs (%d)" % (
                               label, c, c + 1, fstart.size, wstart.size,
                               width.size, c, y.size))
    nw = min(w.size, u.size)
    fs, ws, wd = (_i16(t) for t in (fstart, wstart, width))
    for i in range(c + 1):
        n = wd(i)
        if n > 0 and (fs(i) < 0 or ws(i) < 0 or fs(i) + n > x.size or
                      ws(i) + n > nw):
            raise PrepareError(
                "%s: channel %d reads inputs [%d, %d) of %d and weights "
                "[%d, %d) of %d" % (label, i, fs(i), fs(i) + n, x.size,
                                    ws(i), ws(i) + n, nw))
    p = su.words(2)
    p[0], p[1] = c, y.size
    return _eval_bank, (su.aligned(x, ctx), su.aligned(w, ctx),
                        su.aligned(u, ctx),
                        su.aligned(fstart, ctx), su.aligned(wstart, ctx),
                        su.aligned(width, ctx), y.data, ctx.work(2 * c + 2),
                        keep(ctx, p))


def _i16(t):
    """Reader of int16 element i of constant tensor t (any alignment)."""
    d = t.data

    def get(i):
        v = d[2 * i] | d[2 * i + 1] << 8
        return v - 0x10000 if v & 0x8000 else v
    return get


def _prepare_subtraction(op, ins, outs, ctx):
    from .conv_util import keep
    su.io(op, ins, outs, 1, 2)
    x, (y, noise) = ins[0], outs
    su.want(op, x, _UINT32, 1)
    su.want(op, y, _UINT32, 1)
    su.want(op, noise, _UINT32, 1)
    (alt_oms, alt_sm, clamp, floor_ratio, c, oms, sm, sbits,
     ssbits) = su.options(op, 9, (2,))  # 'clamping': ElementAsBool
    if c < 1 or x.size < c or y.size < c or noise.size > c:
        raise PrepareError("%s: %d channels need at least as many inputs "
                           "(%d) and outputs (%d), at most as many noise "
                           "estimates (%d)" % (op.label(), c, x.size,
                                               y.size, noise.size))
    p = su.words(9)
    p[0], p[1], p[2], p[3] = c, sm, oms, alt_sm
    p[4], p[5], p[6] = alt_oms, floor_ratio, sbits & 31
    p[7], p[8] = ssbits & 63, 1 if clamp else 0
    est = ctx.state("I", c) if hasattr(ctx, "state") else su.words(c)
    return _eval_subtraction, (su.aligned(x, ctx), y.data, noise.data, est,
                               noise.size,
                               keep(ctx, p))


# The evals' states: every view in them is only cast to a pointer by the
# viper loops (_eval_subtraction's too); a compiled model stores there the
# address of its view of the arena or the model, an int, no object
# (compiled.py T_ADDR).
ADDRESSES = (0, 1, 2, 3, 4, 5, 6, 7, 8)


# ---- eval ------------------------------------------------------------

def _eval_bank(st):
    _bank(st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7], st[8])


@micropython.viper
def _bank(x, w, u, fstart, wstart, width, y, acc, p):
    """FilterbankAccumulateChannels into acc (lo, hi words per channel),
    then channels 1..n to y."""
    px = ptr32(x)
    pw = ptr16(w)
    pu = ptr16(u)
    pfs = ptr16(fstart)
    pws = ptr16(wstart)
    pwd = ptr16(width)
    pa = ptr32(acc)
    q = ptr32(p)
    c: int = q[0]
    ny: int = q[1]
    one: int = 1
    m32: uint = uint((one << 31) - 1) | uint(one << 31)
    alo: uint = uint(0)  # weight_accumulator
    ahi: uint = uint(0)
    blo: uint = uint(0)  # unweight_accumulator
    bhi: uint = uint(0)
    i: int = 0
    while i <= c:
        f0: int = (pfs[i] ^ 0x8000) - 0x8000
        w0: int = (pws[i] ^ 0x8000) - 0x8000
        n: int = (pwd[i] ^ 0x8000) - 0x8000
        j: int = 0
        while j < n:
            xv: uint = uint(px[f0 + j])
            xl: uint = xv & 0xFFFF
            xh: uint = xv >> 16
            k: int = 0
            while k < 2:
                wv: int = pw[w0 + j]
                if k:
                    wv = pu[w0 + j]
                wv = (wv ^ 0x8000) - 0x8000
                neg: int = 0
                if wv < 0:
                    neg = 1
                    wv = 0 - wv
                aw: uint = uint(wv)
                # |w| * x = (aw * xh) * 2**16 + aw * xl, each below 2**32
                lo: uint = aw * xl
                mid: uint = aw * xh
                pl: uint = (lo + ((mid & 0xFFFF) << 16)) & m32
                ph: uint = (mid >> 16) + uint(pl < lo)
                if neg:  # the 64-bit two's complement
                    pl = ((pl ^ m32) + 1) & m32
                    ph = ((ph ^ m32) + uint(pl == uint(0))) & m32
                if k:
                    s: uint = (blo + pl) & m32
                    bhi = (bhi + ph + uint(s < blo)) & m32
                    blo = s
                else:
                    s2: uint = (alo + pl) & m32
                    ahi = (ahi + ph + uint(s2 < alo)) & m32
                    alo = s2
                k += 1
            j += 1
        pa[2 * i] = alo
        pa[2 * i + 1] = ahi
        alo = blo
        ahi = bhi
        blo = uint(0)
        bhi = uint(0)
        i += 1
    py = ptr32(y)
    i = 0
    while i < 2 * ny:
        py[i] = pa[i + 2]
        i += 1


def _eval_sqrt(st):
    _sqrt(st[0], st[1], st[2], st[3])


@micropython.viper
def _sqrt(x, bits, y, n: int):
    """y[i] = Sqrt64(x[i]) >> (scale_bits mod 32)."""
    px = ptr32(x)
    py = ptr32(y)
    sh: int = ptr32(bits)[0] & 31
    one: int = 1
    m32: uint = uint((one << 31) - 1) | uint(one << 31)
    i: int = 0
    while i < n:
        nl: uint = uint(px[2 * i])
        nh: uint = uint(px[2 * i + 1])
        # floor(sqrt): the largest r with r * r <= x, bit by bit
        r: uint = uint(0)
        b: int = 15
        if nh:
            b = 31
        sl: uint = uint(0)  # r * r
        sh2: uint = uint(0)
        while b >= 0:
            t: uint = r | (uint(1) << b)
            tl: uint = t & 0xFFFF
            th: uint = t >> 16
            mm: uint = th * tl
            lo: uint = tl * tl
            ql: uint = (lo + ((mm << 17) & m32)) & m32
            qh: uint = th * th + (mm >> 15) + uint(ql < lo)
            if qh < nh or (qh == nh and ql <= nl):
                r = t
                sl = ql
                sh2 = qh
            b -= 1
        # remainder x - r * r, then round: + 1 if it exceeds r
        rl: uint = (nl - sl) & m32
        rh: uint = (nh - sh2 - uint(nl < sl)) & m32
        cap: uint = uint(0xFFFF)
        if nh:
            cap = m32
        if (rh or rl > r) and r != cap:
            r += 1
        py[i] = (r & m32) >> sh
        i += 1


def _eval_subtraction(st):
    x, y, noise, est, nn, p = st
    _subtract(x, y, est, p)
    _copy_words(noise, est, nn)


@micropython.viper
def _copy_words(dst, src, n: int):
    d = ptr32(dst)
    s = ptr32(src)
    i: int = 0
    while i < n:
        d[i] = s[i]
        i += 1


@micropython.viper
def _subtract(x, y, est, p):
    """FilterbankSpectralSubtraction: est (the noise estimate) updated,
    y = max((x' - min(est, x')) >> bits, floor), x' = x << bits."""
    px = ptr32(x)
    py = ptr32(y)
    pe = ptr32(est)
    q = ptr32(p)
    c: int = q[0]
    sb: int = q[6]
    ssb: int = q[7]
    clamp: int = q[8]
    one: int = 1
    m32: uint = uint((one << 31) - 1) | uint(one << 31)
    i: int = 0
    while i < c:
        sm: uint = uint(q[1 + 2 * (i & 1)])
        oms: uint = uint(q[2 + 2 * (i & 1)])
        xv: uint = uint(px[i])
        up: uint = (xv << sb) & m32  # signal_scaled_up
        k: int = 0
        lo: uint = uint(0)
        hi: uint = uint(0)
        while k < 3:
            # k = 0: up * smoothing; 1: + noise * one_minus_smoothing
            # (then >> bits: the new estimate); 2: x * min_signal_remaining
            a: uint = up
            bb: uint = sm
            if k == 1:
                a = uint(pe[i])
                bb = oms
            elif k == 2:
                a = xv
                bb = uint(q[5])
                lo = uint(0)
                hi = uint(0)
            al: uint = a & 0xFFFF
            ah: uint = a >> 16
            bl: uint = bb & 0xFFFF
            bh: uint = bb >> 16
            p0: uint = al * bl
            p1: uint = al * bh
            p2: uint = ah * bl
            md: uint = (p0 >> 16) + (p1 & 0xFFFF) + (p2 & 0xFFFF)
            pl: uint = ((md & 0xFFFF) << 16) | (p0 & 0xFFFF)
            ph: uint = ah * bh + (p1 >> 16) + (p2 >> 16) + (md >> 16)
            s: uint = (lo + pl) & m32
            hi = (hi + ph + uint(s < lo)) & m32
            lo = s
            if k >= 1:  # the 64-bit sum >> ssb, truncated to 32 bits
                r: uint = lo
                if ssb >= 32:
                    r = hi >> (ssb - 32)
                elif ssb:
                    r = ((lo >> ssb) | (hi << (32 - ssb))) & m32
                if k == 1:
                    pe[i] = r
                else:
                    lo = r  # the floor
            k += 1
        e: uint = uint(pe[i])
        if e > up:
            e = up
            if clamp:
                pe[i] = e
        sub: uint = ((up - e) & m32) >> sb
        if sub > lo:
            py[i] = sub
        else:
            py[i] = lo
        i += 1


def _eval_pcan(st):
    _pcan(st[0], st[1], st[2], st[3], st[4])


@micropython.viper
def _pcan(x, noise, lut, y, p):
    """ApplyPcanAutoGainControlFixed: y[i] = PcanShrink((x[i] *
    gain) >> snr_shift), gain = WideDynamicFunction(noise[i], lut)."""
    px = ptr32(x)
    pn = ptr32(noise)
    pl = ptr16(lut)
    py = ptr32(y)
    q = ptr32(p)
    c: int = q[0]
    ss: int = q[1]
    one: int = 1
    m32: uint = uint((one << 31) - 1) | uint(one << 31)
    i: int = 0
    while i < c:
        nv: uint = uint(pn[i])
        g: int = 0
        if nv <= uint(2):
            g = (pl[int(nv)] ^ 0x8000) - 0x8000
        else:
            iv: int = 0  # MostSignificantBit32
            t: uint = nv
            while t:
                t = t >> 1
                iv += 1
            base: int = 4 * iv - 6
            fr: int = 0
            if iv < 11:
                fr = int((nv << (11 - iv)) & 0x3FF)
            else:
                fr = int((nv >> (iv - 11)) & 0x3FF)
            l0: int = (pl[base] ^ 0x8000) - 0x8000
            l1: int = (pl[base + 1] ^ 0x8000) - 0x8000
            l2: int = (pl[base + 2] ^ 0x8000) - 0x8000
            r: int = (l2 * fr) >> 5
            r += l1 * 32
            r = r * fr  # int32 in C: wrapped below
            r = ((((((r >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (r & 0xFFFF))
            r = r + 16384
            r = ((((((r >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16)
                 | (r & 0xFFFF))
            g = (((((r >> 15) + l0) & 0xFFFF) ^ 0x8000) - 0x8000)
        gain: uint = uint(g) & m32  # int16 -> uint32
        a: uint = uint(px[i])
        al: uint = a & 0xFFFF
        ah: uint = a >> 16
        bl: uint = gain & 0xFFFF
        bh: uint = gain >> 16
        p0: uint = al * bl
        p1: uint = al * bh
        p2: uint = ah * bl
        md: uint = (p0 >> 16) + (p1 & 0xFFFF) + (p2 & 0xFFFF)
        lo: uint = ((md & 0xFFFF) << 16) | (p0 & 0xFFFF)
        hi: uint = ah * bh + (p1 >> 16) + (p2 >> 16) + (md >> 16)
        snr: uint = lo
        if ss >= 32:
            snr = hi >> (ss - 32)
        elif ss:
            snr = ((lo >> ss) | (hi << (32 - ss))) & m32
        if snr < uint(8192):  # 2 << kPcanSnrBits
            py[i] = (snr * snr) >> 20
        else:
            py[i] = (snr >> 6) - 64
        i += 1


def _eval_log(st):
    _log(st[0], st[1], st[2], st[3])


@micropython.viper
def _log(x, y, lut, p):
    """FilterbankLog: y[i] = min(Log32(x[i] << bits, scale), 32767), or
    0 when x[i] << bits < 2."""
    px = ptr32(x)
    py = ptr16(y)
    pl = ptr8(lut)
    q = ptr32(p)
    c: int = q[0]
    cb: int = q[1]
    one: int = 1
    m32: uint = uint((one << 31) - 1) | uint(one << 31)
    scale: uint = uint(q[2]) & m32
    i: int = 0
    while i < c:
        v: uint = (uint(px[i]) << cb) & m32
        if v > uint(1):
            t: uint = v
            ig: int = -1  # MostSignificantBit32 - 1
            while t:
                t = t >> 1
                ig += 1
            fr: int = int(v - (uint(1) << ig))
            if ig < 16:
                fr = fr << (16 - ig)
            else:
                fr = fr >> (ig - 16)
            seg: int = fr >> 9
            c0: int = pl[2 * seg] | (pl[2 * seg + 1] << 8)
            c1: int = pl[2 * seg + 2] | (pl[2 * seg + 3] << 8)
            rel: int = ((c1 - c0) * (fr - 512 * seg)) >> 16
            lg: uint = (uint(ig) << 16) + uint(fr + c0 + rel)
            ll: uint = lg & 0xFFFF
            le: uint = uint(45426) * (lg >> 16) + \
                ((uint(45426) * ll + 32768) >> 16)
            s: uint = (((scale * le) & m32) + 32768) & m32
            s = s >> 16
            if s > uint(32767):
                s = uint(32767)
            py[i] = s
        else:
            py[i] = 0
        i += 1
