"""QUANTIZE: float32 -> int8, and requantization (int8, uint8, int16).

Follows tensorflow/lite/micro/kernels/quantize.cc, quantize_common.cc,
tensorflow/lite/kernels/internal/reference/quantize.h (AffineQuantize) and
reference/requantize.h (Requantize).

float32 -> int8 (AffineQuantize):
    out = clamp((int32)TfLiteRound(val / (float)scale) + zero_point)
with a float32 division and round-half-away-from-zero. Floats allocate on
MicroPython and boards lack doubles, so eval does no float math at all. The
map from the input's float32 bit pattern to the output is non-decreasing
(in the float order), so prepare finds, with exact integer arithmetic, the
255 thresholds where the output steps up; eval reads each float's bits as
an ordered integer key and binary-searches them (8 comparisons).
Where val / scale rounds outside the int32 range, or is NaN or infinite,
the C conversion is undefined; this reproduces what the TFLM reference
build on x86 (the project's oracle) gives: the conversion yields INT32_MIN,
then INT32_MIN + zero_point wraps, so such inputs give 127 when the zero
point is negative and -128 otherwise.

int8 / uint8 -> int8 / uint8, int8 -> int16, int16 -> int8 / int16 /
int32, int32 -> int8 / int16 (Requantize):
    out = clamp(MultiplyByQuantizedMultiplier(val - in_zp, m, shift) + zp)
(val - in_zp an int32 difference, which wraps for an int32 input)
with QuantizeMultiplier((double)in_scale / (double)out_scale). An 8-bit
input has only 256 values: prepare runs them through
rescale.scale_i32 into a table of output bytes (or int16 pairs) and
eval maps bytes. An int16 or int32 input is requantized in chunks of
_CHUNK values through a work buffer (gather, scale_i32, store). int16 and
int32 values are read and written as bytes (any alignment).
"""

import struct
from array import array

import micropython
from micropython import const

from ..heap import persistent
from ..errors import ModelError, PrepareError
from .rescale import scale_i32, store_i8

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)
_UINT8 = const(3)
_CHUNK = const(128)  # int16 inputs requantized per work-buffer pass

_INF_BITS = const(0x7F800000)
_INT32_BOUND = const(1 << 31)


# --- float32 -> int8 -------------------------------------------------------

def _f32(mag):
    """(m, e) of the float32 with magnitude bits mag (finite)."""
    exp = mag >> 23
    frac = mag & 0x7FFFFF
    if exp == 0:
        return frac, -149
    return frac | 0x800000, exp - 150


def _rounded_quotient(mag, scale):
    """|TfLiteRound(v / scale)| for the float32 v with magnitude bits mag
    (finite) and scale = (m, e) > 0: the exact quotient rounded once to 24
    bits (the float32 division; a quotient in float32's subnormal range is
    below 1/2 and gives 0 either way), then half away from zero."""
    from .. import quant
    vm, ve = _f32(mag)
    if not vm:
        return 0
    m, e = quant.round_bits(vm, scale[0], 24)
    e += ve - scale[1]
    if e >= 0:
        return m << e
    return (m + (1 << (-e - 1))) >> -e


def _overflows(mag, scale):
    """True where (int32) of the rounded quotient is out of range (or the
    input is infinite / NaN)."""
    return mag >= _INF_BITS or _rounded_quotient(mag, scale) >= _INT32_BOUND


def _first_true(pred, lo, hi, guess):
    """Smallest k in [lo, hi] with pred(k), pred non-decreasing on
    [lo, hi) and taken as true at hi. Gallops from guess, then bisects."""
    g = min(max(guess, lo), hi)
    a, b = lo, hi
    step = 1
    if g == hi or pred(g):
        b = g
        while b - step >= a:
            c = b - step
            if not pred(c):
                a = c + 1
                break
            b = c
            step <<= 1
    else:
        a = g + 1
        while a + step - 1 < b:
            c = a + step - 1
            if pred(c):
                b = c
                break
            a = c + 1
            step <<= 1
    while a < b:
        mid = (a + b) // 2
        if pred(mid):
            b = mid
        else:
            a = mid + 1
    return b


def _key_of(x):
    """Ordered integer key of a Python float taken as float32; None if it
    does not fit."""
    try:
        bits = struct.unpack("<I", struct.pack("<f", x))[0]
    except (OverflowError, ValueError):
        return None
    mag = bits & 0x7FFFFFFF
    return -mag if bits >> 31 else mag


