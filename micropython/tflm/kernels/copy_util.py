"""Shared byte-copy engines and checks for the data movement kernels.

STRIDED_SLICE, SLICE, PACK, UNPACK, SPLIT, SPLIT_V, SPACE_TO_BATCH_ND and
BATCH_TO_SPACE_ND only move elements: every type is copied as itemsize
bytes, so one engine serves float32, int8, int16, int32, int64 and bool.

- strided_plan / gather: the output written in order from a strided view
  of the input (a start offset, then per axis a count and an element
  stride that may be negative). Prepare drops size-1 axes and merges axes
  that are contiguous in the input, so eval copies the longest byte runs
  it can.
- interleave: one big tensor cut into blocks that alternate between
  several small ones (PACK, CONCATENATION-like; UNPACK, SPLIT: the same
  walk in the other direction).

All offsets are byte counts below model.MAX_BYTES (2**28): they fit a
viper int on 32-bit boards. Model data is only read with ptr8.
"""

from array import array

import micropython
from micropython import const

from .. import schema
from ..errors import PrepareError, raise_made  # noqa: F401 (re-export)

_BOOL = const(6)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT64 = const(4)
_INT8 = const(9)

# Types whose copy is the same for every TFLM byte-copy kernel.
F32, I8, I16, I32, I64, BOOL = (_FLOAT32, _INT8, _INT16,
                                _INT32, _INT64, _BOOL)


def fail(op, msg):
    """Raise PrepareError naming the operator."""
    raise PrepareError("%s: %s" % (op.label(), msg))


def check_types(op, x, outs, types, name):
    """Each tensor in outs has x's type, one of types (TensorType codes);
    raises PrepareError otherwise."""
    if x.type not in types:
        fail(op, "input %s is %s; %s supports %s" % (
            x.label(), x.dtype, name,
            ", ".join(schema.type_name(t) for t in types)))
    for y in outs:
        if y is None or y.type != x.type:
            fail(op, "output %s must have input %s type %s" % (
                y.label() if y is not None else "(none)", x.label(),
                x.dtype))


def const_vector(op, t, what, ctx, n=None, int64=False):
    """The values of a constant int32 (or int64 if allowed) tensor as a
    tuple, read byte-wise from the model (any alignment). n: the number
    of values required (None: any). Raises PrepareError if t is missing,
    not constant, of another type or of another length."""
    if t is None:
        fail(op, "%s input is missing" % what)
    if t.type != _INT32 and not (int64 and t.type == _INT64):
        fail(op, "%s %s must be int32%s, not %s" % (
            what, t.label(), " or int64" if int64 else "", t.dtype))
    v = ctx.const_ints(op, t, what) if t.size else ()
    if v is None:
        fail(op, "%s %s must be a constant tensor" % (what, t.label()))
    if n is not None and len(v) != n:
        fail(op, "%s %s has %d values, %d expected" % (what, t.label(),
                                                      len(v), n))
    return v


def axis_of(op, axis, rank, what="axis"):
    """axis in [-rank, rank) as a non-negative axis; PrepareError else."""
    if not -rank <= axis < rank:
        fail(op, "%s %d is out of range for rank %d" % (what, axis, rank))
    return axis + rank if axis < 0 else axis


def strides_of(shape):
    """Element strides of a dense row-major shape."""
    st = [1] * len(shape)
    for a in range(len(shape) - 2, -1, -1):
        st[a] = st[a + 1] * shape[a + 1]
    return st


def prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n


# --- strided gather -------------------------------------------------------
# Plan (array('i')): n, s, w (inner run: elements, input byte stride, bytes
# per element), r (outer axes), rows (their product), base (input byte
# offset of the first element), then r counts, r input byte strides (may
# be negative) and r odometer counters.

def strided_plan(axes, base, itemsize):
    """The gather plan for an output made of axes, a list of (count,
    input element stride) in output order, starting at input element
    base. Returns an array('i') for gather()."""
    if any(c == 0 for c, _ in axes):
        return array("i", [0, 1, 1, 0, 0, 0])
    ax = [(c, s * itemsize) for c, s in axes if c != 1]
    merged = []
    for c, s in ax:  # merge an axis into the previous one if contiguous
        if merged and merged[-1][1] == c * s:
            merged[-1] = (merged[-1][0] * c, s)
        else:
            merged.append((c, s))
    w = itemsize
    n, s = merged.pop() if merged else (1, w)
    if s == w:  # contiguous inner run: copy bytes
        n, s, w = n * w, 1, 1
    rows = prod(c for c, _ in merged)
    r = len(merged)
    return array("i", [n, s, w, r, rows, base * itemsize]
                 + [c for c, _ in merged] + [s for _, s in merged] + [0] * r)


@micropython.viper
def gather(x, y, p):
    """Write y's bytes in order from x following plan p (strided_plan)."""
    px = ptr8(x)
    py = ptr8(y)
    q = ptr32(p)
    one: int = 1
    S: int = one << 31  # ptr32 loads are not sign-extended on 64-bit
    n: int = q[0]
    s: int = (q[1] ^ S) - S
    w: int = q[2]
    r: int = q[3]
    rows: int = q[4]
    qd: int = 6              # q[qd + d]: count of outer axis d
    qs: int = 6 + r          # q[qs + d]: its input byte stride
    qc: int = 6 + r + r      # q[qc + d]: its odometer counter
    k: int = 0
    while k < r:
        q[qc + k] = 0
        k += 1
    o: int = 0
    base: int = q[5]
    row: int = 0
    while row < rows:
        i: int = base
        if w == 1:
            end: int = o + n
            while o < end:
                py[o] = px[i]
                o += 1
                i += s
        else:
            j: int = 0
            while j < n:
                b: int = 0
                while b < w:
                    py[o + b] = px[i + b]
                    b += 1
                o += w
                i += s
                j += 1
        d: int = r - 1
        while d >= 0:  # advance the odometer over the outer axes
            st: int = (q[qs + d] ^ S) - S
            c: int = q[qc + d] + 1
            base += st
            if c < q[qd + d]:
                q[qc + d] = c
                break
            q[qc + d] = 0
            base -= c * st  # c == count: back to this axis's start
            d -= 1
        row += 1


def gather_eval(st):
    """eval_fn for a single gather: st = (x data, y data, plan)."""
    gather(st[0], st[1], st[2])


# --- interleave -------------------------------------------------------------

@micropython.viper
def interleave(big, bufs, sizes, nbuf: int, outer: int, pack: int):
    """For k < outer, for i < nbuf: move sizes[i] bytes between block k of
    bufs[i] and the next bytes of big (into big if pack, else out)."""
    pb = ptr8(big)
    sz = ptr32(sizes)
    o: int = 0
    k: int = 0
    while k < outer:
        i: int = 0
        while i < nbuf:
            pt = ptr8(bufs[i])
            n: int = sz[i]
            s: int = k * n
            e: int = s + n
            if pack:
                while s < e:
                    pb[o] = pt[s]
                    o += 1
                    s += 1
            else:
                while s < e:
                    pt[s] = pb[o]
                    o += 1
                    s += 1
            i += 1
        k += 1


def interleave_eval(st):
    """eval_fn: st = (big data, tuple of small data, sizes, n, outer,
    pack flag)."""
    interleave(st[0], st[1], st[2], st[3], st[4], st[5])
