"""SignalRfft and SignalIrfft, int32 and float32: the real FFT of TFLM's
Signal library and its inverse.

Follows signal/micro/kernels/rfft.cc with signal/src/rfft_int32.cc and
rfft_float.cc: KISS FFT v130 (kiss_fft.c, tools/kiss_fftr.c,
_kiss_fft_guts.h, with TFLM's kissfft.patch) built with FIXED_POINT 32
and with float. Input [..., L], output [..., 2 * (N/2 + 1)] (interleaved
real, imaginary) of the same type, options 'T' (2: int32, 0: float32)
and 'fft_length' N; the stages, radices, input permutation and checks
are the int16 variant's (signal_fft.py).

SignalIrfft (signal/micro/kernels/irfft.cc, signal/src/irfft_int32.cc,
irfft_float.cc; checks in signal_irfft.py): input [..., 2 * B] (B >=
N/2 + 1 bins), output [..., N]; kiss_fftri's merge (_merge) into
tmpbuf, the same stages with the inverse tables (the phase times -1:
float32 sin's sign bit flipped, int32 floor(.5 - 2147483647 * sin)
decided as the forward ones) and kf_bfly4's inverse branch (_S_INV),
then float32 each sample / (float) N, C's division (f32.vdiv). The
merge's negations (fnkc.i = -f.i, tmpbuf.i *= -1) flip the sign bit in
float32: x86's mulss by -1 would keep a NaN's sign where this flips it
(no other value differs).

int32 (FIXED_POINT 32): kiss_fft_scalar is int32, a product is the int64
a * b rounded as sround(x) = (x + 2**30) >> 31 and wrapped to int32
(C_MUL rounds a * b - c * d once), C_FIXDIV(x, p) is sround(x *
(2**31 - 1) / p), HALF_OF(x) is x >> 1, sums wrap to int32; twiddles are
floor(.5 + 2147483647 * cos(phase)) in doubles. The products are formed
exactly from 16-bit limbs, so that 32-bit viper (boards) and 64-bit
viper (the unix port) give the same bits.

float32: every +, -, * rounded to float32 in C's order (f32.vec: no
fused multiply-add, as the oracle's x86-64 build), HALF_OF(x) is
x * 0.5f (kissfft.patch), C's unary minus flips the sign bit; twiddles
are (float) cos(phase) of the double phase, computed here exactly (a
double, then rounded to float32; sin(-0.0) is -0.0). Once an infinity
enters (an input, or a sum that overflows), NaNs of both signs meet in
+ and *, and the sign of the one x86 propagates depends on the operand
order TFLM's compiler chose: there a NaN's sign can differ from TFLM's.

Eval runs KISS FFT's butterflies as vector operations over the values
that one radix step treats alike: within a stage the loop over k (or,
when there are more blocks than k, over the blocks) is the vector, in
chunks of at most CHUNK lanes. Each operation is one call of an engine
(f32.vec for float32, _engine for int32) with offsets and strides in
32-bit words. Tables in the arena's persistent part: per twiddle
(cos, sin, -cos, -sin) words (the negation of a weight at word w sits at
w + 2), super twiddles alike, the input permutation and a few constants:
16 * (N/2 + N/4) + N + 40 bytes (float32: 8 more, the clamp bounds);
the FFT buffer and the butterflies' scratch vectors are scratch (4 * N +
64 * lanes bytes, lanes the longest vector, at most CHUNK; SignalIrfft:
4 * N more, kiss_fftri's tmpbuf).
"""

import micropython
from micropython import const

from . import signal_fft as sf
from . import signal_util as su
from ..heap import keep, persistent

_INT32 = const(2)
_FLOAT32 = const(0)
CHUNK = const(32)  # lanes per vector operation
_SLOTS = const(8)  # complex scratch vectors (kf_bfly5's)

# Parameter block p (array('i')), the first nine as f32.vec's: 0 a
# offset, 1 a stride, 2 b offset, 3 b stride, 4 c offset, 5 c stride,
# 6 output offset, 7 count, 8 output stride; then 9 d offset, 10 d
# stride, 11 e offset, 12 e stride, 13 sign (1: subtract), 14 mode.
_P_LEN = const(15)

# Constants after the tables in the weights (words): float32 1.0, 0.5,
# -1.0, -0.5, -0.0, +0.0 (int32: zeros), then the int32 C_FIXDIV
# multipliers 2**31 - 1 // p at K + 4 + p (p = 2 .. 5).
_ONE = const(0)
_HALF = const(1)
_NZ = const(4)  # the identity of + ("no addend")
_ZERO = const(5)
_N_CONSTS = const(10)

# State tuple slots: the engine's (0 .. 13, _setup), then the operator's
_S_FLT = const(0)
_S_P = const(1)
_S_Q = const(2)
_S_W = const(3)
_S_D = const(4)
_S_K = const(5)   # word offset of the constants in W
_S_SC = const(6)  # word offset of the scratch vectors in D
_S_STW = const(7)  # word offset of the super twiddles in W
_S_HALF = const(8)  # N / 2
_S_PERM = const(9)
_S_STAGES = const(10)  # ((radix, m, fstride, blocks), ...) deepest first
_S_VEC = const(11)  # f32.vec (float32) or None
_S_CH = const(12)  # lanes per vector operation, at most CHUNK
_S_INV = const(13)  # kiss_fft's inverse (SignalIrfft): kf_bfly4's branch
_S_X = const(14)
_S_Y = const(15)
_S_ROWS = const(16)
_S_LEN = const(17)  # words per input row (SignalRfft: L samples)
_S_TMP = const(18)  # SignalIrfft: word offset of kiss_fftri's tmpbuf in D
_S_VDIV = const(19)  # SignalIrfft float32: f32.vdiv (the / fft_length)

