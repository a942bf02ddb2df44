"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL (and
LOGICAL_AND, LOGICAL_OR): a bool output from two inputs, NumPy-style
broadcasting (rank up to 6, broadcast_prep.py / broadcast.py).

Follows tensorflow/lite/micro/kernels/comparisons.cc (ComparisonsPrepare,
EqualEval ... LessEqualEval), reference/comparisons.h (ComparisonImpl,
ComparisonWithScaling, BroadcastComparison4DSlow*) and, for LOGICAL_AND /
LOGICAL_OR, micro/kernels/logical.cc + logical_common.cc (LogicalImpl)
with reference/binary_function.h. Per output element (0 or 1 as a byte):

    int8:    v = MultiplyByQuantizedMultiplierSmallerThanOneExp(
                     (x - zp) * 2**8, m, s)   for each input, with its own
                 (m, s) = QuantizeMultiplierSmallerThanOneExp((double)scale)
             out = v1 OP v2                   (int32 compare)
    int32, int64:   out = x1 OP x2
    float32: out = x1 OP x2 as IEEE 754 compares (-0.0 == 0.0; NaN: only
             NOT_EQUAL is true)
    bool:    EQUAL / NOT_EQUAL on the bytes; LOGICAL_AND: x1 && x2,
             LOGICAL_OR: x1 || x2

Types, as TFLM's Eval switches: EQUAL / NOT_EQUAL take bool, float32,
int32, int64, int8; the four orderings float32, int32, int64, int8.
Refused (PrepareError): int16 (TFLM's
GREATER reads int16 but Prepare only fills the rescale for int8, so it
compares with uninitialized parameters: its result is undefined; the
other comparisons reject int16), any other type, inputs of two types, an
output that is not bool, int8 inputs without quantization or with a
scale of 1 or more (TFLM aborts in QuantizeMultiplierSmallerThanOneExp),
LOGICAL_AND / LOGICAL_OR on non-bool inputs (TFLM reads them as bool
bytes without a check: undefined).

Eval walks the output in chunks (broadcast.gather into the two halves of
the scratch array; int8 sides rescaled in place by rescale.scale_i32),
compares and stores bytes; nothing is allocated. An int64 element is
walked as two int32 words (the shapes get a last dimension of 2) and
compared high word first.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from . import broadcast
from .rescale import scale_i32

_BOOL = const(6)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT64 = const(4)
_INT8 = const(9)

_EQUAL = const(71)
_NOT_EQUAL = const(72)
_GREATER = const(61)
_GREATER_EQUAL = const(62)
_LESS = const(58)
_LESS_EQUAL = const(63)
_LOGICAL_AND = const(86)
_LOGICAL_OR = const(84)

_LEFT_SHIFT = const(8)  # comparisons.cc kLeftShift
_FLOAT_FLAG = const(8)  # mode bit: the words are float32 bit patterns

# state slots
_S_D1 = const(0)
_S_D2 = const(1)
_S_OUT = const(2)
_S_TOTAL = const(3)
_S_SA = const(4)
_S_SB = const(5)
_S_HALF = const(6)
_S_WALK = const(7)
_S_MODE = const(8)
_S_Q = const(9)
_S_WORDS = const(10)  # int32 words per element: 1, or 2 (int64)


class _Pairs:
    """A tensor's shape with a last dimension of 2: an int64 tensor seen
    as int32 words, for broadcast_prep.walker."""

    def __init__(self, t):
        self.shape = list(t.shape) + [2]
        self.size = 2 * t.size


