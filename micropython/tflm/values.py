"""Reading and writing tensor values at the REPL (not on the hot path).

Converts between a tensor's raw bytes and Python values: array.array,
lists of numbers, any buffer, and ulab ndarrays when ulab is present.
Quantization follows TFLite: q = round(x / scale) + zero_point, ties away
from zero, clamped; x = (q - zero_point) * scale.
"""

from array import array

from .errors import InvokeError
from .view import RANGES, TYPECODES, _typecode, view  # noqa: F401


def array_typecode(a):
    """The typecode of an array.array ('b', 'f', ...). MicroPython's array
    has no .typecode attribute: read it from the repr of an empty slice,
    "array('f')"."""
    tc = getattr(a, "typecode", None)
    return tc if tc is not None else repr(a[:0])[7]


def is_float_values(values):
    """True for real values: array('f' / 'd'), a float ulab / numpy
    ndarray, or a list / tuple holding a float."""
    if isinstance(values, array):
        return array_typecode(values) in "fd"
    if isinstance(values, (list, tuple)):
        for v in values:
            if isinstance(v, float):
                return True
        return False
    d = getattr(values, "dtype", None)
    if d is None:
        return False
    kind = getattr(d, "kind", None)  # numpy dtype
    if kind is not None:
        return kind == "f"
    if isinstance(d, int):  # ulab: the typecode as an int
        return d in (102, 100)  # ord('f'), ord('d')
    return "float" in str(d)  # ulab dtype objects


def _raw(values):
    """Raw bytes of a buffer or ndarray, or None for other values."""
    if isinstance(values, (bytes, bytearray, memoryview)):
        return values
    if isinstance(values, (array, list, tuple)):
        return None
    if hasattr(values, "tobytes"):
        return values.tobytes()  # ulab / numpy ndarray
    try:
        return memoryview(values)  # any other buffer (bytes-like)
    except TypeError:
        return None


def _flat(values):
    """A ulab / numpy ndarray of more than one dimension flattened (so a
    shaped output of predict() or an image-shaped array can go in); any
    other value as it is."""
    return values.flatten() if len(getattr(values, "shape", ())) > 1 \
        else values


def _check_container(t, values, what):
    """InvokeError unless values is a sequence, buffer or ndarray."""
    try:
        len(values)  # MicroPython's builtins have no __len__ attribute
        ok = not isinstance(values, (str, dict))
    except TypeError:
        ok = False
    if not ok:
        raise InvokeError("%s: %s takes a sequence, buffer or ndarray, not "
                          "%s" % (t.label(), what, type(values).__name__))


def set_values(t, values):
    """Write values into tensor t (see Tensor.set)."""
    _check_container(t, values, "set()")
    values = _flat(values)
    if is_float_values(values) and not isinstance(values, (list, tuple)):
        if t.dtype != "float32":
            raise InvokeError("%s is %s: real values need set_float()"
                              % (t.label(), t.dtype))
        if not (isinstance(values, array) and
                array_typecode(values) == "f"):
            values = array("f", values)  # e.g. a float64 ndarray
    raw = _raw(values)
    if raw is None:
        tc = _typecode(t)
        if isinstance(values, array):
            have = array_typecode(values)
            if have != tc:
                raise InvokeError("%s is %s: array typecode '%s' does not "
                                  "match '%s'" % (t.label(), t.dtype,
                                                  have, tc))
            raw = values
        else:
            raw = _pack(t, tc, values)
    if isinstance(raw, array):
        raw = bytes(raw)
    n = len(raw)
    if n != t.nbytes:
        raise InvokeError("%s needs %d bytes (%d x %s), got %d"
                          % (t.label(), t.nbytes, t.size, t.dtype, n))
    t.data[:] = raw


def _pack(t, tc, values):
    vals = list(values)
    if len(vals) != t.size:
        raise InvokeError("%s needs %d values, got %d"
                          % (t.label(), t.size, len(vals)))
    rng = RANGES.get(t.dtype)
    if rng is not None:
        for v in vals:
            if isinstance(v, float):
                raise InvokeError("%s is %s: real values need set_float()"
                                  % (t.label(), t.dtype))
            if not isinstance(v, int):
                raise InvokeError("%s: %r is not an integer"
                                  % (t.label(), v))
            if not rng[0] <= v <= rng[1]:
                raise InvokeError("%s: value %r is outside %s"
                                  % (t.label(), v, t.dtype))
    else:  # float32
        for v in vals:
            if not isinstance(v, (int, float)):
                raise InvokeError("%s: %r is not a number" % (t.label(), v))
    return array(tc, vals)


def _out_len(t, out, what):
    """len(out), after checking that out is a sequence, and flat
    (InvokeError: it is filled in place, so it cannot be flattened)."""
    _check_container(t, out, what)
    if len(getattr(out, "shape", ())) > 1:
        raise InvokeError("%s: %s must be flat" % (t.label(), what))
    return len(out)