# Constant of the float32 inverse after the six float32 ones: (float) N
_DIVISOR = const(6)


def prepare(op, ins, outs, ctx, ttype, n, factors, length, rows):
    """Bind SignalRfft's int32 (ttype 2) or float32 (ttype 0) eval once
    signal_fft.prepare has checked the op: input [..., length] and
    output [..., 2 * (n/2 + 1)] of type ttype, rows rows, n = fft_length,
    factors kf_factor's of n / 2. Raises PrepareError for a tensor of
    another type."""
    x, y = ins[0], outs[0]
    su.want(op, x, ttype, -2)
    su.want(op, y, ttype, len(x.shape))
    st = _setup(ctx, ttype == _FLOAT32, n, factors, False, 0)
    return _eval, st + (su.aligned(x, ctx), y.data, rows, length)


def prepare_inverse(op, ins, outs, ctx, ttype, n, factors, last, rows):
    """Bind SignalIrfft's int32 (ttype 2) or float32 (ttype 0) eval once
    signal_irfft.prepare has checked the op: input [..., last] (last >=
    n + 2 values: interleaved bins, those past n / 2 not read), output
    [..., n] of type ttype, rows rows, factors kf_factor's of n / 2.
    Raises PrepareError for a tensor of another type."""
    x, y = ins[0], outs[0]
    su.want(op, x, ttype, -2)
    su.want(op, y, ttype, len(x.shape))
    flt = ttype == _FLOAT32
    st = _setup(ctx, flt, n, factors, True, n)
    vdiv = None
    if flt:
        from . import f32
        vdiv = f32.vdiv
    # tmpbuf: after the FFT buffer and the scratch vectors
    return _eval_inverse, st + (su.aligned(x, ctx), y.data, rows, last,
                                n + 2 * _SLOTS * st[_S_CH], vdiv)


def _setup(ctx, flt, n, factors, inverse, extra):
    """The engine's state slots (0 .. _S_INV) for a kiss_fft of n / 2
    points, forward or inverse: tables (twiddles, super twiddles,
    constants, the input permutation) in the arena's persistent part,
    the FFT buffer, scratch vectors and extra more words of scratch."""
    half = n // 2
    quarter = half // 2
    k = 4 * (half + quarter)
    w = persistent(ctx, "B", 4 * (k + _N_CONSTS), True)
    perm = persistent(ctx, "B", 2 * half, True)
    if not getattr(ctx, "sizing", False):  # the sizing pass counts bytes
        if flt:
            conv = _float_conv()
            if inverse:
                conv = _float_inverse(conv)
        else:
            conv = sf.fixed_conv(2147483647, (1 << sf.FRAC_BITS) >> 16)
            if inverse:
                conv = sf.inverse_conv(conv)
        sf.twiddle_table(half, conv, _quads(w, 0, flt))
        sf.super_twiddle_table(half, conv, _quads(w, 4 * half, flt))
        _consts(w, k, flt, n)
        sf._permutation(perm, factors)
    nst = len(factors) // 2
    stages = []
    lanes = quarter
    fstride = 1
    for j in range(nst):
        radix, m = factors[2 * j], factors[2 * j + 1]
        stages.append((radix, m, fstride, fstride))
        lanes = max(lanes, m, fstride)
        fstride *= radix
    ch = max(1, min(CHUNK, lanes))
    work = ctx.work(2 * half + 2 * _SLOTS * ch + extra, True)
    q = vec = None
    if flt:
        from . import f32
        q = keep(ctx, f32.consts(f32.NEG_INF, f32.INF))
        vec = f32.vec
    p = su.words(_P_LEN)  # set from Python at eval: not kept
    return (flt, p, q, w, work, k, 2 * half, 4 * half, half, perm,
            tuple(stages[::-1]), vec, ch, inverse)


def _float_inverse(conv):
    """The inverse tables' conv for float32: C negates the double phase
    (exact), so cos is the same and sin (odd, as the C library's is) has
    its sign bit flipped; twiddle 0's sin(+0.0) is +0.0."""
    def inv(c, s, d):
        vc, vs = conv(c, s, d)
        return vc, vs ^ 0x80000000
    return inv


def _quads(w, base, flt):
    """store(i, c, s) for signal_fft's tables: words (c, s, -c, -s) at
    word base + 4 * i of byte buffer w (int32 values, or float32 bit
    patterns whose negation flips the sign bit)."""
    def store(i, c, s):
        j = 4 * (base + 4 * i)
        for v in (c, s, c ^ 0x80000000 if flt else -c,
                  s ^ 0x80000000 if flt else -s):
            for b in range(4):
                w[j + b] = (v >> 8 * b) & 0xFF
            j += 4
    return store


def _consts(w, k, flt, n):
    """The constants at word k of w (see _ONE ..): float32 also (float) n
    (exact: n <= 131072) at k + _DIVISOR, the inverse's divisor."""
    vals = ((0x3F800000, 0x3F000000, 0xBF800000, 0xBF000000, 0x80000000, 0,
             _f32_bits(n << sf.FRAC_BITS))
            if flt else (0, 0, 0, 0, 0, 0, 1073741823, 715827882, 536870911,
                         429496729))
    for i, v in enumerate(vals):
        for b in range(4):
            w[4 * (k + i) + b] = (v >> 8 * b) & 0xFF


