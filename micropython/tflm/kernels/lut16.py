"""LOGISTIC and TANH, int16 -> int16 (16x8 models), imported only for
models whose LOGISTIC / TANH operators have int16 tensors (kernels._LAZY).

Follows tensorflow/lite/micro/kernels/logistic.cc + logistic_common.cc
(CalculateArithmeticOpDataLogistic) and tanh.cc (CalculateArithmeticOpData)
for int16, and reference_integer_ops::Logistic / Tanh for int16_t
(reference/integer_ops/logistic.h, tanh.h): sigmoid_table_uint16
(kernels/internal/common.h, 256 entries) with linear interpolation.

Prepare: zero points 0 (input and output), the output scale within
TFLM's CheckedLog2 tolerance of 2**-15 (log2 within 1e-3 of -15). An
input scale within that tolerance of 2**-12 (TANH: also 2**-11) is the
"power of two" case: multiplier 3 << k, shift 0; any other scale s gives
m = s * 4096 * 3, doubled (shift + 1) while m <= 32767 / 2 and shift <=
30, then truncated: exact in integers here (s is a float32). TFLM's
debug builds abort (DCHECK) on a multiplier above 32767 (input scale of
8 / 3 or more; its release build computes garbage there), and one of 0
(a scale below 2**-31 / 12288) makes its eval overflow: both raise
PrepareError.

Eval, per element (int32 arithmetic, no overflow: |x * m| < 2**30):

    d = (x * m + round) >> shift        (round = 1 << (shift - 1) or 0)
    a = |d|; LOGISTIC: h = a >> 9, f = a & 511; TANH: h = a >> 8, f = a & 255
    r = (T[h] << 9 or 8) + f * (T[h + 1] - T[h]), or the saturation value
    when h >= 255, then folded by the sign of d and shifted back to 16 bits.

The table is this module's bytes constant (read with ptr8; no arena).
"""

import micropython
from micropython import const

from ..errors import PrepareError

_INT16 = const(7)
_LOGISTIC = const(14)

