"""The user's static arena (Interpreter(model, arena=buf)): the buffer
checked, claimed (interpreter._OWNERS) and laid out as TFLM's
tensor_arena, the head then the tail. Imported by allocator.py for a
construction with arena= only, and dropped with the other construction
modules (interpreter.CONSTRUCTION).
"""

import sys
from array import array

import micropython

from .errors import ArenaError, InvokeError
from .heap import zeros
from .interpreter import _OWNERS


def check(buf):
    """memoryview of the arena= buffer buf; TypeError unless buf is a
    writable buffer of bytes that read as 0..255 (a bytearray, a
    memoryview of one, array('B'))."""
    try:
        mv = memoryview(buf)
        mv[0:0] = b""  # read-only: TypeError
        if len(mv):
            if len(bytes(mv[:1])) != 1:  # an array('i') or the like
                raise TypeError
            v = mv[0]
            mv[0] = 255
            ok = mv[0] == 255  # not array('b')
            mv[0] = v
            if not ok:
                raise TypeError
    except (TypeError, ValueError, OverflowError):
        raise TypeError("arena must be a writable buffer of bytes (a "
                        "bytearray, or a memoryview of one), not %s"
                        % type(buf).__name__)
    return mv


def _claim(it, start, end, src):
    """Make interpreter it the owner of the arena= bytes at addresses
    [start, end) (see interpreter._OWNERS); src: the bytearray given, or
    None (it._held)."""
    k = 0
    while k < len(_OWNERS):
        e = _OWNERS[k]
        if e[0] < end and start < e[1]:
            e[2][0] = 1
            del _OWNERS[k]
        else:
            k += 1
    st = array("i", [0])
    _OWNERS.append([start, end, st])
    # the InvokeError made now: invoke() raises it under heap_lock too
    it._held = [st, InvokeError(
        "another Interpreter was built on this one's arena= buffer, or the "
        "bytearray changed size: build this one again to use it"),
        src, 0 if src is None else len(src)]


@micropython.viper
def _address(b) -> uint:
    """The address of buffer b's first byte."""
    return uint(ptr8(b))


@micropython.viper
def _as_words(a: uint, w: int, n: int) -> int:
    """Make the memoryview object at address a (a bytes view, writable
    or not, whose offset into its buffer is a multiple of 4) a view of n
    int32 words ('i') of the same bytes, in place, as writable as it
    was; w: bytes of a machine word. 0 on success; else nothing is
    changed and a negative number says which check failed.
    MicroPython's memoryview has no cast(): this rewrites the fields of
    its mp_obj_array_t (py/objarray.h): after the type pointer, one
    machine word with the typecode (low 8 bits, 0x80: writable) and the
    offset into the buffer, counted in items (the other bits), then the
    length in items. words_view and words_in_place check the result
    before anything uses it."""
    p = ptr8(a)
    tc = p[w]
    if (tc & 0x7F) != 1 and (tc & 0x7F) != 0x42:  # bytearray / 'B' view
        return -1
    k = w + 4
    while k < 3 * w:  # the offset and the length below 2**24 bytes
        if k != 2 * w and k != 2 * w + 1 and k != 2 * w + 2 and p[k]:
            return -2
        k += 1
    if p[w + 1] & 3:
        return -3
    off = (p[w + 1] | (p[w + 2] << 8) | (p[w + 3] << 16)) >> 2
    p[w] = (tc & 0x80) | 105  # 'i', writable as it was
    p[w + 1] = off & 0xFF
    p[w + 2] = (off >> 8) & 0xFF
    p[w + 3] = (off >> 16) & 0xFF
    p[2 * w] = n & 0xFF
    p[2 * w + 1] = (n >> 8) & 0xFF
    p[2 * w + 2] = (n >> 16) & 0xFF
    return 0


def _object_address(o):
    """The address of object o. id() gives it, except on a 32-bit port
    for an object between 2**30 and 2**31 (a unix port's heap can lie
    there), where MicroPython returns it as a small int that lost bit 31
    and reads negative (py/modbuiltins.c): those bits are restored."""
    a = id(o)
    return a & sys.maxsize if a < 0 else a