def _multiplier(op, t):
    """(array('i', [m]), array('i', [s])): TFLM's
    QuantizeMultiplierSmallerThanOneExp((double)t.scale) of an int8
    input; PrepareError where TFLM aborts (no scale, scale >= 1)."""
    from .. import quant
    from ..errors import ModelError
    label = op.label()
    if not t.scales or len(t.scales) != 1:
        raise PrepareError("%s: int8 %s needs one (per-tensor) scale"
                           % (label, t.label()))
    if not -128 <= t.zero_point <= 127:
        raise PrepareError("%s: %s zero point %d is outside int8"
                           % (label, t.label(), t.zero_point))
    try:
        d = quant.from_f32(t.scale)
    except ModelError as e:
        raise PrepareError("%s: %s %s" % (label, t.label(), e))
    if not d[0] or quant.cmp(d, (1, 0)) >= 0:
        raise PrepareError("%s: %s scale %r must be in (0, 1) (TFLM: "
                           "QuantizeMultiplierSmallerThanOneExp)"
                           % (label, t.label(), t.scale))
    m, s = quant.quantize_multiplier(d)
    return array("i", [m]), array("i", [s])


def prepare(op, ins, outs, ctx):
    """Check a comparison (EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS,
    LESS_EQUAL) or LOGICAL_AND / LOGICAL_OR op and bind its eval.

    ins: two tensors of one type whose shapes broadcast (rank <= 6) to
    the output's: EQUAL / NOT_EQUAL bool, int8, int32, int64 or float32;
    the orderings int8, int32, int64 or float32 (int8: per-tensor scales
    in (0, 1), zero points in int8; the two scales may differ);
    LOGICAL_AND / OR bool. outs: one bool tensor. Raises PrepareError
    otherwise (see the module docstring for the types TFLM has and why
    they are refused).
    """
    from . import broadcast_prep as bp
    from .conv_util import keep, scratch_halves
    label = op.label()
    code = op.code
    if len(ins) != 2 or None in ins or len(outs) != 1:
        raise PrepareError("%s needs two inputs and one output" % label)
    x1, x2, y = ins[0], ins[1], outs[0]
    if x2.type != x1.type:
        raise PrepareError("%s: %s is %s but %s is %s" % (
            label, x2.label(), x2.dtype, x1.label(), x1.dtype))
    if y.type != _BOOL:
        raise PrepareError("%s: output %s is %s; it must be bool"
                           % (label, y.label(), y.dtype))
    logical = code in (_LOGICAL_AND, _LOGICAL_OR)
    eq = code in (_EQUAL, _NOT_EQUAL)
    t = x1.type
    if logical:
        ok = t == _BOOL
        what = "bool"
    else:
        ok = t in (_INT8, _INT32, _INT64, _FLOAT32) or (eq and t == _BOOL)
        what = "bool, int8, int32, int64, float32" if eq else \
            "int8, int32, int64, float32"
    if not ok:
        why = ""
        if t == _INT16 and code == _GREATER:
            why = (" (TFLM's GREATER reads int16 with rescale parameters "
                   "its Prepare never sets: undefined)")
        raise PrepareError("%s: %s is %s; supported: %s%s"
                           % (label, x1.label(), x1.dtype, what, why))
    bc = bp.check(op, x1, x2, y)
    mode = (0 if code == _EQUAL else 1 if code == _NOT_EQUAL else
            2 if code == _GREATER else 3 if code == _GREATER_EQUAL else
            4 if code == _LESS else 5 if code == _LESS_EQUAL else
            6 if code == _LOGICAL_AND else 7)
    q = None
    words = 1
    if t == _INT64:
        words = 2
        st = bp.walker(_Pairs(x1), _Pairs(x2), _Pairs(y), bc, width=4)
    elif t == _INT8:
        m1, s1 = _multiplier(op, x1)
        m2, s2 = _multiplier(op, x2)
        st = bp.walker(x1, x2, y, bc, -x1.zero_point, -x2.zero_point,
                       _LEFT_SHIFT, 1)
        q = (keep(ctx, m1), keep(ctx, s1), keep(ctx, m2), keep(ctx, s2))
    elif t == _BOOL:
        st = bp.walker(x1, x2, y, bc, width=1)
    else:
        st = bp.walker(x1, x2, y, bc, width=4)
        if t == _FLOAT32:
            mode |= _FLOAT_FLAG
    sa, sb, half = scratch_halves(ctx)
    if half < words:
        raise PrepareError("%s: needs %d scratch words" % (label, 2 * words))
    return _eval, (x1.data, x2.data, y.data, y.size, sa, sb, half // words,
                   keep(ctx, st), mode, q, words)


