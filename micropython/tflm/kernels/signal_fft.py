"""SignalRfft, int16: the real FFT of TFLM's Signal library (its int32
and float32 variants: signal_fft32.py, from the same prepare).

Follows signal/micro/kernels/rfft.cc and signal/src/rfft_int16.cc, which
run KISS FFT v130 (kiss_fft.c, tools/kiss_fftr.c, _kiss_fft_guts.h) with
FIXED_POINT 16, as TFLM's build patches it: input int16 [..., L], output
int16 [..., 2 * (N/2 + 1)] (interleaved real, imaginary), options
'T' (TensorType: only int16, 7, here) and 'fft_length' N (even). Each row
of L samples is zero-padded to N, then

    kiss_fft of the N/2 complex values (even samples real, odd imaginary),
    radix 4, 2, 3 and 5 stages in kf_factor's order, every stage scaling
    its inputs down by its radix (C_FIXDIV), products rounded as sround
    ((x + 2**14) >> 15) and every stored value wrapped to int16;
    kiss_fftr's split into the N/2 + 1 bins of the real signal.

Twiddles are kiss_fft_alloc's floor(.5 + 32767 * cos(phase)) (and sin)
with phase = -2*pi*i / (N/2) in double precision (super twiddles:
-pi * ((i + 1) / (N/2) + .5)): computed here once at prepare, in
integers, as those doubles round (boards have no double, and a libm may
differ in the last bit; tests/test_signal_ops.py compares every size up
to 1,024 with the host's C library). Tables (twiddles, super twiddles,
the input permutation) live in the arena's persistent part: 5 * N / 2 +
6 * stages bytes. No scratch: each row is permuted (zeros past its L
samples) straight into its output row, whose first N values are KISS
FFT's buffer; the butterflies and kiss_fftr's split (which reads bins k
and N/2 - k before it writes them) run there in place.

TFLM's kiss_fft has no working radix other than 2, 3, 4 and 5 (its
generic butterfly allocates through a malloc patched to return NULL) and
fails for N = 2: those are PrepareErrors here, as is an output of another
length (TFLM would write past it) or a row longer than N.
"""

import micropython
from micropython import const

from ..heap import persistent
from ..errors import PrepareError
from . import signal_util as su

_INT16 = const(7)
_INT32 = const(2)
_FLOAT32 = const(0)
# The permutation table holds uint16 indexes of the N/2 complex inputs
_MAX_N = const(131072)


