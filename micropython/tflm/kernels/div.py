"""DIV: float32, int32 and int8 (quantized), NumPy-style broadcasting.

Follows tensorflow/lite/micro/kernels/div.cc with reference_ops Div /
BroadcastDivSlow / DivElementwise (kernels/internal/reference/div.h),
broadcasting as reference/process_broadcast_shapes.h and
broadcast_loop.h (inputs of rank up to 6, size-1 dimensions broadcast):

    float32  out = clamp(fl(x1 / x2), lo, hi): one float32 rounding
             (f32.vdiv), CalculateActivationRange<float>; x / 0 is
             +-inf (then clamped to +-FLT_MAX), 0 / 0 NaN, as IEEE 754.
    int32    out = clamp(x1 / x2, lo, hi), C's division (truncated toward
             zero), CalculateActivationRange<int32_t> (RELU [0,
             INT32_MAX], RELU6 [0, 6], RELU_N1_TO_1 [-1, 1], else the
             int32 range). The inputs must not be quantized (Prepare
             refuses them, as TFLM's does).
    int8     DivElementwise with v1 = x1 - zp1, v2 = x2 - zp2 (signs
             moved to v1 so that v2 > 0):
                 inv, rs = GetReciprocal(v2, 31)
                 hr = CountLeadingSignBits(v1)
                 q = SaturatingRoundingDoublingHighMul(v1 << hr, inv)
                 q = SaturatingRoundingDoublingHighMul(q, m)
                 out = clamp(zo + RoundingDivideByPOT(q, hr + rs - s),
                             lo, hi)
             with (m, s) = QuantizeMultiplier((double)s1 / ((double)s2
             * (double)so)) as the tflite-micro we test against computes
             it (in double; the div.cc we read rounds s1 / (s2 * so) to
             float32 first: _multiplier), and lo, hi from
             CalculateActivationRangeQuantized.

x86 detail that this kernel reproduces: the exponent e = hr + rs - s of
RoundingDivideByPOT often leaves [0, 31] (v1 = 0 has hr = 31; typical
scales give s around 4), which gemmlowp does not allow. The x86-64
build of the PyPI tflite-micro (the oracle) then computes
mask = (int32)((1ll << (e & 63)) - 1) and x >> (e & 31) (the shift
instructions' own masking), so for e & 63 >= 32 the result is
(x >> (e & 31)) + (x >= 0): for example 0 / 100 with all scales 0.1
gives the output zero point + 1, and 1 / 100 gives 127. These are TFLM's
bits on the host (an Arm build of TFLM differs there), and the ones
compared here.

Undefined or failing cases, never a crash or a hang here:
- int32 x / 0: the tflite-micro we test against checks input2 in its
  DivEval and fails (kTfLiteError, output not written; the div.cc we
  read has no check and would trap); here eval checks input2 the same
  way before writing anything and raises InvokeError (made at prepare,
  errors.raise_made).
- int32 INT32_MIN / -1: a SIGFPE in TFLM (x86 idiv); here INT32_MIN (the
  two's complement wrap of 2**31), then clamped.
- int8 x2 == zp2 (v2 = 0): TFLM divides by its GetReciprocal(0) (a
  shift by 32), garbage with the sign flipped (scales 0.1, zero points
  0: 7 / 0 gives -99); here the quotient saturates: v1 > 0 gives hi,
  v1 < 0 gives lo, 0 / 0 gives the output zero point (clamped).

Eval walks the output in chunks (broadcast.gather: bytewise loads, any
alignment; int8 values arrive with their zero points subtracted), then
combines the chunk in viper (32- and 64-bit viper alike: wide products
from 16-bit limbs, int32 loads sign-extended, no `//` but on magnitudes
below 2**31) and stores it. GetReciprocal(v2) of every |v2| that input2
can give (at most 256 values) is computed at prepare with gemmlowp.py's
integer helpers and kept in the arena's persistent part.
"""

from array import array

import micropython
from micropython import const

from ..errors import InvokeError, PrepareError, raise_made
from . import broadcast

_ACT_RELU = const(1)
_ACT_RELU6 = const(3)
_ACT_RELU_N1_TO_1 = const(2)
_FLOAT32 = const(0)
_INT32 = const(2)
_INT8 = const(9)
_DIV_OPTIONS = const(29)

