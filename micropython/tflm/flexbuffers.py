"""Minimal, bounds-checked FlexBuffers reader (custom operator options).

    from tflm import flexbuffers
    opts = flexbuffers.loads(buf)   # {'axis': 2, 'scale': 0.5, ...}

A CUSTOM operator's custom_options are usually a FlexBuffer map
(Operator.custom_options_format FLEXBUFFERS). loads() decodes one into
plain Python values: maps -> dict (str keys), vectors (untyped, typed,
fixed-size) -> list, ints / uints -> int, floats -> float, strings and
keys -> str (invalid UTF-8 replaced by '?'), bools -> bool, null ->
None, blobs -> bytes. Indirect ints / floats are followed.

Safety (the bytes come from a model file; an unaligned FlexBuffer
hard-faulted TFLM on a Cortex-M55): every position read is checked to
lie inside the buffer (FormatError names the offset); multi-byte values
are assembled byte by byte (floats through struct.unpack_from, which
reads bytes), so the buffer may start at any address; nesting is
limited to MAX_DEPTH, and both the number of values decoded and the
bytes of the distinct strings, keys and blobs decoded to _MAX_ITEMS plus
the buffer's length (offsets may point anywhere behind them, so
without a budget a small buffer could expand into a huge object).
A string, key or blob referenced many times is decoded once.

Floats: 64-bit floats are returned as Python floats, which are single
precision on most boards (as on the boards' float32 hardware); a user
option like 0.1 then reads as the nearest float32.

Format: flatbuffers/include/flatbuffers/flexbuffers.h and
flatbuffers/python/flatbuffers/flexbuffers.py (the reference readers).
"""

import struct

from micropython import const

from .errors import FormatError

MAX_DEPTH = 32
_MAX_ITEMS = const(4096)

# FlexBuffers value types (flexbuffers.h: Type).
_NULL, _INT, _UINT, _FLOAT, _KEY, _STRING = 0, 1, 2, 3, 4, 5
_IND_INT, _IND_UINT, _IND_FLOAT, _MAP, _VECTOR = 6, 7, 8, 9, 10
_VEC_INT, _VEC_KEY, _VEC_STR_OLD = 11, 14, 15
_VEC_INT2, _VEC_FLOAT4 = 16, 24
_BLOB, _BOOL, _VEC_BOOL = 25, 26, 36


