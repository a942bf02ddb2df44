"""DEQUANTIZE, int8, uint8 or int16 -> float32.

Follows tensorflow/lite/micro/kernels/dequantize.cc, dequantize_common.cc
and tensorflow/lite/kernels/internal/reference/dequantize.h:

    out = (float)((double)scale * (double)(val - zero_point))

An 8-bit input has only 256 values, so prepare builds the 256 float32
results (little-endian bit patterns, computed with integers: the double
product rounded to 53 bits, then to float32, both ties-to-even, with
float32 subnormals and overflow to infinity) and eval copies 4 bytes per
element. An int16 input is computed per element (_dequantize16): the
float32 scale's 24-bit significand times |val - zero_point| (at most 17
bits) is exact in a double, so TFLM's result is that product rounded once
to float32, ties to even, which word-size independent viper integer code
does. Exact on every port, with no float arithmetic at invoke time.
"""

import struct
from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from ..heap import persistent

_FLOAT32 = const(0)
_INT16 = const(7)
_INT8 = const(9)
_UINT8 = const(3)


def _rne_shift(m, s):
    """m / 2**s rounded to nearest, ties to even (m >= 0, s > 0)."""
    q = m >> s
    r = m - (q << s)
    half = 1 << (s - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return q


def f32_bits(m, e, neg=False):
    """float32 bit pattern of +-(m * 2**e) rounded to nearest even,
    with subnormals and overflow to infinity (m >= 0)."""
    from .. import quant
    sign = 0x80000000 if neg else 0
    if not m:
        return sign
    n = quant.bitlen(m)
    if e + n - 1 >= -126:  # normal: 24 significant bits
        s = n - 24
        q = _rne_shift(m, s) if s > 0 else m << -s
        e += s
        if q >> 24:
            q >>= 1
            e += 1
        biased = e + 150
        if biased >= 255:
            return sign | 0x7F800000
        return sign | (biased << 23) | (q - 0x800000)
    s = -149 - e  # subnormal: a multiple of 2**-149
    q = _rne_shift(m, s) if s > 0 else m << -s
    return sign | q  # q == 2**23 is the smallest normal, as it should be


def table(scale, zero_point, signed, ctx=None):
    """256 little-endian float32 results (1024 bytes, in the arena's
    persistent part when ctx is given: conv_util.persistent), indexed by
    the raw input byte. Raises ModelError for a negative or non-finite
    scale."""
    from .. import quant
    if scale == 0.0:
        sm = quant.ZERO
    else:
        sm = quant.from_f32(scale)
    out = persistent(ctx, "B", 1024)
    for b in range(256):
        k = (b - 256 if signed and b > 127 else b) - zero_point
        if sm[0]:
            m, e = quant.mul(sm, (abs(k), 0)) if k else quant.ZERO
        else:
            m, e = 0, 0
        struct.pack_into("<I", out, 4 * b, f32_bits(m, e, k < 0))
    return out


def prepare(op, ins, outs, ctx):
    """Check a DEQUANTIZE op and bind its eval.

    ins: [int8, uint8 or int16, per-tensor quantized]; outs: [float32,
    same element count]. Raises PrepareError.
    """
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    if x.type not in (_INT8, _UINT8, _INT16):
        raise PrepareError("%s: input %s is %s; only int8, uint8 and int16 "
                           "are supported" % (label, x.label(), x.dtype))
    if y.type != _FLOAT32:
        raise PrepareError("%s: output %s is %s, expected float32"
                           % (label, y.label(), y.dtype))
    if x.size != y.size:
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    if len(x.scales) != 1:
        raise PrepareError("%s: input %s must have one scale"
                           % (label, x.label()))
    if x.type == _INT16:
        return _eval16, (x.data, y.data, x.size,
                         _params16(op, x.scale, x.zero_point, ctx))
    try:
        tab = table(x.scale, x.zero_point, x.type == _INT8, ctx)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    return _eval, (x.data, y.data, x.size, tab)


def _params16(op, scale, zero_point, ctx):
    """[significand, exponent, zero point] of an int16 input: the float32
    scale is significand * 2**exponent exactly (significand < 2**24, 0
    for a zero scale), in the arena's persistent part. PrepareError for
    a negative or non-finite scale."""
    from .conv_util import keep
    bits = struct.unpack("<I", struct.pack("<f", scale))[0]
    expo, mant = bits >> 23, bits & 0x7FFFFF
    if expo >= 255:  # negative (sign bit set) or inf / NaN
        raise PrepareError("%s: input scale %r must be finite and >= 0"
                           % (op.label(), scale))
    p = array("i", [mant | 0x800000, expo - 150, zero_point] if expo else
              [mant, -149, zero_point])
    return keep(ctx, p)


def _eval(state):
    xd, yd, n, tab = state
    _lookup4(xd, yd, n, tab)


def _eval16(state):
    xd, yd, n, p = state
    _dequantize16(xd, yd, n, p)


@micropython.viper
def _dequantize16(x, y, n: int, p):
    """y[i] = float32 bits of (float)((double)scale * (x[i] - zp)) for
    int16 x (little-endian bytes, any alignment), p = [significand m,
    exponent e, zp] of the scale (_params16). With a = |x - zp| < 2**17,
    P = m * a < 2**41 is held as hi * 2**12 + lo (m split in 12-bit
    halves: every partial product fits in 29 bits, on 32- and 64-bit
    ports alike), shifted right by s = max(bitlen(P) - 24, -149 - e)
    (24 significant bits, or the subnormal grid) and rounded to nearest,
    ties to even. k = 0 gives +0.0 and a zero scale +-0.0, as the C
    product does; beyond float32's range, +-inf."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(p)
    one: int = 1
    S: int = one << 31
    m: int = q[0]
    e: int = (q[1] ^ S) - S
    zp: int = (q[2] ^ S) - S
    mh: int = m >> 12
    ml: int = m & 0xFFF
    i: int = 0
    while i < n:
        v: int = ((px[2 * i] | (px[2 * i + 1] << 8)) ^ 0x8000) - 0x8000
        k: int = v - zp
        sg: int = 0
        if k < 0:
            sg = 0x80
            k = 0 - k
        b3: int = sg
        b2: int = 0
        b1: int = 0
        b0: int = 0
        if k and m:
            lo: int = ml * k
            hi: int = mh * k + (lo >> 12)
            lo = lo & 0xFFF
            nb: int = 0  # bitlen(P)
            t: int = hi
            if t:
                nb = 12
            else:
                t = lo
            while t:
                nb += 1
                t = t >> 1
            s: int = nb - 24
            if s < -149 - e:
                s = -149 - e
            Q: int = 0
            up: int = 0  # round up
            if s <= 0:
                Q = ((hi << 12) | lo) << (0 - s)  # P < 2**24 here
            elif s <= 12:
                Q = (hi << (12 - s)) | (lo >> s)
                r: int = lo & ((one << s) - 1)
                h: int = one << (s - 1)
                if r > h or (r == h and (Q & 1)):
                    up = 1
            elif s < 42:
                Q = hi >> (s - 12)
                rh: int = hi & ((one << (s - 12)) - 1)
                hh: int = one << (s - 13)  # half = hh * 2**12
                if rh > hh or (rh == hh and (lo or (Q & 1))):
                    up = 1
            Q += up
            if Q >= 0x1000000:  # the rounding carried into bit 24
                Q = Q >> 1
                s += 1
            if Q >= 0x800000:  # normal
                be: int = s + e + 150
                if be >= 255:
                    be = 255
                    Q = 0x800000  # infinity
            else:  # subnormal: s + e == -149
                be = 0
            b3 = sg | (be >> 1)
            b2 = ((be & 1) << 7) | ((Q >> 16) & 0x7F)
            b1 = (Q >> 8) & 0xFF
            b0 = Q & 0xFF
        py[4 * i] = b0
        py[4 * i + 1] = b1
        py[4 * i + 2] = b2
        py[4 * i + 3] = b3
        i += 1


@micropython.viper
def _lookup4(x, y, n: int, tab):
    """y[4i:4i+4] = tab[4x[i]:4x[i]+4] for i < n (byte copies: any
    alignment)."""
    px = ptr8(x)
    py = ptr8(y)
    pt = ptr8(tab)
    i: int = 0
    o: int = 0
    while i < n:
        t: int = px[i] << 2
        py[o] = pt[t]
        py[o + 1] = pt[t + 1]
        py[o + 2] = pt[t + 2]
        py[o + 3] = pt[t + 3]
        o += 4
        i += 1
