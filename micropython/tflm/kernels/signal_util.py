"""What the Signal kernels share: operand checks, FlexBuffers options,
aligned views of constants.

TFLM's Signal library (signal/micro/kernels/*.cc) registers its
operators as CUSTOM ops named 'SignalWindow', 'SignalRfft', ...; their
options are a FlexBuffers map that each kernel's Init reads by position
(FlexbufferWrapper::ElementAsInt32(k): the k-th value in the order of
the sorted keys), and their Prepare checks input / output counts, ranks
and types with TF_LITE_ENSURE. Here every such check is a PrepareError
that names the operator and the tensor.
"""

import micropython
from micropython import const

from ..errors import PrepareError
from ..heap import zeros

_INT16 = const(7)
_INT32 = const(2)
_UINT32 = const(15)
_UINT64 = const(12)


def io(op, ins, outs, n_in, n_out):
    """Raise PrepareError unless the op has n_in inputs and n_out outputs,
    none of them omitted (TF_LITE_ENSURE_EQ(NumInputs / NumOutputs))."""
    if len(ins) != n_in or len(outs) != n_out or None in ins or \
            None in outs:
        raise PrepareError("%s needs %d input(s) and %d output(s)"
                           % (op.label(), n_in, n_out))


def want(op, t, code, rank=-1):
    """Raise PrepareError unless tensor t has TensorType `code` and, if
    rank >= 0, exactly that many dimensions (rank -2: at least one)."""
    from .. import schema
    if t.type != code:
        raise PrepareError("%s: %s is %s, expected %s" % (
            op.label(), t.label(), t.dtype, schema.type_name(code)))
    n = len(t.shape)
    if (rank >= 0 and n != rank) or (rank == -2 and n < 1):
        raise PrepareError("%s: %s has %d dimension(s), expected %s" % (
            op.label(), t.label(), n, "at least 1" if rank == -2 else rank))


def options(op, n, bools=()):
    """The first n values of the op's FlexBuffers options, read as TFLM's
    FlexbufferWrapper::ElementAsInt32(k) reads them: the root map's (or
    vector's) k-th slot as a signed little-endian integer of the slot
    width, whatever the value's type and key (a float's bits, a wide
    unsigned wrapped), and past the last slot whatever bytes follow in
    the buffer; wrapped to int32. Indexes in `bools` are ElementAsBool:
    1 when the slot's 64 bits are not all zero. Raises PrepareError where
    TFLM would read outside the options (none, not a map or vector, a
    slot past the buffer's end)."""
    raw, data, w = _root(op)
    out = []
    for k in range(n):
        pos = data + k * w
        if pos + w > len(raw):
            raise PrepareError("%s: custom option %d lies outside the "
                               "%d-byte options" % (op.label(), k, len(raw)))
        v = 0
        for i in range(w - 1, -1, -1):
            v = v << 8 | raw[pos + i]
        if k in bools:
            out.append(1 if v else 0)
            continue
        if v >> (8 * w - 1):  # signed at the slot's width
            v -= 1 << (8 * w)
        v &= 0xFFFFFFFF
        out.append(v - (1 << 32) if v >> 31 else v)
    return out


def _root(op):
    """(options bytes, start of the root vector's slots, slot width)."""
    from ..custom import custom_options
    raw = custom_options(op)
    n = 0 if raw is None else len(raw)
    if n < 3:
        raise PrepareError("%s has no custom_options" % op.label())
    rw, packed = raw[n - 1], raw[n - 2]
    if rw not in (1, 2, 4, 8) or n < rw + 2 or (packed >> 2) not in (9, 10):
        raise PrepareError("%s: custom_options must be a FlexBuffers map "
                           "or vector" % op.label())
    slot = n - 2 - rw
    off = 0
    for i in range(rw - 1, -1, -1):
        off = off << 8 | raw[slot + i]
    data = slot - off
    if not 0 <= data <= n:
        raise PrepareError("%s: custom_options: root vector at %d is "
                           "outside the %d bytes" % (op.label(), data, n))
    return raw, data, 1 << (packed & 3)


def option_by_key(op, key):
    """The int value under `key` in the op's FlexBuffers options map, as
    flexbuffers::Map[key].AsInt32() gives it (floats truncated, bools 0 /
    1, missing 0). Raises PrepareError for options that are not a
    FlexBuffer."""
    from ..custom import custom_options
    from ..flexbuffers import loads
    from ..errors import FormatError
    raw = custom_options(op)
    try:
        m = loads(raw, True) if raw is not None and len(raw) else None
    except FormatError as e:
        raise PrepareError("%s: custom_options: %s" % (op.label(), e))
    for kv in m if isinstance(m, list) else ():
        if isinstance(kv, tuple) and kv[0] == key:
            v = kv[1]
            if isinstance(v, float):
                return int(v) if v == v and abs(v) < 1e18 else 0
            return int(v) if isinstance(v, (int, bool)) else 0
    return 0


def aligned(t, ctx):
    """The data of tensor t readable with ptr16 / ptr32: t.data itself
    when 4-byte aligned (activations always are), else a copy made once
    in the arena's persistent part (constants at an odd place in the
    model; counted in ctx.copied_bytes)."""
    if _low_bits(t.data) == 0:
        return t.data
    from ..heap import persistent
    n = t.nbytes
    a = persistent(ctx, "B", n)
    a[:] = t.data
    if hasattr(ctx, "copied_bytes"):
        ctx.copied_bytes += n
    return a


def words(n):
    """array('i') of n zeros (a parameter block; keep() it)."""
    return zeros("i", n)


@micropython.viper
def _low_bits(buf) -> int:
    return int(ptr8(buf)) & 3