_INT32_MAX = const(0x7FFFFFFF)
_INT32_MIN = const(-0x80000000)
_DIV_FUSED_ACTIVATION_FUNCTION = const(0)


def prepare(op, ins, outs, ctx):
    """Check a DIV operator and bind its eval.

    ins: two tensors of the output's type whose shapes broadcast (NumPy
    rules, rank <= 6) to the output's; outs: one float32, int32 or int8
    tensor. DivOptions: fused activation (field 0). int32: the inputs
    without quantization (div.cc). int8: per-tensor quantization with
    int8 zero points on all three, activations NONE / RELU / RELU6 /
    RELU_N1_TO_1. Raises PrepareError naming the op and tensor for other
    types, shapes that do not broadcast or a quantized int32 input.
    """
    from . import broadcast_prep as bp
    from .conv_util import keep, persistent, scratch_halves
    x1, x2, y = bp.binary_io(op, ins, outs)
    act = (op.opt_byte(_DIV_FUSED_ACTIVATION_FUNCTION, 0)
           if op.options_type == _DIV_OPTIONS else 0)
    if y.type == _INT8:
        from . import check_int8  # the package: construction only
        check_int8(op, (x1, x2, y), "float32, int32, int8")
    elif y.type == _INT32:
        for t in (x1, x2):
            if t.scales:
                raise PrepareError("%s: int32 %s must not be quantized "
                                   "(TFLM's DIV takes plain int32)"
                                   % (op.label(), t.label()))
    elif y.type != _FLOAT32:
        raise PrepareError("%s: %s is %s; supported: float32, int32, int8"
                           % (op.label(), y.label(), y.dtype))
    bc = bp.check(op, x1, x2, y)
    sa, sb, half = scratch_halves(ctx)
    head = (x1.data, x2.data, y.data, y.size, sa, sb, half)
    if y.type == _FLOAT32:
        from . import f32
        lo, hi = f32.act_range(act)
        p = f32.slots(f32.VDIV_SLOTS)
        p[1] = p[3] = 1  # a, b: the chunk, stride 1; out: a, in place
        return _eval_f32, head + (
            keep(ctx, bp.walker(x1, x2, y, bc, width=4)),
            keep(ctx, p), keep(ctx, f32.consts(lo, hi)), f32.vdiv)
    if y.type == _INT32:
        lo, hi = {_ACT_RELU: (0, _INT32_MAX), _ACT_RELU6: (0, 6),
                  _ACT_RELU_N1_TO_1: (-1, 1)}.get(
                      act, (_INT32_MIN, _INT32_MAX))
        err = InvokeError("%s: input %s holds a zero divisor (TFLM's "
                          "DIV fails on it too)" % (op.label(), x2.label()))
        return _eval_i32, head + (
            keep(ctx, bp.walker(x1, x2, y, bc, width=4)),
            keep(ctx, array("i", [lo, hi])), x2.size, err)
    lo, hi = bp.activation_range(op, act, y)
    m, s = _multiplier(x1, x2, y)
    z2 = x2.zero_point
    tab = persistent(ctx, "i", max(128 + z2, 127 - z2) + 1)
    for v in range(1, len(tab)):
        tab[v] = _reciprocal(v)
    prm = array("i", [m, s, y.zero_point, lo, hi])
    return _eval_i8, head + (
        keep(ctx, bp.walker(x1, x2, y, bc, -x1.zero_point,
                            -x2.zero_point)),
        keep(ctx, prm), tab)


# ---- prepare-time arithmetic (plain integers, any port) -----------------

def _multiplier(x1, x2, y):
    """TFLM's (output_multiplier, output_shift): QuantizeMultiplier of
    (double)s1 / ((double)s2 * (double)so), the product and the quotient
    each rounded to double (quant.py's integer arithmetic). The div.cc
    we read computes s1 / (s2 * so) in float32 first; the tflite-micro
    we test against converts to double before it multiplies (its
    DivPrepare: cvtss2sd, mulsd, divsd), and exact ties come out
    differently (scales 0.05, 0.02, 0.1: 125 / 50 -> 68 with the double,
    67 with the float32 multiplier). With doubles nothing overflows."""
    from .. import quant
    return quant.quantize_multiplier(quant.div(
        quant.from_f32(x1.scale),
        quant.mul(quant.from_f32(x2.scale), quant.from_f32(y.scale))))


