"""Minimal, bounds-checked FlatBuffer reader over any buffer.

Reads tables (through their vtables), scalars, vectors, strings and unions
from bytes, bytearray or memoryview (a /rom file, frozen bytes, flash via
uctypes.bytearray_at) without copying. Every offset followed is checked to
lie inside the buffer; a bad one raises FormatError naming the offset.
Multi-byte values are assembled byte by byte, little-endian, so the model
may start at any address (no unaligned word loads on Cortex-M0+).

Semantics follow flatbuffers' own reader and Verifier
(flatbuffers/python/flatbuffers/table.py, include/flatbuffers/verifier.h).
"""

import struct

from .errors import FormatError

# Largest vector we accept: a sanity bound so that a corrupt length cannot
# make a loop run for hours on a board (2**24 elements).
MAX_VECTOR = 1 << 24


class FlatBuffer:
    """A read-only view of FlatBuffer bytes.

    buf: any object with the buffer protocol; it is wrapped in a memoryview,
    never copied. Raises FormatError if it is too small to hold a root.
    """

    def __init__(self, buf):
        self.mv = memoryview(buf)
        self.size = len(self.mv)
        if self.size < 8:
            raise FormatError("model is %d bytes, too small" % self.size)

    def check(self, pos, nbytes, what):
        """Raise FormatError unless [pos, pos + nbytes) is inside."""
        if pos < 0 or nbytes < 0 or pos + nbytes > self.size:
            raise FormatError("%s at offset %d (+%d bytes) is outside the "
                              "%d-byte model" % (what, pos, nbytes, self.size))

    def u8(self, pos):
        self.check(pos, 1, "byte")
        return self.mv[pos]

    def u32(self, pos):
        self.check(pos, 4, "uint32")
        b = self.mv
        return (b[pos] | (b[pos + 1] << 8) | (b[pos + 2] << 16)
                | (b[pos + 3] << 24))

    def i32(self, pos):
        self.check(pos, 4, "int32")
        b = self.mv
        hi = b[pos + 3]
        if hi & 0x80:
            # -(~v + 1) from the complemented bytes: a small negative
            # value (a vtable's soffset) never becomes a big int (boards'
            # small ints stop at 2**30)
            return -((b[pos] ^ 0xFF) | ((b[pos + 1] ^ 0xFF) << 8)
                     | ((b[pos + 2] ^ 0xFF) << 16)
                     | ((hi ^ 0xFF) << 24)) - 1
        return (b[pos] | (b[pos + 1] << 8) | (b[pos + 2] << 16)
                | (hi << 24))

    def u64(self, pos):
        return self.u32(pos) | (self.u32(pos + 4) << 32)

    def i64(self, pos):
        v = self.u64(pos)
        return v - (1 << 64) if v >> 63 else v

    def f32(self, pos):
        self.check(pos, 4, "float32")
        # struct reads byte by byte on MicroPython and CPython: align-safe.
        return struct.unpack_from("<f", self.mv, pos)[0]

    def deref(self, pos, what):
        """Follow the uoffset stored at pos; return the target position."""
        target = pos + self.u32(pos)
        self.check(target, 4, what)
        return target

    def root(self):
        """The root table (offset stored in the first 4 bytes)."""
        return Table(self, self.deref(0, "root table"))

    def table(self, pos):
        """The table at absolute position pos (a Table): for holders of
        a FlatBuffer that do not import this module (tensor.py, custom.py:
        this module is dropped once an interpreter is built)."""
        return Table(self, pos)


