"""int16 ABS (elementwise.py's int16 half).

Follows tensorflow/lite/micro/kernels/elementwise.cc: PrepareAbsRsqrt and
AbsEval. An int16 input without quantization takes EvalImpl with
std::abs: |x| stored back to int16, so -32768 stays -32768. A quantized
one (AbsEvalQuantized; both zero points must be 0, the output must be
quantized too) gives

    v = |x|                                  (0 .. 32768)
    out = clamp(v, -32768, 32767)            scales equal (as float32)
    out = clamp(MultiplyByQuantizedMultiplier(v, m, s), ...)  otherwise

with (m, s) = QuantizeMultiplier((double)(float)(s_in / s_out)). Eval
rescales chunks of the scratch array with rescale.scale_i32.
"""

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from .rescale import scale_i32

_S_X = const(0)
_S_Y = const(1)
_S_N = const(2)
_S_BUF = const(3)
_S_CHUNK = const(4)
_S_MODE = const(5)
_S_MULT = const(6)
_S_SHIFT = const(7)


def prepare(op, x, y, ctx):
    """Bind int16 ABS for input x and output y (int16, as many elements:
    elementwise.prepare checked). x quantized: y must be quantized, both
    per-tensor with zero point 0, and s_in / s_out must give a multiplier
    shift of at most 30. Raises PrepareError otherwise."""
    from array import array
    from . import lut_math
    from .conv_util import keep
    label = op.label()
    mode = 0  # std::abs, wrapped to int16
    ms = None
    if x.scales:
        for t in (x, y):
            if not t.scales:
                raise PrepareError("%s: %s has no quantization (the input "
                                   "is quantized)" % (label, t.label()))
            if t.zero_point != 0:
                raise PrepareError("%s: int16 %s zero point %d must be 0"
                                   % (label, t.label(), t.zero_point))
        try:
            rs = lut_math.abs_params(x.scale, y.scale)
        except ModelError as e:
            raise PrepareError("%s: %s" % (label, e))
        mode = 1  # clamped
        if rs is not None:
            if rs[1] > 30:
                raise PrepareError("%s: input scale / output scale (%r / "
                                   "%r) is too large"
                                   % (label, x.scale, y.scale))
            ms = (keep(ctx, array("i", [rs[0]])),
                  keep(ctx, array("i", [rs[1]])))
    return _eval, (x.data, y.data, x.size, ctx.scratch, ctx.scratch_len,
                   mode, ms[0] if ms else None, ms[1] if ms else None)


def _eval(st):
    x = st[_S_X]
    y = st[_S_Y]
    n = st[_S_N]
    buf = st[_S_BUF]
    chunk = st[_S_CHUNK]
    mode = st[_S_MODE]
    mult = st[_S_MULT]
    off = 0
    while off < n:
        k = n - off
        if k > chunk:
            k = chunk
        abs16(x, off, k, buf)
        if mult is not None:
            scale_i32(buf, k, mult, st[_S_SHIFT], 0)
        store16(buf, k, y, off, mode)
        off += k


@micropython.viper
def abs16(x, off: int, n: int, buf):
    """buf[i] = |x[off + i]| for i < n (int16 little-endian bytes, read
    bytewise: any alignment; buf int32 words)."""
    px = ptr8(x)
    pb = ptr32(buf)
    i: int = 0
    j: int = off * 2
    while i < n:
        v: int = ((px[j] | (px[j + 1] << 8)) ^ 0x8000) - 0x8000
        if v < 0:
            v = 0 - v
        pb[i] = v
        i += 1
        j += 2


@micropython.viper
def store16(buf, n: int, y, off: int, mode: int):
    """y[off + i] = buf[i] as int16 for i < n: clamped to [-32768, 32767]
    (mode 1) or its low 16 bits (mode 0, C's conversion)."""
    pb = ptr32(buf)
    py = ptr8(y)
    one: int = 1
    S: int = one << 31
    i: int = 0
    j: int = off * 2
    while i < n:
        v: int = (pb[i] ^ S) - S
        if mode:
            if v > 32767:
                v = 32767
            elif v < -32768:
                v = -32768
        py[j] = v
        py[j + 1] = v >> 8
        i += 1
        j += 2
