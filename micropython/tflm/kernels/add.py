"""ADD (and the SUB of sub.py), int8 and int16 (16x8), with NumPy-style
broadcasting (rank up to 6, see broadcast_prep.py and broadcast.py).

Follows tensorflow/lite/micro/kernels/add.cc, add_common.cc
(CalculateOpDataAdd), tensorflow/lite/kernels/internal/reference/
integer_ops/add.h (AddFunc) and reference/broadcast_loop.h
(BroadcastBinaryOpSimple). Per element:

    a = MultiplyByQuantizedMultiplierSmallerThanOneExp(
            (x1 - zp1) * 2**20, m1, s1)
    b = (same for x2 with m2, s2)
    out = clamp(MultiplyByQuantizedMultiplierSmallerThanOneExp(a + b, mo, so)
                + out_zp)

with twice_max = 2 * max(scale1, scale2) and the double multipliers
scale1 / twice_max, scale2 / twice_max and twice_max / (2**20 * out_scale),
(int16: 2**15 in place of 2**20, clamped to int16, TFLM's
AddElementwise / SubElementwise for int16 and the general-scale path),
reproduced exactly by quant's integer double arithmetic. Eval gathers chunks
of both operands into the two halves of the shared scratch array and
requantizes them with rescale.scale_i32 (MultiplyByQuantizedMultiplier
with a shift <= 0 is exactly the SmallerThanOneExp variant): add_chunks.py,
imported only for models that need it (kernels._LAZY).

Outputs of at least LUT_MIN elements take a faster path (_add_lut): a
and b depend only on the input byte, so they are tabulated for all 256
bytes, then one loop does two table lookups, the output requantization
and the store per element, reading the inputs directly (equal shapes, or
a broadcast that is one loop, e.g. adding a scalar) or chunks of
broadcast input bytes (bind_lut). Same integers, so the same bits. The
tables: built by each eval in a work buffer (conv_util.work_buffer, in
the arena's head); in a model compiled on the host (kernels.COMPILING)
built by prepare into the persistent words, which stay in the model's
bytes on the board (no RAM, no build per eval). On Cortex-M4/M7/M33
(kernels.DSP) an equal-shape one runs add_dsp.add_lut, its element loop
in machine code (add_dsp.eval_lut, bound as _eval_lut there: plain and
compiled models).

SUB (sub.py) is the same computation with a - b and the same
multipliers; prepare_quant serves both.
"""

from array import array

import micropython
from micropython import const

from ..errors import ModelError, PrepareError
from . import DSP

_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)

_ADD_OPTIONS = const(11)
_LEFT_SHIFT = const(20)  # int8; int16: 15 (add_common.cc)
_ADD_FUSED_ACTIVATION_FUNCTION = const(0)
# Element count from which equal-shape ADDs use the lookup-table path:
# filling the tables costs about as much as 170 elements of the other.
LUT_MIN = 256
# int32 words of the two tables of the table kernels
TABLE_WORDS = const(512)
# int32 words of the table kernels' second work buffer: add_dsp.add_lut's
# block (thumb_dsp.add_lut's 10 words) on DSP builds; every build plans
# them, so that a model compiled on the host (for any arch) runs add_dsp
# there
LUT_WORDS = const(10)


def smaller_than_one(op, what, d):
    """QuantizeMultiplierSmallerThanOneExp of d = (m, e) as arrays
    (array('i', [multiplier]), array('i', [shift])). TFLM aborts unless
    0 < d < 1: raises PrepareError naming op and what."""
    from .. import quant
    if not d[0] or quant.cmp(d, (1, 0)) >= 0:
        raise PrepareError("%s: %s multiplier must be in (0, 1)"
                           % (op.label(), what))
    m, s = quant.quantize_multiplier(d)
    return array("i", [m]), array("i", [s])