def get_values(t, out=None):
    """A copy of the tensor's values as array.array; with out (an
    array.array of the tensor's typecode and size, or a bytearray of
    nbytes), the bytes copied into out, which is returned (no block of
    the tensor's size is allocated). InvokeError for an out of another
    type (a memoryview too) or size."""
    tc = _typecode(t)
    if out is None:
        return array(tc, bytes(t.data))
    n = _out_len(t, out, "out")
    if isinstance(out, array):
        have = array_typecode(out)
        if have != tc or n != t.size:
            raise InvokeError("%s: out must be array('%s') of %d values, "
                              "got array('%s') of %d" % (t.label(), tc,
                                                         t.size, have, n))
    elif not isinstance(out, bytearray) or n != t.nbytes:
        # not a memoryview: its item type and writability are not
        # checkable on MicroPython, and the copy below ignores both
        raise InvokeError("%s: out must be a bytearray of %d bytes or "
                          "array('%s') of %d values, got %s of %d" % (
                              t.label(), t.nbytes, tc, t.size,
                              type(out).__name__, n))
    from .heap import _copy
    _copy(out, t.data, t.nbytes)
    return out


def quantize(t, values):
    """Float values -> list of ints with t's scale and zero point."""
    if not t.scale:
        raise InvokeError("%s has no quantization scale" % t.label())
    _check_container(t, values, "set_float()")
    if isinstance(values, (bytes, bytearray)):
        raise InvokeError("%s: set_float() takes real values, not bytes"
                          % t.label())
    if t.dtype not in RANGES:
        raise InvokeError("%s: no set_float() for %s" % (t.label(),
                                                          t.dtype))
    values = _flat(values)
    lo, hi = RANGES[t.dtype]
    out = []
    for x in values:
        if not isinstance(x, (int, float)):
            raise InvokeError("%s: %r is not a number" % (t.label(), x))
        q = x / t.scale
        if q != q:
            raise InvokeError("%s: cannot quantize NaN" % t.label())
        if q >= hi - t.zero_point:  # also +inf: saturate
            out.append(hi)
        elif q <= lo - t.zero_point:
            out.append(lo)
        else:
            q = int(q + 0.5) if q >= 0 else -int(-q + 0.5)
            out.append(min(hi, max(lo, q + t.zero_point)))
    return out


def dequantize(t, out=None):
    """array('f') of real values, or, when ulab exists, a float ulab
    ndarray shaped like the tensor (OpenMV's ml.Model): its shape, less
    leading 1s where the firmware's ulab holds fewer dimensions
    (ULAB_MAX_DIMS, 2 in many builds: [1, 6, 8400] -> (6, 8400)), flat
    when it still has too many. out: a caller-owned float container of
    t.size values (array('f') / array('d'), or a flat float ulab
    ndarray), filled in place and returned: no block of the tensor's size
    is allocated (each value is still a float object on ports that box
    floats). InvokeError for an out of another type or size."""
    if out is not None:
        return _dequantize_into(t, out)
    if t.dtype == "float32":
        vals = get_values(t)
    else:
        if not t.scale:
            raise InvokeError("%s has no quantization scale" % t.label())
        vals = _dequantize_into(t, array("f", range(t.size)))
    try:
        from ulab import numpy as np
    except ImportError:
        return vals
    return _shaped(np.array(vals, dtype=np.float), tuple(t.shape))


def _shaped(a, dims):
    """Flat ndarray a reshaped to dims (see dequantize)."""
    while len(dims) > 1:
        try:
            return a.reshape(dims)
        except ValueError:  # more dimensions than this ulab holds
            if dims[0] != 1:
                break
            dims = dims[1:]
    return a


def _dequantize_into(t, out):
    n = _out_len(t, out, "out")
    if not is_float_values(out) or isinstance(out, (list, tuple)) \
            or n != t.size:
        what = type(out).__name__
        if isinstance(out, array):
            what = "array('%s')" % array_typecode(out)
        raise InvokeError("%s: out must be array('f') / array('d') (or a "
                          "float ndarray) of %d values, got %s of %d" % (
                              t.label(), t.size, what, n))
    v = view(t)._raw  # indices below are in range
    if t.dtype == "float32":
        for i in range(n):
            out[i] = v[i]
        return out
    if not t.scale:
        raise InvokeError("%s has no quantization scale" % t.label())
    # per channel along quantized_dimension when there are several scales
    scales, zps = t.scales, t.zero_points
    qd, shape = t.quantized_dimension, t.shape
    dim = len(scales)
    if len(shape) == 1:
        qd = 0  # a bias carries its filter's quantized dimension
    if len(zps) not in (1, dim) or dim > 1 and not (
            0 <= qd < len(shape) and shape[qd] == dim):
        raise InvokeError("%s: %d scales for shape %s"
                          % (t.label(), dim, shape))
    inner = 1
    for d in shape[qd + 1:]:
        inner *= d
    one = len(zps) == 1
    for i in range(n):
        c = i // inner % dim
        out[i] = (v[i] - zps[0 if one else c]) * scales[c]
    return out