def prepare(op, ins, outs, ctx):
    """Check a SignalRfft operator and bind its eval: input [..., L],
    output [..., 2 * (N/2 + 1)] with as many rows, both of type T (7:
    int16, here; 2: int32 and 0: float32, signal_fft32.py), fft_length
    N even, 4 <= N <= 131072, N/2 a product of 2, 3, 4 and 5, L <= N.
    Raises PrepareError otherwise."""
    from .conv_util import keep
    su.io(op, ins, outs, 1, 1)
    x, y = ins[0], outs[0]
    label = op.label()
    ttype = su.option_by_key(op, "T")  # RfftInitAll: m["T"].AsInt32()
    if ttype not in (_INT16, _INT32, _FLOAT32):
        raise PrepareError("%s: T = %s: TFLM's SignalRfft takes int16 (7), "
                           "int32 (2) and float32 (0)" % (label, ttype))
    n = su.options(op, 2)[1]  # 'fft_length', after 'T'
    if x.type != ttype or y.type != ttype:
        from .. import schema
        raise PrepareError("%s: T = %d (%s) needs %s input and output, not "
                           "%s and %s" % (label, ttype, schema.type_name(
                               ttype), schema.type_name(ttype), x.dtype,
                               y.dtype))
    su.want(op, x, ttype, -2)
    su.want(op, y, ttype, len(x.shape))
    if n < 4 or n & 1 or n > _MAX_N:
        raise PrepareError("%s: fft_length %d must be even, at least 4 and "
                           "at most %d" % (label, n, _MAX_N))
    half = n // 2
    factors = _factor(half)
    for p in factors[::2]:
        if p not in (2, 3, 4, 5):
            raise PrepareError("%s: fft_length %d: TFLM's kiss_fft has no "
                               "radix-%d butterfly" % (label, n, p))
    length = x.shape[-1]
    rows = x.size // length if length else 0
    if not 1 <= length <= n:
        raise PrepareError("%s: input rows of %d samples: fft_length %d "
                           "takes 1 to %d" % (label, length, n, n))
    if y.shape[-1] != 2 * (half + 1) or y.size != rows * y.shape[-1]:
        raise PrepareError("%s: rows of %d samples and fft_length %d need "
                           "an output of %d rows of %d values, not %s"
                           % (label, length, n, rows, 2 * (half + 1),
                              y.shape))
    if ttype != _INT16:
        from . import signal_fft32
        return signal_fft32.prepare(op, ins, outs, ctx, ttype, n, factors,
                                    length, rows)
    # Tables straight in the arena's persistent part (no heap copy):
    # twiddles and super twiddles (int16 pairs), the input permutation
    tw = persistent(ctx, "B", 4 * half, True)
    stw = persistent(ctx, "B", 4 * (half // 2), True)
    perm = persistent(ctx, "B", 2 * half, True)
    if not getattr(ctx, "sizing", False):  # the sizing pass counts bytes
        _twiddles(tw, half)
        _super_twiddles(stw, half)
        _permutation(perm, factors)
    # stages, deepest first: radix, m, fstride, blocks
    nst = len(factors) // 2
    stages = su.words(4 * nst)
    fstride = 1
    for k in range(nst):
        j = 4 * (nst - 1 - k)
        stages[j], stages[j + 1] = factors[2 * k], factors[2 * k + 1]
        stages[j + 2] = stages[j + 3] = fstride
        fstride *= factors[2 * k]
    p = su.words(5)
    p[0], p[1], p[2], p[3], p[4] = half, n, length, rows, nst
    # each output row's view (4 * (half + 1) bytes: 4-byte aligned)
    d, b = y.data, 4 * (half + 1)
    rv = d if rows == 1 else tuple(d[r * b:r * b + b] for r in range(rows))
    return _eval, (su.aligned(x, ctx), rv, tw, stw, perm, keep(ctx, stages),
                   keep(ctx, p), rows)


# eval's state (x, the output's rows, twiddles, super twiddles, the
# permutation, stages, parameters, rows): the views that _rfft casts to
# pointers (the output's rows: the output itself for one row, else a tuple
# of views); a compiled model stores there the address of its view of the
# arena or the model, an int, no object (compiled.py T_ADDR).
ADDRESSES = (0, 1, 2, 3, 4, 5, 6)


def _eval(st):
    if st[7] == 1:
        _rfft(st[0], st[1], st[2], st[3], st[4], st[5], st[6], 0)
    else:
        rows = st[1]
        for r in range(st[7]):
            _rfft(st[0], rows[r], st[2], st[3], st[4], st[5], st[6], r)


@micropython.viper
def _rfft(x, row, tw, stw, perm, stages, p, r: int):
    """Row r of x: permuted (kf_work's copies of the row zero-padded to
    N) into row (y's row r: KISS FFT's buffer), the butterflies of each
    stage, then kiss_fftr's split in place."""
    q = ptr32(p)
    half: int = q[0]
    length: int = q[2]
    nst: int = q[4]
    pp = ptr16(perm)
    ps = ptr32(stages)
    tmp = ptr16(row)
    px = ptr16(int(ptr16(x)) + 2 * r * length)
    i: int = 0
    while i < half:
        j: int = 2 * pp[i]
        tmp[2 * i] = px[j] if j < length else 0
        tmp[2 * i + 1] = px[j + 1] if j + 1 < length else 0
        i += 1
    s: int = 0
    while s < nst:
        radix: int = ps[4 * s]
        if radix == 4:
            _b4(row, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3], 0)
        elif radix == 2:
            _b2(row, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3])
        elif radix == 3:
            _b3(row, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3])
        else:
            _b5(row, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3])
        s += 1
    _split(row, stw, row, 0, half)