def float_thresholds(scale, zero_point, ctx=None):
    """(thresholds, limits) for float32 -> int8 with an int8 zero point.

    Keys: k = bits for a float with sign 0, -(bits & 0x7FFFFFFF) else.
    limits = array('i', [mag_ov, out_ov]): keys with |k| >= mag_ov give
    out_ov. For other keys the output is -128 + the number of j in 1..255
    with thresholds[j] <= k (thresholds[0] is unused).
    """
    from .. import quant
    s = quant.from_f32(scale)
    if not s[0]:
        raise ModelError("scale is zero")
    mag_ov = _first_true(lambda m: _overflows(m, s), 0, _INF_BITS,
                         _INF_BITS)
    out_ov = 127 if zero_point < 0 else -128

    def out(k):  # the output for a key with |k| < mag_ov
        r = _rounded_quotient(abs(k), s)
        v = (r if k >= 0 else -r) + zero_point
        return -128 if v < -128 else 127 if v > 127 else v

    th = persistent(ctx, "i", 256)  # conv_util.persistent
    lo = -mag_ov + 1
    prev = lo
    for level in range(-127, 128):
        # Where val / scale crosses level - zero_point - 1/2.
        g = _key_of((level - zero_point - 0.5) * scale)
        if g is None:
            g = mag_ov if level - zero_point > 0 else lo
        k = _first_true(lambda k: out(k) >= level, prev, mag_ov, g)
        th[level + 128] = k
        prev = k
    th[0] = lo
    return th, array("i", [mag_ov, out_ov])


@micropython.viper
def _quantize_f32(x, y, n: int, th, lim):
    """y[i] = int8 of the float32 x[4i:4i+4] (little-endian, any
    alignment), by binary search of its ordered key in th."""
    px = ptr8(x)
    py = ptr8(y)
    pt = ptr32(th)
    pl = ptr32(lim)
    one: int = 1
    S: int = one << 31
    mag_ov: int = pl[0]
    ov: int = (pl[1] ^ S) - S
    i: int = 0
    j: int = 0
    while i < n:
        hb: int = px[j + 3]
        key: int = ((hb & 0x7F) << 24) | (px[j + 2] << 16) | \
            (px[j + 1] << 8) | px[j]
        if key >= mag_ov:
            py[i] = ov
        else:
            if hb & 0x80:
                key = 0 - key
            k: int = 0
            step: int = 128
            while step:
                if ((pt[k + step] ^ S) - S) <= key:
                    k += step
                step = step >> 1
            py[i] = k - 128
        i += 1
        j += 4


# --- requantization ---------------------------------------------------------

def _range(t):
    if t.type == _INT8:
        return -128, 127
    if t.type == _INT16:
        return -32768, 32767
    if t.type == _INT32:
        return -(1 << 31), (1 << 31) - 1
    return 0, 255


def _multiplier(x, y):
    from .. import quant
    m, shift = quant.ratio_multiplier(x.scale, y.scale)
    if shift > 30:
        raise ModelError("scale ratio %r / %r is too large"
                         % (x.scale, y.scale))
    return m, shift


def requantize_table(x, y, ctx=None):
    """The output for each raw input byte of an 8-bit input: bytearray(256)
    for an 8-bit output, 512 bytes (little-endian int16 pairs, in the
    arena's persistent part) for an int16 one."""
    m, shift = _multiplier(x, y)
    signed = x.type == _INT8
    buf = array("i", [(b - 256 if signed and b > 127 else b) - x.zero_point
                      for b in range(256)])
    scale_i32(buf, 256, array("i", [m]), array("i", [shift]), 0)
    lo, hi = _range(y)
    qp = array("i", [y.zero_point, lo, hi])
    if y.type == _INT16:
        lut = persistent(ctx, "B", 512)
        store_i16(buf, 256, lut, 0, qp)
        return lut
    lut = bytearray(256)
    store_i8(buf, 256, lut, 0, qp)
    return lut


@micropython.viper
def _map8(x, y, n: int, lut):
    """y[i] = lut[x[i]]."""
    px = ptr8(x)
    py = ptr8(y)
    pl = ptr8(lut)
    i: int = 0
    while i < n:
        py[i] = pl[px[i]]
        i += 1


@micropython.viper
def _map8_16(x, y, n: int, lut):
    """The int16 y[i] = the int16 lut[x[i]] (byte pairs)."""
    px = ptr8(x)
    py = ptr8(y)
    pl = ptr8(lut)
    i: int = 0
    while i < n:
        k: int = px[i] * 2
        py[2 * i] = pl[k]
        py[2 * i + 1] = pl[k + 1]
        i += 1


@micropython.viper
def _gather16(x, off: int, n: int, buf, zp: int):
    """buf[i] = int16 x[off + i] - zp for i < n (x: byte pairs)."""
    px = ptr8(x)
    pb = ptr32(buf)
    i: int = 0
    j: int = off * 2
    while i < n:
        v: int = px[j] | (px[j + 1] << 8)
        pb[i] = ((v ^ 0x8000) - 0x8000) - zp
        i += 1
        j += 2


@micropython.viper
def _gather32(x, off: int, n: int, buf, zp: int):
    """buf[i] = int32 x[off + i] - zp for i < n, wrapped to int32 as C's
    int32 difference (x: little-endian words at any alignment)."""
    px = ptr8(x)
    pb = ptr32(buf)
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    i: int = 0
    j: int = off * 4
    while i < n:
        v: int = (px[j] | (px[j + 1] << 8) | (px[j + 2] << 16)
                  | (px[j + 3] << 24))
        pb[i] = ((v - zp + S) & M) - S
        i += 1
        j += 4


