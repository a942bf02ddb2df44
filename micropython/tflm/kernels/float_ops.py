"""Elementwise float32 operators: ADD, SUB, MUL, RELU, RELU6, LOGISTIC,
TANH, and SOFTMAX.

ADD / SUB / MUL follow micro/kernels/add.cc, sub.cc, mul.cc with
reference_ops Add / Sub / Mul and their Broadcast*Slow versions: each
output is ActivationFunctionWithMinMax(x1 op x2) with one float32
rounding, inputs broadcast NumPy-style. RELU / RELU6 follow
micro/kernels/activations_common.cc (x < 0 ? 0 : x, and x > 6 ? 6 : ...;
-0.0 and NaN pass). All of these run in f32.vec (bit-exact float32), on
Cortex-M4F/M7/M33 (kernels.FPU) in thumb_fpu.vec (the same bits from the
FPU's VMUL and VADD).

SOFTMAX follows reference_ops::Softmax (kernels/internal/reference/
softmax.h) on the last dimension: max = std::max chain from lowest;
e_c = exp(fl(fl(x_c - max) * beta)); sum = fl(sum + e_c) in order;
out_c = fl(e_c / sum). LOGISTIC follows reference_ops::Logistic
(reference/logistic.h): x > 16.619047f gives 1, x < -9 gives exp(x),
else fl(1 / fl(1 + exp(-x))). TANH is std::tanh (reference/tanh.h).
Every step but exp / tanh is bit-exact (f32 engines); exp and tanh come
from f32_math (see there for their accuracy against the C library).
Nothing here allocates in invoke(), and nothing uses Python floats.

The non-float32 types of these ops are rejected (PrepareError), except
that ADD and SOFTMAX reach this module only for float32 (their int8
kernels live in add.py / softmax.py).
"""

from array import array

import micropython
from micropython import const

from ..heap import zeros
from ..errors import PrepareError
from . import FPU, f32, f32_math
from .f32 import vdiv
from .f32_math import vexp, vtanh

dot = vec = None  # (lstm_f32.py takes them from here too)
if FPU:  # Cortex-M4F/M7/M33: VMUL and VADD on the FPU, the same bits
    try:
        from .thumb_fpu import dot, vec
    except (ImportError, SyntaxError, ValueError):  # a build without it
        dot = vec = None
if vec is None:
    from .f32 import dot, vec

_ADD = const(0)
_FLOAT32 = const(0)
_LOGISTIC = const(14)
_MUL = const(18)
_RELU = const(19)
_RELU6 = const(21)
_SOFTMAX = const(25)
_SUB = const(41)
_TANH = const(28)

_ADD_OPTIONS = const(11)
_SUB_OPTIONS = const(28)
_MUL_OPTIONS = const(21)
_SOFTMAX_OPTIONS = const(9)
_ADD_FUSED_ACTIVATION_FUNCTION = const(0)
_SOFTMAX_BETA = const(0)

_ONE = f32.consts(f32.ONE)
_MINUS_ONE = f32.consts(f32.MINUS_ONE)
_NEG_ZERO = f32.consts(f32.NEG_ZERO)


def _float_io(op, ins, outs, n_in):
    """Check n_in float32 inputs and one float32 output."""
    label = op.label()
    if len(ins) != n_in or None in ins or len(outs) != 1:
        raise PrepareError("%s needs %d input(s) and one output"
                           % (label, n_in))
    for t in list(ins) + list(outs):
        if t.type != _FLOAT32:
            raise PrepareError("%s: %s is %s; only float32 %s is supported"
                               % (label, t.label(), t.dtype, op.name))
    return ins, outs[0]


def prepare(op, ins, outs, ctx):
    """Check a float32 ADD, SUB, MUL, RELU, RELU6, LOGISTIC, TANH or
    SOFTMAX operator and bind its eval.

    Binary ops: two float32 inputs that broadcast to the float32 output;
    Add/Sub/MulOptions fused activation. Unary ops: one float32 input and
    an output of as many elements (SOFTMAX: same last dimension;
    SoftmaxOptions beta). Raises PrepareError for other types and shapes.
    """
    code = op.code
    if code in (_ADD, _SUB, _MUL):
        return _prepare_binary(op, ins, outs, ctx)
    (x,), y = _float_io(op, ins, outs, 1)
    if x.size != y.size:
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (op.label(), x.label(), x.shape,
                                       y.label(), y.shape))
    if code == _SOFTMAX:
        return _prepare_softmax(op, x, y, ctx)
    if code in (_RELU, _RELU6):
        hi = f32.INF if code == _RELU else 0x40C00000  # 6.0
        p = f32.slots(f32.VEC_SLOTS)
        p[1] = 1
        p[7] = x.size
        return _eval_relu, (p, f32.consts(f32.ZERO, hi), f32.words(x, ctx),
                            y.data)
    if code == _LOGISTIC:
        return _eval_logistic, (f32.words(x, ctx), y.data, x.size,
                                _unary_state())
    if code == _TANH:
        return _eval_tanh, (f32.words(x, ctx), y.data, x.size,
                            _unary_state())
    raise PrepareError("%s: not a float32 elementwise op" % op.label())