def int16_io(op, ins, outs):
    """(x1, x2, y) of a 16x8 ADD / SUB: all int16 with per-tensor
    quantization, output zero point in int16, input zero points whose
    offsets TFLM's AddElementwise DCHECKs to lie in (-32767, 32767)."""
    from . import broadcast_prep as bp
    x1, x2, y = bp.binary_io(op, ins, outs)
    for t in (x1, x2, y):
        lim = 32768 if t is y else 32767
        if not t.scales or len(t.scales) != 1 or \
                not -lim <= t.zero_point < lim:
            raise PrepareError("%s: int16 %s needs one scale and a zero "
                               "point in (-32767, 32767)"
                               % (op.label(), t.label()))
    return x1, x2, y


def multipliers(op, x1, x2, y, left_shift=_LEFT_SHIFT):
    """The three (mults, shifts) array pairs of CalculateOpDataAdd (also
    SUB's: see sub.py), for the left shift of the output type (20 for
    int8, 15 for int16). Raises PrepareError where TFLM would abort."""
    from .. import quant
    try:
        f1, f2, fo = (quant.from_f32(x1.scale), quant.from_f32(x2.scale),
                      quant.from_f32(y.scale))
    except ModelError as e:
        raise PrepareError("%s: %s" % (op.label(), e))
    twice_max = quant.ldexp(f1 if quant.cmp(f1, f2) >= 0 else f2, 1)
    out_den = quant.ldexp(fo, left_shift)
    if not out_den[0]:
        raise PrepareError("%s: output scale is zero" % op.label())
    return (smaller_than_one(op, "input 1", quant.div(f1, twice_max)),
            smaller_than_one(op, "input 2", quant.div(f2, twice_max)),
            smaller_than_one(op, "output", quant.div(twice_max, out_den)))


def prepare(op, ins, outs, ctx):
    """Check an ADD op and bind its eval (float32 goes to float_ops,
    int32 to binary_i32).

    ins: two int8 tensors (zero points in int8) or two int16 ones
    (int16_io) whose shapes broadcast to the output's; outs: one tensor of
    the same type. Option: fused activation.
    Raises PrepareError (types, shapes, multipliers TFLM would abort on).
    """
    from . import broadcast_prep as bp
    t = ins[0].type if ins and ins[0] is not None else None
    if t == _FLOAT32:
        from . import float_ops
        return float_ops.prepare(op, ins, outs, ctx)
    if t == _INT32:
        from . import binary_i32
        return binary_i32.prepare(op, ins, outs, ctx)
    if t == _INT16:
        x1, x2, y = int16_io(op, ins, outs)
        qs = multipliers(op, x1, x2, y, 15)
    else:
        x1, x2, y = bp.int8_io(op, ins, outs,
                               "int8, int16, int32, float32")
        qs = multipliers(op, x1, x2, y)
    return prepare_quant(op, x1, x2, y, ctx, qs, _ADD_OPTIONS, False)


def prepare_quant(op, x1, x2, y, ctx, qs, opts_type, sub):
    """Bind the int8 ADD (sub False) or SUB (sub True) eval of checked
    int8 tensors x1, x2, y, given qs = the three (mults, shifts) array
    pairs of the two inputs and the output (all shifts <= 0). The fused
    activation is option 0 of an options table of type opts_type.
    """
    from . import broadcast_prep as bp
    from .conv_util import scratch_halves
    bc = bp.check(op, x1, x2, y)
    act = (op.opt_byte(_ADD_FUSED_ACTIVATION_FUNCTION, 0)
           if op.options_type == opts_type else 0)
    wide = y.type == _INT16
    if wide:
        lo, hi = bp.activation_range(op, act, y, -32768, 32767)
    else:
        lo, hi = bp.activation_range(op, act, y)
    q1, q2, qo = qs
    if y.size >= LUT_MIN and not wide:
        head = [y.size, -x1.zero_point, -x2.zero_point, q1[0][0], q1[1][0],
                q2[0][0], q2[1][0], qo[0][0], qo[1][0], y.zero_point, lo,
                hi, 1 if sub else 0]
        return bind_lut(_eval_lut, _add_lut, x1, x2, y, ctx, bc, head, 20)
    from . import add_chunks  # small or broadcast: kernels._LAZY
    store = add_chunks.store_i8
    if wide:  # int16 stores live with QUANTIZE's (declared in _LAZY)
        from .quantize import store_i16 as store
    st = bp.walker(x1, x2, y, bc, -x1.zero_point, -x2.zero_point,
                   15 if wide else _LEFT_SHIFT, 2 if wide else 1)
    sa, sb, half = scratch_halves(ctx)
    qp = array("i", [y.zero_point, lo, hi])
    return add_chunks.eval_chunks, (
        x1.data, x2.data, y.data, y.size, sa, sb, half, st, q1[0], q1[1],
        q2[0], q2[1], qo[0], qo[1], qp, 1 if sub else 0, store)