@micropython.viper
def _b2(f, tw, m: int, fs: int, nblk: int):
    """kf_bfly2 on each of nblk blocks of 2 * m complex values."""
    pf = ptr16(f)
    pt = ptr16(tw)
    b: int = 0
    while b < nblk:
        k: int = 0
        while k < m:
            i0: int = 4 * b * m + 2 * k
            i1: int = i0 + 2 * m
            ar: int = (((pf[i0] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
            ai: int = (((pf[i0 + 1] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
            br: int = (((pf[i1] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
            bi: int = (((pf[i1 + 1] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
            br = ((br & 0xFFFF) ^ 0x8000) - 0x8000
            bi = ((bi & 0xFFFF) ^ 0x8000) - 0x8000
            ar = ((ar & 0xFFFF) ^ 0x8000) - 0x8000
            ai = ((ai & 0xFFFF) ^ 0x8000) - 0x8000
            t: int = 2 * k * fs
            wr: int = (pt[t] ^ 0x8000) - 0x8000
            wi: int = (pt[t + 1] ^ 0x8000) - 0x8000
            tr: int = (br * wr - bi * wi + 16384) >> 15
            ti: int = (br * wi + bi * wr + 16384) >> 15
            tr = ((tr & 0xFFFF) ^ 0x8000) - 0x8000
            ti = ((ti & 0xFFFF) ^ 0x8000) - 0x8000
            pf[i1] = ar - tr
            pf[i1 + 1] = ai - ti
            pf[i0] = ar + tr
            pf[i0 + 1] = ai + ti
            k += 1
        b += 1


@micropython.viper
def _b4(f, tw, m: int, fs: int, nblk: int, inv: int):
    """kf_bfly4 on each of nblk blocks of 4 * m values: forward, or with
    inv kiss_fft's inverse branch (Fout[m] and Fout[3m] swap the sign of
    their s4 terms: SignalIrfft, signal_irfft.py)."""
    pf = ptr16(f)
    pt = ptr16(tw)
    b: int = 0
    while b < nblk:
        k: int = 0
        while k < m:
            i0: int = 8 * b * m + 2 * k
            i1: int = i0 + 2 * m
            i2: int = i1 + 2 * m
            i3: int = i2 + 2 * m
            # C_FIXDIV(., 4): sround(x * 8191), as int16
            f0r: int = (((pf[i0] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            f0i: int = (((pf[i0 + 1] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            f1r: int = (((pf[i1] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            f1i: int = (((pf[i1 + 1] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            f2r: int = (((pf[i2] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            f2i: int = (((pf[i2 + 1] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            f3r: int = (((pf[i3] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            f3i: int = (((pf[i3 + 1] ^ 0x8000) - 0x8000) * 8191 + 16384) >> 15
            # (|x| * 8191 + 2**14) >> 15 < 2**13: no int16 wrap here
            t: int = 2 * k * fs
            wr: int = (pt[t] ^ 0x8000) - 0x8000
            wi: int = (pt[t + 1] ^ 0x8000) - 0x8000
            s0r: int = (f1r * wr - f1i * wi + 16384) >> 15
            s0i: int = (f1r * wi + f1i * wr + 16384) >> 15
            t = 2 * t
            wr = (pt[t] ^ 0x8000) - 0x8000
            wi = (pt[t + 1] ^ 0x8000) - 0x8000
            s1r: int = (f2r * wr - f2i * wi + 16384) >> 15
            s1i: int = (f2r * wi + f2i * wr + 16384) >> 15
            t = 6 * k * fs
            wr = (pt[t] ^ 0x8000) - 0x8000
            wi = (pt[t + 1] ^ 0x8000) - 0x8000
            s2r: int = (f3r * wr - f3i * wi + 16384) >> 15
            s2i: int = (f3r * wi + f3i * wr + 16384) >> 15
            # products of values below 2**13 by twiddles below 2**15:
            # all of these stay inside int16, sums of two too
            s5r: int = f0r - s1r
            s5i: int = f0i - s1i
            f0r += s1r
            f0i += s1i
            s3r: int = s0r + s2r
            s3i: int = s0i + s2i
            s4r: int = s0r - s2r
            s4i: int = s0i - s2i
            pf[i2] = f0r - s3r
            pf[i2 + 1] = f0i - s3i
            pf[i0] = f0r + s3r
            pf[i0 + 1] = f0i + s3i
            if inv:
                s4i = 0 - s4i
                s4r = 0 - s4r
            pf[i1] = s5r + s4i
            pf[i1 + 1] = s5i - s4r
            pf[i3] = s5r - s4i
            pf[i3 + 1] = s5i + s4r
            k += 1
        b += 1


@micropython.viper
def _b3(f, tw, m: int, fs: int, nblk: int):
    """kf_bfly3 on each of nblk blocks of 3 * m values."""
    pf = ptr16(f)
    pt = ptr16(tw)
    e: int = (pt[2 * fs * m + 1] ^ 0x8000) - 0x8000  # epi3.i
    b: int = 0
    while b < nblk:
        k: int = 0
        while k < m:
            i0: int = 6 * b * m + 2 * k
            i1: int = i0 + 2 * m
            i2: int = i1 + 2 * m
            # C_FIXDIV(., 3): sround(x * 10922); |result| < 2**14
            f0r: int = (((pf[i0] ^ 0x8000) - 0x8000) * 10922 + 16384) >> 15
            f0i: int = (((pf[i0 + 1] ^ 0x8000) - 0x8000) * 10922 + 16384) >> 15
            f1r: int = (((pf[i1] ^ 0x8000) - 0x8000) * 10922 + 16384) >> 15
            f1i: int = (((pf[i1 + 1] ^ 0x8000) - 0x8000) * 10922 + 16384) >> 15
            f2r: int = (((pf[i2] ^ 0x8000) - 0x8000) * 10922 + 16384) >> 15
            f2i: int = (((pf[i2 + 1] ^ 0x8000) - 0x8000) * 10922 + 16384) >> 15
            t: int = 2 * k * fs
            wr: int = (pt[t] ^ 0x8000) - 0x8000
            wi: int = (pt[t + 1] ^ 0x8000) - 0x8000
            s1r: int = (f1r * wr - f1i * wi + 16384) >> 15
            s1i: int = (f1r * wi + f1i * wr + 16384) >> 15
            t = 2 * t
            wr = (pt[t] ^ 0x8000) - 0x8000
            wi = (pt[t + 1] ^ 0x8000) - 0x8000
            s2r: int = (f2r * wr - f2i * wi + 16384) >> 15
            s2i: int = (f2r * wi + f2i * wr + 16384) >> 15
            s3r: int = s1r + s2r
            s3i: int = s1i + s2i
            s0r: int = s1r - s2r
            s0i: int = s1i - s2i
            g1r: int = f0r - (s3r >> 1)
            g1i: int = f0i - (s3i >> 1)
            s0r = ((((s0r * e + 16384) >> 15) & 0xFFFF) ^ 0x8000) - 0x8000
            s0i = ((((s0i * e + 16384) >> 15) & 0xFFFF) ^ 0x8000) - 0x8000
            pf[i0] = f0r + s3r
            pf[i0 + 1] = f0i + s3i
            pf[i2] = g1r + s0i
            pf[i2 + 1] = g1i - s0r
            pf[i1] = g1r - s0i
            pf[i1 + 1] = g1i + s0r
            k += 1
        b += 1


@micropython.viper
def _smul(a: int, b: int) -> int:
    """S_MUL: sround(a * b) as int16."""
    return ((((a * b + 16384) >> 15) & 0xFFFF) ^ 0x8000) - 0x8000


@micropython.viper
def _w16(a: int) -> int:
    return ((a & 0xFFFF) ^ 0x8000) - 0x8000


@micropython.viper
def _b5(f, tw, m: int, fs: int, nblk: int):
    """kf_bfly5 on each of nblk blocks of 5 * m values."""
    pf = ptr16(f)
    pt = ptr16(tw)
    yar: int = (pt[2 * fs * m] ^ 0x8000) - 0x8000
    yai: int = (pt[2 * fs * m + 1] ^ 0x8000) - 0x8000
    ybr: int = (pt[4 * fs * m] ^ 0x8000) - 0x8000
    ybi: int = (pt[4 * fs * m + 1] ^ 0x8000) - 0x8000
    b: int = 0
    while b < nblk:
        u: int = 0
        while u < m:
            i0: int = 10 * b * m + 2 * u
            i1: int = i0 + 2 * m
            i2: int = i1 + 2 * m
            i3: int = i2 + 2 * m
            i4: int = i3 + 2 * m
            # C_FIXDIV(., 5): sround(x * 6553); |result| < 2**13
            f0r: int = (((pf[i0] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f0i: int = (((pf[i0 + 1] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f1r: int = (((pf[i1] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f1i: int = (((pf[i1 + 1] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f2r: int = (((pf[i2] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f2i: int = (((pf[i2 + 1] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f3r: int = (((pf[i3] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f3i: int = (((pf[i3 + 1] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f4r: int = (((pf[i4] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            f4i: int = (((pf[i4 + 1] ^ 0x8000) - 0x8000) * 6553 + 16384) >> 15
            t: int = 2 * u * fs
            wr: int = (pt[t] ^ 0x8000) - 0x8000
            wi: int = (pt[t + 1] ^ 0x8000) - 0x8000
            s1r: int = (f1r * wr - f1i * wi + 16384) >> 15
            s1i: int = (f1r * wi + f1i * wr + 16384) >> 15
            t = 4 * u * fs
            wr = (pt[t] ^ 0x8000) - 0x8000
            wi = (pt[t + 1] ^ 0x8000) - 0x8000
            s2r: int = (f2r * wr - f2i * wi + 16384) >> 15
            s2i: int = (f2r * wi + f2i * wr + 16384) >> 15
            t = 6 * u * fs
            wr = (pt[t] ^ 0x8000) - 0x8000
            wi = (pt[t + 1] ^ 0x8000) - 0x8000
            s3r: int = (f3r * wr - f3i * wi + 16384) >> 15
            s3i: int = (f3r * wi + f3i * wr + 16384) >> 15
            t = 8 * u * fs
            wr = (pt[t] ^ 0x8000) - 0x8000
            wi = (pt[t + 1] ^ 0x8000) - 0x8000
            s4r: int = (f4r * wr - f4i * wi + 16384) >> 15
            s4i: int = (f4r * wi + f4i * wr + 16384) >> 15
            s7r: int = s1r + s4r
            s7i: int = s1i + s4i
            s10r: int = s1r - s4r
            s10i: int = s1i - s4i
            s8r: int = s2r + s3r
            s8i: int = s2i + s3i
            s9r: int = s2r - s3r
            s9i: int = s2i - s3i
            pf[i0] = f0r + s7r + s8r
            pf[i0 + 1] = f0i + s7i + s8i
            s5r: int = int(_w16(f0r + int(_smul(s7r, yar))
                                + int(_smul(s8r, ybr))))
            s5i: int = int(_w16(f0i + int(_smul(s7i, yar))
                                + int(_smul(s8i, ybr))))
            s6r: int = int(_w16(int(_smul(s10i, yai))
                                + int(_smul(s9i, ybi))))
            s6i: int = int(_w16(0 - int(_smul(s10r, yai))
                                - int(_smul(s9r, ybi))))
            pf[i1] = s5r - s6r
            pf[i1 + 1] = s5i - s6i
            pf[i4] = s5r + s6r
            pf[i4 + 1] = s5i + s6i
            s11r: int = int(_w16(f0r + int(_smul(s7r, ybr))
                                 + int(_smul(s8r, yar))))
            s11i: int = int(_w16(f0i + int(_smul(s7i, ybr))
                                 + int(_smul(s8i, yar))))
            s12r: int = int(_w16(int(_smul(s9i, yai))
                                 - int(_smul(s10i, ybi))))
            s12i: int = int(_w16(int(_smul(s10r, ybi))
                                 - int(_smul(s9r, yai))))
            pf[i2] = s11r + s12r
            pf[i2 + 1] = s11i + s12i
            pf[i3] = s11r - s12r
            pf[i3 + 1] = s11i - s12i
            u += 1
        b += 1


@micropython.viper
def _split(f, stw, y, o: int, half: int):
    """kiss_fftr after its complex FFT: the half + 1 bins of the real
    signal from f's half values, written to y from int16 index o."""
    pf = ptr16(f)
    pt = ptr16(stw)
    py = ptr16(int(ptr16(y)) + 2 * o)
    dr: int = (((pf[0] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
    di: int = (((pf[1] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
    py[0] = dr + di
    py[1] = 0
    py[2 * half] = dr - di
    py[2 * half + 1] = 0
    k: int = 1
    while k <= half // 2:
        j: int = half - k
        ar: int = (((pf[2 * k] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
        ai: int = (((pf[2 * k + 1] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
        br: int = (((pf[2 * j] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
        # fpnk.i = -tmpbuf[ncfft - k].i, as int16 (-(-32768) wraps)
        bi: int = ((((((0 - pf[2 * j + 1]) & 0xFFFF) ^ 0x8000) - 0x8000)
                    * 16383 + 16384) >> 15)
        # |a|, |b| < 2**14 after C_FIXDIV(., 2): sums fit int16
        f1r: int = ar + br
        f1i: int = ai + bi
        f2r: int = ar - br
        f2i: int = ai - bi
        wr: int = (pt[2 * k - 2] ^ 0x8000) - 0x8000
        wi: int = (pt[2 * k - 1] ^ 0x8000) - 0x8000
        tr: int = ((((f2r * wr - f2i * wi + 16384) >> 15) & 0xFFFF)
                   ^ 0x8000) - 0x8000
        ti: int = ((((f2r * wi + f2i * wr + 16384) >> 15) & 0xFFFF)
                   ^ 0x8000) - 0x8000
        py[2 * k] = (f1r + tr) >> 1
        py[2 * k + 1] = (f1i + ti) >> 1
        py[2 * j] = (f1r - tr) >> 1
        py[2 * j + 1] = (ti - f1i) >> 1
        k += 1


def _factor(n):
    """kf_factor: [p1, m1, p2, m2, ...] (powers of 4, then 2, then odd
    primes; p > floor(sqrt(n)) ends the search with p = n)."""
    out = []
    p = 4
    r = _isqrt(n)
    while True:
        while n % p:
            p = 2 if p == 4 else 3 if p == 2 else p + 2
            if p > r:
                p = n
        n //= p
        out.append(p)
        out.append(n)
        if n <= 1:
            return out


def _isqrt(n):
    r = 0
    while (r + 1) * (r + 1) <= n:
        r += 1
    return r


def _permutation(perm, factors):
    """perm[j] (uint16 in a byte buffer): the input value that kf_work
    copies to output j. kf_work's recursion splits j in mixed radix,
    j = sum k_L * m_L (k_L < p_L), and reads input sum k_L * F_L with F_L
    the product of the radices above level L."""
    nst = len(factors) // 2
    for j in range(len(perm) // 2):
        r, i, f = j, 0, 1
        for k in range(nst):
            p, m = factors[2 * k], factors[2 * k + 1]
            i += (r // m) * f
            r %= m
            f *= p
        perm[2 * j] = i & 0xFF
        perm[2 * j + 1] = i >> 8


# Twiddles: the doubles that kiss_fft_alloc / kiss_fftr_alloc compute,
# emulated with integers (a double is (m, e): m * 2**e). cos and sin of
# the exact angles come from a rotation recurrence in _P-bit fixed point
# (one Taylor series per table), then are moved to the double phase C
# computes (first order: the phase differs from the exact angle by about
# 1e-16), rounded to double, and KISS_FFT_COS's floor(.5 + 32767 * c) is
# done in doubles too: the last bit matters where 32767 * cos is a half
# integer (cos = 1/2 at the sixths of a turn).

_P = const(104)  # bits of the fixed-point cos / sin
FRAC_BITS = const(104)  # _P, for signal_fft32.py
_PI_D = (7074237752028440, -51)  # the double nearest pi


def _bitlen(n):
    k = 0
    while n >= 0x10000:
        n >>= 16
        k += 16
    while n:
        n >>= 1
        k += 1
    return k


def _rnd(n, d):
    """(m, e): the double nearest n / d (d > 0), ties to even."""
    if n == 0:
        return 0, 0
    neg = n < 0
    a = -n if neg else n
    e = _bitlen(a) - _bitlen(d) - 53
    while True:
        dd = d << e if e >= 0 else d
        aa = a if e >= 0 else a << -e
        if dd & (dd - 1):
            q, r = divmod(aa, dd)
        else:  # a power of two
            k = _bitlen(dd) - 1
            q, r = aa >> k, aa & (dd - 1)
        if q >= 1 << 53:
            e += 1
        elif q < 1 << 52:
            e -= 1
        else:
            break
    if 2 * r > dd or (2 * r == dd and q & 1):
        q += 1
        if q == 1 << 53:
            q >>= 1
            e += 1
    return (-q if neg else q), e


def _rnd2(n, e):
    """The double nearest n * 2**e."""
    return _rnd(n << e, 1) if e >= 0 else _rnd(n, 1 << -e)


def _add(x, y):
    e = min(x[1], y[1])
    return _rnd2((x[0] << (x[1] - e)) + (y[0] << (y[1] - e)), e)


def _pi():
    """pi * 2**_P, to the last bit (50 digits of pi)."""
    return (31415926535897932384626433832795028841971693993751
            << _P) // 10 ** 49


def _cos_sin(r):
    """(cos r, sin r) * 2**_P of r * 2**-_P, |r| <= 4 (Taylor)."""
    one = 1 << _P
    r2 = (r * r) >> _P
    c = tc = one
    s = ts = r
    i = 1
    while tc or ts:
        tc = -((tc * r2) >> _P) // ((2 * i - 1) * (2 * i))
        ts = -((ts * r2) >> _P) // ((2 * i) * (2 * i + 1))
        c += tc
        s += ts
        i += 1
    return c, s


def _fixed(x):
    """Double x = (m, e) as a _P-bit fixed-point integer (exact here)."""
    sh = x[1] + _P
    return x[0] << sh if sh >= 0 else x[0] >> -sh


def _qs(v, smax):
    """floor(.5 + smax * c) of fixed-point v, c = the double nearest v
    (KISS_FFT_COS / KISS_FFT_SIN of FIXED_POINT 16 / 32 on a correctly
    rounded cos / sin: smax 32767 / 2147483647), the product and the sum
    rounded to double as C does."""
    c = _rnd(v, 1 << _P)
    m, e = _add(_rnd2(smax * c[0], c[1]), (1, -1))
    return m << e if e >= 0 else m >> -e


def fixed_conv(smax, near):
    """conv for _table: (KISS_FFT_COS, KISS_FFT_SIN) as integers at scale
    smax. Exact cos / sin that land farther than near (in _P-bit fixed
    point) from a rounding boundary of smax * x + .5 give the same
    integer whatever the double rounding; the others are decided exactly
    (the angle moved to C's double phase, the doubles rounded as C)."""
    one = 1 << _P
    half = one >> 1

    def conv(c, s, d):
        xc = smax * c + half
        xs = smax * s + half
        fc = xc & (one - 1)
        fs = xs & (one - 1)
        if near < fc < one - near and near < fs < one - near:
            return xc >> _P, xs >> _P  # no double can land elsewhere
        dd = d()  # about 1e-16 of the angle
        return (_qs(c - ((s * dd) >> _P), smax),
                _qs(s + ((c * dd) >> _P), smax))
    return conv


def inverse_conv(conv):
    """conv for the inverse tables (kiss_fft_alloc and kiss_fftr_alloc
    with inverse set: the double phase negated): the exact sin and the
    phase's offset from the exact angle change sign, cos does not."""
    def inv(c, s, d):
        return conv(c, -s, lambda: -d())
    return inv


def _table(count, step, first, phase, angle, conv, store):
    """store(i, KISS_FFT_COS, KISS_FFT_SIN of phase(i)) for i < count, as
    conv(cos, sin, d) computes them from the exact cos and sin (_P-bit
    fixed point) of the angles angle(i) = first + i * step, found by
    rotation; d() is phase(i) - angle(i) in fixed point (phase(i) is the
    double C computes)."""
    pi = _pi()
    c, s = _cos_sin(first)
    wc, ws = _cos_sin(step)
    for i in range(count):
        vc, vs = conv(c, s, lambda: _fixed(phase(i)) - angle(i, pi))
        store(i, vc, vs)
        c, s = (c * wc - s * ws) >> _P, (c * ws + s * wc) >> _P


def _int16_pairs(out):
    def store(i, vc, vs):
        out[4 * i] = vc & 0xFF
        out[4 * i + 1] = (vc >> 8) & 0xFF
        out[4 * i + 2] = vs & 0xFF
        out[4 * i + 3] = (vs >> 8) & 0xFF
    return store


def _conv15():
    # doubles err by ~2**-38 here: decide those exactly
    return fixed_conv(32767, (1 << _P) >> 30)


def _twiddles(out, n):
    """kiss_fft_alloc's n forward twiddles as int16 pairs (byte buffer
    out)."""
    twiddle_table(n, _conv15(), _int16_pairs(out))


def _super_twiddles(out, n):
    """kiss_fftr_alloc's n // 2 super twiddles as int16 pairs."""
    super_twiddle_table(n, _conv15(), _int16_pairs(out))


def twiddle_table(n, conv, store):
    """kiss_fft_alloc's n forward twiddles, phase -2*pi*i / n, in doubles:
    ((-2 * pi) * i) / n; store(i, cos, sin) as conv makes them."""
    def phase(i):
        t = _rnd2(-_PI_D[0] * i, _PI_D[1] + 1)
        if t[1] < 0:
            return _rnd(t[0], n << -t[1])
        return _rnd(t[0] << t[1], n)
    pi = _pi()
    _table(n, -(2 * pi) // n, 0, phase,
           lambda i, pi: -(2 * pi * i) // n, conv, store)


def super_twiddle_table(n, conv, store):
    """kiss_fftr_alloc's n // 2 super twiddles for a complex FFT of n
    points: phase -pi * ((i + 1) / n + .5), in doubles."""
    def phase(i):
        b = _add(_rnd(i + 1, n), (1, -1))
        return _rnd2(-_PI_D[0] * b[0], _PI_D[1] + b[1])
    pi = _pi()
    _table(n // 2, -pi // n, -(pi * (n + 2)) // (2 * n), phase,
           lambda i, pi: -(pi * (n + 2 * i + 2)) // (2 * n), conv, store)