def _prepare_binary(op, ins, outs, ctx):
    (x1, x2), y = _float_io(op, ins, outs, 2)
    opts = {_ADD: _ADD_OPTIONS, _SUB: _SUB_OPTIONS,
            _MUL: _MUL_OPTIONS}[op.code]
    # fused_activation_function: field 0 of AddOptions, SubOptions and
    # MulOptions alike
    act = (op.opt_byte(_ADD_FUSED_ACTIVATION_FUNCTION, 0)
           if op.options_type == opts else 0)
    lo, hi = f32.act_range(act)
    if tuple(x1.shape) == tuple(x2.shape) and x1.size == y.size:
        loops = [[y.size, 1, 1, 1]]
    else:
        from .broadcast_prep import broadcast_loops
        loops = broadcast_loops(op, x1.shape, x2.shape, y.shape)
    inner, outer = loops[0], loops[1:]
    # vec(a, b, c): ADD c + a*1, SUB c + b*(-1) with c = x1, MUL -0 + a*b.
    # A constant operand may sit at any address: words() aligns it.
    d1, d2 = f32.words(x1, ctx), f32.words(x2, ctx)
    if op.code == _ADD:
        a, b, c, ia, ib, ic = d1, _ONE, d2, 1, None, 2
    elif op.code == _SUB:
        a, b, c, ia, ib, ic = d2, _MINUS_ONE, d1, 2, None, 1
    else:
        a, b, c, ia, ib, ic = d1, d2, _NEG_ZERO, 1, 2, None
    p = f32.slots(f32.VEC_SLOTS)
    p[1] = inner[ia]
    p[3] = inner[ib] if ib else 0
    p[5] = inner[ic] if ic else 0
    p[7] = inner[0]
    # Outer loops: sizes and per-loop offset steps of a, b, c and out.
    sizes = array("i", [lp[0] for lp in outer])
    steps = array("i", [lp[k] if k else 0 for lp in outer
                        for k in (ia, ib, ic, 3)])
    return _eval_binary, (p, f32.consts(lo, hi), a, b, c, y.data, sizes,
                          steps, zeros("i", len(outer)),
                          len(outer))


# The state slots that the evals of this module only cast to pointers
# where they hold a view (the input and output of SOFTMAX, LOGISTIC and
# TANH, SOFTMAX's kept constants; arrays elsewhere): a compiled model
# stores there the address of its view of the arena or the model, an int,
# no object (compiled.py T_ADDR).
ADDRESSES = (0, 1, 8, 9)


def _eval_binary(st):
    p, q, a, b, c, out, sizes, steps, idx, n = st
    if n == 0:
        vec(p, q, a, b, c, out)
        return
    # Odometer over the outer loops; vec runs the innermost one.
    for k in range(n):
        idx[k] = 0
    p[0] = p[2] = p[4] = p[6] = 0
    while True:
        vec(p, q, a, b, c, out)
        k = 0
        while k < n:
            idx[k] += 1
            j = 4 * k
            if idx[k] < sizes[k]:
                p[0] += steps[j]
                p[2] += steps[j + 1]
                p[4] += steps[j + 2]
                p[6] += steps[j + 3]
                break
            idx[k] = 0
            m = sizes[k] - 1
            p[0] -= m * steps[j]
            p[2] -= m * steps[j + 1]
            p[4] -= m * steps[j + 2]
            p[6] -= m * steps[j + 3]
            k += 1
        if k == n:
            return


def _eval_relu(st):
    p, q, x, y = st
    vec(p, q, x, _ONE, _NEG_ZERO, y)


# ---- SOFTMAX ----

def _prepare_softmax(op, x, y, ctx):
    if not x.shape or tuple(x.shape) != tuple(y.shape):
        raise PrepareError("%s: input %s shape %s and output %s shape %s "
                           "differ" % (op.label(), x.label(), x.shape,
                                       y.label(), y.shape))
    beta = (op.opt_float(_SOFTMAX_BETA, 0.0)
            if op.options_type == _SOFTMAX_OPTIONS else 0.0)
    depth = x.shape[-1]
    rows = x.size // depth if depth else 0
    # tmp: 0 max, 1 sum, 2 beta
    tmp = f32.consts(0, 0, f32.bits(beta))
    pv = f32.slots(f32.VEC_SLOTS)
    pv[7] = depth
    pd = f32.slots(f32.DOT_SLOTS)
    pd[1] = 3  # weight q[3] = 1.0 with stride 0
    pd[2] = pd[5] = 1
    pd[8] = depth
    pd[9] = 1
    pd[11] = -1
    pq = f32.slots(f32.VDIV_SLOTS)
    pq[1] = 1
    pq[2] = 1  # tmp[1]: the sum
    pq[5] = depth
    from .conv_util import keep  # read-only for eval: in the tail
    none = keep(ctx, f32.consts(f32.NEG_INF, f32.INF))
    ex = _unary_state()
    ex[0][1] = 1
    ex[0][3] = depth
    qd = keep(ctx, f32.consts(f32.ZERO, f32.NEG_INF, f32.INF, f32.ONE))
    return _eval_softmax, (f32.words(x, ctx), y.data, rows, depth, tmp, pv,
                           pd, pq, none, qd, ex)


