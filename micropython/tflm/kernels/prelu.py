"""PRELU, int8, alpha broadcast NumPy-style against the input.

Follows tensorflow/lite/micro/kernels/prelu.cc, prelu_common.cc
(CalculatePreluParams) and reference/prelu.h (BroadcastPrelu4DSlow over
broadcast_loop.h's BroadcastBinaryOpSimple). Per output element, with
v = x - zp_in and a = alpha - zp_alpha:

    v >= 0:  out = clamp(MBQM(v, m1, s1) + zp_out)
    v < 0:   out = clamp(MBQM(v * a, m2, s2) + zp_out)

(m1, s1) = QuantizeMultiplier(in_scale / out_scale) and (m2, s2) =
QuantizeMultiplier(in_scale * alpha_scale / out_scale), in double (quant).
The first branch depends only on the input byte: prepare tabulates it.
Eval walks the broadcast in chunks of the shared scratch array: a viper
gather writes v * a (or 0) into one half and the tabulated MBQM(v) (or 0)
into the other, rescale.scale_i32 requantizes the products (MBQM(0) is
0), and the halves are summed and stored with the zero point and clamp.
alpha may be a constant or an activation.
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from .rescale import scale_i32, store_i8

_INT8 = const(9)


def prepare(op, ins, outs, ctx):
    """Check an int8 PRELU op and bind its eval.

    ins: [input int8, alpha int8] whose shapes broadcast (NumPy rules) to
    the output's; outs: [int8]. All three per-tensor quantized with int8
    zero points; in_scale / out_scale and in_scale * alpha_scale /
    out_scale below 2**30 (TFLM overflows int32 beyond). Raises
    PrepareError.
    """
    from .gemmlowp import mbqm_ref
    from .conv_util import keep
    from . import broadcast_prep as bp
    from .. import quant
    label = op.label()
    if len(ins) != 2 or None in ins or len(outs) != 1:
        raise PrepareError("%s needs two inputs and one output" % label)
    x, al, y = ins[0], ins[1], outs[0]
    for t in (x, al, y):
        if t.type != _INT8:
            raise PrepareError("%s: %s is %s; only int8 is supported"
                               % (label, t.label(), t.dtype))
        if not t.scales:
            raise PrepareError("%s: %s has no quantization"
                               % (label, t.label()))
        if not -128 <= t.zero_point <= 127:
            raise PrepareError("%s: %s zero point %d is outside int8"
                               % (label, t.label(), t.zero_point))
    loops = bp.broadcast_loops(op, x.shape, al.shape, y.shape)
    try:
        m1, s1 = quant.ratio_multiplier(x.scale, y.scale)
        m2, s2 = quant.conv_multiplier(x.scale, al.scale, y.scale)
    except ModelError as e:
        raise PrepareError("%s: %s" % (label, e))
    if s1 > 30 or s2 > 30:
        # MultiplyByQuantizedMultiplier's x * (1 << shift) overflows int32
        # from shift 31 on: undefined in TFLM (x86 and Arm disagree)
        raise PrepareError("%s: multiplier shift %d is too large (scales "
                           "%r, %r, %r)" % (label, max(s1, s2), x.scale,
                                            al.scale, y.scale))
    zi, zo = x.zero_point, y.zero_point
    # pos[b] = clamp(MBQM(v, m1, s1) + zp_out) for byte b, v = b - zp_in >= 0
    # (int8; the gather subtracts zp_out again, the same clamp comes last).
    pos = bytearray(256)
    for q in range(zi, 128):
        r = mbqm_ref(q - zi, m1, s1) + zo
        pos[q & 0xFF] = (-128 if r < -128 else 127 if r > 127 else r) & 0xFF
    inner, outer = loops[0], loops[1:]
    # Odometer: [n_outer, off_x, off_a, zp_in, zp_alpha, size0, count0,
    # step_x0, step_a0], then per outer loop [size, count, step_x, step_a].
    st = [len(outer), 0, 0, zi, al.zero_point,
          inner[0], 0, inner[1], inner[2]]
    for lp in outer:
        st += [lp[0], 0, lp[1], lp[2]]
    # The scratch array's halves hold the products and the table values.
    half = ctx.scratch_len // 2
    return _eval, (x.data, al.data, y.data, y.size, keep(ctx, array("i", st)),
                   keep(ctx, pos, 1), ctx.scratch, half,
                   keep(ctx, array("i", [m2])), keep(ctx, array("i", [s2])),
                   keep(ctx, array("i", [zo, -128, 127])))


def _eval(state):
    xd, ad, yd, total, st, pos, buf, half, m2, s2, qp = state
    _reset(st)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        _gather(buf, half, n, xd, ad, st, pos, qp)
        scale_i32(buf, n, m2, s2, 0)
        _sum_into(buf, half, n)
        store_i8(buf, n, yd, off, qp)
        off += n


@micropython.viper
def _reset(st):
    """Zero the odometer's offsets and counters."""
    s = ptr32(st)
    s[1] = 0
    s[2] = 0
    s[6] = 0
    k: int = 0
    while k < s[0]:
        s[10 + 4 * k] = 0
        k += 1


@micropython.viper
def _gather(buf, half: int, n: int, xd, ad, st, pos, qp):
    """For the next n output elements: buf[i] = v * a if v < 0 else 0 and
    buf[half + i] = pos[x] - zp_out if v >= 0 else 0 (v = x - zp_in,
    a = alpha - zp_alpha, zp_out = qp[0]), walking the broadcast odometer
    in st."""
    pa = ptr32(buf)
    pb = ptr32(buf)
    px = ptr8(xd)
    pal = ptr8(ad)
    pp = ptr8(pos)
    s = ptr32(st)
    one: int = 1
    S: int = one << 31
    zo: int = (ptr32(qp)[0] ^ S) - S
    nd: int = s[0]
    ox: int = s[1]
    oa: int = s[2]
    zx: int = (s[3] ^ S) - S
    za: int = (s[4] ^ S) - S
    d0: int = s[5]
    c0: int = s[6]
    sx: int = s[7]
    sl: int = s[8]
    i: int = 0
    while i < n:
        b: int = px[ox]
        v: int = ((b ^ 0x80) - 0x80) - zx
        if v >= 0:
            pa[i] = 0
            pb[half + i] = ((pp[b] ^ 0x80) - 0x80) - zo
        else:
            pa[i] = v * (((pal[oa] ^ 0x80) - 0x80) - za)
            pb[half + i] = 0
        i += 1
        ox += sx
        oa += sl
        c0 += 1
        if c0 == d0:  # carry into the outer loops
            c0 = 0
            ox -= d0 * sx
            oa -= d0 * sl
            k: int = 9
            end: int = 9 + 4 * nd
            while k < end:
                ox += s[k + 2]
                oa += s[k + 3]
                ck: int = s[k + 1] + 1
                if ck < s[k]:
                    s[k + 1] = ck
                    break
                s[k + 1] = 0
                ox -= s[k] * s[k + 2]
                oa -= s[k] * s[k + 3]
                k += 4
    s[1] = ox
    s[2] = oa
    s[6] = c0


@micropython.viper
def _sum_into(buf, half: int, n: int):
    """buf[i] += buf[half + i] for i < n (one of the two is 0)."""
    p = ptr32(buf)
    i: int = 0
    while i < n:
        p[i] = p[i] + p[half + i]
        i += 1