def _float_conv():
    """conv for signal_fft's tables: the float32 bit patterns of (float)
    cos and sin of C's double phase."""
    def conv(c, s, d):
        vc = _f32_far(c)
        vs = _f32_far(s)
        if vc is None or vs is None:  # decided exactly
            dd = d()
            vc = _f32_bits(c - ((s * dd) >> sf.FRAC_BITS))
            vs = _f32_bits(s + ((c * dd) >> sf.FRAC_BITS))
        # the one zero sine, twiddle 0's, is sin(-0.0) = -0.0 (C's phase
        # -2 * pi * 0 / n); no cosine is zero
        return vc, vs if vs else 0x80000000
    return conv


def _f32_far(v):
    """float32 bits of fixed-point v (FRAC_BITS) rounded to nearest when
    v is farther than 2**-47 from a rounding midpoint (C's double phase
    and cos move the value by about 2**-50: the same float then), else
    None (also for 0)."""
    a = -v if v < 0 else v
    sh = sf._bitlen(a) - 24
    if sh < 58:  # |v| below about 2**-22: decide exactly
        return None
    r = a & ((1 << sh) - 1)
    h = 1 << (sh - 1)
    if -(1 << 57) < r - h < 1 << 57:
        return None
    q = (a >> sh) + (1 if r > h else 0)
    if q == 1 << 24:
        q >>= 1
        sh += 1
    ex = sh - sf.FRAC_BITS + 23 + 127
    return (0x80000000 if v < 0 else 0) | (ex << 23) | (q - (1 << 23))


def _f32_bits(v):
    """float32 bits of the double nearest fixed-point v (_P bits), rounded
    to nearest, ties to even (C's (float) of a double; the values here,
    cos and sin, are 0 or normal floats)."""
    m, e = sf._rnd(v, 1 << sf.FRAC_BITS)
    if m == 0:
        return 0
    sign = 0x80000000 if m < 0 else 0
    m = -m if m < 0 else m
    nb = sf._bitlen(m)
    sh = nb - 24
    q, r = m >> sh, m & ((1 << sh) - 1)
    h = 1 << (sh - 1)
    if r > h or (r == h and q & 1):
        q += 1
        if q == 1 << 24:
            q >>= 1
            sh += 1
    ex = e + sh + 23 + 127  # value q * 2**(e + sh), q in [2**23, 2**24)
    return sign | (ex << 23) | (q - (1 << 23))


# ---- eval -------------------------------------------------------------


def _eval(st):
    half = st[_S_HALF]
    length = st[_S_LEN]
    x = st[_S_X]
    y = st[_S_Y]
    d = st[_S_D]
    stages = st[_S_STAGES]
    for r in range(st[_S_ROWS]):
        _gather(x, r * length, length, st[_S_PERM], half, d)
        for radix, m, fs, nblk in stages:
            _stage(st, radix, m, fs, nblk)
        _split(st, y, 2 * r * (half + 1), half)


def _eval_inverse(st):
    """SignalIrfft, every row: kiss_fftri's merge into tmpbuf, kf_work's
    permuted copy into D, the inverse butterflies, the row out."""
    half = st[_S_HALF]
    last = st[_S_LEN]
    x = st[_S_X]
    y = st[_S_Y]
    d = st[_S_D]
    t = st[_S_TMP]
    stages = st[_S_STAGES]
    for r in range(st[_S_ROWS]):
        _merge(st, x, r * last, half)
        _gather(d, t, 2 * half, st[_S_PERM], half, d)
        for radix, m, fs, nblk in stages:
            _stage(st, radix, m, fs, nblk)
        _store(st, y, 2 * half * r, 2 * half)