class Table:
    """A FlatBuffer table at absolute position pos, read through its vtable.

    Field accessors take the field's index in the schema (0-based) and a
    default returned when the field is absent.
    """

    def __init__(self, fb, pos):
        # Byte reads and bounds checks are written out here (no method
        # calls in the common case): on a Cortex-M0 each call costs
        # thousands of instructions, and construction makes thousands of
        # tables. fb.check() runs only to raise its FormatError.
        b = fb.mv
        size = fb.size
        if pos < 0 or pos + 4 > size:
            fb.check(pos, 4, "table")
        hi = b[pos + 3]
        if hi & 0x80:  # soffset < 0: the vtable follows the table
            vt = pos + ((b[pos] ^ 0xFF) | ((b[pos + 1] ^ 0xFF) << 8)
                        | ((b[pos + 2] ^ 0xFF) << 16)
                        | ((hi ^ 0xFF) << 24)) + 1
        else:
            vt = pos - (b[pos] | (b[pos + 1] << 8) | (b[pos + 2] << 16)
                        | (hi << 24))
        if vt < 0 or vt + 4 > size:
            fb.check(vt, 4, "vtable of table at %d" % pos)
        vlen = b[vt] | (b[vt + 1] << 8)
        tlen = b[vt + 2] | (b[vt + 3] << 8)
        if vlen < 4 or vlen & 1:
            raise FormatError("vtable at offset %d has bad length %d"
                              % (vt, vlen))
        if vt + vlen > size:
            fb.check(vt, vlen, "vtable")
        if pos + tlen > size:
            fb.check(pos, tlen, "table")
        self.fb = fb
        self.pos = pos
        self.vt = vt
        self.vlen = vlen
        self.tlen = tlen

    def field(self, i, nbytes):
        """Absolute position of field i, or 0 if it is absent."""
        vo = 4 + 2 * i
        if vo >= self.vlen:
            return 0
        b = self.fb.mv
        p = self.vt + vo
        off = b[p] | (b[p + 1] << 8)
        if off == 0:
            return 0
        if off + nbytes > self.tlen:
            raise FormatError("field %d of table at offset %d lies outside "
                              "the table" % (i, self.pos))
        return self.pos + off

    def has(self, i):
        return self.field(i, 1) != 0

    # field() has checked that the value lies inside the table, which
    # lies inside the buffer: the scalar reads below need no more checks.

    def u8(self, i, default=0):
        p = self.field(i, 1)
        return self.fb.mv[p] if p else default

    def i8(self, i, default=0):
        p = self.field(i, 1)
        if not p:
            return default
        return (self.fb.mv[p] ^ 0x80) - 0x80

    def i32(self, i, default=0):
        p = self.field(i, 4)
        return self.fb.i32(p) if p else default

    def u32(self, i, default=0):
        p = self.field(i, 4)
        return self.fb.u32(p) if p else default

    def u64(self, i, default=0):
        p = self.field(i, 8)
        return self.fb.u64(p) if p else default

    def f32(self, i, default=0.0):
        p = self.field(i, 4)
        return self.fb.f32(p) if p else default

    def table(self, i):
        """The sub-table in field i, or None."""
        p = self.field(i, 4)
        if not p:
            return None
        return Table(self.fb, self.fb.deref(p, "sub-table"))

    def vector(self, i, elem_size):
        """(start, count) of the vector in field i; (0, 0) if absent.

        Checks that count * elem_size bytes lie inside the buffer.
        """
        p = self.field(i, 4)
        if not p:
            return 0, 0
        fb = self.fb
        vp = fb.deref(p, "vector")
        n = fb.u32(vp)
        if n > MAX_VECTOR:
            raise FormatError("vector at offset %d has absurd length %d"
                              % (vp, n))
        fb.check(vp + 4, n * elem_size, "vector data")
        return vp + 4, n

    def string(self, i, default=""):
        """The string in field i, decoded (invalid UTF-8 is replaced)."""
        start, n = self.vector(i, 1)
        if not start:
            return default
        raw = bytes(self.fb.mv[start:start + n])
        try:
            return raw.decode("utf-8")
        except (UnicodeError, ValueError):
            return "?" * n

    def int_vector(self, i):
        """The [int] (int32) vector in field i as a tuple; () if absent."""
        start, n = self.vector(i, 4)
        fb = self.fb
        return tuple(fb.i32(start + 4 * k) for k in range(n))

    def table_at(self, start, k):
        """Element k of a vector of tables starting at start."""
        return Table(self.fb, self.fb.deref(start + 4 * k, "table element"))
