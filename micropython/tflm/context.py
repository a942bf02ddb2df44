"""The kernel context: what a kernel's prepare may ask of the interpreter.

In the spirit of TFLM's MicroContext (tensorflow/lite/micro/
micro_context.h) and MicroAllocator: kernels do not allocate long-lived
memory themselves, they ask the context, and the interpreter places every
byte in one arena that it allocates once.

The interpreter runs every kernel's prepare twice with the same calls:

1. a sizing pass (no arena): each request is recorded, nothing is kept.
   Activations and scratch are views of a throw-away buffer; the results
   of prepare are dropped.
2. the real pass (arena given): the same requests get their place in the
   arena, planned after the sizing pass, before the arena existed.

The arena is one bytearray: the head holds the activations and the scratch
buffers (planned together by the greedy memory planner, each scratch
buffer living only during its operator, like RequestScratchBufferInArena);
the tail holds what kernels keep for eval (AllocatePersistentBuffer).

What prepare may use (ctx):
- ctx.const_ints(op, t, what): the values of a constant integer tensor
  (axes, paddings, shapes, sizes: what TFLM's Prepare reads with
  GetTensorData from a constant input), read from the model's bytes.
- ctx.scratch: this operator's scratch buffer, ctx.scratch_len int32
  words (twice the largest last dimension of the op's outputs, at least
  32; ctx.limit_scratch(n) lowers it), used only during its own eval (a
  bytes view: read it with viper pointers; conv_util.scratch_halves
  splits it in two).
- ctx.work(n): a further scratch buffer of n int32 words for this
  operator, a bytes view like ctx.scratch (conv_util.work_buffer);
  ctx.work(n, least=m): an elastic one, for speed only, of n words where
  the head has room for them during this operator, else of what room
  it has, at least m (conv_util.elastic_work).
- ctx.persistent(typecode, n): n zeros in the arena's persistent part
  (TFLM's AllocatePersistentBuffer), filled by prepare, read by eval
  with viper pointers (kernels call heap.persistent(ctx, ...), which
  falls back to an array for a context without it).
- ctx.variable(t): variable tensor t is this operator's state (set to
  its reset value now and by interp.reset()).
- ctx.keep(a, itemsize): after prepare returns, array a (an item of the
  state tuple) is copied into the arena's tail and the state gets a view
  of the copy in its place (kernels call heap.keep(ctx, ...)): for small
  arrays; persistent() makes no heap copy.
- ctx.pack(st, first): the state is parameter block st[0], with
  region 0 (word first) and an offset (a word each, from word first + 1)
  per buffer of st[1:] once the kept arrays have their places
  (fixedpoint.rel; kernels call conv_util.packed).
- ctx.copied_bytes: kernels add the bytes of constants they copy into
  the arena (reported as interp.copied_bytes).
Kernels touch nothing else of the interpreter.
"""

import sys
from struct import pack_into

import micropython
from micropython import const

from .errors import PrepareError
from .heap import _copy, pack, zeros

_INT8 = const(9)
_INT32 = const(2)
_INT64 = const(4)
_NOTHING = memoryview(b"")  # what untouched requests get in the sizing pass