# sigmoid_table_uint16 (tensorflow/lite/kernels/internal/common.h),
# little-endian
_TABLE = (
    b"\x00\x80\xab\x82\x55\x85\xfd\x87\xa5\x8a\x49\x8d\xeb\x8f\x89\x92"
    b"\x24\x95\xb9\x97\x4a\x9a\xd5\x9c\x5a\x9f\xd8\xa1\x50\xa4\xc0\xa6"
    b"\x28\xa9\x88\xab\xdf\xad\x2e\xb0\x73\xb2\xaf\xb4\xe1\xb6\x09\xb9"
    b"\x27\xbb\x3b\xbd\x44\xbf\x43\xc1\x37\xc3\x20\xc5\xfe\xc6\xd1\xc8"
    b"\x99\xca\x57\xcc\x09\xce\xb1\xcf\x4d\xd1\xdf\xd2\x66\xd4\xe3\xd5"
    b"\x55\xd7\xbd\xd8\x1a\xda\x6e\xdb\xb7\xdc\xf7\xdd\x2d\xdf\x59\xe0"
    b"\x7c\xe1\x97\xe2\xa8\xe3\xb0\xe4\xb0\xe5\xa8\xe6\x98\xe7\x7f\xe8"
    b"\x5f\xe9\x37\xea\x08\xeb\xd2\xeb\x95\xec\x51\xed\x07\xee\xb6\xee"
    b"\x5f\xef\x01\xf0\x9f\xf0\x36\xf1\xc8\xf1\x54\xf2\xdc\xf2\x5e\xf3"
    b"\xdc\xf3\x55\xf4\xca\xf4\x3a\xf5\xa6\xf5\x0e\xf6\x72\xf6\xd2\xf6"
    b"\x2f\xf7\x88\xf7\xde\xf7\x30\xf8\x7f\xf8\xcb\xf8\x15\xf9\x5b\xf9"
    b"\x9f\xf9\xe0\xf9\x1e\xfa\x5a\xfa\x94\xfa\xcc\xfa\x01\xfb\x34\xfb"
    b"\x65\xfb\x95\xfb\xc2\xfb\xee\xfb\x18\xfc\x40\xfc\x66\xfc\x8c\xfc"
    b"\xaf\xfc\xd1\xfc\xf2\xfc\x12\xfd\x30\xfd\x4d\xfd\x69\xfd\x84\xfd"
    b"\x9e\xfd\xb6\xfd\xce\xfd\xe5\xfd\xfb\xfd\x0f\xfe\x24\xfe\x37\xfe"
    b"\x49\xfe\x5b\xfe\x6c\xfe\x7d\xfe\x8c\xfe\x9b\xfe\xaa\xfe\xb8\xfe"
    b"\xc5\xfe\xd2\xfe\xde\xfe\xea\xfe\xf5\xfe\x00\xff\x0b\xff\x15\xff"
    b"\x1e\xff\x27\xff\x30\xff\x39\xff\x41\xff\x48\xff\x50\xff\x57\xff"
    b"\x5e\xff\x65\xff\x6b\xff\x71\xff\x77\xff\x7c\xff\x82\xff\x87\xff"
    b"\x8c\xff\x91\xff\x95\xff\x99\xff\x9e\xff\xa2\xff\xa5\xff\xa9\xff"
    b"\xad\xff\xb0\xff\xb3\xff\xb6\xff\xb9\xff\xbc\xff\xbf\xff\xc2\xff"
    b"\xc4\xff\xc7\xff\xc9\xff\xcb\xff\xcd\xff\xd0\xff\xd1\xff\xd3\xff"
    b"\xd5\xff\xd7\xff\xd9\xff\xda\xff\xdc\xff\xdd\xff\xdf\xff\xe0\xff"
    b"\xe1\xff\xe3\xff\xe4\xff\xe5\xff\xe6\xff\xe7\xff\xe8\xff\xe9\xff"
    b"\xea\xff\xeb\xff\xec\xff\xed\xff\xed\xff\xee\xff\xef\xff\xf0\xff"
    b"\xf0\xff\xf1\xff\xf2\xff\xf2\xff\xf3\xff\xf3\xff\xf4\xff\xf4\xff"
    b"\xf5\xff\xf5\xff\xf6\xff\xf6\xff\xf6\xff\xf7\xff\xf7\xff\xf8\xff"
    b"\xf8\xff\xf8\xff\xf9\xff\xf9\xff\xf9\xff\xf9\xff\xfa\xff\xfa\xff"
    b"\xfa\xff\xfa\xff\xfb\xff\xfb\xff\xfb\xff\xfb\xff\xfb\xff\xfc\xff"
    b"\xfc\xff\xfc\xff\xfc\xff\xfc\xff\xfc\xff\xfd\xff\xfd\xff\xfd\xff"
    b"\xfd\xff\xfd\xff\xfd\xff\xfd\xff\xfd\xff\xfe\xff\xfe\xff\xfe\xff"
    b"\xfe\xff\xfe\xff\xfe\xff\xfe\xff\xfe\xff\xfe\xff\xfe\xff\xff\xff")

# float32 bit patterns of the scales that TFLM's CheckedLog2 (glibc
# logf(x) * (1 / logf(2)), rounded, |difference| < 1e-3f) places at
# log2 -15, -12 and -11: [low, high] pairs, checked against the oracle.
_LOG2_15 = const(0x37FFD294)
_LOG2_15_HI = const(0x380016B9)
_LOG2_12 = const(0x397FD29C)
_LOG2_12_HI = const(0x398016B5)
_LOG2_11 = const(0x39FFD298)
_LOG2_11_HI = const(0x3A0016B7)


def _bits(v):
    import struct
    return struct.unpack("<I", struct.pack("<f", v))[0]


