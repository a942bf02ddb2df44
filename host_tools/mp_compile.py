# Runs on the MicroPython unix port (host_tools/compile.py starts it): builds
# an Interpreter on a model and writes what construction made as a compiled
# block (tflm/compiled.py describes the format), hashes left 0.
# argv: package dir, model path, output path, word size (4 or 8), thumb
# (0 or 1), DSP (0 or 1: kernels.PLAN_DSP).
# With a word size other than this port's, the kernels prepare for that
# word size (kernels.WORD) and the interpreter is never invoked here.
# Prints one JSON line: {"head", "tail", "words", "bytes"} or {"error"}.
import gc
import json
import sys

sys.path.insert(0, sys.argv[1])
import uctypes  # noqa: E402

import tflm  # noqa: E402
from tflm import compiled, kernels  # noqa: E402

WORD = int(sys.argv[4])
THUMB = int(sys.argv[5])
HOST_WORD = 8 if sys.maxsize > 0x7FFFFFFF else 4
kernels.WORD = WORD  # before any kernel module imports it
kernels.COMPILING = True
kernels.PLAN_DSP = sys.argv[6:7] == ["1"]
# the model holds a placeholder block: construct it the plain way (the
# construction modules imported here stay imported: interpreter._drop)
from tflm import source  # noqa: E402

source.block = lambda buf: None
from tflm import allocator  # noqa: E402,F401 (binds the patched block)

C = compiled
SIZES = {"\x01": 1, "b": 1, "B": 1, "h": 2, "H": 2, "i": 4, "I": 4}
TWINS = set(p.split(":")[0] for p in C.TWINS.split())


class NotCompilable(Exception):
    pass


IMPORTED_FOR_EFFECT = (("tflm.kernels.requant_neg", "requant_i8_neg"),)


def typecode(v):
    """The typecode of array or memoryview v (mp_obj_array_t's)."""
    return chr(uctypes.bytearray_at(id(v) + HOST_WORD, 1)[0] & 0x7F)


def names():
    """id -> "module:name" of every function and table of tflm's modules
    (a viper twin's only where no other module has it)."""
    out = {}
    mods = sorted(n for n in sys.modules if n.startswith("tflm."))
    # twins first: any other module's name for the same object wins
    mods.sort(key=lambda n: 0 if n[13:] in TWINS else 1)
    for mn in mods:
        m = sys.modules[mn]
        for k in dir(m):
            if k.startswith("__"):
                continue
            v = getattr(m, k)
            t = type(v).__name__
            if t in ("function", "bound_method", "array", "bytes",
                     "bytearray") or callable(v) and t != "type":
                out[id(v)] = mn + ":" + k
    return out


def eval_writes_tail(path, spans=((), ())):
    """Whether invoking a fresh interpreter of model path changes its
    tail (bytes or words) outside spans (the kernels' states: (start,
    end) byte ranges of the tail's bytes, of its words): a kernel that
    writes what prepare kept there (TRANSPOSE_CONV's taps, the LSTM's FC
    parameter blocks) needs it in RAM, not read in place from the
    model's bytes. Two invokes on seeded random inputs (int32 and int64
    elements 0-7: a WHILE's loop count may come from one); an invoke
    that raises counts as a write (unknown)."""
    import random
    t = tflm.Interpreter(path)
    head = t.arena_size

    def image():
        out = []
        for b, sp in ((bytearray(memoryview(t.arena)[head:]), spans[0]),
                      (bytearray(t._words), spans[1])):
            for a, e in sp:
                b[a:e] = bytes(e - a)
            out.append(bytes(b))
        return out

    before = image()
    random.seed(7)
    try:
        for _ in range(2):
            for x in t.inputs:
                d = x.data
                w = {2: 4, 4: 8}.get(x.type, 0)  # int32, int64: small
                for k in range(len(d)):
                    d[k] = random.getrandbits(3) if w and k % w == 0 else \
                        0 if w else random.getrandbits(8)
            t.invoke()
    except Exception:  # noqa: BLE001 - any failure: keep the tail in RAM
        return True
    return before != image()