def words_view(mv, n):
    """A view of n int32 words ('i') over the first 4 * n bytes of mv (a
    writable bytes memoryview, word-aligned), as KernelContext.persistent
    needs for the tail's words (indexed by prepare and by some evals);
    None where this port's memoryview is not laid out as _as_words
    expects (the words then go to an array of their own). The bytes
    must be zeros; they are again on return."""
    v = mv[:4 * n]
    w = 8 if sys.maxsize > 0x7FFFFFFF else 4
    if n <= 0 or n >= 1 << 22 or _as_words(_object_address(v), w, n):
        return None
    try:  # does it read and write the words it should?
        mv[4 * n - 4] = 0x78
        mv[4 * n - 1] = 0x12
        ok = len(v) == n and v[n - 1] == 0x12000078
        v[n - 1] = -1
        ok = ok and mv[4 * n - 1] == 0xFF and len(mv) == 4 * n
        v[n - 1] = 0
    except Exception:
        ok = False
    mv[4 * n - 4:4 * n] = b"\0\0\0\0"
    return v if ok else None


def words_in_place(mv, n):
    """A view of n int32 words ('i') over the first 4 * n bytes of mv (a
    bytes memoryview, read-only or not: the model's bytes), or None
    where that cannot be made: its first byte not at an address that is
    a multiple of 4 (a Cortex-M0+ faults on unaligned word loads), or
    this port's memoryview not laid out as _as_words expects (checked:
    the view must read the words the bytes hold). Nothing is written."""
    v = mv[:4 * n]
    w = 8 if sys.maxsize > 0x7FFFFFFF else 4
    if n <= 0 or n >= 1 << 22 or len(v) != 4 * n or _address(v) & 3 \
            or _as_words(_object_address(v), w, n):
        return None
    try:
        for k in (0, n - 1):
            b = mv[4 * k:4 * k + 4]
            if v[k] != (b[0] | b[1] << 8 | b[2] << 16) + (
                    (b[3] ^ 0x80) - 0x80) * 0x1000000:
                return None
        return v if len(v) == n else None
    except Exception:
        return None


def align(it, mv, src):
    """(the arena= buffer mv (a writable bytes memoryview) from its
    first 16-byte aligned byte, the bytes skipped before it), and it
    made the buffer's owner (interpreter._OWNERS: an earlier interpreter
    on it stops working, as its bytes are used from now on)."""
    a = _address(mv)
    skip = -a & 15
    if len(mv):  # (an empty one fails in _place: nothing to claim)
        _claim(it, a, a + len(mv), src)
    return mv[skip:], skip


def place(it, mv, head, tail, words, skip):
    """Lay the arena out in the aligned arena= buffer mv (align): the
    head, the tail's bytes and its int32 words (TFLM's tensor_arena: the
    head's planned buffers, then the persistent tail), all set to zeros.
    ArenaError when mv is too small (skip: the bytes align skipped, for
    the message; it says why a compiled block was not used)."""
    need = head + tail + 4 * words
    if len(mv) < need:
        why = getattr(it, "_compiled", None)  # a block not used: why
        raise ArenaError(
            "arena= buffer of %d bytes is too small: the model needs %d "
            "(%d head + %d tail)%s%s" % (
                len(mv) + skip, need + skip, head, need - head,
                ", %d of them to align its start" % skip if skip else "",
                "; its compiled block is not used (%s): built the plain "
                "way" % why if isinstance(why, str) else ""))
    z = bytes(256)
    for o in range(0, need - 255, 256):
        mv[o:o + 256] = z
    o = need - (need & 255)
    mv[o:need] = z[:need - o]
    it.arena = mv[:head + tail]
    it._words = None
    if words:
        it._words = words_view(mv[head + tail:need], words)
    if it._words is None:
        it._words = zeros("i", words)