def _merge(st, x, xo, half):
    """kiss_fftri before its complex FFT: the half + 1 bins of x from
    word xo into half complex values, tmpbuf (D from word st[_S_TMP])."""
    d = st[_S_D]
    t = st[_S_TMP]
    sc = st[_S_SC]
    g = 2 * st[_S_CH]
    pk = sc  # fk
    pn = sc + g  # fnkc
    fe = sc + 2 * g  # fek
    tm = sc + 3 * g  # tmp
    fo = sc + 4 * g  # fok
    # tmpbuf[0] = (f[0].r + f[half].r, f[0].r - f[half].r), C_FIXDIV(., 2)
    _add(st, d, t, 0, x, xo, 0, x, xo + 2 * half, 0, 1, 1)
    _add(st, d, t + 1, 0, x, xo, 0, x, xo + 2 * half, 0, -1, 1)
    _cfix(st, t, 0, 2, 1)
    k0 = 1
    while k0 <= half // 2:
        n = min(st[_S_CH], half // 2 + 1 - k0)
        a = xo + 2 * k0  # freqdata[k], lane stride 2
        b = xo + 2 * (half - k0)  # freqdata[half - k], lane stride -2
        # fk = C_FIXDIV(freqdata[k], 2); fnkc = C_FIXDIV(conj(
        # freqdata[half - k]), 2) (the negation first)
        _fixdiv(st, d, pk, 2, x, a, 2, 2, n)
        _fixdiv(st, d, pk + 1, 2, x, a + 1, 2, 2, n)
        _fixdiv(st, d, pn, 2, x, b, -2, 2, n)
        _negate(st, d, pn + 1, 2, x, b + 1, -2, n)
        _fixdiv(st, d, pn + 1, 2, d, pn + 1, 2, 2, n)
        _cadd(st, d, fe, 2, d, pk, 2, d, pn, 2, 1, n)
        _cadd(st, d, tm, 2, d, pk, 2, d, pn, 2, -1, n)
        _cmul(st, fo, d, tm, 2, st[_S_STW] + 4 * (k0 - 1), 4, n)
        # tmpbuf[k] = fek + fok; tmpbuf[half - k] = fek - fok, its
        # imaginary part then times -1 (k = half / 2: this one wins)
        _cadd(st, d, t + 2 * k0, 2, d, fe, 2, d, fo, 2, 1, n)
        j = t + 2 * (half - k0)
        _cadd(st, d, j, -2, d, fe, 2, d, fo, 2, -1, n)
        _negate(st, d, j + 1, -2, d, j + 1, -2, n)
        k0 += n


def _store(st, y, yo, count):
    """The FFT buffer's count words into y from word yo: int32 as they
    are, float32 each divided by (float) fft_length (IrfftFloatApply's
    output[i] /= fft_length)."""
    if st[_S_FLT]:
        p = st[_S_P]
        p[0] = 0
        p[1] = 1
        p[2] = st[_S_K] + _DIVISOR
        p[3] = 0
        p[4] = yo
        p[5] = count
        st[_S_VDIV](p, st[_S_Q], st[_S_D], st[_S_W], y)
    else:
        _copy(st[_S_D], y, yo, count)


@micropython.viper
def _copy(src, dst, off: int, count: int):
    """dst's words off .. off + count = src's words 0 .. count."""
    ps = ptr32(src)
    pd = ptr32(int(ptr32(dst)) + 4 * off)
    i: int = 0
    while i < count:
        pd[i] = ps[i]
        i += 1


@micropython.viper
def _gather(x, off: int, length: int, perm, half: int, out):
    """out[2i], out[2i + 1] = the row's (zero-padded) words 2 * perm[i]
    and 2 * perm[i] + 1: kiss_fftr's complex view of the padded row,
    permuted as kf_work copies it."""
    px = ptr32(int(ptr32(x)) + 4 * off)
    pp = ptr16(perm)
    po = ptr32(out)
    i: int = 0
    while i < half:
        j: int = 2 * pp[i]
        v: int = 0
        if j < length:
            v = px[j]
        po[2 * i] = v
        v = 0
        if j + 1 < length:
            v = px[j + 1]
        po[2 * i + 1] = v
        i += 1


def _stage(st, radix, m, fs, nblk):
    """One stage of kf_work: nblk blocks of radix * m values, butterflies
    over k < m; the longer of the two loops is the vector."""
    if m >= nblk:
        for b in range(nblk):
            k0 = 0
            while k0 < m:
                n = min(st[_S_CH], m - k0)
                _bfly(st, radix, 2 * (b * radix * m + k0), 2, 2 * m,
                      k0 * fs, fs, m * fs, n)
                k0 += n
    else:
        for k in range(m):
            b0 = 0
            while b0 < nblk:
                n = min(st[_S_CH], nblk - b0)
                _bfly(st, radix, 2 * (b0 * radix * m + k), 2 * radix * m,
                      2 * m, k * fs, 0, m * fs, n)
                b0 += n


def _bfly(st, radix, f, ls, dm, tk, tks, mfs, n):
    """kf_bfly2 / 3 / 4 / 5 on n lanes: Fout[j * m] of lane 0 at word
    f + j * dm of D (real, imaginary), lane stride ls words; its twiddle
    index j * (tk + lane * tks); mfs = m * fstride (the index of epi3 /
    ya)."""
    if radix == 4:
        _bfly4(st, f, ls, dm, tk, tks, n)
    elif radix == 2:
        _bfly2(st, f, ls, dm, tk, tks, n)
    elif radix == 3:
        _bfly3(st, f, ls, dm, tk, tks, mfs, n)
    else:
        _bfly5(st, f, ls, dm, tk, tks, mfs, n)


# Primitives: ob, C, A, X, Y are data buffers (D or y), with a word offset
# and a word stride each; bo, bs: a weight in W (its negation at bo + 2).


def _acc(st, ob, oo, os, C, co, cs, A, ao, as_, bo, bs, sg, n):
    """ob = C + sg * S_MUL(A, W[bo]): float32 fl(c + fl(a * (sg * b))),
    int32 c +- sround(a * b)."""
    p = st[_S_P]
    p[0] = ao
    p[1] = as_
    p[3] = bs
    p[4] = co
    p[5] = cs
    p[6] = oo
    p[7] = n
    p[8] = os
    if st[_S_FLT]:
        p[2] = bo + 2 if sg < 0 else bo
        st[_S_VEC](p, st[_S_Q], A, st[_S_W], C, ob)
    else:
        w = st[_S_W]
        p[2] = bo
        p[9] = p[11] = st[_S_K] + _NZ
        p[10] = p[12] = 0
        p[13] = 1 if sg < 0 else 0
        p[14] = 0
        _engine(p, A, w, C, w, w, ob)


def _dot(st, ob, oo, os, A, ao, as_, bo, bs, E, eo, es, fo, fs, n):
    """ob = A * W[bo] + E * W[fo] (one part of C_MUL): float32
    fl(fl(a * b) + fl(e * f)), int32 sround(a * b + e * f)."""
    p = st[_S_P]
    w = st[_S_W]
    p[0] = ao
    p[1] = as_
    p[2] = bo
    p[3] = bs
    p[4] = st[_S_K] + _NZ
    p[5] = 0
    p[6] = oo
    p[7] = n
    p[8] = os
    if st[_S_FLT]:
        q = st[_S_Q]
        st[_S_VEC](p, q, A, w, w, ob)
        p[0] = eo
        p[1] = es
        p[2] = fo
        p[3] = fs
        p[4] = oo
        p[5] = os
        st[_S_VEC](p, q, E, w, ob, ob)
    else:
        p[9] = eo
        p[10] = es
        p[11] = fo
        p[12] = fs
        p[13] = 0
        p[14] = 0
        _engine(p, A, w, w, E, w, ob)


def _add(st, ob, oo, os, X, xo, xs, Y, yo, ys, sg, n):
    """ob = X + sg * Y (C_ADD / C_SUB parts)."""
    p = st[_S_P]
    p[0] = yo
    p[1] = ys
    p[3] = 0
    p[4] = xo
    p[5] = xs
    p[6] = oo
    p[7] = n
    p[8] = os
    if st[_S_FLT]:  # fl(x + fl(y * +-1))
        p[2] = st[_S_K] + (2 if sg < 0 else 0)
        st[_S_VEC](p, st[_S_Q], Y, st[_S_W], X, ob)
    else:
        p[13] = 1 if sg < 0 else 0
        p[14] = 1
        _engine(p, Y, X, X, Y, X, ob)


def _half(st, ob, oo, os, X, xo, xs, C, co, cs, sg, n):
    """ob = C + sg * HALF_OF(X): float32 fl(c + fl(x * (sg * 0.5))),
    int32 c +- (x >> 1)."""
    p = st[_S_P]
    p[0] = xo
    p[1] = xs
    p[3] = 0
    p[4] = co
    p[5] = cs
    p[6] = oo
    p[7] = n
    p[8] = os
    if st[_S_FLT]:
        p[2] = st[_S_K] + _HALF + (2 if sg < 0 else 0)
        st[_S_VEC](p, st[_S_Q], X, st[_S_W], C, ob)
    else:
        p[13] = 1 if sg < 0 else 0
        p[14] = 2
        _engine(p, X, X, C, X, X, ob)


def _fixdiv(st, ob, oo, os, X, xo, xs, radix, n):
    """ob = C_FIXDIV(X, radix): int32 sround(x * ((2**31 - 1) // radix));
    float32 a copy (fl(-0.0 + fl(x * 1)), the value itself)."""
    k = st[_S_K]
    w = st[_S_W]
    if st[_S_FLT]:
        if ob is not X or oo != xo or os != xs:
            _acc(st, ob, oo, os, w, k + _NZ, 0, X, xo, xs, k + _ONE, 0, 1, n)
    else:
        _acc(st, ob, oo, os, w, k + _NZ, 0, X, xo, xs, k + 4 + radix, 0, 1,
             n)


def _negate(st, ob, oo, os, X, xo, xs, n):
    """ob = -X: C's unary minus (float32: the sign bit flipped, NaN's
    too; int32: 0 - x, wrapped)."""
    p = st[_S_P]
    if st[_S_FLT]:
        p[0] = xo
        p[1] = xs
        p[6] = oo
        p[7] = n
        p[8] = os
        _flip(p, X, ob)
    else:
        k = st[_S_K] + _NZ
        w = st[_S_W]
        _add(st, ob, oo, os, w, k, 0, X, xo, xs, -1, n)


def _nacc(st, ob, oo, os, A, ao, as_, bo, bs, n):
    """ob = -S_MUL(A, W[bo]) (the product, then C's unary minus)."""
    if st[_S_FLT]:
        w = st[_S_W]
        _acc(st, ob, oo, os, w, st[_S_K] + _NZ, 0, A, ao, as_, bo, bs, 1, n)
        _negate(st, ob, oo, os, ob, oo, os, n)
    else:
        w = st[_S_W]
        _acc(st, ob, oo, os, w, st[_S_K] + _NZ, 0, A, ao, as_, bo, bs, -1,
             n)


@micropython.viper
def _flip(p, x, out):
    """out[i] = x[i] with its sign bit flipped (p: 0 x offset, 1 x
    stride, 6 output offset, 7 count, 8 output stride, in words)."""
    pp = ptr32(p)
    px: int = int(ptr32(x)) + pp[0] * 4
    sx: int = int(_stride(p, 1))
    po: int = int(ptr32(out)) + pp[6] * 4
    so: int = int(_stride(p, 8))
    if so == 0:
        so = 4
    n: int = pp[7]
    one: int = 1
    top: int = one << 31  # no folding: > small int
    while n > 0:
        n -= 1
        ptr32(po)[0] = ptr32(px)[0] ^ top
        px += sx
        po += so


def _cadd(st, ob, oo, os, X, xo, xs, Y, yo, ys, sg, n):
    _add(st, ob, oo, os, X, xo, xs, Y, yo, ys, sg, n)
    _add(st, ob, oo + 1, os, X, xo + 1, xs, Y, yo + 1, ys, sg, n)


def _cfix(st, o, os, radix, n):
    """C_FIXDIV of a complex vector of D in place (int32 only)."""
    if not st[_S_FLT]:
        d = st[_S_D]
        _fixdiv(st, d, o, os, d, o, os, radix, n)
        _fixdiv(st, d, o + 1, os, d, o + 1, os, radix, n)


def _cmul(st, so, F, fo, fs, bo, bs, n):
    """C_MUL: scratch complex vector at so (lane stride 2) = F * W[bo]
    (a (cos, sin, -cos, -sin) twiddle, lane stride bs)."""
    d = st[_S_D]
    # r = F.r * wr - F.i * wi,  i = F.r * wi + F.i * wr
    _dot(st, d, so, 2, F, fo, fs, bo, bs, F, fo + 1, fs, bo + 3, bs, n)
    _dot(st, d, so + 1, 2, F, fo, fs, bo + 1, bs, F, fo + 1, fs, bo, bs,
         n)


def _bfly2(st, f, ls, dm, tk, tks, n):
    d = st[_S_D]
    t = st[_S_SC]
    f1 = f + dm
    _cfix(st, f, ls, 2, n)
    _cfix(st, f1, ls, 2, n)
    _cmul(st, t, d, f1, ls, 4 * tk, 4 * tks, n)
    _cadd(st, d, f1, ls, d, f, ls, d, t, 2, -1, n)
    _cadd(st, d, f, ls, d, f, ls, d, t, 2, 1, n)


def _bfly4(st, f, ls, dm, tk, tks, n):
    d = st[_S_D]
    sc = st[_S_SC]
    g = 2 * st[_S_CH]
    s0 = sc
    s1 = sc + g
    s2 = sc + 2 * g
    s3 = sc + 3 * g
    s4 = sc + 4 * g
    s5 = sc + 5 * g
    f1 = f + dm
    f2 = f + 2 * dm
    f3 = f + 3 * dm
    _cfix(st, f, ls, 4, n)
    _cfix(st, f1, ls, 4, n)
    _cfix(st, f2, ls, 4, n)
    _cfix(st, f3, ls, 4, n)
    _cmul(st, s0, d, f1, ls, 4 * tk, 4 * tks, n)
    _cmul(st, s1, d, f2, ls, 8 * tk, 8 * tks, n)
    _cmul(st, s2, d, f3, ls, 12 * tk, 12 * tks, n)
    _cadd(st, d, s5, 2, d, f, ls, d, s1, 2, -1, n)
    _cadd(st, d, f, ls, d, f, ls, d, s1, 2, 1, n)
    _cadd(st, d, s3, 2, d, s0, 2, d, s2, 2, 1, n)
    _cadd(st, d, s4, 2, d, s0, 2, d, s2, 2, -1, n)
    _cadd(st, d, f2, ls, d, f, ls, d, s3, 2, -1, n)
    _cadd(st, d, f, ls, d, f, ls, d, s3, 2, 1, n)
    # forward: Fout[m] = (s5.r + s4.i, s5.i - s4.r), Fout[3m] = (s5.r -
    # s4.i, s5.i + s4.r); kiss_fft's inverse branch swaps the signs
    sg = -1 if st[_S_INV] else 1
    _add(st, d, f1, ls, d, s5, 2, d, s4 + 1, 2, sg, n)
    _add(st, d, f1 + 1, ls, d, s5 + 1, 2, d, s4, 2, -sg, n)
    _add(st, d, f3, ls, d, s5, 2, d, s4 + 1, 2, -sg, n)
    _add(st, d, f3 + 1, ls, d, s5 + 1, 2, d, s4, 2, sg, n)


def _bfly3(st, f, ls, dm, tk, tks, mfs, n):
    d = st[_S_D]
    w = st[_S_W]
    nz = st[_S_K] + _NZ
    sc = st[_S_SC]
    g = 2 * st[_S_CH]
    s0 = sc
    s1 = sc + g
    s2 = sc + 2 * g
    s3 = sc + 3 * g
    f1 = f + dm
    f2 = f + 2 * dm
    e = 4 * mfs + 1  # epi3.i
    _cfix(st, f, ls, 3, n)
    _cfix(st, f1, ls, 3, n)
    _cfix(st, f2, ls, 3, n)
    _cmul(st, s1, d, f1, ls, 4 * tk, 4 * tks, n)
    _cmul(st, s2, d, f2, ls, 8 * tk, 8 * tks, n)
    _cadd(st, d, s3, 2, d, s1, 2, d, s2, 2, 1, n)
    _cadd(st, d, s0, 2, d, s1, 2, d, s2, 2, -1, n)
    _half(st, d, f1, ls, d, s3, 2, d, f, ls, -1, n)
    _half(st, d, f1 + 1, ls, d, s3 + 1, 2, d, f + 1, ls, -1, n)
    _acc(st, d, s0, 2, w, nz, 0, d, s0, 2, e, 0, 1, n)
    _acc(st, d, s0 + 1, 2, w, nz, 0, d, s0 + 1, 2, e, 0, 1, n)
    _cadd(st, d, f, ls, d, f, ls, d, s3, 2, 1, n)
    _add(st, d, f2, ls, d, f1, ls, d, s0 + 1, 2, 1, n)
    _add(st, d, f2 + 1, ls, d, f1 + 1, ls, d, s0, 2, -1, n)
    _add(st, d, f1, ls, d, f1, ls, d, s0 + 1, 2, -1, n)
    _add(st, d, f1 + 1, ls, d, f1 + 1, ls, d, s0, 2, 1, n)


def _bfly5(st, f, ls, dm, tk, tks, mfs, n):
    d = st[_S_D]
    w = st[_S_W]
    nz = st[_S_K] + _NZ
    sc = st[_S_SC]
    g = 2 * st[_S_CH]
    # scratch: a1..a4 (s1..s4, then s5, s6, s11, s12), s7, s10, s8, s9
    a1 = sc
    a2 = sc + g
    a3 = sc + 2 * g
    a4 = sc + 3 * g
    s7 = sc + 4 * g
    s10 = sc + 5 * g
    s8 = sc + 6 * g
    s9 = sc + 7 * g
    ya = 4 * mfs  # twiddles[fstride * m]
    yb = 8 * mfs  # twiddles[fstride * 2 * m]
    for j in range(5):
        _cfix(st, f + j * dm, ls, 5, n)
    for j in range(1, 5):  # s1 .. s4 in a1 .. a4
        _cmul(st, sc + (j - 1) * g, d, f + j * dm, ls, 4 * j * tk,
              4 * j * tks, n)
    _cadd(st, d, s7, 2, d, a1, 2, d, a4, 2, 1, n)
    _cadd(st, d, s10, 2, d, a1, 2, d, a4, 2, -1, n)
    _cadd(st, d, s8, 2, d, a2, 2, d, a3, 2, 1, n)
    _cadd(st, d, s9, 2, d, a2, 2, d, a3, 2, -1, n)
    for c in range(2):  # s5 = F0 + s7 * ya.r + s8 * yb.r (a1)
        _acc(st, d, a1 + c, 2, d, f + c, ls, d, s7 + c, 2, ya, 0, 1, n)
        _acc(st, d, a1 + c, 2, d, a1 + c, 2, d, s8 + c, 2, yb, 0, 1, n)
    # s6 (a2): r = s10.i * ya.i + s9.i * yb.i,
    #          i = -(s10.r * ya.i) - s9.r * yb.i
    _acc(st, d, a2, 2, w, nz, 0, d, s10 + 1, 2, ya + 1, 0, 1, n)
    _acc(st, d, a2, 2, d, a2, 2, d, s9 + 1, 2, yb + 1, 0, 1, n)
    _nacc(st, d, a2 + 1, 2, d, s10, 2, ya + 1, 0, n)
    _acc(st, d, a2 + 1, 2, d, a2 + 1, 2, d, s9, 2, yb + 1, 0, -1, n)
    for c in range(2):  # s11 = F0 + s7 * yb.r + s8 * ya.r (a3)
        _acc(st, d, a3 + c, 2, d, f + c, ls, d, s7 + c, 2, yb, 0, 1, n)
        _acc(st, d, a3 + c, 2, d, a3 + c, 2, d, s8 + c, 2, ya, 0, 1, n)
    # s12 (a4): r = -(s10.i * yb.i) + s9.i * ya.i,
    #           i = s10.r * yb.i - s9.r * ya.i
    _nacc(st, d, a4, 2, d, s10 + 1, 2, yb + 1, 0, n)
    _acc(st, d, a4, 2, d, a4, 2, d, s9 + 1, 2, ya + 1, 0, 1, n)
    _acc(st, d, a4 + 1, 2, w, nz, 0, d, s10, 2, yb + 1, 0, 1, n)
    _acc(st, d, a4 + 1, 2, d, a4 + 1, 2, d, s9, 2, ya + 1, 0, -1, n)
    _cadd(st, d, f + dm, ls, d, a1, 2, d, a2, 2, -1, n)
    _cadd(st, d, f + 4 * dm, ls, d, a1, 2, d, a2, 2, 1, n)
    _cadd(st, d, f + 2 * dm, ls, d, a3, 2, d, a4, 2, 1, n)
    _cadd(st, d, f + 3 * dm, ls, d, a3, 2, d, a4, 2, -1, n)
    # Fout0 += s7 + s8 (the sum first)
    _cadd(st, d, s7, 2, d, s7, 2, d, s8, 2, 1, n)
    _cadd(st, d, f, ls, d, f, ls, d, s7, 2, 1, n)


def _split(st, y, yo, half):
    """kiss_fftr after its complex FFT: the half + 1 bins of the real
    signal into y from word yo, from the FFT buffer (D, words 0 ..)."""
    d = st[_S_D]
    w = st[_S_W]
    k = st[_S_K]
    sc = st[_S_SC]
    g = 2 * st[_S_CH]
    pk = sc
    pn = sc + g
    f1 = sc + 2 * g
    f2 = sc + 3 * g
    tw = sc + 4 * g
    sm = sc + 5 * g
    # tdc = C_FIXDIV(tmpbuf[0], 2); freqdata[0] = (r + i, 0),
    # freqdata[half] = (r - i, 0)
    _cfix(st, 0, 0, 2, 1)
    _add(st, y, yo, 0, d, 0, 0, d, 1, 0, 1, 1)
    _add(st, y, yo + 2 * half, 0, d, 0, 0, d, 1, 0, -1, 1)
    _add(st, y, yo + 1, 0, w, k + _ZERO, 0, w, k + _ZERO, 0, 1, 1)
    _add(st, y, yo + 2 * half + 1, 0, w, k + _ZERO, 0, w, k + _ZERO, 0, 1,
         1)
    k0 = 1
    while k0 <= half // 2:
        n = min(st[_S_CH], half // 2 + 1 - k0)
        a = 2 * k0  # tmpbuf[k], lane stride 2
        b = 2 * (half - k0)  # tmpbuf[half - k], lane stride -2
        # fpk = C_FIXDIV(tmpbuf[k], 2); fpnk = C_FIXDIV(conj(tmpbuf[half
        # - k]), 2)
        _fixdiv(st, d, pk, 2, d, a, 2, 2, n)
        _fixdiv(st, d, pk + 1, 2, d, a + 1, 2, 2, n)
        _fixdiv(st, d, pn, 2, d, b, -2, 2, n)
        _negate(st, d, pn + 1, 2, d, b + 1, -2, n)
        _fixdiv(st, d, pn + 1, 2, d, pn + 1, 2, 2, n)
        _cadd(st, d, f1, 2, d, pk, 2, d, pn, 2, 1, n)
        _cadd(st, d, f2, 2, d, pk, 2, d, pn, 2, -1, n)
        t = st[_S_STW] + 4 * (k0 - 1)
        _cmul(st, tw, d, f2, 2, t, 4, n)
        nz = k + _NZ
        # freqdata[k] = HALF_OF(f1k + tw)
        _cadd(st, d, sm, 2, d, f1, 2, d, tw, 2, 1, n)
        _half(st, y, yo + a, 2, d, sm, 2, w, nz, 0, 1, n)
        _half(st, y, yo + a + 1, 2, d, sm + 1, 2, w, nz, 0, 1, n)
        # freqdata[half - k] = HALF_OF(f1k.r - tw.r, tw.i - f1k.i)
        _add(st, d, sm, 2, d, f1, 2, d, tw, 2, -1, n)
        _add(st, d, sm + 1, 2, d, tw + 1, 2, d, f1 + 1, 2, -1, n)
        _half(st, y, yo + b, -2, d, sm, 2, w, nz, 0, 1, n)
        _half(st, y, yo + b + 1, -2, d, sm + 1, 2, w, nz, 0, 1, n)
        k0 += n


@micropython.viper
def _stride(p, k: int) -> int:
    """4 * p[k], sign-extended (a stride may be negative; ptr32 loads
    zero-extend on 64-bit viper): bytes."""
    v: int = ptr32(p)[k]
    return ((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 18 \
        | ((v & 0xFFFF) << 2)


@micropython.viper
def _engine(p, a_, b_, c_, d_, e_, out):
    """int32 vector operation, p as _P_LEN describes (offsets and strides
    in words, the output stride 0 meaning 1), for i < count:
    mode 0: out = c +- sround(a * b + d * e), sround(x) = (x + 2**30)
            >> 31 of the exact int64 sum (kiss_fft's C_MUL, S_MUL,
            C_FIXDIV with FIXED_POINT 32);
    mode 1: out = c +- a;   mode 2: out = c +- (a >> 1) (HALF_OF);
    - when sign (p[13]) is 1; every result wrapped to int32 as it is
    stored. The products are exact from 16-bit limbs: the same bits
    with 32- and 64-bit viper ints (the two copies are marked q31mul,
    tests/test_copies.py)."""
    pp = ptr32(p)
    mode: int = pp[14]
    neg: int = pp[13]
    pa: int = int(ptr32(a_)) + pp[0] * 4
    sa: int = int(_stride(p, 1))
    pb: int = int(ptr32(b_)) + pp[2] * 4
    sb: int = int(_stride(p, 3))
    pc: int = int(ptr32(c_)) + pp[4] * 4
    sc: int = int(_stride(p, 5))
    po: int = int(ptr32(out)) + pp[6] * 4
    n: int = pp[7]
    so: int = int(_stride(p, 8))
    if so == 0:
        so = 4
    pd: int = int(ptr32(d_)) + pp[9] * 4
    sd: int = int(_stride(p, 10))
    pe: int = int(ptr32(e_)) + pp[11] * 4
    se: int = int(_stride(p, 12))
    while n > 0:
        n -= 1
        v: int = ptr32(pa)[0]  # sign-extended (ptr32 zero-extends on
        a: int = (((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16) \
            | (v & 0xFFFF)    # 64-bit viper)
        v = ptr32(pc)[0]
        c: int = (((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16) \
            | (v & 0xFFFF)
        pa += sa
        pc += sc
        r: int = a
        if mode == 0:
            v = ptr32(pb)[0]
            b: int = (((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16) \
                | (v & 0xFFFF)
            pb += sb
            # a * b = ah * bh * 2**32 + (ah * bl + al * bh) * 2**16
            #         + al * bl; H counts 2**31 (its wrap only adds), T
            #         2**16 (from 2**30, the rounding), R what is left
            H: int = 0
            T: int = 0x4000
            R: int = 0
            # >>> q31mul
            ah: int = a >> 16
            al: int = a & 0xFFFF
            bh: int = b >> 16
            bl: int = b & 0xFFFF
            H += 2 * (ah * bh)
            m: int = ah * bl  # |m| < 2**31
            H += m >> 15
            T += m & 0x7FFF
            m = al * bh
            H += m >> 15
            T += m & 0x7FFF
            u: int = al * (bl >> 8)  # al * bl = u * 2**8 + w, < 2**24
            w: int = al * (bl & 0xFF)
            u += w >> 8
            T += u >> 8
            R += ((u & 0xFF) << 8) | (w & 0xFF)
            # <<< q31mul
            # the same for d * e
            v = ptr32(pd)[0]
            a = (((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16) \
                | (v & 0xFFFF)
            v = ptr32(pe)[0]
            b = (((((v >> 16) & 0xFFFF) ^ 0x8000) - 0x8000) << 16) \
                | (v & 0xFFFF)
            pd += sd
            pe += se
            # >>> q31mul
            ah = a >> 16
            al = a & 0xFFFF
            bh = b >> 16
            bl = b & 0xFFFF
            H += 2 * (ah * bh)
            m = ah * bl
            H += m >> 15
            T += m & 0x7FFF
            m = al * bh
            H += m >> 15
            T += m & 0x7FFF
            u = al * (bl >> 8)
            w = al * (bl & 0xFF)
            u += w >> 8
            T += u >> 8
            R += ((u & 0xFF) << 8) | (w & 0xFF)
            # <<< q31mul
            T += R >> 16
            r = H + (T >> 15)
        elif mode == 2:
            r = a >> 1
        if neg:
            r = c - r
        else:
            r = c + r
        ptr32(po)[0] = r
        po += so