def _eval(st):
    d1 = st[_S_D1]
    d2 = st[_S_D2]
    yd = st[_S_OUT]
    total = st[_S_TOTAL]
    sa = st[_S_SA]
    sb = st[_S_SB]
    half = st[_S_HALF]
    walk = st[_S_WALK]
    mode = st[_S_MODE]
    q = st[_S_Q]
    words = st[_S_WORDS]
    broadcast.reset(walk)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n * words, d1, d2, walk)
        if words == 2:
            compare64(sa, sb, n, mode, yd, off)
        else:
            if q is not None:
                scale_i32(sa, n, q[0], q[1], 0)
                scale_i32(sb, n, q[2], q[3], 0)
            compare(sa, sb, n, mode, yd, off)
        off += n


@micropython.viper
def compare(a, b, n: int, mode: int, out, off: int):
    """out[off + i] = 1 if a[i] OP b[i] else 0, for i < n (bytes).

    a, b: int32 words (array('i') or views); OP by mode & 7: 0 ==, 1 !=,
    2 >, 3 >=, 4 <, 5 <=, 6 logical and (both non-zero), 7 logical or.
    mode & 8: the words are float32 bit patterns, compared as IEEE 754
    floats (each maps to the signed key +-magnitude, so -0.0 == 0.0; a
    NaN makes every comparison false but !=).
    """
    pa = ptr32(a)
    pb = ptr32(b)
    o = ptr8(out)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    INF: int = 0xFF * (one << 23)
    kind: int = mode & 7
    flt: int = mode & 8
    i: int = 0
    while i < n:
        u: int = pa[i]
        v: int = pb[i]
        ka: int = (u ^ S) - S
        kb: int = (v ^ S) - S
        r: int = 0
        if flt:
            ka = u & MAG
            kb = v & MAG
            if ka > INF or kb > INF:  # NaN: unordered
                o[off + i] = 1 if kind == 1 else 0
                i += 1
                continue
            if (u >> 31) & 1:
                ka = 0 - ka
            if (v >> 31) & 1:
                kb = 0 - kb
        if kind == 0:
            r = 1 if ka == kb else 0
        elif kind == 1:
            r = 1 if ka != kb else 0
        elif kind == 2:
            r = 1 if ka > kb else 0
        elif kind == 3:
            r = 1 if ka >= kb else 0
        elif kind == 4:
            r = 1 if ka < kb else 0
        elif kind == 5:
            r = 1 if ka <= kb else 0
        elif kind == 6:
            r = 1 if ka != 0 and kb != 0 else 0
        else:
            r = 1 if ka != 0 or kb != 0 else 0
        o[off + i] = r
        i += 1


@micropython.viper
def compare64(a, b, n: int, mode: int, out, off: int):
    """out[off + i] = 1 if a[i] OP b[i] else 0, for i < n (bytes), a[i]
    and b[i] int64 values as two int32 words each (low word first): OP
    by mode & 7 as compare() (0 ==, 1 !=, 2 >, 3 >=, 4 <, 5 <=); the high
    words compare signed, then the low words unsigned (w - 2**31 maps
    unsigned order to signed order on 32- and 64-bit viper alike)."""
    pa = ptr32(a)
    pb = ptr32(b)
    o = ptr8(out)
    one: int = 1
    S: int = one << 31
    kind: int = mode & 7
    i: int = 0
    while i < n:
        ka: int = (pa[2 * i + 1] ^ S) - S
        kb: int = (pb[2 * i + 1] ^ S) - S
        if ka == kb:
            ka = pa[2 * i] - S
            kb = pb[2 * i] - S
        r: int = 0
        if kind == 0:
            r = 1 if ka == kb else 0
        elif kind == 1:
            r = 1 if ka != kb else 0
        elif kind == 2:
            r = 1 if ka > kb else 0
        elif kind == 3:
            r = 1 if ka >= kb else 0
        elif kind == 4:
            r = 1 if ka < kb else 0
        else:
            r = 1 if ka <= kb else 0
        o[off + i] = r
        i += 1
