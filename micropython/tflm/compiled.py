"""Models compiled on the host: construction from a block in the model.

`python -m host_tools compile MODEL -o OUT` runs an Interpreter's
construction (parse, verify, plan, every kernel's prepare) on the host,
for the board's word size and machine code, and writes what it made into
the model as TFLite metadata (Model.metadata named NAME, its bytes in a
Buffer): the arena's sizes, where each tensor lies, every operator's eval
function and state (its views of the arena and of the model, small
arrays, references to kernel functions and tables), and the tail's bytes
as prepare filled them. The file stays a valid .tflite that TFLM runs
unchanged (TFLM ignores metadata it does not know).

Interpreter() on such a model (allocator.build) checks the block and then
builds without the parser's checks, the planner and the kernels' prepare
code: it imports the kernel modules the block names, allocates the arena
(or lays it out in the arena= buffer), copies the tail's bytes and rebuilds
the steps. A construction-only module (interpreter.CONSTRUCTION).

The block (little-endian int32 words, at any address in the model):
  0 MAGIC, 1 FORMAT, 2 word size, 3 thumb (1: the board runs Thumb code),
  4 hash of the model's bytes outside the block, 5 hash of the block's
  bytes but words 4 and 5, 6 the block's bytes, 7 head, 8 tail bytes,
  9 tail words, 10 tensors, 11 copied_bytes, 12 persistent_size,
  13 the package's __version__ (a string index), 14 the number of
  strings, 15 the byte offset of the strings, 16 of the tail image, 17
  of the object stream, 18 the number of references among the strings
  (strings 1 .. 18: "module:name", then InvokeError messages), 19
  1 where eval writes nothing in the tail (no kernel state there: the
  tail may then be read in place, from the model's bytes);
  strings: per string its length, then its bytes, padded to 4;
  tail image: the tail's bytes (padded to 4), then its words;
  objects: where[0:tensors], then a list of the steps (eval function,
  state, ...), the list of the operator index of each step, the list
  of states (interp.reset() zeroes them) and the list of variables.
An object is a tag word and its fields (see the _T_ constants);
T_MEMO k stores the object that follows as shared object k,
T_SAME k refers to it again.

Checks (check()): a block whose FORMAT or package version differs, or
that was compiled for another word size or machine code, is not used
(plain construction runs; print(interp) says why). A block whose hashes
do not match the bytes, that is cut short, or whose offsets, lengths,
tags or names are out of range raises FormatError naming what is wrong.
"""

import sys

import micropython
from micropython import const

from .errors import FormatError

NAME = "tflm_compiled"  # the Model.metadata entry
MAGIC = const(0x434C4654)  # b"TFLC"
FORMAT = const(1)
HEADER = const(20)  # words
_MAX_DEPTH = const(8)

# object tags
T_NONE = const(0)
T_INT = const(1)  # one word
T_BIG = const(2)  # low word (unsigned), high word (signed)
T_TUPLE = const(3)  # n, then n objects
T_LIST = const(4)  # n, then n objects
T_REF = const(5)  # string "module:name": a module's function or table
T_VIEW = const(6)  # region, byte offset, bytes (see _view)
T_ARRAY = const(7)  # typecode, items, then the bytes padded to 4
T_BYTEARRAY = const(8)  # bytes, then the bytes padded to 4
T_TRUE = const(9)
T_FALSE = const(10)
T_ERROR = const(11)  # string: an InvokeError with that message
T_MEMO = const(12)  # k, then the object (shared object k)
T_SAME = const(13)  # k

# regions of a T_VIEW
R_HEAD = const(0)
R_TAIL = const(1)
R_WORDS = const(2)  # typecode 'i'
R_MODEL = const(3)

# The viper twins of the Thumb modules (romfs.VIPER_TWINS): a block made
# on the host names a function of a twin where the board has its Thumb
# module.
TWINS = ("mac:thumb mac_dw:thumb_dw softmax_loops:thumb_softmax "
          "pool_loops:thumb_pool rescale_loops:thumb_rescale "
          "lstm_loops:thumb_lstm")


@micropython.viper
def _hash(buf, start: int, end: int, h: int) -> int:
    """h folded with bytes [start, end) of buf: ((h ^ byte) * 0x01000193)
    mod 2**30 per byte (FNV-1a's step, 30 bits: the same on 32- and
    64-bit ports and on the host, host_tools/compile.py)."""
    p = ptr8(buf)
    i = start
    while i < end:
        h = ((h ^ p[i]) * 0x01000193) & 0x3FFFFFFF
        i += 1
    return h