def bind_lut(ev, kernel, x1, x2, y, ctx, bc, head, shl):
    """(eval_fn, state) running a lookup-table kernel (_add_lut or
    squared_difference._sqdiff_lut) over the output of int8 x1 op x2.

    head: the kernel's first 13 parameters (see _add_lut); shl: the left
    shift of its tables (fill_tables). Equal shapes, or a broadcast that
    is one loop, run as one pass reading the inputs with strides 0 / 1:
    ev (_eval_lut, or squared_difference's) with the state (x1, x2, out,
    prm, tables, block) that the kernel reads, the tables (TABLE_WORDS)
    a work buffer that each eval fills, or in a model compiled on the
    host (kernels.COMPILING) persistent words filled here (prm's built
    flag set: eval never writes them), block LUT_WORDS words of work
    buffer (add_dsp.add_lut's). Other broadcasts gather the input bytes
    in chunks (broadcast.gather, raw int8 values) into the two halves of
    the shared scratch array and run the kernel on those with a stride of
    4 bytes (the low byte of each little-endian int32), building its
    tables in the first chunk only.
    """
    from . import broadcast_prep as bp
    from .conv_util import keep, persistent, scratch_halves, work_buffer
    lps = bp.loops(x1.shape, x2.shape, y.shape) if bc else None
    if lps is None or len(lps) == 1:
        from . import COMPILING
        a, b = (1, 1) if lps is None else (lps[0][1], lps[0][2])
        prm = array("i", head + [a, b, 0, 0])
        if COMPILING:
            tab = persistent(ctx, "i", TABLE_WORDS)
            fill_tables(prm, tab, shl)
            prm[16] = 1
        else:
            tab = work_buffer(ctx, TABLE_WORDS, True)
        # eval writes none of prm here: kept in the tail (a compiled
        # model's stays in the model's bytes)
        return ev, (x1.data, x2.data, y.data, keep(ctx, prm), tab,
                    work_buffer(ctx, LUT_WORDS, True))
    from . import add_chunks  # a broadcast: kernels._LAZY
    work = work_buffer(ctx, TABLE_WORDS, True)
    sa, sb, half = scratch_halves(ctx)
    prm = array("i", head + [4, 4, 0, 0])
    kst = (sa, sb, y.data, prm, work)
    return add_chunks.eval_lut_chunks, (
        kernel, kst, x1.data, x2.data, bp.walker(x1, x2, y, True), half,
        y.size)


# _eval_lut's state: the kernel's st (x1, x2, out, prm, tables, block:
# slots that the kernels only cast to pointers; a compiled model stores
# there the address of its view of the arena or the model, an int, no
# object: compiled.py T_ADDR).
ADDRESSES = (0, 1, 2, 3, 4, 5)


def _eval_lut(state):
    _add_lut(0, 0, 0, state)