def prepare(op, ins, outs, ctx):
    """Check an int16 LOGISTIC / TANH op and bind its eval.

    ins: [int16, zero point 0]; outs: [int16, as many elements, zero point
    0, scale 2**-15 within CheckedLog2's tolerance]. Raises PrepareError
    for what TFLM's Prepare rejects and for an input scale of 8 / 3 or
    more (a multiplier above 32767: a DCHECK in TFLM).
    """
    from array import array
    from .. import quant
    from ..heap import keep
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    if y.type != _INT16:
        raise PrepareError("%s: input %s is int16 but output %s is %s"
                           % (label, x.label(), y.label(), y.dtype))
    if x.size != y.size:
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (label, x.label(), x.shape, y.label(),
                                       y.shape))
    for t in (x, y):
        if not t.scales or t.zero_point:
            raise PrepareError("%s: int16 %s needs a scale and zero point 0"
                               % (label, t.label()))
    if not _LOG2_15 <= _bits(y.scale) <= _LOG2_15_HI:
        raise PrepareError("%s: output %s scale %r must be 1/32768"
                           % (label, y.label(), y.scale))
    b = _bits(x.scale)
    tanh = op.code != _LOGISTIC
    if _LOG2_12 <= b <= _LOG2_12_HI:
        mult, shift = 3, 0
    elif tanh and _LOG2_11 <= b <= _LOG2_11_HI:
        mult, shift = 6, 0
    else:
        m, e = quant.from_f32(x.scale)
        m *= 12288  # the exact double scale * 4096 * 3 is m * 2**e
        shift = 0
        while shift <= 30 and (m << max(0, e + shift + 1)) <= \
                (32767 << max(0, -e - shift - 1)):
            shift += 1
        k = e + shift
        mult = m << k if k >= 0 else m >> -k
        if mult > 32767 or not mult:
            # above 32767: a DCHECK; 0 (scale below 2**-31 / 12288):
            # TFLM's eval then takes 3 << 31 as its multiplier (overflow)
            raise PrepareError("%s: input %s scale %r is out of range "
                               "(multiplier %d)" % (label, x.label(),
                                                    x.scale, mult))
    prm = array("i", [x.size, mult, shift,
                      (1 << (shift - 1)) if shift else 0, 1 if tanh else 0])
    return _eval, (x.data, y.data, keep(ctx, prm), _TABLE)


def _eval(state):
    x, y, prm, table = state
    _sigmoid16(x, y, prm, table)


@micropython.viper
def _sigmoid16(x, y, prm, table):
    """int16 y[i] = LOGISTIC or TANH (prm[4]) of int16 x[i] for i <
    prm[0], with multiplier prm[1], shift prm[2], rounding prm[3];
    little-endian byte pairs, any alignment."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(prm)
    pt = ptr8(table)
    n: int = q[0]
    m: int = q[1]
    sh: int = q[2]
    rnd: int = q[3]
    tanh: int = q[4]
    j: int = 0
    end: int = 2 * n
    while j < end:
        d: int = ((((px[j] | (px[j + 1] << 8)) ^ 0x8000) - 0x8000) * m
                  + rnd) >> sh
        a: int = d
        if d < 0:
            a = 0 - d
        r: int = 0
        if tanh:
            h: int = a >> 8
            if h >= 255:
                r = 0xFFFF << 8
            else:
                ua: int = pt[2 * h] | (pt[2 * h + 1] << 8)
                ub: int = pt[2 * h + 2] | (pt[2 * h + 3] << 8)
                r = (ua << 8) + (a & 0xFF) * (ub - ua)
            if d >= 0:
                r = r - (1 << 23) + (1 << 7)
            else:
                r = (1 << 23) + (1 << 7) - 1 - r
            r = r >> 8
        else:
            h = a >> 9
            if h >= 255:
                r = 0x7FFF << 10
            else:
                ua = pt[2 * h] | (pt[2 * h + 1] << 8)
                ub = pt[2 * h + 2] | (pt[2 * h + 3] << 8)
                r = (ua << 9) + (a & 0x1FF) * (ub - ua)
            if d >= 0:
                r = r + (1 << 9)
            else:
                r = (1 << 25) + (1 << 9) - 1 - r
            r = r >> 10
        py[j] = r
        py[j + 1] = r >> 8
        j += 2
