"""The interpreter: load, plan, prepare once; invoke without allocating.

Follows TFLM's MicroInterpreter (tensorflow/lite/micro/micro_interpreter.cc)
and MicroAllocator: resolve every operator first (all unsupported ones are
named in one error), plan all activations into one bytearray arena, bind
constants as views of the model bytes (never copies), then run each
kernel's prepare once. invoke() only calls the prepared eval functions.
"""

import gc
import sys
import time
from array import array

from . import tensor  # (placed first: see CONSTRUCTION)
from . import kernels, model  # noqa: F401 (see PARSE)
from .heap import _MP
from .errors import InvokeError, TFLMError, out_of_memory

del kernels, model  # see PARSE: only sys.modules holds them

# What only construction uses (allocator.py: TFLM's MicroAllocator, what
# it imports, and the kernels' prepare-time helpers, which kernel modules
# import inside prepare): Interpreter() imports them and, once built,
# drops those it imported from sys.modules (_drop), so that they give
# their RAM back to the heap. No module that lives on may import them at
# its top (tests/test_board_heap.py checks this). What lives on is
# imported here, by `import tflm`, so that the transient modules are made
# after it, in one run of blocks, rather than amid it. CONSTRUCTION[1:3],
# verify and planner, go as soon as the sizing pass is done, and without
# arena= CONSTRUCTION[3:14] but context (quant and the kernels'
# prepare-time helpers) too, imported again by the real pass
# (allocator._build: its _HELPERS and _CONTEXT bits follow this order).
CONSTRUCTION = ("tflm.allocator", "tflm.verify", "tflm.planner",
                "tflm.quant", "tflm.context", "tflm.kernels.conv_util",
                "tflm.kernels.lut_math", "tflm.kernels.gemmlowp",
                "tflm.kernels.reshape_prep", "tflm.kernels.pooling_prep",
                "tflm.kernels.softmax_prep",
                "tflm.kernels.softmax16_prep",
                "tflm.kernels.broadcast_prep", "tflm.kernels.decode_prep",
                "tflm.static_arena",
                "tflm.compiled", "tflm.source", "tflm.construct",
                "tflm.graphs", "tflm.compiled_regions")
# The model parser and the op resolver (model.py with flatbuf.py, and the
# kernels package's registry): construction uses them, and `import tflm`
# imports them (above) so that they lie low in the heap, before any
# construction object; a built interpreter does not (its inputs and
# outputs are tensor.Tensor records that own their fields, and its
# `model` is parsed again on access). Every Interpreter() drops them once
# built, as CONSTRUCTION's, and the next imports them again (a kernel
# module stays: its import finds it in sys.modules without its package).
# No module that lives on may import them at its top either
# (tests/test_board_heap.py).
PARSE = ("tflm.model", "tflm.flatbuf", "tflm.kernels")


def _pick(tensors, i, what):
    """tensors[i] for an int 0 <= i < len(tensors), else InvokeError."""
    if not isinstance(i, int) or isinstance(i, bool) \
            or not 0 <= i < len(tensors):
        raise InvokeError("%s index %r out of range: the model has %d %ss"
                          % (what, i, len(tensors), what))
    return tensors[i]


def _bind(t, w, model_mv, head):
    """Bind tensor t to its bytes: w = where[t.index] (see _where)."""
    if w <= -2:
        t.data = model_mv[-2 - w:-2 - w + t.nbytes]
    elif w >= 0:
        t.data = head[w:w + t.nbytes]
    return t


# arena= buffers in use: [start, end, taken] of each, taken an
# array('i', [0]) that the last Interpreter built there holds; a newer
# buffer that overlaps sets it to 1 (the older interpreter then raises)
# and takes the entry's place (static_arena._claim). An entry outlives its
# interpreter (a few words) until a buffer that overlaps it is used.
_OWNERS = []


def _forget(name):
    """Remove module `name` from sys.modules and from its package (the
    module object then dies with what only it referenced). Runs on a heap
    that construction may have exhausted: splitting a name allocates, and
    where that does not fit the package keeps the module until the next
    import of it replaces it (never a MemoryError from here)."""
    if name in sys.modules:
        del sys.modules[name]
        try:
            pkg, _, attr = name.rpartition(".")
            delattr(sys.modules[pkg], attr)
        except (AttributeError, KeyError, MemoryError):
            pass