@micropython.viper
def _add_lut(x: int, i: int, t: int, st):
    """Equal shapes: tab[q] = MBQM((int8(q) - zp1) << 20, m1, s1) and
    tab[256 + q] = the same for input 2, for every byte q; then
    out[off + i] = clamp(MBQM(tab[x1[i * a]] + tab[256 + x2[i * b]], mo,
    so) + zp) for i < n. For SUB (sub flag set) the input-2 entries are
    negated.
    st = (x1, x2, out, prm, tables, ...); prm = [n, -zp1, -zp2, m1,
    s1, m2, s2, mo, so, zp, lo, hi, sub, a, b, off, built]: a, b are the
    input strides in bytes, off the first output index, built set if the
    tables are already filled (see bind_lut); every shift is <= 0
    (SmallerThanOneExp).
    MBQM as in fixedpoint.requant_i8b (16-bit limbs: same bits on 32- and
    64-bit ports). x, i, t are the hot locals; callers pass 0.
    """
    p1 = ptr8(st[0])
    p2 = ptr8(st[1])
    po = ptr8(st[2])
    q = ptr32(st[3])
    tab = ptr32(st[4])
    one: int = 1
    S: int = one << 31
    M: int = (S << 1) - 1  # 2**32 - 1 on 64-bit, -1 on 32-bit
    R: int = one << 30
    fill_tables(st[3], st[4], 20)
    n: int = q[0]
    m = q[7]
    mh = m >> 16
    ml = m & 0xFFFF
    e = 0 - ((q[8] ^ S) - S)
    mask = (one << e) - 1
    half: int = mask >> 1
    zp: int = (q[9] ^ S) - S
    lo: int = (q[10] ^ S) - S
    hi: int = (q[11] ^ S) - S
    sa: int = q[13]
    sb: int = q[14]
    k1: int = 0
    k2: int = 0
    off: int = q[15]
    i = 0
    while i < n:
        # each table value is below 2**28 in magnitude: no int32 overflow
        x = ((tab[p1[k1]] ^ S) - S) + ((tab[256 + p2[k2]] ^ S) - S)
        k1 += sa
        k2 += sb
        xh = x >> 16
        xl = x & 0xFFFF
        t = (xl & 0xFF) * ml + R
        t = (xl >> 8) * ml + (t >> 8)
        hb = xh * ml
        hc = xl * mh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        t = x & mask
        if t > half - (x >> 31):
            x = (x >> e) + 1
        else:
            x = x >> e
        x += zp
        if x < lo or x > hi:
            x = ((x + S) & M) - S  # C's int32 wrap of the sum (64-bit)
            if x < lo:
                x = lo
            else:
                x = hi
        po[off + i] = x
        i += 1


@micropython.viper
def fill_tables(prm, work, shl: int):
    """The lookup tables of _add_lut / squared_difference._sqdiff_lut,
    unless prm[16] says this eval built them already: work[q] =
    MBQM((int8(q) - zp1) << shl, m1, s1) and work[256 + q] = the same for
    input 2, negated when prm[12] (SUB) is set; prm as _add_lut's, every
    shift <= 0. MBQM with 16-bit limbs as fixedpoint.requant_i8b."""
    q = ptr32(prm)
    tab = ptr32(work)
    if q[16]:
        return
    one: int = 1
    S: int = one << 31
    R: int = one << 30
    z: int = (q[1] ^ S) - S
    m: int = q[3]
    e: int = 0 - ((q[4] ^ S) - S)
    sg: int = 1
    j: int = 0
    while j < 512:
        if j == 256:
            z = (q[2] ^ S) - S
            m = q[5]
            e = 0 - ((q[6] ^ S) - S)
            if q[12]:  # SUB: tabulate -scaled2, then add
                sg = -1
        mh: int = m >> 16
        ml: int = m & 0xFFFF
        mask: int = (one << e) - 1
        x: int = ((((j & 0xFF) ^ 0x80) - 0x80) + z) << shl  # < 2**28
        xh: int = x >> 16
        xl: int = x & 0xFFFF
        t: int = (xl & 0xFF) * ml + R
        t = (xl >> 8) * ml + (t >> 8)
        hb: int = xh * ml
        hc: int = xl * mh
        t = (t >> 8) + (hb & 0xFFFF) + (hc & 0xFFFF)
        x = ((xh * mh + (hb >> 16) + (hc >> 16)) << 1) + (t >> 15)
        t = x & mask
        if t > (mask >> 1) - (x >> 31):
            x = (x >> e) + 1
        else:
            x = x >> e
        tab[j] = x * sg
        j += 1


# Cortex-M4/M7/M33 (kernels.DSP): the table kernels' step function runs
# the equal-shape ADD / SUB with its element loop in machine code where
# it applies (add_dsp.py, in DSP builds only, imported with this module)
if DSP:
    from .add_dsp import eval_lut as _eval_lut  # noqa: F811
