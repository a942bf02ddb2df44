"""Tensor.view(): a tensor's values in place, typed, with no allocation per
read or write (the allocation-free way to read an output at the REPL or in
a loop under micropython.heap_lock()). Apart from values.py, which it
shares its type tables with: imported alone, it costs a board about a
fifth of that module's RAM (a large model on a small board leaves little
room after it is built).
"""

from .errors import InvokeError

TYPECODES = {"int8": "b", "uint8": "B", "int16": "h", "int32": "i",
             "float32": "f"}
RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
          "int32": (-(1 << 31), (1 << 31) - 1)}


def _typecode(t):
    tc = TYPECODES.get(t.dtype)
    if tc is None:
        raise InvokeError("%s: %s values are not supported"
                          % (t.label(), t.dtype))
    return tc


class View:
    """A tensor's values in place (Tensor.view): v[i], v[i] = x, len(v),
    iteration. Indices are checked (-size <= i < size, as a list's), and
    so are written values (the type's range; a constant tensor refuses
    writes): IndexError, InvokeError; an index that is not an int
    (a slice) raises TypeError. Reads and writes allocate nothing
    for integer types (on a 32-bit port, int32 values beyond +-2**30 are
    boxed), so a loop under micropython.heap_lock() may use it. It keeps
    the tensor's memory (the interpreter's arena) alive."""

    def __init__(self, t, raw, lo, hi):
        self._raw = raw
        self._data = t.data  # keeps the memory that raw points into alive
        self._n = t.size
        self._lo = lo
        self._hi = hi
        self._const = t.is_const
        self._label = t.label()

    def __len__(self):
        return self._n

    def _at(self, i):
        n = self._n
        if not isinstance(i, int):
            raise TypeError("a View takes an int index (%s given): for "
                            "several values use get() or bytes(t.data)"
                            % type(i).__name__)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("index out of range (%d values)" % n)
        return i

    def __getitem__(self, i):
        return self._raw[self._at(i)]

    def __setitem__(self, i, x):
        i = self._at(i)
        if self._const:
            raise InvokeError("%s is constant (model data)" % self._label)
        if self._lo is not None and not self._lo <= x <= self._hi:
            raise InvokeError("%s: value %r is outside [%d, %d]"
                              % (self._label, x, self._lo, self._hi))
        self._raw[i] = x


def view(t):
    """See Tensor.view."""
    tc = _typecode(t)
    if t.data is None:
        raise InvokeError("%s has no data (not bound to an interpreter)"
                          % t.label())
    lo, hi = RANGES.get(t.dtype, (None, None))
    try:
        import uctypes
    except ImportError:  # CPython
        return View(t, memoryview(t.data).cast(tc), lo, hi)
    kind = {"b": uctypes.INT8, "B": uctypes.UINT8, "h": uctypes.INT16,
            "i": uctypes.INT32, "f": uctypes.FLOAT32}[tc]
    # LITTLE_ENDIAN: uctypes reads such arrays a byte at a time, so any
    # address works (a Cortex-M0 faults on unaligned 16/32-bit loads).
    # uctypes checks no negative index: View does.
    return View(t, uctypes.struct(uctypes.addressof(t.data),
                                  {"v": (uctypes.ARRAY | 0, kind | t.size)},
                                  uctypes.LITTLE_ENDIAN).v, lo, hi)