def _drop(had, first=0, end=len(CONSTRUCTION), parse=False):
    """Drop CONSTRUCTION[first:end] but those with bit k of had set (k:
    their index), and with parse the PARSE modules, then collect (first
    too: _forget may allocate)."""
    gc.collect()
    for k in range(first, end):
        if not had >> k & 1:
            _forget(CONSTRUCTION[k])
    if parse:
        for name in PARSE:
            _forget(name)
    gc.collect()


# What invoke() returns when an operator ended it early: TFLM's
# kTfLiteAbort, as its Python Interpreter.invoke() returns it (else None
# here, 0 there).
ABORT = 15

# Kernels whose eval may end an invoke early (returning ABORT), as
# "module:function" of tflm.kernels: TFLM's CIRCULAR_BUFFER.
_STOPPERS = ("circular_buffer:_eval",)


def stops(steps):
    """True when one of the steps (eval, state, ...) is a _STOPPERS eval:
    then invoke() checks what each step returns (_invoke_stops); every
    other model keeps the plain loop."""
    for s in _STOPPERS:
        mod, _, name = s.partition(":")
        m = sys.modules.get("tflm.kernels." + mod)
        if m is None:
            continue
        f = getattr(m, name)
        for i in range(0, len(steps), 2):
            if steps[i] is f:
                return True
    return False


