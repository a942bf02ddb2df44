"""SignalWindow, SignalFftAutoScale and SignalEnergy (TFLM Signal library
custom ops, int16 audio front-end).

Follow signal/micro/kernels/window.cc with signal/src/window.cc,
fft_auto_scale_common.cc / fft_auto_scale_kernel.cc with
signal/src/fft_auto_scale.cc, max_abs.cc and msb_32.cc, and energy.cc
with signal/src/energy.cc:

    SignalWindow (options: shift)        input int16 [..., N] (any rank
        >= 1), weights int16 [N], output int16 as the input: per row,
        out[i] = saturate_int16((in[i] * w[i]) >> shift)
    SignalFftAutoScale                   input int16 [N], outputs int16
        [N] and int32 scalar scale_bits: scale_bits = max(0, 15 - bits),
        bits = MostSignificantBit32(MaxAbs16(input)); out[i] =
        (int16)(in[i] * 2**scale_bits)
    SignalEnergy (options: end_index, start_index)   input int16 [2K]
        (K complex values, real then imaginary), output uint32 [K]:
        out[i] = re * re + im * im (mod 2**32) for start <= i < end;
        the other outputs are left as they are, as TFLM leaves them.

Bit-exact with TFLM's x86-64 build, including what C leaves undefined
there: a shift count is taken modulo 32 (x86's sar), MaxAbs16 wraps
-(-32768) to -32768 in its int16 running maximum (so an input holding
-32768 can end with a smaller maximum, as TFLM's does), and
MostSignificantBit32(0) is 32 (__builtin_clz branch). Where TFLM would
read or write outside a tensor (a window that does not divide the input,
an output smaller than the input, energy indexes outside the spectrum)
this is a PrepareError instead, and so is an output larger than what TFLM
writes (the rest would hold whatever the arena held; SignalEnergy's
partial range is the exception, as the audio preprocessor uses it).
"""

import micropython
from micropython import const

from ..errors import PrepareError
from . import signal_util as su

_INT16 = const(7)
_INT32 = const(2)
_UINT32 = const(15)


def prepare(op, ins, outs, ctx):
    """Check a SignalWindow / SignalFftAutoScale / SignalEnergy operator
    (op.name) and bind its eval. Shapes, types and options as in the
    module doc; raises PrepareError otherwise."""
    name = op.name
    if name == "SignalWindow":
        return _prepare_window(op, ins, outs, ctx)
    if name == "SignalFftAutoScale":
        su.io(op, ins, outs, 1, 2)
        x, (y, bits) = ins[0], outs
        su.want(op, x, _INT16, 1)
        su.want(op, y, _INT16, 1)
        su.want(op, bits, _INT32, 0)
        _fits(op, y, x)  # TFLM reads as many inputs as there are outputs
        return _eval_auto_scale, (su.aligned(x, ctx), y.data, bits.data,
                                  y.size)
    if name != "SignalEnergy":
        raise PrepareError("%s: no Signal kernel here" % op.label())
    su.io(op, ins, outs, 1, 1)
    x, y = ins[0], outs[0]
    su.want(op, x, _INT16, 1)
    su.want(op, y, _UINT32, 1)
    end, start = su.options(op, 2)
    if start < end and (start < 0 or end > x.size // 2 or end > y.size):
        raise PrepareError("%s: energy of bins [%d, %d) of a %d-bin "
                           "spectrum into %d outputs" % (
                               op.label(), start, end, x.size // 2, y.size))
    return _eval_energy, (su.aligned(x, ctx), y.data, start, end)


def _fits(op, x, y):
    """TFLM writes the first x.size elements of y: fewer would be written
    past its end, more would stay whatever the arena held."""
    if y.size != x.size:
        raise PrepareError("%s: %s has %d elements, %s has %d" % (
            op.label(), x.label(), x.size, y.label(), y.size))


def _prepare_window(op, ins, outs, ctx):
    from .conv_util import keep
    su.io(op, ins, outs, 2, 1)
    (x, w), y = ins, outs[0]
    su.want(op, x, _INT16, -2)
    su.want(op, w, _INT16, 1)
    su.want(op, y, _INT16, len(x.shape))
    _fits(op, x, y)
    if w.size < 1 or x.size % w.size:
        raise PrepareError("%s: %d weights do not divide the %d inputs" % (
            op.label(), w.size, x.size))
    shift = su.options(op, 1)[0] & 31
    p = su.words(3)
    p[0], p[1], p[2] = x.size, w.size, shift
    return _eval_window, (su.aligned(x, ctx), su.aligned(w, ctx), y.data,
                          keep(ctx, p))


# The evals' states: every view in them is only cast to a pointer by the
# viper loops; a compiled model stores there the address of its view of
# the arena or the model, an int, no object (compiled.py T_ADDR).
ADDRESSES = (0, 1, 2, 3)


def _eval_window(st):
    _window(st[0], st[1], st[2], st[3])


@micropython.viper
def _window(x, w, y, p):
    """y[i] = saturate_int16((x[i] * w[i % N]) >> shift), p = (size, N,
    shift) (signal/src/window.cc ApplyWindow)."""
    px = ptr16(x)
    pw = ptr16(w)
    py = ptr16(y)
    q = ptr32(p)
    n: int = q[0]
    nw: int = q[1]
    sh: int = q[2]
    i: int = 0
    k: int = 0
    while i < n:
        a: int = (px[i] ^ 0x8000) - 0x8000
        b: int = (pw[k] ^ 0x8000) - 0x8000
        r: int = (a * b) >> sh
        if r < -32768:
            r = -32768
        elif r > 32767:
            r = 32767
        py[i] = r
        i += 1
        k += 1
        if k == nw:
            k = 0


def _eval_auto_scale(st):
    _auto_scale(st[0], st[1], st[2], st[3])


@micropython.viper
def _auto_scale(x, y, bits, n: int):
    """FftAutoScale: the scale_bits that MaxAbs16 and MostSignificantBit32
    give, then y[i] = (int16)(x[i] << scale_bits)."""
    px = ptr16(x)
    py = ptr16(y)
    m: int = 0  # MaxAbs16's int16 running maximum
    i: int = 0
    while i < n:
        v: int = (px[i] ^ 0x8000) - 0x8000
        if v > m:
            m = v
        elif 0 - v > m:
            m = ((0 - v) ^ 0x8000) - 0x8000  # int16: 32768 -> -32768
        i += 1
    msb: int = 32  # MostSignificantBit32 of (uint32)m: 32 for 0 or < 0
    if m > 0:
        msb = 0
        while m:
            m = m >> 1
            msb += 1
    s: int = 15 - msb
    if s < 0:
        s = 0
    ptr32(bits)[0] = s
    i = 0
    while i < n:
        py[i] = px[i] << s  # the low 16 bits: (int16)(x * 2**s)
        i += 1


def _eval_energy(st):
    _energy(st[0], st[1], st[2], st[3])


@micropython.viper
def _energy(x, y, start: int, end: int):
    """y[i] = re * re + im * im mod 2**32 for start <= i < end
    (signal/src/energy.cc SpectrumToEnergy)."""
    px = ptr16(x)
    py = ptr32(y)
    i: int = start
    while i < end:
        re: int = (px[2 * i] ^ 0x8000) - 0x8000
        im: int = (px[2 * i + 1] ^ 0x8000) - 0x8000
        py[i] = re * re + im * im
        i += 1