class _Reader:
    def __init__(self, buf, pairs=False):
        self.pairs = pairs
        self.b = memoryview(buf)
        self.n = len(self.b)
        self.left = _MAX_ITEMS + self.n
        # Strings, keys and blobs: each position is decoded once (shared
        # keys and strings give the same object), and the bytes decoded
        # are budgeted too: offsets may point many values at one long
        # string, which would otherwise multiply it (MemoryError, or a
        # long key scan per value).
        self.text_left = _MAX_ITEMS + self.n
        self.cache = {}

    def check(self, pos, nbytes):
        if pos < 0 or nbytes < 0 or pos + nbytes > self.n:
            raise FormatError("FlexBuffer: offset %d (+%d bytes) is outside "
                              "the %d-byte buffer" % (pos, nbytes, self.n))

    def uint(self, pos, w):
        self.check(pos, w)
        b = self.b
        v = 0
        for k in range(w - 1, -1, -1):
            v = (v << 8) | b[pos + k]
        return v

    def int(self, pos, w):
        v = self.uint(pos, w)
        top = 1 << (8 * w - 1)
        return v - (top << 1) if v & top else v

    def float(self, pos, w):
        if w == 4:
            self.check(pos, 4)
            return struct.unpack_from("<f", self.b, pos)[0]
        if w == 8:
            self.check(pos, 8)
            return struct.unpack_from("<d", self.b, pos)[0]
        raise FormatError("FlexBuffer: %d-byte float at offset %d"
                          % (w, pos))

    def target(self, pos, w):
        """Follow the offset stored at pos (it points backwards)."""
        t = pos - self.uint(pos, w)
        self.check(t, 0)
        return t

    def spend(self, n, pos):
        """Count n more bytes of strings / blobs against the budget."""
        self.text_left -= n
        if self.text_left < 0:
            raise FormatError("FlexBuffer: too much string data (offset "
                              "%d)" % pos)

    def raw(self, pos, n, blob):
        """bytes (blob) or str (else) of the n bytes at pos, cached."""
        self.check(pos, n)
        k = (pos, n, blob)
        v = self.cache.get(k)
        if v is None:
            self.spend(n, pos)
            v = bytes(self.b[pos:pos + n])
            if not blob:
                try:
                    v = v.decode("utf-8")
                except (UnicodeError, ValueError):
                    v = "?" * n
            self.cache[k] = v
        return v

    def text(self, pos, n):
        return self.raw(pos, n, False)

    def key(self, pos):
        """A null-terminated key string at pos."""
        v = self.cache.get(pos)
        if v is not None:
            return v
        end = pos
        self.check(pos, 1)
        while self.b[end]:
            end += 1
            self.check(end, 1)
        v = self.text(pos, end - pos)  # spends the budget
        self.cache[pos] = v
        return v

    def count(self, n, pos):
        self.left -= n + 1
        if self.left < 0:
            raise FormatError("FlexBuffer: too many values (vector at "
                              "offset %d)" % pos)

    def value(self, pos, pw, packed, depth):
        """The value stored at pos with parent width pw."""
        t = packed >> 2
        w = 1 << (packed & 3)
        if t == _NULL:
            return None
        if t == _INT:
            return self.int(pos, pw)
        if t == _UINT:
            return self.uint(pos, pw)
        if t == _FLOAT:
            return self.float(pos, pw)
        if t == _BOOL:
            return self.uint(pos, pw) != 0
        if depth >= MAX_DEPTH:
            raise FormatError("FlexBuffer: nested deeper than %d (offset %d)"
                              % (MAX_DEPTH, pos))
        p = self.target(pos, pw)
        if t == _IND_INT:
            return self.int(p, w)
        if t == _IND_UINT:
            return self.uint(p, w)
        if t == _IND_FLOAT:
            return self.float(p, w)
        if t == _KEY:
            return self.key(p)
        if t == _STRING or t == _BLOB:
            n = self.uint(p - w, w)
            return self.raw(p, n, t == _BLOB)
        if t == _MAP or t == _VECTOR:
            return self.vector(p, w, t == _MAP, depth + 1)
        return self.typed(p, w, t, depth + 1)

    def vector(self, p, w, is_map, depth):
        """An untyped vector (or a map's values) of width w at p."""
        n = self.uint(p - w, w)
        self.count(n, p)
        self.check(p, n * w + n)  # elements, then one type byte each
        types = p + n * w
        vals = []  # a loop, not a comprehension: one stack frame less
        for k in range(n):
            vals.append(self.value(p + k * w, w, self.b[types + k], depth))
        if not is_map:
            return vals
        kp = self.target(p - 3 * w, w)  # keys: a typed vector of keys
        kw = self.uint(p - 2 * w, w)
        if kw not in (1, 2, 4, 8):
            raise FormatError("FlexBuffer: map at offset %d has key width "
                              "%d" % (p, kw))
        if self.uint(kp - kw, kw) != n:
            raise FormatError("FlexBuffer: map at offset %d has %d values "
                              "but a different number of keys" % (p, n))
        self.check(kp, n * kw)
        if self.pairs:
            return [(self.key(self.target(kp + k * kw, kw)), vals[k])
                    for k in range(n)]
        out = {}
        for k in range(n):
            out[self.key(self.target(kp + k * kw, kw))] = vals[k]
        return out

    def typed(self, p, w, t, depth):
        """A typed or fixed-size typed vector of element width w at p."""
        if _VEC_INT2 <= t <= _VEC_FLOAT4:
            n = (t - _VEC_INT2) // 3 + 2
            et = (t - _VEC_INT2) % 3 + _INT
        elif _VEC_INT <= t <= _VEC_STR_OLD or t == _VEC_BOOL:
            n = self.uint(p - w, w)
            et = _BOOL if t == _VEC_BOOL else t - _VEC_INT + _INT
        else:
            raise FormatError("FlexBuffer: unknown type %d at offset %d"
                              % (t, p))
        self.count(n, p)
        self.check(p, n * w)
        packed = et << 2
        if et == _STRING:  # deprecated vector of strings: same width
            packed |= packed_w(w)
        vals = []
        for k in range(n):
            vals.append(self.value(p + k * w, w, packed, depth))
        return vals


def packed_w(w):
    """log2 of a byte width 1, 2, 4 or 8."""
    return (1, 2, 4, 8).index(w)


def loads(buf, pairs=False):
    """Decode a FlexBuffer (bytes, bytearray or memoryview, any address).

    Returns the root value as plain Python objects (see the module doc);
    pairs=True: maps as lists of (key, value) in their stored order (the
    order TFLM's FlexbufferWrapper indexes them by), keys as stored.
    Raises FormatError for an out-of-bounds offset, an unknown type, too
    deep nesting (MAX_DEPTH, or deeper than the C stack allows: boards
    have a few KB) or too many values. An empty buffer gives None.
    """
    r = _Reader(buf, pairs)
    if r.n == 0:
        return None
    if r.n < 3:
        raise FormatError("FlexBuffer of %d bytes is too short" % r.n)
    w = r.b[r.n - 1]
    if w not in (1, 2, 4, 8):
        raise FormatError("FlexBuffer root has byte width %d" % w)
    packed = r.b[r.n - 2]
    try:
        return r.value(r.n - 2 - w, w, packed, 0)
    except RuntimeError as e:
        # MicroPython's stack check ("maximum recursion depth exceeded"):
        # a board's C stack may end before MAX_DEPTH levels of nesting
        raise FormatError("FlexBuffer: nested too deeply for the stack "
                          "(%s)" % e)