class Interpreter:
    """Runs a .tflite model (subgraph 0).

    model: a path, or any buffer (bytes, bytearray, memoryview of a /rom
    file, uctypes.bytearray_at over flash). A buffer is never copied; a
    path is used in place where the filesystem maps files (ROMFS) and
    read into RAM elsewhere (model_in_ram).
    arena_size: optional budget in bytes for the whole arena (head +
    persistent tail); if the model needs more, ArenaError says how much,
    before the arena is allocated.
    arena: optional writable buffer (a bytearray, or a memoryview of
    one) that holds the whole arena, head and tail, as TFLM's
    MicroInterpreter takes its tensor_arena: make it first, right after
    boot, before `import tflm`, while the heap is still in one piece
    (then no "not in one block" error can happen). Construction
    allocates no arena then, only small objects. Too small: ArenaError
    with the bytes the model needs (up to 15 more are skipped to align
    the start to 16 bytes). One buffer serves one interpreter at a time:
    building another on it makes the earlier one raise InvokeError.
    Not with a CPython host tool, only on MicroPython.
    cores: 1 (default), or 2 on a dual-core board (RP2040, RP2350: a
    `_thread` on the second core): large CONV_2D and DEPTHWISE_CONV_2D
    operators are then split by output rows between the cores, same
    outputs (tflm/cores.py; CoresError, a TFLMError, without `_thread`).
    labels: optional class labels for `labels` and top(k): a list of
    strings, or the path of a UTF-8 text file with one label per line,
    as many as output 0 has values (else ValueError; TypeError for a
    label that is not a string). Default: the .txt next to a model path,
    read on first use and not checked.

    Construction (allocator.py) follows TFLM's MicroAllocator so that a
    board's heap, which never moves objects, does not fragment: every
    size is known before any large block is taken, then the arena, one
    bytearray of head + tail, is allocated while little else is live
    (with arena=, laid out in that buffer instead).
    The modules only construction uses (CONSTRUCTION) are imported for
    it and dropped once it is done (those that were imported before
    stay), and so are the parser's (PARSE), so that their RAM goes back
    to the heap.

    Attributes: inputs, outputs (lists of tensor.Tensor: name, shape,
    dtype, scale, zero_point, data), arena (the head and the tail's
    bytes: a bytearray, or a memoryview of the arena= buffer; the tail's
    int32 words follow it there), arena_size (bytes of the head:
    activations and scratch; TFLM's arena head), persistent_size (bytes
    of the tail: multipliers, shifts, biases, tables and parameter
    blocks kept for eval; TFLM's arena tail), ram (bytes of heap this
    interpreter keeps: the heap's growth across construction, model
    bytes read into RAM included, the code of kernel modules it imported
    not; arena bytes under CPython),
    copied_bytes (constant bytes copied for alignment), model_in_ram,
    path (the model file's path, or None), tensors and model (built on
    access);
    and, imported on first use (api.py), OpenMV's model-level
    attributes (input_shape, input_dtype, input_scale, input_zero_point,
    the output_ twins, labels, top(k)) and TFLite's methods
    (get_input_details, get_output_details, set_tensor, get_tensor,
    set_input, get_output, allocate_tensors, reset).
    Raises FormatError / ModelError for a bad file, UnsupportedOpError
    listing every operator without a kernel, PrepareError from a kernel,
    ArenaError when the model file or the arena does not fit (arena_size,
    or the free heap: the message names the phase, the bytes needed and
    the bytes free; with arena=, the bytes the model needs), before the
    block is allocated where the free heap already shows it. Any model
    file gives one of these TFLMErrors, never another exception (see
    verify.py); a file that is not a TFLite model
    gives a FormatError saying so. Bad arguments: TypeError (model
    neither a path nor a buffer, arena_size or cores not an int, labels
    neither a list nor a path, arena not a writable buffer) or
    ValueError (arena_size < 0, cores neither 1 nor 2); a path (model or
    labels) that cannot be opened: OSError naming it.
    Under CPython: TFLMError (the kernels are viper code; host_tools run
    models on the unix port). A bytearray or array model that changes
    size after construction (its bytes may have moved) makes invoke()
    raise InvokeError; do not resize the model's buffer.

    When the constructor raises, no Interpreter exists (Python binds no
    object), so there is nothing to invoke; an object whose construction
    did not finish (e.g. a subclass that caught the error) raises
    InvokeError from invoke(), input() and output(). Bad calls on a built
    interpreter (wrong input size in Tensor.set, input / output index out
    of range) raise InvokeError and leave it usable.
    """

    # True when a step's eval may end an invoke early (stops(): TFLM's
    # kTfLiteAbort); construction sets it on the instance
    _stops = False
    # What construction sets on the instance only where it differs from
    # these (each attribute on the instance costs every interpreter RAM:
    # __init__ sets the others; a compiled model's interpreter has 17 in
    # all, a 17-slot table (18 would take 23), a plain one up to 23, its
    # table grown once at the start of its construction): the plain
    # construction's tensors and scratch requests, the kernels' states
    # (interp.reset() zeroes them) and variables, whether the model was
    # read into RAM; a resizable buffer given as the model and its
    # length (invoke() refuses to run once it changed: its bytes may have
    # moved); with arena=, [its _OWNERS entry's taken array, the
    # InvokeError once another took the buffer, the bytearray given (or
    # None), its length]; a compiled model's (the fixedpoint module, the
    # array that invoke() makes its BASES: fixedpoint.rel); the heap
    # arrays that the kernels' parameter blocks point to (context.pairs).
    _tensors = _states = _variables = None
    _n_requests = 0
    model_in_ram = False
    _source = _source_len = _held = None
    _bases = _held_bufs = None
    # Set on the instance only where they differ (a compiled build sets
    # none of them but path and persistent_size; the plain one sets them
    # all first, allocator.build): the parsed model during plain
    # construction, the constants copied for alignment, the tail's bytes,
    # the model's path. (invoke(profile=True) sets _profiled: profiler.py
    # reads it with a default.)
    _model = None
    copied_bytes = persistent_size = 0
    path = None


    def __init__(self, model, arena_size=None, labels=None, arena=None,
                 cores=1):
        # Every attribute is set here, before anything that dies is made:
        # the instance's attribute table is then allocated once, low (on
        # a full heap, that is the first allocation to fail).
        try:
            self._steps = self.arena = None
            self._buf = self._words = None
            self._where = self.inputs = self.outputs = None
            self._prof_ops = self._prof_us = None
            self.arena_size = self.ram = self._imported = 0
            if isinstance(model, str):
                self.path = model
            self._stage = "reading the model"
        except MemoryError:
            raise out_of_memory("creating the interpreter")
        if not _MP:
            raise TFLMError("tflm.Interpreter runs on MicroPython (its "
                            "kernels are viper code); on a PC use the unix "
                            "port, or `python -m host_tools run MODEL`")
        if arena_size is not None and (not isinstance(arena_size, int) or
                                       isinstance(arena_size, bool)):
            raise TypeError("arena_size must be an int (bytes) or None, "
                            "not %s" % type(arena_size).__name__)
        if arena_size is not None and arena_size < 0:
            raise ValueError("arena_size must be >= 0, got %d" % arena_size)
        if not isinstance(model, str):
            try:
                memoryview(model)
            except TypeError:
                raise TypeError("model must be a path (str) or a buffer "
                                "(bytes, bytearray, memoryview), not %s"
                                % type(model).__name__)
        if isinstance(model, (bytearray, array)):
            self._source, self._source_len = model, len(model)
        if cores != 1:  # the worker first: it lives on (tflm/cores.py)
            from .cores import start
            start(cores)
            # (the memory planner then lets no CONV_2D's output overlap
            # its input: cores.py splits those by rows)
            self._split = True
        if labels is not None:  # small, made before the arena
            from .api import labels_arg
            self.labels = labels_arg(labels)
        had = 0  # CONSTRUCTION modules imported before (kept)
        for k, name in enumerate(CONSTRUCTION):
            if name in sys.modules:
                had |= 1 << k
        try:
            try:
                from .construct import build
            except MemoryError:
                _drop(had, parse=True)  # room for the message
                raise out_of_memory("loading the construction modules")
            build(self, model, arena_size, had, arena)
        finally:
            build = None
            if self._model is not None:  # (built: already None)
                self._model = None
            _drop(had, parse=True)
        # What the inputs and outputs keep of the model bytes, made now
        # that the parser is gone (so not at construction's peak), in
        # the holes it left; counted in ram. On a heap too full for it a
        # tensor keeps reading them from the model bytes (its FlatBuffer
        # is forgotten only once all its fields are stored). A compiled
        # build stored them already (compiled._build: no gc.mem_free()
        # here, a few hundred thousand instructions each on a board).
        if getattr(self, "_compiled", None) is not True:
            f = gc.mem_free()
            try:
                tensor.own((self.inputs, self.outputs), False)
            except MemoryError:
                pass
            gc.collect()
            self.ram += f - gc.mem_free()
        if self._held is not None:  # arena=: their set() checks it
            for t in self.inputs + self.outputs:
                t._interp = self
        if labels is not None:
            from .api import check_labels
            check_labels(self.labels, self.outputs)
        if cores != 1:
            from .cores import split
            f = gc.mem_free()
            split(self)
            gc.collect()
            self.ram += f - gc.mem_free()

    def _built(self):
        if getattr(self, "_steps", None) is None:
            raise InvokeError("interpreter was not built successfully")
        self._check_arena()

    def _check_arena(self):
        """With arena=: InvokeError (made at construction: nothing is
        allocated here, under heap_lock too) once another Interpreter
        took the buffer or the bytearray changed size."""
        h = getattr(self, "_held", None)
        if h is not None and (h[0][0] or (
                h[2] is not None and len(h[2]) != h[3])):
            raise h[1]

    def input(self, i=0):
        """Input tensor i (a model.Tensor: set(), data, shape, ...).

        Raises InvokeError if i is not a valid input index."""
        self._built()
        return _pick(self.inputs, i, "input")

    def output(self, i=0):
        """Output tensor i; raises InvokeError for a bad index."""
        self._built()
        return _pick(self.outputs, i, "output")

    def invoke(self, profile=False):
        """Run the model once. Allocates nothing (unless the model uses a
        Python custom operator whose eval allocates: tflm/custom.py).

        profile=True also times every operator with time.ticks_us (like
        TFLM's MicroProfiler); read the times with profile(). The plain
        path below is untouched by profiling.
        Returns None, or ABORT (15, TFLM's kTfLiteAbort, what TFLM's
        Python Interpreter.invoke() returns then) when an operator ended
        this invoke early (CIRCULAR_BUFFER between its runs): the
        operators after it did not run and their outputs hold what they
        held before.
        Raises InvokeError if construction failed, if the model was
        given as a bytearray or array that has changed size since, or if
        the model is compiled with CONV_2D or DEPTHWISE_CONV_2D and
        another such model's invoke is running (another thread's, or one
        a Python operator of this invoke started: fixedpoint.LOCK).
        """
        steps = getattr(self, "_steps", None)
        if steps is None:
            raise InvokeError("interpreter was not built successfully")
        if self._held is not None:
            self._check_arena()
        src = self._source
        if src is not None and len(src) != self._source_len:
            raise InvokeError(
                "the model's %s changed size after the interpreter was "
                "built (%d -> %d bytes): its memory may have moved; build "
                "a new Interpreter" % (type(src).__name__,
                                       self._source_len, len(src)))
        # A compiled model whose kernels find their buffers from regions
        # (fixedpoint.rel): its regions' addresses in fixedpoint.BASES
        # while it runs, then what was there again (an invoke within an
        # invoke: a Python custom operator's). Where there are threads,
        # one such invoke at a time (fixedpoint.LOCK): another one, from
        # another thread or from within, raises InvokeError.
        b = self._bases
        lock = prev = None
        if b is not None:
            lock = b[0].LOCK
            if lock is not None and not lock.acquire(0):
                raise InvokeError(
                    "another compiled model's invoke() is running (in "
                    "another thread, or this one's Python operator): "
                    "compiled models with CONV_2D or DEPTHWISE_CONV_2D run "
                    "one invoke at a time")
            prev = b[0].BASES
            b[0].BASES = b[1]
        try:
            if profile:
                return self._invoke_profiled(steps)
            if self._stops:
                return self._invoke_stops(steps)
            i = 0
            n = len(steps)
            while i < n:
                steps[i](steps[i + 1])
                i += 2
        finally:
            if b is not None:
                b[0].BASES = prev
                if lock is not None:
                    lock.release()

    def _invoke_stops(self, steps):
        # A model with an operator that may end the invoke (stops()): the
        # same loop, stopping at a step that returns ABORT (TFLM's
        # MicroInterpreterGraph::InvokeSubgraph; the later operators'
        # outputs keep what they held), which invoke() returns as TFLM's
        # Python Interpreter.invoke() returns kTfLiteAbort.
        i = 0
        n = len(steps)
        while i < n:
            if steps[i](steps[i + 1]):
                return ABORT
            i += 2

    def _invoke_profiled(self, steps):
        # Same loop with a clock read around each step; writes into the
        # preallocated array('i'), so it allocates nothing either.
        us = self._prof_us
        ticks = time.ticks_us
        diff = time.ticks_diff
        k = 0
        n = len(steps) // 2
        stop = None
        start = ticks()
        while k < n:
            t0 = ticks()
            r = steps[2 * k](steps[2 * k + 1])
            us[k] = diff(ticks(), t0)
            k += 1
            if r and self._stops:  # ABORT: the steps after it do not run
                stop = ABORT
                break
        while k < n:
            us[k] = 0
            k += 1
        us[k] = diff(ticks(), start)
        self._profiled = True
        return stop

    def __getattr__(self, name):
        """What a built interpreter does outside invoke(), imported on
        first use (tflm/api.py, so that it costs a board no RAM until
        then): predict(x) (repl.predict), profile() (profiler.report),
        model and tensors (parsed again on each access); OpenMV
        ml.Model's input_shape, input_dtype, input_scale,
        input_zero_point and the output_ twins (lists, one entry per
        input / output), labels, top(k); TFLite's get_input_details(),
        get_output_details(), set_tensor(), get_tensor(), set_input(),
        get_output(), allocate_tensors(), reset(). AttributeError for
        any other name, or when construction did not finish; ArenaError
        when the heap has no room left to import tflm/api.py."""
        if name.startswith("_") or name in ("inputs", "outputs", "path"):
            raise AttributeError(name)  # not set: construction failed
        try:
            from .api import attribute
        except MemoryError:
            raise out_of_memory("importing tflm.api (interp.attribute)")
        return attribute(self, name)

    def __repr__(self):
        """Operators, arena and model bytes, and every input and output
        (name, dtype, shape, scale, zero point): print(interp)."""
        try:
            self._check_arena()
        except InvokeError as e:
            return "<Interpreter (%s)>" % e.args[0]
        try:
            from .repl import summary
        except MemoryError:
            raise out_of_memory("importing tflm.repl (print(interp))")
        return summary(self)
