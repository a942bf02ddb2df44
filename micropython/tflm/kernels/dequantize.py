"""DEQUANTIZE, int8 or uint8 -> float32.

Follows tensorflow/lite/micro/kernels/dequantize.cc, dequantize_common.cc
and tensorflow/lite/kernels/internal/reference/dequantize.h:

    out = (float)((double)scale * (double)(val - zero_point))

An 8-bit input has only 256 values, so prepare builds the 256 float32
results (little-endian bit patterns, computed with integers: the double
product rounded to 53 bits, then to float32, both ties-to-even, with
float32 subnormals and overflow to infinity) and eval copies 4 bytes per
element. Exact on every port, with no float arithmetic at invoke time.
"""

import struct

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from ..heap import persistent

_FLOAT32 = const(0)
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

    ins: [int8 or uint8, per-tensor quantized]; outs: [float32, same
    element count]. Raises PrepareError.
    """
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    if x.type not in (_INT8, _UINT8):
        raise PrepareError("%s: input %s is %s; only int8 and uint8 are "
                           "supported" % (label, x.label(), x.dtype))
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
    try:
        tab = table(x.scale, x.zero_point, x.type == _INT8, ctx)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    return _eval, (x.data, y.data, x.size, tab)


def _eval(state):
    xd, yd, n, tab = state
    _lookup4(xd, yd, n, tab)


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