class Unsplittable(Exception):
    """A view, address or parameter-block buffer that covers part of a
    state's bytes and part of the read-only tail's: the tail then goes
    to RAM whole (main runs again with SPLIT off)."""


SPLIT = [True]  # split the kernels' states out of a read-only tail


def state_spans(keys):
    """The states' bytes, merged: ([(start, end) of the tail's bytes],
    [(start, end) of the words' bytes]), word-aligned, from the view
    keys (region, offset, bytes) of the states that lie in the tail."""
    out = ([], [])
    for r, off, n in sorted(keys, key=lambda k: (k[0], k[1])):
        sp = out[0 if r == C.R_TAIL else 1]
        a, e = off & ~3, (off + n + 3) & ~3
        if sp and a <= sp[-1][1]:
            sp[-1] = (sp[-1][0], max(sp[-1][1], e))
        else:
            sp.append((a, e))
    return out


def relocate(spans, key):
    """View key (region, offset, bytes) moved to the state regions
    (R_SBYTES, R_SWORDS: the spans laid out one after another) where it
    lies in a span of spans (state_spans); the key itself where it lies
    outside them all; Unsplittable where it covers part of one."""
    r, off, n = key
    if r not in (C.R_TAIL, C.R_WORDS):
        return key
    at = 0
    for a, e in spans[0 if r == C.R_TAIL else 1]:
        if a <= off and off + n <= e and (n or off < e):
            return (C.R_SBYTES if r == C.R_TAIL else C.R_SWORDS,
                    at + off - a, n)
        if off < e and a < off + n:
            raise Unsplittable()
        at += e - a
    return key


def repoint(packed, regions, view_key, tail, words, spans):
    """Rewrite the buffers' regions and offsets (fixedpoint.rel) of each
    parameter block of packed ((block, first word, buffers): views of the
    tail or the words) in the tail's and words' bytes: region 0 (from the
    block, as construction wrote them) becomes region r + 1 of regions
    (head, tail, words, model: where the buffer lies) and the offset in
    it, but for a buffer inside the block itself. Unsplittable where a
    block or a buffer lies in a state's bytes (spans: state_spans)."""
    for blk, first, n in packed:
        r, off, size = view_key(blk)
        if relocate(spans, (r, off, size)) != (r, off, size):
            raise Unsplittable()
        dst = tail if r == C.R_TAIL else words if r == C.R_WORDS else None
        if dst is None:
            raise NotCompilable("a parameter block in region %d" % r)
        a = uctypes.addressof(blk)
        at = off + 4 * first
        if int.from_bytes(dst[at:at + 4], "little") != 0:
            raise NotCompilable("a parameter block's regions not 0")
        rmap = 0
        for k in range(n):
            q = at + 4 + 4 * k
            d = int.from_bytes(dst[q:q + 4], "little")
            d -= (d & 0x80000000) << 1
            t = a + d
            if a <= t < a + size:
                continue  # in the block: stays relative to it
            hit = None
            for end_ok in (False, True):
                for j, (start, length) in enumerate(regions):
                    if length and (start <= t < start + length or
                                   end_ok and t == start + length):
                        hit = (j + 1, t - start)
                        break
                if hit:
                    break
            if hit is None:
                raise NotCompilable("a parameter block's buffer outside "
                                    "the arena and the model")
            if relocate(spans, (hit[0] - 1, hit[1], 1)) != (
                    hit[0] - 1, hit[1], 1):
                raise Unsplittable()
            rmap |= hit[0] << (4 * k)
            dst[q:q + 4] = hit[1].to_bytes(4, "little")
        dst[at:at + 4] = rmap.to_bytes(4, "little")


