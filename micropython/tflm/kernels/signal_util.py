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


def options(op, n):
    """The first n values of the op's FlexBuffers options, as TFLM's
    FlexbufferWrapper::ElementAsInt32(k) reads them: the k-th value of
    the root map (or vector) in its stored order whatever the keys are,
    0 past its end; ints and floats (truncated) wrapped to int32, bools
    0 / 1. Raises PrepareError for options that are missing or not
    FlexBuffers (TFLM would read before the buffer) and for values that
    are not numbers (strings, blobs, nested maps or vectors)."""
    from ..custom import custom_options
    from ..flexbuffers import loads
    from ..errors import FormatError
    raw = custom_options(op)
    if raw is None or not len(raw):
        raise PrepareError("%s has no custom_options" % op.label())
    try:
        m = loads(raw, True)
    except FormatError as e:
        raise PrepareError("%s: custom_options: %s" % (op.label(), e))
    if not isinstance(m, list):
        raise PrepareError("%s: custom_options must be a FlexBuffers map"
                           % op.label())
    out = []
    for k in range(n):
        v = m[k] if k < len(m) else 0
        if isinstance(v, tuple):  # (key, value) of a map
            v = v[1]
        if isinstance(v, float):
            v = int(v) if v == v and abs(v) < 1e18 else 0
        if not isinstance(v, (int, bool)):
            raise PrepareError("%s: custom option %d is %r, expected a "
                               "number" % (op.label(), k, v))
        v = int(v) & 0xFFFFFFFF
        out.append(v - (1 << 32) if v >> 31 else v)
    return out


def aligned(t, ctx):
    """The data of tensor t readable with ptr16 / ptr32: t.data itself
    when 4-byte aligned (activations always are), else a copy made once
    in the arena's persistent part (constants at an odd place in the
    model; counted in ctx.copied_bytes)."""
    if _low_bits(t.data) == 0:
        return t.data
    from ..context import persistent
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
