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
from .sigmoid_table import TABLE as _TABLE

_INT16 = const(7)
_LOGISTIC = const(14)

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
