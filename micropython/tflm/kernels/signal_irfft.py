"""SignalIrfft: the inverse real FFT of TFLM's Signal library (int16
here; int32 and float32 in signal_fft32.py, from the same prepare).

Follows signal/micro/kernels/irfft.cc and signal/src/irfft_int16.cc,
irfft_int32.cc and irfft_float.cc, which run KISS FFT v130's kiss_fftri
(tools/kiss_fftr.c) with FIXED_POINT 16, FIXED_POINT 32 or float,
allocated with inverse_fft = 1: input [..., 2 * B] (B >= N/2 + 1
complex bins per row, real then imaginary; bins past N/2 are not read),
output [..., N] with as many rows, both of type T, options 'T'
(TensorType: 7 int16, 2 int32, 0 float32) and 'fft_length' N. Per row:

    kiss_fftri's merge of the N/2 + 1 bins into N/2 complex values
    (C_FIXDIV by 2 of bin k and of the conjugate of bin N/2 - k, their
    sum plus their difference times the super twiddle, every stored
    value wrapped to the integer type, the imaginary part of the
    mirrored value negated);
    kiss_fft's inverse transform of those N/2 values into the row's N
    samples: the same stages as SignalRfft's (signal_fft.py: radix 4,
    2, 3, 5, each scaling by its radix in fixed point), with the
    conjugate twiddles and kf_bfly4's inverse branch;
    float32 only: each sample divided by (float) N (IrfftFloatApply).

Twiddles are kiss_fft_alloc's and kiss_fftr_alloc's for the inverse
(phases negated), computed at prepare as signal_fft.py computes the
forward ones. Refused as for SignalRfft: a T other than 7, 2, 0 (TFLM's
Init returns nullptr), tensors of another type than T, an fft_length
that is odd, below 4, above 131072 or whose half has a prime factor
above 5 (TFLM's kiss_fft fails or crashes there); and an input row
shorter than N + 2 values or of odd length, an output row of another
length than N, or rows that do not pair up (TFLM would read or write
past the tensors).
"""

import micropython
from micropython import const

from ..errors import PrepareError
from ..heap import persistent
from . import signal_fft as sf
from . import signal_util as su

_INT16 = const(7)
_INT32 = const(2)
_FLOAT32 = const(0)
_MAX_N = const(131072)

_S_X = const(0)
_S_Y = const(1)
_S_WORK = const(2)
_S_TW = const(3)
_S_STW = const(4)
_S_PERM = const(5)
_S_STAGES = const(6)
_S_P = const(7)
_S_FOUT = const(8)

_P_HALF = const(0)
_P_IN = const(1)     # input row length (int16 values)
_P_ROWS = const(2)
_P_NST = const(3)


