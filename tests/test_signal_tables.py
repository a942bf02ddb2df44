"""The tables SignalRfft computes at prepare (kernels/signal_fft.py and,
for int32 and float32, signal_fft32.py), in CPython: its integer
emulation of kiss_fft_alloc's double-precision twiddles against this
host's C library (the same computation TFLM's build does), for every FFT
size the kernel takes up to 1,024 points and a few larger ones;
kf_factor's radix order; the input permutation against kf_work's
recursion written out."""

import math
import struct
import sys

import pytest

from conftest import PKG

sys.path.insert(0, PKG)
from tflm.kernels import signal_fft  # noqa: E402
from tflm.kernels import signal_fft32  # noqa: E402

# complex FFT sizes (fft_length / 2) whose factors are 2, 3, 4 and 5
SIZES = [n for n in range(2, 513)
         if set(signal_fft._factor(n)[::2]) <= {2, 3, 4, 5}] + \
    [640, 768, 1000, 1024, 2048]


def _q15(v):
    return math.floor(.5 + 32767 * v)


def _tables(n):
    from array import array
    tw = bytearray(4 * n)
    stw = bytearray(4 * (n // 2))
    signal_fft._twiddles(tw, n)
    signal_fft._super_twiddles(stw, n)
    return array("h", tw), array("h", stw)  # little-endian host


@pytest.mark.parametrize("chunk", range(4))
def test_twiddles_match_the_c_library(chunk):
    bad = []
    for n in SIZES[chunk::4]:
        tw, stw = _tables(n)
        for i in range(n):
            phase = -2 * math.pi * i / n  # kiss_fft_alloc, forward
            want = (_q15(math.cos(phase)), _q15(math.sin(phase)))
            if (tw[2 * i], tw[2 * i + 1]) != want:
                bad.append(("twiddle", n, i, tw[2 * i:2 * i + 2], want))
        for i in range(n // 2):
            phase = -3.14159265358979323846264338327 * ((i + 1) / n + .5)
            want = (_q15(math.cos(phase)), _q15(math.sin(phase)))
            if (stw[2 * i], stw[2 * i + 1]) != want:
                bad.append(("super", n, i, stw[2 * i:2 * i + 2], want))
    assert not bad, bad[:10]


def _f32(v):
    """(float) of a double: its float32 bit pattern."""
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _wide_conv(flt, inverse):
    if flt:
        conv = signal_fft32._float_conv()
        return signal_fft32._float_inverse(conv) if inverse else conv
    conv = signal_fft.fixed_conv(2147483647,
                                 (1 << signal_fft.FRAC_BITS) >> 16)
    return signal_fft.inverse_conv(conv) if inverse else conv


def _wide_tables(n, flt, inverse=False):
    """signal_fft32's twiddles and super twiddles: [(cos, sin, -cos,
    -sin) words] (int32 values, float32 patterns); inverse: SignalIrfft's
    (kiss_fft_alloc and kiss_fftr_alloc with inverse set)."""
    w = bytearray(16 * (n + n // 2))
    signal_fft.twiddle_table(n, _wide_conv(flt, inverse),
                             signal_fft32._quads(w, 0, flt))
    signal_fft.super_twiddle_table(n, _wide_conv(flt, inverse),
                                   signal_fft32._quads(w, 4 * n, flt))
    vals = struct.unpack("<%d%s" % (len(w) // 4, "I" if flt else "i"), w)
    return [vals[k:k + 4] for k in range(0, len(vals), 4)]


@pytest.mark.parametrize("inverse", [False, True], ids=["fwd", "inv"])
@pytest.mark.parametrize("flt", [False, True], ids=["int32", "float32"])
def test_wide_twiddles_match_the_c_library(flt, inverse):
    """FIXED_POINT 32: floor(.5 + 2147483647 * cos(phase)) in doubles;
    float: (float) cos(phase); each word's negation beside it. inverse:
    the phase times -1 (SignalIrfft's tables; sin(+0.0) is +0.0)."""
    sg = -1 if inverse else 1
    def want(phase):
        c, s = math.cos(phase), math.sin(phase)
        if flt:
            c, s = _f32(c), _f32(s)
            return c, s, c ^ 0x80000000, s ^ 0x80000000
        c = math.floor(.5 + 2147483647 * c)
        s = math.floor(.5 + 2147483647 * s)
        return c, s, -c, -s
    bad = []
    for n in SIZES[::3] + [6, 12, 24, 480]:
        quads = _wide_tables(n, flt, inverse)
        for i in range(n):
            w = want(sg * (-2 * math.pi * i / n))
            if tuple(quads[i]) != w:
                bad.append(("twiddle", n, i, quads[i], w))
        for i in range(n // 2):
            w = want(sg * (-3.14159265358979323846264338327 * (
                (i + 1) / n + .5)))
            if tuple(quads[n + i]) != w:
                bad.append(("super", n, i, quads[n + i], w))
    assert not bad, bad[:10]


def test_twiddle_ties_round_as_doubles_do():
    """cos(2*pi/6) is 1/2: 32767 * cos + .5 lands on an integer exactly,
    so the last bit of the double phase decides floor(); the emulation
    must follow the doubles, not the exact value."""
    for n in (6, 12, 24, 48, 96, 120, 240, 480):
        tw, _ = _tables(n)
        for i in range(n):
            phase = -2 * math.pi * i / n
            assert (tw[2 * i], tw[2 * i + 1]) == (
                _q15(math.cos(phase)), _q15(math.sin(phase))), (n, i)


def _kf_factor(n):
    """kf_factor as kiss_fft.c writes it (double floor_sqrt)."""
    out, p = [], 4
    floor_sqrt = math.floor(math.sqrt(n))
    while True:
        while n % p:
            p = {4: 2, 2: 3}.get(p, p + 2)
            if p > floor_sqrt:
                p = n
        n //= p
        out += [p, n]
        if n <= 1:
            return out


def test_factor_matches_kf_factor():
    for n in range(2, 5000):
        assert signal_fft._factor(n) == _kf_factor(n), n


def test_permutation_is_kf_works_copy_order():
    """kf_work copies f[k * fstride] at its deepest level; with all
    stages done in place, output j holds input perm[j]."""
    from array import array
    for n in (4, 8, 12, 16, 20, 60, 64, 120, 256, 4000, 65536):
        factors = signal_fft._factor(n)
        raw = bytearray(2 * n)
        signal_fft._permutation(raw, factors)
        perm = array("H", raw)
        assert sorted(perm) == list(range(n)), n

        want = [None] * n

        def work(out, f, fstride, fac):
            p, m = factors[fac], factors[fac + 1]
            if m == 1:
                for k in range(p):
                    want[out + k] = f + k * fstride
            else:
                for k in range(p):
                    work(out + k * m, f + k * fstride, fstride * p, fac + 2)
        work(0, 0, 1, 0)
        assert list(perm) == want, n