@micropython.viper
def store_i16(buf, n: int, out, off: int, qp):
    """The int16 out[off + i] = clamp(buf[i] + zp, lo, hi) for i < n,
    written as little-endian byte pairs (any alignment); buf, qp as
    rescale.store_i8's. (Here rather than in rescale, whose machine
    code every ADD or SOFTMAX model loads; SOFTMAX's int16 output uses it
    too.)"""
    p = ptr32(buf)
    o = ptr8(out)
    q = ptr32(qp)
    one: int = 1
    S: int = one << 31
    zp: int = (q[0] ^ S) - S
    lo: int = (q[1] ^ S) - S
    hi: int = (q[2] ^ S) - S
    hl: int = hi - lo
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    i: int = 0
    while i < n:
        v: int = ((p[i] ^ S) - S) + zp
        if uint(v - lo) > uint(hl):  # clamp to [lo, hi]
            v = ((v + S) & M) - S  # C's int32 wrap of the sum (64-bit)
            if v < lo:
                v = lo
            else:
                v = hi
        j: int = 2 * (off + i)
        o[j] = v
        o[j + 1] = v >> 8
        i += 1


@micropython.viper
def _store32(buf, n: int, out, off: int, zp: int):
    """The int32 out[off + i] = buf[i] + zp (wrapping, as C's int32
    sum; the clamp to int32 is then no-op) for i < n, as little-endian
    bytes (any alignment)."""
    pb = ptr32(buf)
    po = ptr8(out)
    i: int = 0
    while i < n:
        v: int = pb[i] + zp
        j: int = 4 * (off + i)
        po[j] = v
        po[j + 1] = v >> 8
        po[j + 2] = v >> 16
        po[j + 3] = v >> 24
        i += 1


# --- the kernel -------------------------------------------------------------

def _check(op, ins, outs):
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    ok = (x.type in (_FLOAT32, _UINT8) and y.type == _INT8
          or x.type == _INT8 and y.type in (_INT8, _UINT8, _INT16)
          or x.type == _INT16 and y.type in (_INT8, _INT16, _INT32)
          or x.type == _INT32 and y.type in (_INT8, _INT16))
    if not ok:
        raise PrepareError("%s: %s -> %s is not supported (float32 -> int8, "
                           "int8 -> int8 / uint8 / int16, uint8 -> int8, "
                           "int16 -> int8 / int16 / int32, int32 -> int8 / "
                           "int16 are)"
                           % (label, x.dtype, y.dtype))
    if len(y.scales) != 1:
        raise PrepareError("%s: output %s must have one scale (per-tensor)"
                           % (label, y.label()))
    if x.size != y.size:
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    for t in (x, y):
        if t.type != _FLOAT32:
            lo, hi = _range(t)
            if not t.scales or not lo <= t.zero_point <= hi:
                raise PrepareError("%s: %s needs a scale and a zero point "
                                   "in [%d, %d]" % (label, t.label(), lo,
                                                    hi))
    return x, y


def prepare(op, ins, outs, ctx):
    """Check a QUANTIZE op and bind its eval.

    ins / outs: one tensor each, same element count: float32 -> int8, or
    requantization int8 -> int8 / uint8 / int16, uint8 -> int8, int16 ->
    int8 / int16 / int32, int32 -> int8 / int16. The output has one scale;
    zero points are in their type's range. Raises PrepareError.
    """
    x, y = _check(op, ins, outs)
    try:
        if x.type == _FLOAT32:
            th, lim = float_thresholds(y.scale, y.zero_point, ctx)
            return _eval_float, (x.data, y.data, y.size, th, lim)
        if x.type == _INT16 or x.type == _INT32:
            m, shift = _multiplier(x, y)
            lo, hi = _range(y)
            p = persistent(ctx, "i", 5)
            p[0], p[1], p[2] = y.zero_point, lo, hi
            p[3], p[4] = m, shift
            n = min(y.size, _CHUNK)
            return _eval_16, (x.data, y.data, y.size, ctx.work(n), n, p,
                              p[3:4], p[4:5], x.zero_point,
                              y.itemsize, y.zero_point,
                              _gather32 if x.type == _INT32 else _gather16)
        lut = requantize_table(x, y, ctx)
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    if y.type == _INT16:
        return _eval_map16, (x.data, y.data, y.size, lut)
    return _eval_map, (x.data, y.data, y.size, lut)


def _eval_float(state):
    xd, yd, n, th, lim = state
    _quantize_f32(xd, yd, n, th, lim)


def _eval_map(state):
    xd, yd, n, lut = state
    _map8(xd, yd, n, lut)


def _eval_map16(state):
    xd, yd, n, lut = state
    _map8_16(xd, yd, n, lut)


def _eval_16(state):
    xd, yd, n, buf, chunk, qp, m, shift, zp, wide, out_zp, gather = state
    i = 0
    while i < n:
        k = min(chunk, n - i)
        gather(xd, i, k, buf, zp)
        scale_i32(buf, k, m, shift, 0)
        if wide == 2:
            store_i16(buf, k, yd, i, qp)
        elif wide == 4:
            _store32(buf, k, yd, i, out_zp)
        else:
            store_i8(buf, k, yd, i, qp)
        i += k
