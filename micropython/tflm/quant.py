"""Quantized multipliers, computed exactly as TFLM computes them in double.

Boards run MicroPython with single-precision floats, so nothing here uses
float arithmetic: scales are taken apart into their float32 bit patterns and
every double operation TFLM performs is reproduced with integers, rounding
to 53 bits (nearest, ties to even) where C rounds. The results equal TFLM's
on every port. A number is a pair (m, e) meaning m * 2**e, with m >= 0;
a sign, where one is needed (a filter's negative scale), travels apart
(from_f32_signed, quantize_multiplier's neg).

Follows tensorflow/lite/kernels/internal/quantization_util.cc
(QuantizeMultiplier) and tensorflow/lite/kernels/kernel_util.cc
(PopulateConvolutionQuantizationParams, GetQuantizedConvolutionMultipler).
"""

import struct

from .errors import ModelError

ZERO = (0, 0)


def bitlen(n):
    """Bit length of an integer n >= 0 (MicroPython has no int.bit_length).
    Big numbers lose 24 bits a step; below 2**30 (a small int on every
    port: no allocation) a binary search finishes."""
    k = 0
    while n >= 0x40000000:
        n >>= 24
        k += 24
    if n >> 16:
        n >>= 16
        k += 16
    if n >> 8:
        n >>= 8
        k += 8
    if n >> 4:
        n >>= 4
        k += 4
    if n >> 2:
        n >>= 2
        k += 2
    if n >> 1:
        n >>= 1
        k += 1
    return k + n


def round_bits(num, den, p):
    """num / den (both > 0) rounded to p significant bits, ties to even.

    Returns (m, e) with 2**(p-1) <= m < 2**p and m * 2**e ~= num / den.
    """
    if den == 1:  # a product to round (mul): no division
        e = bitlen(num) - p
        if e <= 0:
            return num << -e, e
        q = num >> e
        r = num - (q << e)
        half = 1 << (e - 1)
        if r > half or (r == half and q & 1):
            q += 1
            if q >> p:
                q >>= 1
                e += 1
        return q, e
    e = bitlen(num) - bitlen(den) - p
    while True:
        if e < 0:
            q, r = divmod(num << -e, den)
            d = den
        else:
            d = den << e
            q, r = divmod(num, d)
        if q >> p:
            e += 1
        elif not q >> (p - 1):
            e -= 1
        else:
            break
    if 2 * r > d or (2 * r == d and q & 1):
        q += 1
        if q >> p:
            q >>= 1
            e += 1
    return q, e


def from_f32(x):
    """Exact (m, e) of a Python float taken as float32 (>= 0, finite).

    Raises ModelError for negative, NaN or infinite values.
    """
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    exp = (bits >> 23) & 0xFF
    frac = bits & 0x7FFFFF
    if bits >> 31 or exp == 0xFF:
        raise ModelError("scale %r is not a finite positive number" % x)
    if exp == 0:
        return (frac, -149) if frac else ZERO
    return frac | 0x800000, exp - 150


def from_f32_signed(x):
    """(neg, (m, e)): the sign and exact magnitude of a float32 x (a
    filter's scale, which TFLM lets be negative or zero; -0.0 is zero).

    Raises ModelError for NaN or infinite values: TFLM's multiplier from
    them is undefined (QuantizeMultiplier of a non-finite double).
    """
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    if (bits >> 23) & 0xFF == 0xFF:
        raise ModelError("scale %r is not finite: TFLM's multiplier from it "
                         "is undefined" % x)
    return bool(bits >> 31) and bool(bits & 0x7FFFFFFF), \
        from_f32(struct.unpack("<f", struct.pack("<I", bits & 0x7FFFFFFF))[0])


def mul(a, b, p=53):
    """a * b rounded to p bits (53: double, 24: float32)."""
    if not a[0] or not b[0]:
        return ZERO
    m, e = round_bits(a[0] * b[0], 1, p)
    return m, e + a[1] + b[1]


def div(a, b, p=53):
    """a / b rounded to p bits (53: double, 24: float32); b must be
    non-zero."""
    if not b[0]:
        raise ModelError("division by a zero scale")
    if not a[0]:
        return ZERO
    m, e = round_bits(a[0], b[0], p)
    return m, e + a[1] - b[1]


def ldexp(a, k):
    """a * 2**k (exact)."""
    return a[0], a[1] + k


def cmp(a, b):
    """-1, 0 or 1 as a <, ==, > b."""
    x, y = a[0], b[0]
    if a[1] > b[1]:
        x <<= a[1] - b[1]
    else:
        y <<= b[1] - a[1]
    return (x > y) - (x < y)


def quantize_multiplier(d, neg=False):
    """TFLM QuantizeMultiplier: d = (m, e) -> (multiplier, shift).

    multiplier is an int32 in [2**30, 2**31) (or 0), shift in [-31, 30+]:
    d ~= multiplier * 2**(shift - 31). Ties round away from zero, as
    TfLiteRound does; multipliers below 2**-31 flush to (0, 0).

    neg: the multiplier of -d, as TFLM computes it from a negative
    double: frexp keeps the sign, TfLiteRound is symmetric, so the
    multiplier is minus the positive one in (-2**31, -2**30], except that
    a fraction rounding to -2**31 stays there with its shift (the halving
    step only tests q_fixed == 2**31), before the flush below 2**-31.
    """
    m, e = d
    if not m:
        return 0, 0
    n = bitlen(m)
    shift = e + n
    if n > 31:
        q = (m + (1 << (n - 32))) >> (n - 31)
    else:
        q = m << (31 - n)
    return _signed(q, shift, neg)