def main():
    path = sys.argv[2]
    it = tflm.Interpreter(path)
    gc.collect()
    head_a = uctypes.addressof(it.arena)
    regions = [(head_a, it.arena_size),
               (head_a + it.arena_size, len(it.arena) - it.arena_size),
               (uctypes.addressof(it._words) if len(it._words) else 0,
                4 * len(it._words)),
               (uctypes.addressof(it._buf), len(it._buf)),
               (0, 0), (0, 0)]  # the states' regions (R_SBYTES, R_SWORDS)
    refs = names()
    strings = [tflm.__version__]
    messages = []
    sindex = {}

    def string(s):
        if s not in sindex:
            sindex[s] = len(strings)
            strings.append(s)
        return sindex[s]

    # first pass: what is shared (a view key or an object's id seen twice)
    seen = {}

    def key(x):
        if type(x).__name__ == "memoryview":
            return relocate(spans, view_key(x))
        if isinstance(x, (list, tuple, bytearray)) or \
                type(x).__name__ == "array":
            return ("id", id(x))
        return None

    def view_key(v):
        tc = typecode(v)
        n = len(v) * SIZES.get(tc, 0)
        if not n and len(v):
            raise NotCompilable("a view of typecode %r" % tc)
        a = uctypes.addressof(v) if len(v) else 0
        for r, (start, size) in enumerate(regions):
            if size and start <= a and a + n <= start + size:
                if (r == C.R_WORDS) != (tc == "i"):
                    raise NotCompilable("a %r view of region %d" % (tc, r))
                return (r, a - start, n)
        if not len(v):
            return (C.R_MODEL, 0, 0)
        # a view of an array on the heap (a kernel keeps its views, e.g.
        # FULLY_CONNECTED's per-chunk multipliers): the array, from its
        # first item (mp_obj_array_t's items pointer) to the end of the
        # last view of it, becomes a heap region of the block
        items = int.from_bytes(uctypes.bytearray_at(
            id(v) + 3 * HOST_WORD, HOST_WORD), "little")
        h = heaps.get(items)
        if h is None:
            h = heaps[items] = [len(heaps), tc, 0]
        if h[1] != tc:
            raise NotCompilable("views %r and %r of one array" % (h[1], tc))
        h[2] = max(h[2], a + n - items)
        return (len(regions) + h[0], a - items, n)

    def addr_key(x):
        """The memo key of view x in an address slot, if it is one of
        the arena or the model (then a T_ADDR), else None."""
        if type(x).__name__ != "memoryview":
            return None
        k = relocate(spans, view_key(x))
        return ("addr",) + k if k[0] < len(regions) else None

    def count(x, addr=False):
        if id(x) in refs and not isinstance(x, (int, tuple)):
            return
        if type(x).__name__ == "array" or isinstance(x, bytearray):
            arrays.append(x)
        k = (addr and addr_key(x)) or key(x)
        if k is not None:
            seen[k] = seen.get(k, 0) + 1
            if seen[k] > 1:
                return
        if isinstance(x, (list, tuple)):
            slots = address_slots(x)
            for j, y in enumerate(x):
                count(y, j in slots)

    # each step's state: the slots its kernel module declares ADDRESSES
    # (eval only casts them to pointers) get the address of a view of
    # the arena or the model (an int on the board, no object)
    # (a state that is a parameter block with its buffers' regions and
    # offsets, fixedpoint.rel: the block's address, them rewritten below)
    addresses = {}
    steps = it._steps
    step_list = list(steps)
    packed = []  # (block, first pair word, pairs)
    writes_kept = False  # a kernel's eval writes what prepare kept
    for k in range(0, len(steps) - 1, 2):
        ref = refs.get(id(steps[k]))
        mod = sys.modules.get(ref.split(":")[0]) if ref else None
        writes_kept = writes_kept or getattr(mod, "WRITES_KEPT", False)
        if mod is not None and isinstance(steps[k + 1], tuple):
            addresses[id(steps[k + 1])] = getattr(mod, "ADDRESSES", ())
            # (and the items of a tuple in an ADDRESS_ITEMS slot)
            for j in getattr(mod, "ADDRESS_ITEMS", ()):
                t = steps[k + 1][j]
                if isinstance(t, tuple):
                    addresses[id(t)] = range(len(t))
        elif mod is not None and hasattr(mod, "PAIRS"):
            if type(steps[k + 1]).__name__ != "memoryview":
                raise NotCompilable("a parameter block on the heap")
            addresses.setdefault(id(step_list), set()).add(k + 1)
            packed.append((steps[k + 1],) + tuple(mod.PAIRS))

    def address_slots(x):
        return addresses.get(id(x), ())

    heaps = {}  # items address -> [index, typecode, bytes]
    arrays = []  # the arrays of the states (each is emitted as a copy)
    states = list(it._states or [])
    variables = list(it._variables or [])
    ops = list(it._prof_ops)
    top = [step_list, states, variables]
    # The tail is read in place from the model's bytes (header word 19)
    # unless eval writes there: the kernels' states (interp.reset()'s
    # views) that lie in it go to regions of their own in RAM (the state
    # image, header words 21 and 22), unless a view covers part of one
    # (Unsplittable: main runs again with SPLIT off, and such a tail
    # goes to RAM whole).
    spans = ((), ())
    skeys = [k for k in (view_key(v) for v in states + [
        v for v, _ in variables]) if k[0] in (C.R_TAIL, C.R_WORDS)]
    ro = 0 if writes_kept or skeys and not SPLIT[0] else 1
    if ro:
        spans = state_spans(skeys)
        if eval_writes_tail(path, spans):
            ro, spans = 0, ((), ())
    for x in top:
        count(x)
    # the heap regions (views of arrays on the heap) come first: the
    # views of the rest refer to them
    for x in arrays:
        if len(x) and uctypes.addressof(x) in heaps:
            raise NotCompilable("an array of a state and a view of it")
    heap_list = [None] * len(heaps)
    for items, (k, tc, n) in heaps.items():
        a = __import__("array").array(tc, bytes(uctypes.bytearray_at(
            items, n)))
        heap_list[k] = a
    top = [heap_list] + top
    shared = {}
    out = []

    def w(v):
        out.append(v)

    def emit(x, addr=False):
        if x is None:
            w(C.T_NONE)
            return
        if x is True or x is False:
            w(C.T_TRUE if x else C.T_FALSE)
            return
        if isinstance(x, int):
            if -0x80000000 <= x < 0x80000000:
                w(C.T_INT)
                w(x)
            else:
                if not -(1 << 63) <= x < 1 << 63:
                    raise NotCompilable("an int of %d bits" % x.bit_length())
                w(C.T_BIG)
                w(x & 0xFFFFFFFF)
                w(x >> 32)
            return
        if id(x) in refs and not isinstance(x, tuple):
            w(C.T_REF)
            w(string(refs[id(x)]))
            return
        ak = addr and addr_key(x)
        k = ak or key(x)
        if k is not None and seen.get(k, 0) > 1:
            if k in shared:
                w(C.T_SAME)
                w(shared[k])
                return
            shared[k] = len(shared)
            w(C.T_MEMO)
            w(shared[k])
        t = type(x).__name__
        if ak:  # a view of the arena or the model: its address (an int
            # on the board where it is a small int, else a view)
            w(C.T_ADDR)
            for v in ak[1:]:
                w(v)
        elif isinstance(x, (list, tuple)):
            w(C.T_TUPLE if isinstance(x, tuple) else C.T_LIST)
            w(len(x))
            slots = address_slots(x)
            for j, y in enumerate(x):
                emit(y, j in slots)
        elif t == "memoryview":
            r, off, n = relocate(spans, view_key(x))
            w(C.T_VIEW)
            w(r)
            w(off)
            w(n)
        elif t == "array" or isinstance(x, bytearray):
            tc = "B" if isinstance(x, bytearray) else typecode(x)
            if tc not in SIZES:
                raise NotCompilable("an array of typecode %r" % tc)
            if isinstance(x, bytearray):
                w(C.T_BYTEARRAY)
            else:
                w(C.T_ARRAY)
                w(ord(tc))
            w(len(x))
            raw = bytes(x) + bytes(-len(bytes(x)) & 3)
            for j in range(0, len(raw), 4):
                w(int.from_bytes(raw[j:j + 4], "little"))
        elif isinstance(x, tflm.InvokeError):
            w(C.T_ERROR)
            if messages and messages[-1] is None:
                w(string(x.args[0]))
            else:
                messages.append(x.args[0])
                w(0)
        else:
            raise NotCompilable("a %s in a kernel's state" % t)

    # the references first (strings 1 .. nrefs), then the messages: a
    # first pass registers the references only
    for x in top:
        emit(x)
    # modules that no state refers to but that construction imported for
    # their side effect (kernels/requant_neg.py makes itself
    # fixedpoint._requant_neg): the board imports every module that a
    # reference names (compiled.Block.modules)
    for mod, name in IMPORTED_FOR_EFFECT:
        if mod in sys.modules:
            string(mod + ":" + name)
    nrefs = len(strings) - 1
    for m in messages:
        string(m)
    messages.append(None)  # the second pass looks the messages up
    out.clear()
    shared.clear()
    for x in top:
        emit(x)
    objs = out

    # the head must hold only zeros but the variables (their reset
    # value), as a fresh arena: eval may rely on nothing prepare wrote
    # there
    head = memoryview(it.arena)[:it.arena_size]
    var = bytearray(it.arena_size)
    for v, fill in variables:
        a = uctypes.addressof(v) - head_a
        if not 0 <= a < it.arena_size:
            continue  # a resource variable's bytes: in the tail
        for j in range(len(v)):
            var[a + j] = 1
    for j in range(it.arena_size):
        if head[j] and not var[j]:
            raise NotCompilable("prepare wrote into the head (byte %d)" % j)

    tail = bytearray(memoryview(it.arena)[it.arena_size:])
    tail += bytes(-len(tail) & 3)
    words = bytearray(it._words) if len(it._words) else bytearray()
    repoint(packed, regions, view_key, tail, words, spans)
    # the state image: the spans' bytes, one after another
    state = [bytearray(), bytearray()]
    for j, src in enumerate((tail, words)):
        for a, e in spans[j]:
            state[j] += src[a:e]

    sblob = bytearray()
    for s in strings:
        b = s.encode()
        sblob += len(b).to_bytes(4, "little") + b + bytes(-len(b) & 3)
    hdr = [0] * C.HEADER
    off_strings = 4 * C.HEADER
    off_tail = off_strings + len(sblob)
    off_objs = off_tail + len(tail) + len(words) + len(state[0]) + \
        len(state[1])
    where = list(it._where)
    body = b"".join((x & 0xFFFFFFFF).to_bytes(4, "little")
                    for x in where + [len(ops)] + ops + objs)
    total = off_objs + len(body)
    hdr[0] = C.MAGIC
    hdr[1] = C.FORMAT
    hdr[2] = WORD
    hdr[3] = THUMB
    hdr[6] = total
    hdr[7] = it.arena_size
    hdr[8] = len(tail)
    hdr[9] = len(it._words)
    hdr[10] = len(where)
    hdr[11] = it.copied_bytes
    hdr[12] = it.persistent_size
    hdr[13] = 0
    hdr[14] = len(strings)
    hdr[15] = off_strings
    hdr[16] = off_tail
    hdr[17] = off_objs
    hdr[18] = nrefs
    for x in strings:  # CALL_ONCE's has-run byte: in the tail, no state
        if ro and x and x.endswith(":_eval_call_once"):
            if spans != ((), ()):
                raise Unsplittable()
            ro = 0
    hdr[19] = ro
    hdr[21] = len(state[0])
    hdr[22] = len(state[1]) // 4
    blob = b"".join(x.to_bytes(4, "little") for x in hdr) + sblob + tail \
        + words + state[0] + state[1] + body
    assert len(blob) == total
    with open(sys.argv[3], "wb") as f:
        f.write(blob)
    print(json.dumps({"head": it.arena_size, "tail": len(tail),
                      "words": len(it._words), "bytes": total,
                      "persistent": it.persistent_size,
                      "tail_read_only": ro,
                      "state": len(state[0]) + len(state[1])}))


try:
    try:
        main()
    except Unsplittable:
        SPLIT[0] = False
        gc.collect()
        main()
except NotCompilable as e:
    print(json.dumps({"error": "not compilable: %s" % e.args[0]}))
except tflm.TFLMError as e:
    print(json.dumps({"error": "%s: %s" % (type(e).__name__, e.args[0])}))