def _reciprocal(v):
    """GetReciprocal(v, 31, &shift)'s value for 0 < v < 2**31 (common.h):
    one_over_one_plus_x_for_x_in_0_1 (gemmlowp fixedpoint.h, Newton-
    Raphson in Q2.29) of v normalized to [1, 2); a Q0.31 raw value in
    (2**30, 2**31). The shift (bit length of v - 1) is eval's."""
    from .gemmlowp import pot, srdhm, w32
    from .. import quant
    n = quant.bitlen(v)
    a = w32((v << (32 - n)) - (1 << 31))  # Q0.31 of v / 2**n * 2 - 1
    hd = (a >> 1) + (1 << 30)  # RoundingHalfSum(a, One), a >= 0
    x = w32(1515870810 + srdhm(hd, -1010580540))  # 48/17 - 32/17 * hd
    for _ in range(3):
        t = w32((1 << 29) - srdhm(hd, x))  # 1 - hd * x (Q2.29)
        x = w32(x + pot(srdhm(x, t), 2))  # x + x * t, Q4.27 -> Q2.29
    return pot(x, 1)  # Q1.30 (x / 2) -> Q0.31


# ---- eval -----------------------------------------------------------------

def _run(st, step):
    """The output in chunks of at most half (the scratch halves): gather
    both inputs' broadcast chunk into sa / sb, then step(st, n, off).
    st starts (d1, d2, yd, total, sa, sb, half, walker, ...)."""
    broadcast.reset(st[7])
    total = st[3]
    off = 0
    while off < total:
        n = total - off
        if n > st[6]:
            n = st[6]
        broadcast.gather(st[4], st[5], n, st[0], st[1], st[7])
        step(st, n, off)
        off += n


def _step_f32(st, n, off):  # st[8:]: vdiv's p, q, vdiv
    _set_count(st[8], n)
    st[10](st[8], st[9], st[4], st[5], st[4])
    broadcast.store_w32(st[4], n, st[2], off)


def _step_i32(st, n, off):  # st[8:]: lohi, input 2's size, error
    _div_i32(st[4], st[5], n, st[8])
    broadcast.store_w32(st[4], n, st[2], off)


def _step_i8(st, n, off):  # st[8:]: parameters, table
    _div_i8(st[4], st[5], n, st[8], st[9], st[2], off)


# The evals' states (d1, d2, yd, total, sa, sb, half, walker, then per
# type: vdiv's p and q / lohi and a count / parameters and the reciprocal
# table): the views only cast to pointers by viper code; a compiled model
# stores there the address of its view of the arena or the model, an int,
# no object (compiled.py T_ADDR).
ADDRESSES = (0, 1, 2, 4, 5, 7, 8, 9)


def _eval_f32(st):
    _run(st, _step_f32)


def _eval_i32(st):
    if _any_zero(st[1], st[9]):
        raise_made(st[10])
    _run(st, _step_i32)


def _eval_i8(st):
    _run(st, _step_i8)


@micropython.viper
def _set_count(p, n: int):
    """p[5] = n: vdiv's element count (p may be a view of the arena)."""
    ptr32(p)[5] = n


@micropython.viper
def _any_zero(d, n: int) -> int:
    """1 if one of the n little-endian int32 values in d (any alignment)
    is 0, else 0."""
    p = ptr8(d)
    i: int = 0
    end: int = 4 * n
    while i < end:
        if (p[i] | p[i + 1] | p[i + 2] | p[i + 3]) == 0:
            return 1
        i += 4
    return 0