def _signed(q, shift, neg):
    """QuantizeMultiplier's end for q_fixed = q (rounded to 31 bits, so
    2**30 <= q <= 2**31) and shift: q == 2**31 halved (not for a
    negative double, see quantize_multiplier), below 2**-31 flushed to
    (0, 0), the sign applied."""
    if q == 1 << 31 and not neg:
        q >>= 1
        shift += 1
    if shift < -31:
        return 0, 0
    return (-q if neg else q), shift


def conv_multiplier(input_scale, filter_scale, output_scale):
    """Per-channel conv / FC multiplier: (double)in * (double)f / (double)out.

    Returns (multiplier, shift) as QuantizeMultiplier does.
    """
    prod = mul(from_f32(input_scale), from_f32(filter_scale))
    return quantize_multiplier(div(prod, from_f32(output_scale)))


def conv_multiplier_signed(input_scale, filter_scale, output_scale):
    """conv_multiplier for a filter scale of any sign (TFLM lets a
    filter's scale be negative or zero: the multiplier then is negative,
    or (0, 0)); input and output scales positive. Raises ModelError for
    a NaN or infinite filter scale."""
    return channel_multiplier(from_f32(input_scale), from_f32(output_scale),
                              filter_scale)


def channel_multiplier(a, o, s):
    """conv_multiplier_signed with the input and output scales already
    taken apart (a = from_f32(input scale), o = from_f32(output scale),
    once per operator) and filter scale s (a float): (multiplier,
    shift), QuantizeMultiplier((double)input * (double)s /
    (double)output). Where all three are normal float32 numbers (every
    real model's), the product of the two 24-bit mantissas is exact in
    double and one 77-bit by 24-bit division gives the quotient's 53
    bits (a board's construction computes this for every output channel
    of every CONV_2D, DEPTHWISE_CONV_2D and per-channel FULLY_CONNECTED:
    a few big-number operations instead of mul, div and their bit
    counts); anything else goes the general way. Raises ModelError as
    conv_multiplier_signed."""
    bits = struct.unpack("<I", struct.pack("<f", s))[0]
    ex = bits >> 23 & 0xFF
    ma, mo = a[0], o[0]
    if not (0 < ex < 0xFF and ma >> 23 == 1 and mo >> 23 == 1):
        neg, f = from_f32_signed(s)
        return quantize_multiplier(div(mul(a, f), o), neg)
    p = ma * (bits & 0x7FFFFF | 0x800000)  # 2**46 <= p < 2**48
    k = 29 if p >> 47 else 30  # p << k: 77 bits
    q, r = divmod(p << k, mo)  # 2**52 <= q < 2**54
    d = mo
    if q >> 53:  # 54 bits: one fewer
        r += (q & 1) * mo
        q >>= 1
        d = mo << 1
        k -= 1
    if 2 * r > d or (2 * r == d and q & 1):  # to nearest, ties to even
        q += 1
        if q >> 53:
            q >>= 1
            k -= 1
    # q * 2**(ea + ef - eo - k), q of 53 bits: quantize_multiplier's
    # rounding to 31 bits, then its end
    return _signed((q + (1 << 21)) >> 22,
                   a[1] + ex - 150 - o[1] - k + 53, bits >> 31)


def ratio_multiplier(num_scale, den_scale):
    """QuantizeMultiplier((double)num / (double)den), e.g. requantize."""
    return quantize_multiplier(div(from_f32(num_scale), from_f32(den_scale)))


def activation_range(act, scale, zero_point, qmin=-128, qmax=127):
    """TFLM CalculateActivationRangeQuantized for int8 outputs.

    act: ActivationFunctionType (0 none, 1 RELU, 2 RELU_N1_TO_1, 3 RELU6).
    Returns (act_min, act_max) clamped to [qmin, qmax]. The bounds are
    zero_point + TfLiteRound(x / scale), computed in float32 as TFLM does.
    Raises ModelError for other activation codes, and when a rounded
    bound is outside int32 (kernel_util.cc's Quantize fails Prepare then).
    """
    if act == 0:
        return qmin, qmax
    if act == 1:
        lo, hi = zero_point, qmax
    elif act == 2:
        lo = zero_point + round_div_f32(-1.0, scale)
        hi = zero_point + round_div_f32(1.0, scale)
    elif act == 3:
        lo = zero_point
        hi = zero_point + round_div_f32(6.0, scale)
    else:
        raise ModelError("fused activation %d is not supported" % act)
    return max(qmin, lo), min(qmax, hi)


def round_div_f32(x, scale):
    """TfLiteRound(x / scale) with float32 division (x a small integer)."""
    q = div(from_f32(abs(x)), from_f32(scale))
    # Round the double quotient to float32 first, as C does for float / float.
    m, e = round_bits(q[0], 1, 24) if q[0] else ZERO
    e += q[1]
    # Round half away from zero to an integer.
    if e >= 0:
        r = m << e
    else:
        r = (m + (1 << (-e - 1))) >> -e
    if r > 1 << 31:  # above (float)INT32_MAX: TFLM's Quantize fails
        raise ModelError("activation bound %r / scale %r overflows int32"
                         % (x, scale))
    return -r if x < 0 else r