def hashes(mv, pos, n):
    """(hash of model bytes mv outside the block [pos, pos + n), hash of
    the block but its words 4 and 5): header words 4 and 5."""
    h = _hash(mv, 0, pos, 0x2345)
    h = _hash(mv, pos + n, len(mv), h)
    b = _hash(mv, pos, pos + 16, 0x2345)
    return h, _hash(mv, pos + 24, pos + n, b)


def _version():
    return sys.modules["tflm"].__version__


class Block:
    """The block at [pos, pos + n) of FlatBuffer fb: header fields
    (head, tail, words, tensors, copied, persistent, strings), read and
    checked by check()."""

    def __init__(self, fb, pos, n):
        self.fb = fb
        self.pos = pos
        self.n = n
        self.h = None
        self.strings = None
        self.at = 0
        self.memo = None

    def word(self):
        """The int32 at the read position; advances it. FormatError at
        the block's end."""
        at = self.at
        if at + 4 > self.n:
            raise FormatError("%s: cut short at byte %d" % (NAME, at))
        self.at = at + 4
        return self.fb.i32(self.pos + at)

    def check(self, word, thumb):
        """None where the block fits this package and port (then the
        header words are in self.h and the strings read), else the
        reason it is not used (str). FormatError for a block that is
        damaged or does not match the model's bytes."""
        fb, pos, n = self.fb, self.pos, self.n
        if n < 4 * HEADER:
            raise FormatError("%s: %d bytes, shorter than its header"
                              % (NAME, n))
        h = [fb.i32(pos + 4 * k) for k in range(HEADER)]
        if h[0] != MAGIC:
            raise FormatError("%s: bad magic 0x%x" % (NAME, h[0]))
        if h[1] != FORMAT:
            return "compiled block format %d, this tflm reads %d" % (
                h[1], FORMAT)
        if h[6] != n:
            raise FormatError("%s: %d bytes, its header says %d"
                              % (NAME, n, h[6]))
        mh, bh = hashes(fb.mv, pos, n)
        if bh != h[5]:
            raise FormatError("%s: the block's bytes are damaged (hash)"
                              % NAME)
        if mh != h[4]:
            raise FormatError("%s: the model's bytes are not the ones it "
                              "was compiled with (hash)" % NAME)
        for k in range(7, HEADER):
            if h[k] < 0 or h[k] > n and k >= 13 or h[k] & 3 and 15 <= k < 18 \
                    or k == 18 and h[k] >= h[14] or k == 19 and h[k] > 1:
                raise FormatError("%s: header word %d is %d" % (
                    NAME, k, h[k]))
        self.h = h
        self.at = h[15]
        strs = []
        for _ in range(h[14]):
            k = self.word()
            if k < 0 or self.at + k > n:
                raise FormatError("%s: string at byte %d cut short"
                                  % (NAME, self.at))
            a = pos + self.at
            strs.append(str(bytes(fb.mv[a:a + k]), "utf-8"))
            self.at += (k + 3) & ~3
        self.strings = strs
        v = self._string(h[13])
        if v != _version():
            return "compiled by tflm %s, this is %s" % (v, _version())
        if h[2] != word:
            return "compiled for %d-bit ports, this one is %d-bit" % (
                8 * h[2], 8 * word)
        if h[3] != thumb:
            return "compiled for %s machine code" % (
                "Thumb" if h[3] else "the unix port's")
        if h[16] + h[8] + 4 * h[9] != h[17] or h[8] & 3:
            raise FormatError("%s: the tail image (%d + 4 * %d bytes at %d) "
                              "does not end where the objects start (%d)"
                              % (NAME, h[8], h[9], h[16], h[17]))
        return None

    def _string(self, k):
        if not 0 <= k < len(self.strings):
            raise FormatError("%s: string %d of %d" % (
                NAME, k, len(self.strings)))
        return self.strings[k]

    def modules(self):
        """The module names the block's references name, once each, in
        order, Thumb twins mapped (modules to import)."""
        out = []
        for s in self.strings[1:1 + self.h[18]]:
            m = _module(s.split(":")[0])
            if m not in out:
                out.append(m)
        return out

    def tail_image(self):
        """(byte position in the model of the tail's bytes, of its
        words)."""
        h = self.h
        return self.pos + h[16], self.pos + h[16] + h[8]

    def objects(self, regions):
        """Read the object stream: (where, steps, step ops, states,
        variables). regions: the head, tail bytes, words ('i') and model
        memoryviews that views refer to."""
        self.at = self.h[17]
        self.regions = regions
        nt = self.h[10]
        where = [self.word() for _ in range(nt)]
        self.memo = {}
        out = [self._obj(0) for _ in range(4)]
        for x in out:
            if not isinstance(x, list):
                raise FormatError("%s: the object stream's lists" % NAME)
        return [where] + out

    def _obj(self, depth):
        if depth > _MAX_DEPTH:
            raise FormatError("%s: objects nested too deep" % NAME)
        tag = self.word()
        if tag == T_NONE:
            return None
        if tag == T_INT:
            return self.word()
        if tag == T_BIG:
            lo = self.word()
            return (self.word() << 32) + (lo & 0x3FFFFFFF) + (
                (lo >> 30 & 3) << 30)
        if tag == T_TUPLE or tag == T_LIST:
            n = self.word()
            if n < 0 or n > self.n:
                raise FormatError("%s: %d items" % (NAME, n))
            x = [self._obj(depth + 1) for _ in range(n)]
            return tuple(x) if tag == T_TUPLE else x
        if tag == T_REF:
            return _ref(self._string(self.word()))
        if tag == T_VIEW:
            return self._view()
        if tag == T_ARRAY or tag == T_BYTEARRAY:
            return self._array(tag)
        if tag == T_TRUE or tag == T_FALSE:
            return tag == T_TRUE
        if tag == T_ERROR:
            from .errors import InvokeError
            return InvokeError(self._string(self.word()))
        if tag == T_MEMO:
            k = self.word()
            x = self._obj(depth)
            self.memo[k] = x
            return x
        if tag == T_SAME:
            k = self.word()
            if k not in self.memo:
                raise FormatError("%s: shared object %d not yet made"
                                  % (NAME, k))
            return self.memo[k]
        raise FormatError("%s: unknown tag %d at byte %d"
                          % (NAME, tag, self.at - 4))

    def _view(self):
        r, off, n = self.word(), self.word(), self.word()
        if not 0 <= r <= R_MODEL:
            raise FormatError("%s: view of region %d" % (NAME, r))
        base = self.regions[r]
        size = 4 if r == R_WORDS else 1
        if off < 0 or n < 0 or off % size or n % size or \
                off + n > size * len(base):
            raise FormatError("%s: view of %d bytes at %d, outside region "
                              "%d" % (NAME, n, off, r))
        return base[off // size:(off + n) // size]

    def _array(self, tag):
        from array import array

        from .heap import _copy
        tc = "B" if tag == T_BYTEARRAY else chr(self.word() & 0x7F)
        n = self.word()
        size = {"b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4}.get(tc, 0)
        if not size or n < 0 or self.at + n * size > self.n:
            raise FormatError("%s: array %r of %d items" % (NAME, tc, n))
        a = bytearray(n) if tag == T_BYTEARRAY else array(tc, bytes(n * size))
        _copy(a, self.fb.mv[self.pos + self.at:], n * size)
        self.at += (n * size + 3) & ~3
        return a


def _module(name):
    """The module a block's name means on this port (Thumb twins)."""
    from .kernels import THUMB
    if THUMB and name.startswith("tflm.kernels."):
        short = name[13:]
        for pair in TWINS.split():
            a, b = pair.split(":")
            if a == short:
                return "tflm.kernels." + b
    return name


def _ref(s):
    """The object "module:name" names (its module imported);
    FormatError for a name outside tflm or one the module lacks."""
    mod, _, attr = s.partition(":")
    mod = _module(mod)
    if not mod.startswith("tflm.") or not attr:
        raise FormatError("%s: reference %r" % (NAME, s))
    try:
        return getattr(load(mod), attr)
    except AttributeError:
        raise FormatError("%s: %s has no %s" % (NAME, mod, attr))


def load(mod):
    """Module mod (a name of tflm's), imported if need be; FormatError
    for another name or one that does not import."""
    m = sys.modules.get(mod)
    if m is None:
        if not mod.startswith("tflm."):
            raise FormatError("%s: module %r" % (NAME, mod))
        try:
            __import__(mod)
            m = sys.modules[mod]
        except ImportError:
            raise FormatError("%s: no module %s" % (NAME, mod))
    return m