class KernelContext:
    """Context for the prepare of every operator (see the module doc).

    model: model.Model. begin() starts each operator's prepare and sets
    scratch_len, the words of its scratch.
    Sizing pass (head is None): requests are recorded in offsets (as
    below, without the head offset) while it has room, then in
    `requests`: sizing_requests() lists them all as (operator index,
    bytes; negative for a work buffer); tail_size sums the kept bytes.
    dummy: a buffer that the sizing pass's scratch requests are views of
    where it is large enough. Real pass: head / tail are memoryviews
    of the arena; offsets[first + 3 * j : first + 3 * j + 3] are the
    operator, head offset and size of request j < n_requests, which must
    be the same request as in the sizing pass (else PrepareError: a
    kernel whose prepare asked for other buffers the second time).
    """

    def __init__(self, model, head=None, offsets=None, tail=None, first=0,
                 n_requests=0, dummy=None, words=None):
        self.model = model
        self.scratch_len = 0
        self.copied_bytes = 0
        self.op = -1
        self._head = head
        self._offsets = offsets
        self._tail = tail
        self.requests = []
        self.tail_size = 0  # kept bytes (sizing) / bytes used (real)
        self.spilled = 0  # kept bytes that stayed on the heap (real pass)
        self._req = 0
        self._first = first
        self._n_requests = n_requests
        self._kept = []
        self._scratch = None
        self._dummy = dummy
        # real pass: the view of each request, made once (a list of fixed
        # size: a growing dict would reallocate its table amid what lives)
        self._views = [None] * n_requests if head is not None else None
        # persistent(): words (array('i')) and bytes of the tail, and
        # the views made during this op's prepare
        self._words = words
        self.words_size = 0
        self._made = []
        # state(): views that interp.reset() zeroes, and this op's new ones
        self.states = []
        # variable(): (bytes view, reset byte) of each variable tensor
        self.variables = []
        self._new_states = []
        # pack(): this op's first pair word; held: the arrays on the heap
        # that packed states point to (the interpreter keeps them)
        self._pack = None
        self.held = []

    def begin(self, op_index, scratch_len):
        """Start the prepare of operator op_index, whose scratch is
        scratch_len words. In the real pass, the views of this op's
        planned buffers are made here, before prepare's garbage: what
        lives on is then made in the lowest free blocks (heap.py)."""
        self.op = op_index
        self.scratch_len = scratch_len
        self._scratch = None
        self._kept = []
        self._made = []
        self._pack = None
        j = self._req
        while self._head is not None and j < self._n_requests:
            k = self._first + 3 * j
            if self._offsets[k] != op_index:
                break
            self._view(j)
            j += 1

    def _view(self, j):
        """The view of request j: the head at its offset, abs(size)
        bytes (size < 0: a work buffer), shared with every earlier
        request of the same place."""
        v = self._views[j]
        if v is not None:
            return v
        o = self._offsets
        k = self._first + 3 * j
        off, size = o[k + 1], o[k + 2]
        for i in range(j):
            q = self._first + 3 * i
            if o[q + 1] == off and o[q + 2] == size and \
                    self._views[i] is not None:
                v = self._views[i]
                break
        else:
            v = self._head[off:off + abs(size)]
        self._views[j] = v
        return v

    def _request(self, nbytes, work=False, untouched=False, least=0):
        j = self._req
        self._req += 1
        size = -nbytes if work else nbytes
        if self._head is None:
            # Recorded in offsets while it has room (made before this
            # pass: no object of this pass outlives an op, see heap.py);
            # the middle word, the head offset once planned, holds the
            # least bytes of an elastic work buffer until then
            k = self._first + 3 * j
            if self._offsets is not None and k + 2 < len(self._offsets):
                self._offsets[k] = self.op
                self._offsets[k + 1] = least
                self._offsets[k + 2] = size
            else:
                self.requests.append((self.op, size, least))
            d = self._dummy
            if untouched:  # prepare promises not to touch it now
                return _NOTHING
            v = (d[:nbytes] if d is not None and len(d) >= nbytes else
                 memoryview(bytearray(nbytes)))
            return v
        k = self._first + 3 * j
        got = self._offsets[k + 2] if j < self._n_requests else 0
        if (j >= self._n_requests or self._offsets[k] != self.op
                or not (got == size or least and size <= got <= -least)):
            raise PrepareError("op %d: prepare asked for other scratch "
                               "buffers than when the arena was planned"
                               % self.op)
        return self._view(j)

    @property
    def sizing(self):
        """True in the sizing pass, where prepare's results are dropped:
        a kernel may skip computing the values of its tables then (their
        sizes must be the same)."""
        return self._tail is None

    def const_ints(self, op, t, what, any_int=False):
        """The values of constant tensor t as a tuple of ints, read
        byte by byte from its bytes in the model (any address), or None
        when t is not a constant. t: int32 or int64; with any_int also
        int8 or int16, the caller having checked the type. Raises
        PrepareError naming op, what and t for another type. Follows
        TFLM's Prepare reading a constant input with GetTensorData
        (tensorflow/lite/micro/kernels/kernel_util.h)."""
        if t.const_pos is None:
            return None
        if not (t.type == _INT32 or t.type == _INT64 or any_int):
            raise PrepareError("%s: %s %s must be int32 or int64, not %s"
                               % (op.label(), what, t.label(), t.dtype))
        d, w, out = t.data, t.itemsize, []
        for k in range(t.size):
            v = 0
            for i in range(w):  # little-endian
                v |= d[w * k + i] << 8 * i
            out.append(v - (v >> 8 * w - 1 << 8 * w))
        return tuple(out)

    def limit_scratch(self, n):
        """This op uses at most n words of scratch: scratch_len becomes
        min(scratch_len, n) (call before reading scratch)."""
        self.scratch_len = min(self.scratch_len, max(n, 1))

    @property
    def scratch(self):
        """This operator's scratch: scratch_len int32 words (bytes view)."""
        if self._scratch is None:
            self._scratch = self._request(4 * self.scratch_len)
        return self._scratch

    def sizing_requests(self):
        """After the sizing pass: [(operator, bytes, least bytes)] of
        every request (bytes negative for a work buffer; least > 0: an
        elastic one, see work())."""
        out = []
        o = self._offsets
        for j in range(self._req):
            k = self._first + 3 * j
            if o is not None and k + 2 < len(o):
                out.append((o[k], o[k + 2], o[k + 1]))
        return out + self.requests

    def work(self, n, untouched=False, least=None):
        """n more int32 words of scratch for this operator (a bytes view).
        untouched: prepare does not read or write it in the sizing pass
        (ctx.sizing), which then allocates nothing for it.
        least (words, < n): an elastic buffer, for speed only: the
        planner grants n words where the head has room for them during
        this operator, else as many as it has there, at least least
        (planner.grow): the head grows by no more than least. The real
        pass's view has the granted bytes (a multiple of 4; the sizing
        pass's has n words): prepare reads its length
        (conv_util.elastic_work)."""
        n = 4 * max(n, 1)
        least = 4 * max(least, 1) if least is not None and \
            4 * least < n else 0
        return self._request(n, True, untouched, least)

    def persistent(self, typecode, n, untouched=False):
        """n zeros of typecode ('i', 'I': int32 words; 'b', 'B': bytes)
        in the arena's persistent part (TFLM's AllocatePersistentBuffer):
        prepare fills them by index, eval reads them with viper pointers;
        a top-level item of the state tuple. No copy is made, unlike
        keep(): nothing of this size is allocated on the heap while the
        op is prepared."""
        if self._tail is None:
            if typecode in "iI":
                self.words_size += n
            else:
                self.tail_size += (n + 3) & ~3
            return _NOTHING if untouched else zeros(typecode, n)
        if typecode in "iI":
            base, off = self._words, self.words_size
            if base is None or off + n > len(base):
                self.spilled += 4 * n
                return zeros(typecode, n)
            self.words_size = off + n
        else:
            base, off = self._tail, self.tail_size
            if off + n > len(base):
                self.spilled += n
                return zeros(typecode, n)
            self.tail_size = off + ((n + 3) & ~3)
        v = memoryview(base)[off:off + n]  # zeros: a new block
        self._made.append((v, base, off, n))
        return v

    def state(self, typecode, n):
        """persistent(typecode, n) for an operator's state (TFLM's
        variable tensors and the Signal ops' noise estimate): zeros that
        eval updates, which interp.reset() zeroes again (TFLM's
        MicroInterpreter::Reset calls each kernel's reset)."""
        v = self.persistent(typecode, n)
        if self._tail is not None:
            self._new_states.append(v)
        return v

    def variable(self, t):
        """Variable tensor t (is_variable: state in the activations,
        e.g. SVDF's) is this operator's state. In the real pass it is set
        to its reset value (TFLM's MicroInterpreter::Reset, which
        AllocateTensors runs: the first zero point's low byte for an int8
        tensor, else zeros), and interp.reset() sets it again."""
        v = t.data
        if self._tail is None or v is None:
            return
        fill = t.zero_point & 0xFF if t.type == _INT8 else 0
        for k in range(len(v)):
            v[k] = fill
        self.variables.append((v, fill))

    def keep(self, a, itemsize=4):
        """Move array a into the arena's tail once prepare returns; returns
        a. a: this op's own array('i') (itemsize 4), array('b') or
        bytearray (itemsize 1), final once prepare returns, and a
        top-level item of the state tuple, which then holds a bytes view
        of the copy: eval reads it through viper pointers only. Do not
        keep an array that eval indexes from Python or that a nested
        tuple or a memoryview slice in the state refers to."""
        if a is not None:
            self._kept.append((a, itemsize))
        return a

    def finish(self, state):
        """End the prepare of the current op: state with its kept arrays
        replaced by views of their copies in the tail (real pass), or
        state as it is (sizing pass, where only their sizes count)."""
        kept, self._kept = self._kept, []
        first, self._pack = self._pack, None
        if self._tail is None:
            seen = {}
            for a, size in kept:
                if id(a) not in seen:
                    seen[id(a)] = a
                    self.tail_size += (len(a) * size + 3) & ~3
            return state
        # The garbage of prepare goes first: the views and the tuple that
        # live on are then made in the lowest free blocks (heap.py).
        made, self._made = self._made, []
        pack()
        seen = {}
        for v, base, off, n in made:  # persistent(): its views made anew
            seen[id(v)] = memoryview(base)[off:off + n]
        for v in self._new_states:
            self.states.append(seen.get(id(v), v))
        self._new_states = []
        for a, size in kept:
            if id(a) in seen:
                continue
            n = len(a) * size
            off = self.tail_size
            if off + n > len(self._tail):
                self.spilled += n  # not planned: stays where it is
                seen[id(a)] = a
                continue
            v = self._tail[off:off + n]
            _copy(v, a, n)
            seen[id(a)] = v
            self.tail_size = off + ((n + 3) & ~3)
        if not isinstance(state, tuple):
            return state
        state = tuple([seen.get(id(x), x) for x in state])
        if first is None:
            return state
        try:
            return pairs(state, first, self.held)
        except ValueError as e:
            raise PrepareError("op %d: %s" % (self.op, e))

    def pack(self, st, first):
        """st, whose parameter block st[0] finish() turns into the state
        (pairs: once the kept arrays of st have their places)."""
        self._pack = first
        return st