@micropython.viper
def _row_max(x, off: int, n: int, tmp):
    """tmp[0] = std::max chain over x[off:off+n] from lowest (NaNs lose)."""
    px = ptr32(x)
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    m: int = INF - 1 + (one << 31)  # -FLT_MAX
    km: int = 0 - (INF - 1)
    i: int = off
    end: int = off + n
    while i < end:
        v: int = px[i]
        kv: int = v & MAG
        if kv <= INF:
            if (v >> 31) & 1:
                kv = 0 - kv
            if km < kv:
                m = v
                km = kv
        i += 1
    ptr32(tmp)[0] = m


def _eval_softmax(st):
    x, y, rows, depth, tmp, pv, pd, pq, none, qd, ex = st
    off = 0
    r = 0
    while r < rows:
        _row_max(x, off, depth, tmp)
        # y = fl(x + fl(max * -1)), then y = fl(-0 + fl(y * beta))
        pv[0] = 0
        pv[1] = 0
        pv[2] = 0
        pv[3] = 0
        pv[4] = off
        pv[5] = 1
        pv[6] = off
        vec(pv, none, tmp, _MINUS_ONE, x, y)
        pv[0] = off
        pv[1] = 1
        pv[2] = 2
        pv[4] = 0
        pv[5] = 0
        vec(pv, none, y, tmp, _NEG_ZERO, y)
        pe, est = ex[0], ex[1]
        pe[0] = pe[2] = off
        vexp(pe, f32_math.EXP_Q31, est, y, y)
        # sum in order from 0.0, then y = fl(y / sum)
        pd[0] = off
        pd[12] = 1
        dot(pd, qd, y, qd, qd, tmp)
        pq[0] = off
        pq[4] = off
        vdiv(pq, none, y, tmp, y)
        off += depth
        r += 1


# ---- LOGISTIC and TANH ----

def _unary_state():
    """(vexp / vtanh parameters, their scratch, vec and vdiv parameters and
    clamp constants) shared by the transcendental ops."""
    return (f32.slots(f32_math.SLOTS), array("i", [0, 0, 0]),
            f32.slots(f32.VEC_SLOTS), f32.slots(f32.VDIV_SLOTS),
            f32.consts(f32.NEG_INF, f32.INF))


def _eval_tanh(st):
    x, y, n, (pe, est, pv, pd, none) = st
    pe[1] = 1
    pe[3] = n
    vtanh(pe, f32_math.EXP_Q31, f32_math.TANH_Q30, est, x, y)


@micropython.viper
def _logistic_pre(x, y, n: int):
    """y = x where x < -9 (exp(x) branch), else -x (the exp(-x) branch)."""
    px = ptr32(x)
    py = ptr32(y)
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    NINE: int = 0x4110 * (one << 16)  # 9.0f
    i: int = 0
    while i < n:
        v: int = px[i]
        # v < -9.0f: negative, not NaN, magnitude above 9.0f
        if (v >> 31) & 1 and (v & MAG) > NINE and (v & MAG) <= INF:
            py[i] = v
        else:
            py[i] = v ^ (one << 31)
        i += 1


@micropython.viper
def _logistic_kind(x, i: int) -> int:
    """0: x[i] > 16.619047f (result 1), 1: x[i] < -9 (result exp(x)),
    2: otherwise (1 / (1 + exp(-x)), NaN included)."""
    v: int = ptr32(x)[i]
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    mag: int = v & MAG
    if mag > INF:
        return 2
    if (v >> 31) & 1:
        if mag > 0x4110 * (one << 16):  # 9.0f
            return 1
        return 2
    if mag > 0x4184 * (one << 16) + 0xF3CF:  # 16.619047164916992188f
        return 0
    return 2


def _eval_logistic(st):
    x, y, n, (pe, est, pv, pd, none) = st
    _logistic_pre(x, y, n)
    pe[1] = 1
    pe[3] = n
    vexp(pe, f32_math.EXP_Q31, est, y, y)
    # runs of middle elements: y = fl(1 / fl(1 + y)), y = exp(-x)
    i = 0
    while i < n:
        kind = _logistic_kind(x, i)
        if kind == 0:
            _set_one(y, i)
            i += 1
        elif kind == 1:
            i += 1
        else:
            j = i + 1
            while j < n and _logistic_kind(x, j) == 2:
                j += 1
            pv[0] = pv[6] = i
            pv[1] = 1
            pv[7] = j - i
            vec(pv, none, y, _ONE, _ONE, y)  # fl(1 + fl(y * 1))
            pd[2] = pd[4] = i
            pd[3] = 1
            pd[5] = j - i
            vdiv(pd, none, _ONE, y, y)
            i = j


@micropython.viper
def _set_one(y, i: int):
    ptr32(y)[i] = 0x3F800000