@micropython.viper
def _div_i32(a, b, n: int, lohi):
    """a[i] = clamp(a[i] / b[i], lo, hi) for i < n (int32, C division:
    truncated toward zero). INT32_MIN / -1 gives INT32_MIN (wrapped); a
    zero divisor gives 0 (eval refuses those before it gets here).
    Quotients of magnitudes below 2**31 only: mp_small_int_floor_divide,
    which viper's // calls, is then plain C division on either word
    size (it can overflow near 2**31 with a negative operand, and a zero
    divisor crashes it)."""
    pa = ptr32(a)
    pb = ptr32(b)
    q = ptr32(lohi)
    one: int = 1
    S: int = one << 31
    MIN: int = 0 - S  # -2**31 on both word sizes (wraps on 32-bit)
    lo: int = (q[0] ^ S) - S
    hi: int = (q[1] ^ S) - S
    i: int = 0
    while i < n:
        u: int = (pa[i] ^ S) - S
        v: int = (pb[i] ^ S) - S
        x: int = 0
        if v == 1:
            x = u
        elif v == -1:
            x = 0 - u
            if u == MIN:
                x = MIN
        elif v == MIN:
            if u == MIN:
                x = 1
        elif v != 0:
            neg: int = 0
            mv: int = v
            if v < 0:
                neg = 1
                mv = 0 - v
            if u == MIN:
                # 2**31 / mv = (2**31 - mv) / mv + 1, mv >= 2
                x = (S - mv) // mv + 1
                neg ^= 1
            else:
                mu: int = u
                if u < 0:
                    neg ^= 1
                    mu = 0 - u
                x = mu // mv
            if neg:
                x = 0 - x
        if x < lo:
            x = lo
        if x > hi:
            x = hi
        pa[i] = x
        i += 1


@micropython.viper
def _div_i8(a, b, n: int, prm, tab, out, off: int):
    """out[off + i] = the int8 quotient of v1 = a[i], v2 = b[i] (zero
    points already subtracted) for i < n, as the module doc says.
    prm = [m, s, output zero point, lo, hi]; tab[v] =
    GetReciprocal(v) for 0 < v < len(tab).

    SaturatingRoundingDoublingHighMul(x, k) for k in [0, 2**31) is
    floor((x * k + 2**30) / 2**31) (C's truncating division of x * k +
    nudge gives the same), built from 16-bit limbs of the signed x and
    8/16-bit limbs of k whose partial products fit in 31 bits (as
    fixedpoint.requant_i8b). RoundingDivideByPOT(x, e) as x86 computes
    it for any e (see the module doc).
    """
    pa = ptr32(a)
    pb = ptr32(b)
    q = ptr32(prm)
    pt = ptr32(tab)
    o = ptr8(out)
    one: int = 1
    S: int = one << 31
    R: int = one << 30
    m: int = q[0]
    s: int = (q[1] ^ S) - S
    zo: int = (q[2] ^ S) - S
    lo: int = (q[3] ^ S) - S
    hi: int = (q[4] ^ S) - S
    i: int = 0
    while i < n:
        x: int = (pa[i] ^ S) - S
        d: int = (pb[i] ^ S) - S
        r: int = zo
        if d == 0:
            if x > 0:
                r = hi
            elif x < 0:
                r = lo
        else:
            if d < 0:
                x = 0 - x
                d = 0 - d
            k: int = pt[d]
            rs: int = 0  # recip_shift: bit length of d - 1
            t: int = d >> 1
            while t:
                rs += 1
                t = t >> 1
            hr: int = 31  # CountLeadingSignBits(x)
            t = x
            if t < 0:
                t = 0 - t - 1
            while t:
                hr -= 1
                t = t >> 1
            x = x << hr  # fits int32 by the choice of hr
            j: int = 0
            while j < 2:  # x = SRDHM(x, inv), then SRDHM(x, m)
                kh: int = k >> 16
                kl: int = k & 0xFFFF
                xh: int = x >> 16
                xl: int = x & 0xFFFF
                t = (xl & 0xFF) * kl + R
                t = (xl >> 8) * kl + (t >> 8)
                hb: int = xh * kl
                hc: int = xl * kh
                t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
                x = ((xh * kh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
                k = m
                j += 1
            e: int = hr + rs - s
            sh: int = e & 31
            r = x >> sh
            if e & 32:
                # (1ll << (e & 63)) - 1 has all low 32 bits set
                if x >= 0:
                    r += 1
            else:
                mask: int = (one << sh) - 1
                if (x & mask) > (mask >> 1) - (x >> 31):
                    r += 1
            r += zo
        if r < lo:
            r = lo
        if r > hi:
            r = hi
        o[off + i] = r
        i += 1
