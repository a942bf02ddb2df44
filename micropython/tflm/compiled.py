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
  1 where eval writes nothing in the tail but the kernels' states (the
  tail may then be read in place, from the model's bytes, the states
  in RAM), 20 the model's bytes (bytes after them, e.g. a flash region
  rounded up, are not the model's: the hash stops there), 21 the
  states' bytes, 22 the states' words (both 0 unless word 19 is 1);
  strings: per string its length, then its bytes, padded to 4;
  tail image: the tail's bytes (padded to 4), then its words, then the
  state image: the states' bytes, then their words (what the views of
  regions R_SBYTES and R_SWORDS see, copied to RAM: the arena after the
  head, the interpreter's words);
  objects: where[0:tensors], the number of steps n, the operator index
  of each step (n words; these words, like where's, are viewed in place
  in the model where they are word-aligned: no RAM), then a list of
  arrays (the heap regions: arrays on the heap that the kernels keep
  views of, regions 6, 7, ...), a list of the steps (eval function,
  state, ...), the list of states (interp.reset() zeroes them) and the
  list of variables.
An object is a tag word and its fields (see the _T_ constants);
T_MEMO k stores the object that follows as shared object k,
T_SAME k refers to it again; T_ADDR is a view's address, an int: in the
state slots a kernel module lists in ADDRESSES (its eval only casts them
to pointers), a view of the arena or the model, which the interpreter
holds, costs no object; the state of an int8 CONV_2D or
DEPTHWISE_CONV_2D (a kernel module with PAIRS) is such an address too,
of its parameter block, whose buffers' regions and offsets
host_tools/mp_compile.py rewrote (fixedpoint.rel; compiled_regions.py
checks them and makes the interpreter's BASES).

Checks (check()): a block whose FORMAT or package version differs, or
that was compiled for another word size or machine code, is not used
(plain construction runs; print(interp) says why). A block whose hashes
do not match the bytes, that is cut short, or whose offsets, lengths,
tags or names are out of range raises FormatError naming what is wrong.
"""

import sys
from array import array

import micropython
from micropython import const

from .errors import ArenaError, FormatError, TFLMError, out_of_memory
from .heap import _copy, pack, zeros
from .source import block, build_modules, free

NAME = "tflm_compiled"  # the Model.metadata entry
MAGIC = const(0x434C4654)  # b"TFLC"
# FORMAT: what a block plans and stores (the kernels' states, their
# scratch and work-buffer sizes, e.g. conv.py's _DBLK) and how its
# hashes are made (_hash: by words since 4, their top bits too since 5;
# elastic work buffers since 6: conv_util.elastic_work; CONV_2D's and
# DEPTHWISE_CONV_2D's states as their parameter blocks since 7:
# fixedpoint.rel; the table kernels' tables in the words, filled by
# prepare, since 8: add.bind_lut; the states apart from a read-only tail
# since 9); a change there takes a new FORMAT, so that older blocks
# build the plain way
FORMAT = const(9)
HEADER = const(23)  # words
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
T_ERROR = const(11)  # string: an InvokeError with that message (a view
# of its bytes in the model: errors.message)
T_MEMO = const(12)  # k, then the object (shared object k)
T_SAME = const(13)  # k
T_ADDR = const(14)  # as T_VIEW, of regions 0-5 (not the heap's): the
# address of the view's first byte (an int: a kernel module's ADDRESSES)

# regions of a T_VIEW
R_HEAD = const(0)
R_TAIL = const(1)
R_WORDS = const(2)  # typecode 'i'
R_MODEL = const(3)
R_SBYTES = const(4)  # the states' bytes (RAM), when the tail is in place
R_SWORDS = const(5)  # the states' words (RAM, 'i')

# The viper twins of the Thumb modules (romfs.VIPER_TWINS): a block made
# on the host names a function of a twin where the board has its Thumb
# module.
TWINS = ("mac:thumb mac_dw:thumb_dw softmax_loops:thumb_softmax "
          "pool_loops:thumb_pool rescale_loops:thumb_rescale "
          "lstm_loops:thumb_lstm")


@micropython.viper
def _hash(h: int, start: int, end: int, buf) -> int:
    """h folded with bytes [start, end) of buf, a word at a time: ((h ^
    w) * 0x01000193) mod 2**30, then xor w's top two bits (which the
    30-bit product does not see), per little-endian 32-bit word w of
    the range (FNV-1a's step, 30 bits: the same on 32- and 64-bit ports
    and on the host, host_tools/compile.py), the last one padded with
    zero bytes. buf's first byte and start lie at multiples of 4
    (Block.check sees to both). h, start and end are the registers of
    the loop (a Cortex-M0+ keeps three; the word is loaded twice rather
    than kept in a fourth): about 14 instructions a word there."""
    base = int(ptr8(buf))
    k = end & 3  # bytes after the last whole word
    start += base
    end += base - k
    while uint(start) < uint(end):
        h = ((h ^ int(ptr32(start)[0])) * 0x01000193) & 0x3FFFFFFF ^ (
            int(ptr32(start)[0]) >> 30 & 3)
        start += 4
    if k:
        b = ptr8(end)
        w = 0
        i = 0
        while i < k:
            w |= b[i] << (8 * i)
            i += 1
        h = ((h ^ w) * 0x01000193) & 0x3FFFFFFF ^ (w >> 30 & 3)
    return h


def hashes(mv, pos, n, end):
    """(hash of model bytes mv[:end] outside the block [pos, pos + n),
    hash of the block but its words 4 and 5): header words 4 and 5. mv
    starts at a multiple of 4 in memory, pos and n are multiples of 4."""
    h = _hash(0x2345, 0, pos, mv)
    h = _hash(h, pos + n, end, mv)
    b = _hash(0x2345, pos, pos + 16, mv)
    return h, _hash(b, pos + 24, pos + n, mv)


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
        if not pos + n <= h[20] <= len(fb.mv):
            raise FormatError("%s: the model is %d bytes, its block says %d"
                              % (NAME, len(fb.mv), h[20]))
        if (pos | n) & 3:
            raise FormatError("%s: %d bytes at byte %d, not whole words"
                              % (NAME, n, pos))
        from .static_arena import _address
        if _address(fb.mv) & 3:
            # the block's views of the model's words were aligned on the
            # host: a Cortex-M0+ faults on them at another address (and
            # the hashes read words)
            return ("the model's bytes start at an address that is not a "
                    "multiple of 4")
        mh, bh = hashes(fb.mv, pos, n, h[20])
        if bh != h[5]:
            raise FormatError("%s: the block's bytes are damaged (hash)"
                              % NAME)
        if mh != h[4]:
            raise FormatError("%s: the model's bytes are not the ones it "
                              "was compiled with (hash)" % NAME)
        for k in range(7, HEADER):
            if k != 20 and (h[k] < 0 or h[k] > n and k >= 13 or h[k] & 3 and (
                    15 <= k < 18 or k == 21) or k == 18 and h[k] >= h[14] or
                    k == 19 and h[k] > 1 or k > 20 and h[k] and not h[19]):
                raise FormatError("%s: header word %d is %d" % (
                    NAME, k, h[k]))
        self.h = h
        self.at = h[15]
        strs = []
        for j in range(h[14]):
            k = self.word()
            if k < 0 or self.at + k > n:
                raise FormatError("%s: string at byte %d cut short"
                                  % (NAME, self.at))
            a = pos + self.at
            try:
                x = str(bytes(fb.mv[a:a + k]), "utf-8")
            except (UnicodeError, ValueError):
                raise FormatError("%s: string at byte %d is not UTF-8"
                                  % (NAME, self.at))
            # the messages (after the references) as views of their
            # bytes: an InvokeError's message stays in the model (errors.py)
            strs.append(x if j <= h[18] else fb.mv[a:a + k])
            self.at += (k + 3) & ~3
        self.strings = strs
        v = _string(self.strings, h[13])
        if v != _version():
            return "compiled by tflm %s, this is %s" % (v, _version())
        if h[2] != word:
            return "compiled for %d-bit ports, this one is %d-bit" % (
                8 * h[2], 8 * word)
        if h[3] != thumb:
            return "compiled for %s machine code" % (
                "Thumb" if h[3] else "the unix port's")
        if h[16] + h[8] + 4 * h[9] + h[21] + 4 * h[22] != h[17] or h[8] & 3:
            raise FormatError("%s: the tail image (%d + 4 * %d bytes, states "
                              "%d + 4 * %d, at %d) does not end where the "
                              "objects start (%d)" % (
                                  NAME, h[8], h[9], h[21], h[22], h[16],
                                  h[17]))
        return None

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
        words, of the state image)."""
        h = self.h
        t = self.pos + h[16]
        return t, t + h[8], t + h[8] + 4 * h[9]

    def objects(self, regions):
        """Read the object stream: [where (int32 words), steps, step
        ops, states, variables]. regions: the head, tail bytes, words
        ('i'), model, states' bytes and states' words ('i') memoryviews
        that views refer to. One loop with
        a stack of the containers being read (a call per object costs a
        board more than the object)."""
        at, n = self.h[17], self.n
        # the stream's words read by index: viewed in place where they
        # are word-aligned in memory (no copy: the board's peak), else
        # copied once (any address: byte loads)
        from .static_arena import words_in_place
        src = self.fb.mv[self.pos + at:self.pos + n]
        w = words_in_place(src, (n - at) // 4)
        if w is None:
            w = zeros("i", (n - at) // 4)
            _copy(w, src, 4 * len(w))
        src = None
        nt = self.h[10]
        if nt >= len(w) or not 0 <= w[nt] < len(w) - nt:
            raise FormatError("%s: cut short at byte %d" % (NAME, at))
        ns = w[nt]
        # in place: views of the model's words, else arrays of their own
        where = w[:nt]
        ops = w[nt + 1:nt + 1 + ns]
        try:
            out = _decode(w, nt + 1 + ns, list(regions), self.strings)
        except IndexError:
            raise FormatError("%s: cut short" % NAME)
        for x in out:
            if not isinstance(x, list):
                raise FormatError("%s: the object stream's lists" % NAME)
        return [where, out[0], ops] + out[1:]


def _decode(w, at, regions, strings):
    """The 4 objects of the stream in words w from index at (see the
    module doc and objects()): the first, a list of arrays, extends
    regions (a list) with a view of each, the heap regions that the
    views of the others may refer to."""
    from .static_arena import _address
    # addresses below this are small ints (no object): 2**30 on 32-bit
    # ports (a Cortex-M's RAM and flash), 2**62 on 64-bit ones
    big = 1 << (30 if sys.maxsize < 1 << 32 else 62)
    memo = {}
    out = [None] * 4
    # items (made at their size: a list that grows keeps its spare room,
    # 80 bytes of a board's steps list), left to read, tag, memo key
    stack = [[out, 4, T_LIST, -1]]
    key = -1  # memo key of the next object (T_MEMO)
    sizes = [1, 1, 4, 1, 1, 4]  # bytes per item of each region
    while True:
        f = stack[-1]
        if f[1] == 0:  # a container is complete
            stack.pop()
            x = tuple(f[0]) if f[2] == T_TUPLE else f[0]
            if f[3] >= 0:
                memo[f[3]] = x
            if not stack:
                return out[1:]
            f = stack[-1]
            f[0][len(f[0]) - f[1]] = x
            f[1] -= 1
            if len(stack) == 1 and f[1] == 3:  # the heap regions
                if not isinstance(x, list):
                    raise FormatError("%s: the heap regions" % NAME)
                for a in x:
                    if type(a) is not array:
                        raise FormatError("%s: a heap region" % NAME)
                    regions.append(memoryview(a))
                    sizes.append(len(bytes(memoryview(a)[:1])) or 1)
            continue
        tag = w[at]
        at += 1
        if tag == T_MEMO:
            key = w[at]
            at += 1
            continue
        k = key
        key = -1
        if tag == T_TUPLE or tag == T_LIST:
            n = w[at]
            at += 1
            if n < 0 or n > len(w) or len(stack) > _MAX_DEPTH:
                raise FormatError("%s: %d items at depth %d" % (
                    NAME, n, len(stack)))
            stack.append([[None] * n, n, tag, k])
            continue
        if tag == T_VIEW or tag == T_ADDR:
            r, off, n = w[at], w[at + 1], w[at + 2]
            at += 3
            if not 0 <= r < (len(regions) if tag == T_VIEW else 6):
                raise FormatError("%s: view of region %d" % (NAME, r))
            base = regions[r]
            size = sizes[r]
            if off < 0 or n < 0 or off % size or n % size or \
                    off + n > size * len(base):
                raise FormatError("%s: view of %d bytes at %d, outside "
                                  "region %d" % (NAME, n, off, r))
            x = _address(base) + off if tag == T_ADDR else big
            if x >= big:  # a view (an address that is not a small int
                # would be an object larger than the view)
                x = base[off // size:(off + n) // size]
        elif tag == T_INT:
            x = w[at]
            at += 1
        elif tag == T_REF:
            x = _ref(_string(strings, w[at]))
            at += 1
        elif tag == T_NONE:
            x = None
        elif tag == T_SAME:
            x = memo.get(w[at], memo)
            at += 1
            if x is memo:
                raise FormatError("%s: shared object %d not yet made"
                                  % (NAME, w[at - 1]))
        elif tag == T_BIG:
            lo = w[at]
            x = (w[at + 1] << 32) + (lo & 0x3FFFFFFF) + ((lo >> 30 & 3) << 30)
            at += 2
        elif tag == T_ARRAY or tag == T_BYTEARRAY:
            tc = "B" if tag == T_BYTEARRAY else chr(w[at] & 0x7F)
            at += tag == T_ARRAY
            n = w[at]
            at += 1
            size = {"b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4}.get(tc, 0)
            nw = (n * size + 3) // 4  # words
            if not size or n < 0 or at + nw > len(w):
                raise FormatError("%s: array %r of %d items" % (NAME, tc, n))
            x = bytearray(n) if tag == T_BYTEARRAY else \
                array(tc, bytes(n * size))
            _copy(x, memoryview(w)[at:at + nw], n * size)
            at += nw
        elif tag == T_TRUE or tag == T_FALSE:
            x = tag == T_TRUE
        elif tag == T_ERROR:
            from .errors import InvokeError
            x = InvokeError(_string(strings, w[at]))
            at += 1
        else:
            raise FormatError("%s: unknown tag %d" % (NAME, tag))
        if k >= 0:
            memo[k] = x
        f[0][len(f[0]) - f[1]] = x
        f[1] -= 1


def _string(strings, k):
    if not 0 <= k < len(strings):
        raise FormatError("%s: string %d of %d" % (NAME, k, len(strings)))
    return strings[k]


def build(it, buf, arena_size, user, src, free0=None, at=None):
    """Build Interpreter it from the compiled block in model bytes buf
    (a memoryview or bytearray: the model in place, or read into RAM):
    True when done; False when buf has no block, or one this package or
    port does not use (it.compiled then says why: plain construction,
    allocator.build, follows). user, src: the arena= buffer as
    allocator.build takes them; arena_size: as Interpreter's. Sets what
    allocator.build sets (it.ram from free0: the free heap before the
    model was read, the modules that _build imports and Interpreter()
    drops imported, else now); at: source.block(buf) if known. Raises
    FormatError for a damaged block,
    ArenaError as allocator.build; any other exception becomes a
    TFLMError (verify.internal_error)."""
    try:
        if free0 is None:
            build_modules()
            free0 = free()
        if not _build(it, buf, arena_size, user, src, at):
            return False
        have = free()  # _build's objects gone
        it.ram = (it.arena_size + it.persistent_size if have is None
                  else free0 - have - it._imported)
        return True
    except TFLMError:
        raise
    except MemoryError:
        raise out_of_memory(it._stage)
    except Exception as e:  # last line of defence, as allocator.build
        from . import verify
        raise verify.internal_error(e, it._stage)


def _build(it, buf, arena_size, user, src, at):
    from .flatbuf import FlatBuffer
    from .kernels import THUMB, WORD
    if at is None:
        at = block(buf)
    if at is None:
        return False
    it._stage = "reading the compiled block"
    fb = FlatBuffer(buf)
    blk = Block(fb, at[0], at[1])
    why = blk.check(WORD, int(THUMB))
    from .static_arena import _address
    if why is not None:
        it._compiled = why
        return False
    h = blk.h
    head, tail, words, sb, sw = h[7], h[8], h[9], h[21], h[22]
    t0, w0, s0 = blk.tail_image()
    # A tail that eval only reads (h[19]) stays in the model's bytes
    # (flash), its words viewed in place where they are word-aligned in
    # memory: the arena is then the head and the kernels' states alone.
    wv = None
    if h[19] and words:
        from .static_arena import words_in_place
        wv = words_in_place(fb.mv[w0:w0 + 4 * words], words)
    in_place = h[19] and (wv is not None or not words)
    # beyond the head: the tail's bytes and words, then the states' (in
    # place: the states' alone, their words in the arena too)
    if in_place:
        tail = words = 0
        more, nw = sb + 4 * sw, 0
    else:
        more, nw = tail + sb, words + sw
    need = head + more + 4 * nw
    if arena_size is not None and arena_size < need:
        raise ArenaError("arena of %d bytes is too small: the model "
                         "needs %d (%d head + %d tail)"
                         % (arena_size, need, head, need - head))
    # the kernels' code first, lowest (as allocator._import_kernels)
    it._stage = "importing kernels"
    mods = blk.modules()
    regions = None
    if "tflm.kernels.conv" in mods or "tflm.kernels.depthwise_conv" in mods:
        # for the int8 CONV_2D / DEPTHWISE_CONV_2D steps (the block names
        # their evals): imported now, before the kernels' code (it is
        # dropped once built: not theirs, it.ram) and the arena (what
        # the import leaves for good, the package's attribute table
        # grown, lies below it, not amid the free heap the next model
        # needs)
        from . import compiled_regions as regions
    before = free()
    for name in mods:
        if name not in sys.modules:
            load(name)
            pack()
    mods = None
    have = free()  # (allocate takes it: no second gc.mem_free())
    if before is not None:
        it._imported += before - have
    from .model import Model
    m = Model(buf, check=False, verified=True)
    it._buf = buf
    it.arena_size = head
    if user is not None:
        from .static_arena import align, place
        it._stage = "placing the arena"
        user, skip = align(it, user, src)
        place(it, user, head, more, nw, skip)
    else:
        from .source import allocate
        allocate(it, head, more, nw, have)
    it._stage = "rebuilding the steps"
    mv = memoryview(it.arena)
    hv = mv[:head]
    if in_place:
        tv = fb.mv[t0:t0 + h[8]]
        if wv is None:
            wv = memoryview(it._words)[:0]
        it._words = wv
    else:
        mv[head:head + tail] = fb.mv[t0:t0 + tail]
        if words:
            _copy(it._words, fb.mv[w0:w0 + 4 * words], 4 * words)
        tv, wv = mv[head:head + tail], memoryview(it._words)[:words]
    # the kernels' states, in RAM after the tail (where it is there)
    sv = mv[head + tail:head + tail + sb]
    sv[:] = fb.mv[s0:s0 + sb]
    if in_place:  # their words after their bytes, in the arena too
        from .static_arena import words_view
        swv = words_view(mv[head + sb:head + sb + 4 * sw], sw) if sw \
            else None
        if swv is None:  # (a port whose views it cannot make: an array)
            swv = memoryview(zeros("i", sw))
    else:
        swv = memoryview(it._words)[words:words + sw]
    if sw:
        _copy(swv, fb.mv[s0 + sb:s0 + sb + 4 * sw], 4 * sw)
    where, steps, ops, states, variables = blk.objects(
        (hv, tv, wv, fb.mv, sv, swv))
    blk = None
    if in_place and (states or variables):  # h[19] must be true: no
        # state in the tail
        spans = ((_address(tv), len(tv)), (_address(wv), 4 * len(wv)))
        for v in states + [v[0] for v in variables if type(v) is tuple]:
            a = _address(v)
            for start, size in spans:
                if size and start <= a < start + size:
                    raise FormatError("%s: a kernel's state in the tail "
                                      "it reads in place" % NAME)
    n = len(steps) // 2
    if len(steps) & 1 or len(ops) != n or len(where) != m.n_tensors:
        raise FormatError("compiled block: %d steps, %d operators, %d "
                          "tensors" % (len(steps), len(ops), len(where)))
    for k in range(n):
        if not callable(steps[2 * k]) or not \
                0 <= ops[k] < m.n_operators:
            raise FormatError("compiled block: step %d" % k)
    if regions is not None:
        # int8 CONV_2D / DEPTHWISE_CONV_2D steps, their parameter blocks
        # checked (a module of its own: compiled.py's size slows a
        # board's collections during construction), then the regions'
        # bases (fixedpoint.rel)
        if regions.check(steps, (hv, tv, wv, fb.mv)):
            it._bases = (sys.modules["tflm.fixedpoint"],
                         regions.bases((hv, tv, wv, fb.mv)))
        regions = None
    for v in variables:
        if not isinstance(v, tuple) or len(v) != 2:
            raise FormatError("compiled block: a variable")
        d, fill = v
        for j in range(len(d)):
            d[j] = fill
    it._where = where
    from .interpreter import _bind
    io = {}
    for i in m.inputs + m.outputs:
        if i not in io:
            t = m.tensor(i)
            w = where[i]
            if w >= 0 and w + t.nbytes > head or w <= -2 and \
                    -2 - w + t.nbytes > len(fb.mv) or w == -1:
                raise FormatError("compiled block: tensor %d's place" % i)
            io[i] = _bind(t, w, fb.mv, hv)
    it.inputs = [io[i] for i in m.inputs]
    it.outputs = [io[i] for i in m.outputs]
    # their fields stored now (tensor.own), before build's last free():
    # counted in it.ram without two more gc.mem_free() calls in
    # Interpreter() (a compiled build has no parser peak to wait for)
    from .tensor import own
    try:
        own((it.inputs, it.outputs))
    except MemoryError:  # (as Interpreter's: the tensors stay lazy)
        pass
    if states:  # (else the class's None: no attribute)
        it._states = states
    if variables:
        it._variables = variables
    if h[11]:  # (else the class's 0: no attribute)
        it.copied_bytes = h[11]
    if h[12]:
        it.persistent_size = h[12]
    it._prof_ops = ops  # (the model's words: no copy where in place)
    it._prof_us = array("i", range(n + 1))
    it._steps = steps
    from .interpreter import stops
    if stops(steps):
        it._stops = True
    it._compiled = True
    if in_place:
        # the tail read in place: construction's stage, once built, says
        # so with "" (repl.tail_in_model; an attribute of its own would
        # cost every interpreter RAM)
        it._stage = ""
    return True



def _module(name):
    """The module a block's name means on this port (Thumb twins; on
    Cortex-M4/M7/M33, kernels.DSP, mac's is thumb_dsp and mac_dw's
    thumb_dw_dsp: the same functions and blocks as thumb's, thumb_dw's)."""
    from .kernels import DSP, THUMB
    if DSP and name == "tflm.kernels.mac":
        return "tflm.kernels.thumb_dsp"
    if DSP and name == "tflm.kernels.mac_dw":
        return "tflm.kernels.thumb_dw_dsp"
    if THUMB and name.startswith("tflm.kernels."):
        k = TWINS.find(name[13:] + ":")
        if k == 0 or k > 0 and TWINS[k - 1] == " ":
            return "tflm.kernels." + TWINS[k:].split(" ", 1)[0].split(":")[1]
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