def prepare(op, ins, outs, ctx):
    """Check a SignalIrfft operator and bind its eval (shapes, types,
    options and refusals in the module doc; PrepareError)."""
    from .conv_util import keep
    su.io(op, ins, outs, 1, 1)
    x, y = ins[0], outs[0]
    label = op.label()
    ttype = su.option_by_key(op, "T")  # IrfftInitAll: m["T"].AsInt32()
    if ttype not in (_INT16, _INT32, _FLOAT32):
        raise PrepareError("%s: T = %s: TFLM's SignalIrfft takes int16 (7), "
                           "int32 (2) and float32 (0)" % (label, ttype))
    n = su.options(op, 2)[1]  # 'fft_length', after 'T'
    su.want(op, x, ttype, -2)
    su.want(op, y, ttype, len(x.shape))
    if n < 4 or n & 1 or n > _MAX_N:
        raise PrepareError("%s: fft_length %d must be even, at least 4 and "
                           "at most %d" % (label, n, _MAX_N))
    half = n // 2
    factors = sf._factor(half)
    for p in factors[::2]:
        if p not in (2, 3, 4, 5):
            raise PrepareError("%s: fft_length %d: TFLM's kiss_fft has no "
                               "radix-%d butterfly" % (label, n, p))
    last = x.shape[-1]
    if last < n + 2 or last & 1:
        raise PrepareError("%s: %s rows of %d values: fft_length %d reads "
                           "%d complex bins (an even row of at least %d)"
                           % (label, x.label(), last, n, half + 1, n + 2))
    rows = x.size // last
    if y.shape[-1] != n or y.size != rows * n:
        raise PrepareError("%s: %d input rows and fft_length %d need an "
                           "output of %d rows of %d values, not %s"
                           % (label, rows, n, rows, n, y.shape))
    if ttype != _INT16:
        from . import signal_fft32
        return signal_fft32.prepare_inverse(op, ins, outs, ctx, ttype, n,
                                            factors, last, rows)
    tw = persistent(ctx, "B", 4 * half, True)
    stw = persistent(ctx, "B", 4 * (half // 2), True)
    perm = persistent(ctx, "B", 2 * half, True)
    if not getattr(ctx, "sizing", False):  # the sizing pass counts bytes
        conv = sf.inverse_conv(sf._conv15())
        sf.twiddle_table(half, conv, sf._int16_pairs(tw))
        sf.super_twiddle_table(half, conv, sf._int16_pairs(stw))
        sf._permutation(perm, factors)
    nst = len(factors) // 2
    stages = su.words(4 * nst)  # deepest first: radix, m, fstride, blocks
    fstride = 1
    for k in range(nst):
        j = 4 * (nst - 1 - k)
        stages[j], stages[j + 1] = factors[2 * k], factors[2 * k + 1]
        stages[j + 2] = stages[j + 3] = fstride
        fstride *= factors[2 * k]
    p = su.words(4)
    p[_P_HALF], p[_P_IN], p[_P_ROWS], p[_P_NST] = half, last, rows, nst
    work = ctx.work(n, True)  # tmpbuf, then kf_work's output (int16 pairs)
    return _eval, (su.aligned(x, ctx), y.data, work, tw, stw, perm,
                   keep(ctx, stages), keep(ctx, p), memoryview(work)[2 * n:])


def _eval(st):
    _irfft(st[_S_X], st[_S_Y], st[_S_WORK], st[_S_TW], st[_S_STW],
           st[_S_PERM], st[_S_STAGES], st[_S_P], st[_S_FOUT])


@micropython.viper
def _irfft(x, y, work, tw, stw, perm, stages, p, fout):
    """Every row: kiss_fftri's merge into work, the permuted copy into
    fout (kf_work), the inverse butterflies, the row into y."""
    q = ptr32(p)
    half: int = q[_P_HALF]
    last: int = q[_P_IN]
    rows: int = q[_P_ROWS]
    nst: int = q[_P_NST]
    pw = ptr16(work)
    pp = ptr16(perm)
    ps = ptr32(stages)
    po = ptr16(fout)
    py = ptr16(y)
    r: int = 0
    while r < rows:
        _merge(x, r * last, stw, work, half)
        i: int = 0
        while i < half:
            j: int = pp[i]
            po[2 * i] = pw[2 * j]
            po[2 * i + 1] = pw[2 * j + 1]
            i += 1
        s: int = 0
        while s < nst:
            radix: int = ps[4 * s]
            if radix == 4:
                sf._b4(fout, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3],
                       1)
            elif radix == 2:
                sf._b2(fout, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3])
            elif radix == 3:
                sf._b3(fout, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3])
            else:
                sf._b5(fout, tw, ps[4 * s + 1], ps[4 * s + 2], ps[4 * s + 3])
            s += 1
        i = 0
        o: int = r * 2 * half
        while i < 2 * half:
            py[o + i] = po[i]
            i += 1
        r += 1


@micropython.viper
def _merge(x, o: int, stw, out, half: int):
    """kiss_fftri before its complex FFT: the half + 1 bins at x's int16
    index o into half complex values (out)."""
    px = ptr16(int(ptr16(x)) + 2 * o)
    pt = ptr16(stw)
    pf = ptr16(out)
    # tmpbuf[0] = (f0.r + fN.r, f0.r - fN.r) as int16, then C_FIXDIV(., 2)
    a: int = ((px[0] ^ 0x8000) - 0x8000) + \
        ((px[2 * half] ^ 0x8000) - 0x8000)
    b: int = ((px[0] ^ 0x8000) - 0x8000) - \
        ((px[2 * half] ^ 0x8000) - 0x8000)
    a = ((a & 0xFFFF) ^ 0x8000) - 0x8000
    b = ((b & 0xFFFF) ^ 0x8000) - 0x8000
    pf[0] = (a * 16383 + 16384) >> 15
    pf[1] = (b * 16383 + 16384) >> 15
    k: int = 1
    while k <= half // 2:
        j: int = half - k
        ar: int = (((px[2 * k] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
        ai: int = (((px[2 * k + 1] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
        br: int = (((px[2 * j] ^ 0x8000) - 0x8000) * 16383 + 16384) >> 15
        # fnkc.i = -freqdata[ncfft - k].i, as int16 (-(-32768) wraps)
        bi: int = ((((((0 - px[2 * j + 1]) & 0xFFFF) ^ 0x8000) - 0x8000)
                    * 16383 + 16384) >> 15)
        # |a|, |b| < 2**14 after C_FIXDIV(., 2): sums fit int16
        er: int = ar + br
        ei: int = ai + bi
        dr: int = ar - br
        di: int = ai - bi
        wr: int = (pt[2 * k - 2] ^ 0x8000) - 0x8000
        wi: int = (pt[2 * k - 1] ^ 0x8000) - 0x8000
        tr: int = ((((dr * wr - di * wi + 16384) >> 15) & 0xFFFF)
                   ^ 0x8000) - 0x8000
        ti: int = ((((dr * wi + di * wr + 16384) >> 15) & 0xFFFF)
                   ^ 0x8000) - 0x8000
        pf[2 * k] = er + tr
        pf[2 * k + 1] = ei + ti
        pf[2 * j] = er - tr
        # tmpbuf[ncfft - k].i *= -1 on the int16 stored value
        pf[2 * j + 1] = 0 - ((((ei - ti) & 0xFFFF) ^ 0x8000) - 0x8000)
        k += 1