def pairs(st, first, held):
    """Parameter block st[0] (an int32 buffer) with region 0 for every
    buffer (its word first: 0) and, at its word first + k, the address of
    st[k]'s first byte less st[0]'s for k = 1 .. len(st) - 1
    (fixedpoint.rel); the items
    of st that are no memoryview (arrays on the heap: the arena's views
    live as long as the arena) are appended to held, which must outlive
    the block. Returns st[0]. ValueError on a 64-bit port where a buffer
    lies 2 GB or more from the block (the offsets are int32)."""
    p = st[0]
    a = address(p)
    pack_into("<i", p, 4 * first, 0)
    for k in range(1, len(st)):
        x = st[k]
        if type(x) is not memoryview:
            held.append(x)
        d = address(x) - a
        if sys.maxsize < 0x80000000:  # 32-bit: exact mod 2**32
            d = ((d + 0x80000000) & 0xFFFFFFFF) - 0x80000000
        elif d >= 0x78000000 or d < -0x78000000:
            raise ValueError("on a 64-bit port the model's bytes must "
                             "lie within 2 GB of the arena")
        pack_into("<i", p, 4 * (first + k), d)
    return p


@micropython.viper
def address(buf) -> int:
    """The address of buf's first byte (a buffer, or an int: itself), a
    signed machine word (negative on a 32-bit port above 2 GB)."""
    return int(ptr8(buf))

