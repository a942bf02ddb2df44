"""ELU (int8, float32): x if x >= 0 else exp(x) - 1, through a 256-entry table.

Follows tensorflow/lite/micro/kernels/elu.cc (CalculateOpData,
PopulateLookupTable, EvalUsingLookupTable): for each int8 value q, in
float32 arithmetic,

    x = in_scale * (q - in_zp)
    t = x < 0 ? expf(x) - 1 : x
    out = clamp((int32)(TfLiteRound(t * (1 / out_scale)) + out_zp))

Prepare computes that table exactly with integers (lut_math's float32
helpers): every float32 operation rounded to nearest even, and expf
correctly rounded (exp by a 110-bit fixed-point Taylor series after
halving the argument below 2**-8, then squaring back), which glibc's
expf (TFLM's on the host) matches but in rare ties-near cases. Eval is
one table lookup per byte (lut.lookup).

float32 ELU (TFLM: expm1f per element) is elu_f32.py's (imported by
prepare for a float32 input only), within 1 ulp of TFLM. Refused: a
table entry whose rescaled value overflows int32 (TFLM's float to int
cast is undefined there) or float32; other types.
"""

from micropython import const

from ..errors import ModelError, PrepareError
from .lut import lookup

_FLOAT32 = const(0)
_INT8 = const(9)
_P = const(110)  # fixed-point bits of the exp series


def _exp_neg(m, e):
    """exp(-(m * 2**e)) * 2**_P, floor-ish (m > 0): the argument halved
    n times below 2**-8, a Taylor series, n squarings."""
    from .. import quant
    n = max(0, quant.bitlen(m) + e + 8)
    k = _P + e - n
    y = -(m << k if k >= 0 else m >> -k)
    s = term = 1 << _P
    i = 1
    while term:
        term = (term * y >> _P) // i
        s += term
        i += 1
    for _ in range(n):
        s = s * s >> _P
    return s


def _entry(q, in_zp, in_s, inv, out_zp):
    """The int8 output for input q (TFLM's PopulateLookupTable step)."""
    from .. import quant
    from .lut_math import f32_mul, f32_round
    v = q - in_zp
    x = f32_mul(in_s, (abs(v), 0))
    neg = v < 0 and x[0] != 0
    if neg:  # t = fl(fl(expf(x)) - 1), negative
        if x[0] and quant.bitlen(x[0]) + x[1] > 8:  # x < -256: expf = 0
            t = (1, 0)
        else:
            em, ee = f32_round(_exp_neg(*x), 1, -_P)
            # 1 - E exactly (E <= 1, so ee <= 0), rounded to float32
            t = f32_round((1 << -ee) - em, 1, ee) if em else (1, 0)
    else:
        t = x
    r = f32_mul(t, inv)  # |t| / out_scale, rounded
    m, e = r
    if e >= 0:
        n = m << e
    else:  # TfLiteRound: half away from zero
        n = (m + (1 << (-e - 1))) >> -e
    if n + 128 >= 1 << 31:
        raise ModelError("input %d rescales to %s * 2**%d, beyond int32"
                         % (q, m, e))
    out = (-n if neg else n) + out_zp
    return -128 if out < -128 else 127 if out > 127 else out


def table(x, y):
    """bytearray(256) of ELU's int8 outputs by input byte (x, y:
    tensors). Raises ModelError (scales, overflow)."""
    from .. import quant
    from .lut_math import f32_div
    in_s = quant.from_f32(x.scale)
    inv = f32_div((1, 0), quant.from_f32(y.scale))
    t = bytearray(256)
    for q in range(-128, 128):
        t[q & 0xFF] = _entry(q, x.zero_point, in_s, inv,
                             y.zero_point) & 0xFF
    return t


def _eval(st):
    x, y, n, tab = st
    lookup(x, y, n, tab)


def prepare(op, ins, outs, ctx):
    """ELU.

    ins: [input int8, per-tensor quantized, or float32]; outs: [the same
    type, same element count]. Raises PrepareError naming the op and
    tensor otherwise. Semantics: TFLM kernels/elu.cc.
    """
    from . import check_int8
    from ..heap import keep
    if len(ins) != 1 or ins[0] is None or len(outs) != 1 or outs[0] is None:
        raise PrepareError("%s needs one input and one output" % op.label())
    x, y = ins[0], outs[0]
    if x.size != y.size:
        raise PrepareError("%s: input %s and output %s sizes differ"
                           % (op.label(), x.label(), y.label()))
    if x.type == _FLOAT32 and y.type == _FLOAT32:
        from . import elu_f32
        return elu_f32.prepare(op, x, y, ctx)
    check_int8(op, (x, y), "int8, float32")
    try:
        tab = table(x, y)
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    return _eval, (x.data, y.data, x.size, keep(ctx, tab, 1))
