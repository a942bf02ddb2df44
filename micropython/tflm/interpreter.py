"""The interpreter: load, plan, prepare once; invoke without allocating.

Follows TFLM's MicroInterpreter (tensorflow/lite/micro/micro_interpreter.cc)
and MicroAllocator: resolve every operator first (all unsupported ones are
named in one error), plan all activations into one bytearray arena, bind
constants as views of the model bytes (never copies), then run each
kernel's prepare once. invoke() only calls the prepared eval functions.
"""

import gc
import time
from array import array

from micropython import const

from . import kernels, planner, verify
from .context import KernelContext
from .heap import _MP, pack, zeros
from .errors import (ArenaError, FormatError, InvokeError, TFLMError,
                     UnsupportedOpError)
from .model import Model

_MIN_SCRATCH = const(32)
# Scratch requests per operator that _where has room for before the
# sizing pass (CONV_2D makes 2); more cost one reallocation.
_REQUESTS_PER_OP = const(2)


def _free():
    """Free heap bytes after a collection (MicroPython), else None."""
    gc.collect()
    f = getattr(gc, "mem_free", None)
    return f() if f is not None else None


def _oom(what, need):
    """ArenaError: `what` needs `need` bytes, more than the heap has."""
    free = _free()
    return ArenaError("%s needs %d bytes: %s" % (
        what, need, "out of memory" if free is None else
        "%d bytes free%s" % (free, "" if free < need else
                             ", but not in one block")))


def _scrub(a, b, c):
    """Nothing: calling it overwrites the caller's dead value-stack slots
    (see Interpreter._build)."""


def _arena_oom(need, head):
    """ArenaError: the need-byte arena (head bytes of head) does not fit."""
    return _oom("allocating the %d-byte arena (%d head + %d tail)"
                % (need, head, need - head), need)


def _open_model(model):
    """(buffer, in_ram) for a path or buffer-protocol object.

    A path on a filesystem that maps files (vfs.VfsRom) is used in place
    through memoryview(file); otherwise the file is read into RAM, into
    one bytearray of the file's size (no growing read). Raises ArenaError
    when the heap has no block that large.
    """
    if not isinstance(model, str):
        return memoryview(model), False
    try:
        f = open(model, "rb")
        import os
        if os.stat(model)[0] & 0x4000:  # S_IFDIR: the unix port opens it
            f.close()
            raise OSError(21, "is a directory")  # EISDIR
    except OSError as e:  # MicroPython's says only "[Errno 2] ENOENT"
        why = " (%s)" % e.args[1] if len(e.args) > 1 else ""
        raise OSError(e.args[0], "cannot open the model file %r%s"
                      % (model, why))
    try:
        try:
            return memoryview(f), False
        except TypeError:
            pass
        n = f.seek(0, 2)
        f.seek(0)
        free = _free()
        if free is not None and free < n:
            raise _oom("reading %s into RAM" % model, n)
        try:
            buf = bytearray(n)
        except MemoryError:
            raise _oom("reading %s into RAM" % model, n)
        if f.readinto(buf) != n:
            raise FormatError("%s: short read" % model)
        return buf, True
    finally:
        f.close()


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


def _bind_sizing(t, w, model_mv, dummy):
    """Bind tensor t for the sizing pass: constants to the model bytes,
    activations (w >= 0) to the front of the throw-away buffer."""
    if w <= -2:
        t.data = model_mv[-2 - w:-2 - w + t.nbytes]
    elif w >= 0:
        t.data = dummy[:t.nbytes]
    return t


def _sizing_tensor(m, i, where, dummy):
    """Tensor i parsed anew and bound for the sizing pass (None for -1)."""
    if i < 0:
        return None
    return _bind_sizing(m.tensor(i), where[i], m.fb.mv, dummy)


def _get(m, i, io, views, where, head):
    """Tensor i of model m bound to its bytes (None for -1): a subgraph
    input or output from io, else parsed anew (garbage after prepare)
    with the data view that views[i] keeps (a list made before the
    loop: a dict growing there would need a new table amid the
    garbage), so that every operator's state holds the same view object
    of a tensor."""
    if i < 0:
        return None
    t = io.get(i)
    if t is not None:
        return t
    t = m.tensor(i)
    v = views[i]
    if v is None:
        v = views[i] = _bind(t, where[i], m.fb.mv, head).data
    t.data = v
    return t


class Interpreter:
    """Runs a .tflite model (subgraph 0).

    model: a path, or any buffer (bytes, bytearray, memoryview of a /rom
    file, uctypes.bytearray_at over flash). A buffer is never copied; a
    path is used in place where the filesystem maps files (ROMFS) and
    read into RAM elsewhere (model_in_ram).
    arena_size: optional budget in bytes for the whole arena (head +
    persistent tail); if the model needs more, ArenaError says how much,
    before the arena is allocated.
    labels: optional class labels for `labels` and top(k): a list of
    strings, or the path of a UTF-8 text file with one label per line,
    as many as output 0 has values (else ValueError; TypeError for a
    label that is not a string). Default: the .txt next to a model path,
    read on first use and not checked.

    Construction follows TFLM's MicroAllocator so that a board's heap,
    which never moves objects, does not fragment: every size is known
    before any large block is taken. A first pass parses and verifies the
    model, plans the activations, and runs every kernel's prepare with a
    sizing context (context.py) that records what it asks for: scratch
    buffers (planned into the head with the activations, each living
    only during its operator) and the bytes it keeps for eval (the
    tail). Everything of that pass is dropped; then the arena, one
    bytearray of head + tail, is allocated while little else is live,
    and the second pass prepares each operator for real, parsing only
    that operator's tensors, and copies what it keeps into the tail.

    Attributes: inputs, outputs (lists of model.Tensor: name, shape,
    dtype, scale, zero_point, data), arena_size (bytes of the head:
    activations and scratch; TFLM's arena head), persistent_size (bytes
    of the tail: multipliers, shifts, biases, tables and parameter
    blocks kept for eval; TFLM's arena tail), ram (bytes of heap this
    interpreter keeps: the heap's growth across construction, model
    bytes read into RAM included, the code of kernel modules it imported
    not; arena bytes under CPython),
    copied_bytes (constant bytes copied for alignment), model_in_ram,
    path (the model file's path, or None), tensors (built on access);
    and, imported on first use (api.py), OpenMV's model-level
    attributes (input_shape, input_dtype, input_scale, input_zero_point,
    the output_ twins, labels, top(k)) and TFLite's methods
    (get_input_details, get_output_details, set_tensor, get_tensor,
    set_input, get_output, allocate_tensors, reset).
    Raises FormatError / ModelError for a bad file, UnsupportedOpError
    listing every operator without a kernel, PrepareError from a kernel,
    ArenaError when the model file or the arena does not fit (arena_size,
    or the free heap: the message names the phase, the bytes needed and
    the bytes free), before the block is allocated where the free heap
    already shows it. Any model file gives one of these TFLMErrors, never
    another exception (see verify.py); a file that is not a TFLite model
    gives a FormatError saying so. Bad arguments: TypeError (model
    neither a path nor a buffer, arena_size not an int, labels neither
    a list nor a path) or ValueError (arena_size < 0); a path (model or
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

    def __init__(self, model, arena_size=None, labels=None):
        # Every attribute is set here, before anything that dies is made:
        # the instance's attribute table is then allocated once, low.
        self._steps = self._tensors = self.model = self.arena = None
        self._words = self._states = self._variables = None
        self._where = self.inputs = self.outputs = None
        self._prof_ops = self._prof_us = None
        self._profiled = self.model_in_ram = False
        self.copied_bytes = self.persistent_size = self.arena_size = 0
        self._n_requests = self.ram = self._imported = 0
        # A resizable buffer given as the model, and its length: invoke()
        # refuses to run once it changed (its bytes may have moved).
        self._source = self._source_len = None
        self.path = model if isinstance(model, str) else None
        self._stage = "reading the model"
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
        if labels is not None:  # small, made before the arena
            from .api import labels_arg
            self.labels = labels_arg(labels)
        free0 = _free()
        try:
            buf, self.model_in_ram = _open_model(model)
            self._stage = "parsing the model"
            self._build(buf, arena_size)
        except TFLMError:
            raise
        except OSError:
            raise
        except Exception as e:  # last line of defence: see verify.py
            raise verify.internal_error(e, self._stage)
        free1 = _free()
        self.ram = (free0 - free1 - self._imported if free0 is not None
                    else self.arena_size + self.persistent_size)
        if labels is not None:
            from .api import check_labels
            check_labels(self.labels, self.outputs)

    def _build(self, buf, arena_size):
        # On a board the heap never moves an object: whatever lives on is
        # made right after a gc.collect() (it then takes the lowest free
        # blocks), and whatever dies is dropped before the arena is taken.
        self.model = m = Model(buf, check=False)  # header fields only
        self._stage = "importing kernels"
        before = _free()
        for code in m.used_codes():  # long-lived code, made first
            kernels.preload(code, m)
        for name in m.used_codes(True):  # built-in CUSTOM ops (Signal)
            kernels.preload(32, m, name)
        after = _free()
        if before is not None:  # code, not this model's (see ram)
            self._imported = before - after
        self._stage = "parsing the model"
        m.check()
        self._stage = "resolving operators"
        mods = self._resolve()
        self._stage = "planning the arena"
        verify.check_plan_size(m)
        # The sizing pass's throw-away buffer: as large as the largest
        # activation (larger scratch requests get a buffer of their own).
        big = 0
        for t in m.tensors:
            if not t.is_const:
                big = max(big, t.nbytes)
        n = m.n_tensors + 3 * _REQUESTS_PER_OP * len(mods)
        t = None
        m.release()
        gc.collect()
        mods = tuple(mods)
        # Per tensor where its bytes are, then (operator, head offset,
        # bytes) of each scratch request: see _size.
        self._where = array("i", range(n))
        # what _where keeps after the real pass (the tensors' entries),
        # made now, low, rather than as a slice amid the real pass's
        # objects, or after the sizing pass's buffer (which a stale word
        # on the C stack may keep alive a while: whatever is made after
        # it would then split the free heap the arena needs)
        kept_where = zeros("i", m.n_tensors)
        what = "allocating the arena (its largest tensor alone)"
        free = _free()
        if free is not None and free < big:
            raise _oom(what, big)
        try:
            dummy = bytearray(big)
        except MemoryError:
            raise _oom(what, big)
        head, tail, words = self._size(mods, dummy)
        dummy = None
        # The call above left dummy in a dead slot of this frame's value
        # stack, which the GC scans conservatively: a call with as many
        # arguments overwrites it, or the 16+ KB buffer would stay alive
        # until the arena is allocated (and split the heap once freed).
        _scrub(0, 0, 0)
        gc.collect()
        need = head + tail + 4 * words
        if arena_size is not None and arena_size < need:
            raise ArenaError("arena of %d bytes is too small: the model "
                             "needs %d (%d head + %d tail)"
                             % (arena_size, need, head, need - head))
        self.arena_size = head
        # Nothing is made from here until the arena is: the message is
        # formatted only on failure (_arena_oom).
        self._stage = "allocating the arena"
        free = _free()
        if free is not None and free < need:
            raise _arena_oom(need, head)
        try:
            # The tail's int32 words are an array('i') of their own, so
            # that kernels fill them by index (context.persistent).
            self.arena = bytearray(head + tail)
            self._words = zeros("i", words)
        except MemoryError:
            self.arena = self._words = None
            raise _arena_oom(need, head)
        self._stage = "preparing"
        self._prepare(mods, head, tail, kept_where)

    def _resolve(self):
        mods, missing = [], []
        hint = ""
        for op in self.model.operators:
            if op.custom_code is None:
                mod = kernels.find(op.code)
            else:  # a Python kernel from tflm.register_op (custom.py)
                from .custom import find
                mod = find(op.custom_code)
                if mod is None:  # a built-in one (TFLM's Signal ops)
                    mod = kernels.find(op.code, op.custom_code)
                if mod is None:
                    hint = "; register custom ops with tflm.register_op"
            if mod is None:
                missing.append(op.label())
            mods.append(mod)
        if missing:
            raise UnsupportedOpError("no kernel for " + ", ".join(missing)
                                     + hint)
        return mods

    def _size(self, mods, dummy):
        """The sizing pass (see the class doc): returns (head bytes, tail
        bytes) and fills _where: per tensor its head offset (-1: none,
        <= -2: constant at -2 - w in the model), then per scratch request
        its operator, head offset and bytes (negative: a work buffer).
        dummy: a bytearray as large as the largest activation, which all
        activations are bound to (prepare keeps views of them but never
        reads their values). The parsed tensor list lives only while the
        activations are planned; each operator's prepare then gets its
        own tensors, parsed anew. Every object this pass makes is garbage
        when it returns."""
        m = self.model
        tensors = self._tensors = m.tensors
        dummy = memoryview(dummy)
        mv = m.fb.mv
        _, buffers, groups = planner.plan_model(m)
        where = self._where
        for t in tensors:
            r = tensors[groups[t.index]]
            if r.is_const:
                where[t.index] = -2 - r.const_pos
            else:  # the root tensor of its alias group, for now
                where[t.index] = r.index if r.index in buffers else -1
            _bind_sizing(t, where[t.index], mv, dummy)
        verify.check_bindings(self, groups)
        nt = len(tensors)
        self._tensors = tensors = groups = t = r = None
        m.release()
        pack()  # what lives on in this pass is made low from here on
        # each planned group: root, bytes, first and last operator
        roots = sorted(buffers)
        life = array("i", range(4 * len(roots)))
        for j, r in enumerate(roots):
            b = buffers[r]
            life[4 * j] = r
            life[4 * j + 1] = b.size
            life[4 * j + 2] = b.first
            life[4 * j + 3] = b.last
        buffers = b = None
        pack()
        ctx = KernelContext(m, offsets=where, first=nt, dummy=dummy)
        for k, mod in enumerate(mods):
            op = m.operator(k)
            self._stage = "preparing " + op.label()
            ins = [_sizing_tensor(m, i, where, dummy) for i in op.inputs]
            outs = [_sizing_tensor(m, i, where, dummy) for i in op.outputs]
            ctx.begin(k, self._scratch_len(outs))
            ctx.finish(mod.prepare(op, ins, outs, ctx)[1])
            op = ins = outs = None
            pack()  # keeps what lives packed low (heap.py)
        self._stage = "planning the arena"  # drops the last op's label
        requests = ctx.sizing_requests()
        bufs = [planner.Buffer(life[4 * j + 1], life[4 * j + 2],
                               life[4 * j + 3]) for j in range(len(roots))]
        for k, n in requests:
            bufs.append(planner.Buffer(abs(n), k, k))
        head = planner.plan(bufs)
        need = nt + 3 * len(requests)
        if need > len(where):  # more requests than _REQUESTS_PER_OP
            self._where = where = array("i", list(where) + [0] * (
                need - len(where)))
        for q, (k, n) in enumerate(requests):
            where[nt + 3 * q] = k
            where[nt + 3 * q + 1] = bufs[len(roots) + q].offset
            where[nt + 3 * q + 2] = n
        offset = {}
        for j, r in enumerate(roots):
            offset[r] = bufs[j].offset
        for i in range(nt):
            if where[i] >= 0:
                where[i] = offset[where[i]]
        self._n_requests = len(requests)
        return head, ctx.tail_size, ctx.words_size

    def _scratch_len(self, ts):
        """Words of scratch for an operator with outputs ts: twice the
        largest last dimension of its non-constant outputs, at least
        _MIN_SCRATCH (kernels work in chunks of what they get: a
        FULLY_CONNECTED layer with 640 inputs and 128 units takes 256)."""
        n = _MIN_SCRATCH
        for t in ts:
            if t is not None and not t.is_const and t.shape:
                n = max(n, 2 * t.shape[-1])
        return n

    def _prepare(self, mods, head, tail, kept_where):
        """The real pass: each operator's tensors parsed on their own,
        prepared with views of the arena, kept arrays copied to the tail.
        kept_where: array('i') of n_tensors words, where _where's tensor
        entries are copied at the end."""
        m = self.model
        mv = memoryview(self.arena)
        hv = mv[:head]
        model_mv = m.fb.mv
        where = self._where
        ctx = KernelContext(m, hv, where, mv[head:], m.n_tensors,
                            self._n_requests, words=self._words)
        io = {}
        for i in m.inputs + m.outputs:
            if i not in io:
                io[i] = _bind(m.tensor(i), where[i], model_mv, hv)
        self.inputs = [io[i] for i in m.inputs]
        self.outputs = [io[i] for i in m.outputs]
        views = [None] * m.n_tensors
        # steps: eval function and state of each operator that runs, one
        # after the other in one list (no tuple per step)
        steps = [None] * (2 * len(mods))
        ran = array("i", range(len(mods)))
        n = 0
        for k, mod in enumerate(mods):
            op = m.operator(k)
            self._stage = "preparing %s, with the %d-byte arena allocated" % (
                op.label(), len(self.arena))
            ins = [_get(m, i, io, views, where, hv) for i in op.inputs]
            outs = [_get(m, i, io, views, where, hv) for i in op.outputs]
            ctx.begin(k, self._scratch_len(outs))
            fn, state = mod.prepare(op, ins, outs, ctx)
            state = ctx.finish(state)
            if fn is not None:
                steps[2 * n] = fn
                steps[2 * n + 1] = state
                ran[n] = k
                n += 1
            op = ins = outs = state = None
            pack()
        del steps[2 * n:]
        self.copied_bytes = ctx.copied_bytes
        self._states = ctx.states or None  # reset() zeroes them
        self._variables = ctx.variables or None  # and sets these
        self.persistent_size = tail + 4 * len(self._words) + ctx.spilled
        # For invoke(profile=True): the operator index of each step, and
        # per-step microseconds plus the total (last slot), preallocated.
        self._prof_ops = ran[:n]
        self._prof_us = array("i", range(n + 1))
        self._profiled = False
        self._steps = steps
        # Only the tensors' entries are needed from now on (`tensors`).
        for i in range(len(kept_where)):
            kept_where[i] = where[i]
        self._where = kept_where
        ctx = where = None
        pack()

    @property
    def tensors(self):
        """All tensors of subgraph 0, bound to their bytes (model.Tensor).

        Built from the model on each access once the interpreter is
        ready (it keeps only inputs and outputs, to save RAM): use the
        list you get, do not call this in a loop. Allocates."""
        if self._tensors is not None:
            return self._tensors
        ts = self.model.tensors
        self.model.release()
        model_mv = self.model.fb.mv
        head = memoryview(self.arena)[:self.arena_size]
        for t in ts:
            _bind(t, self._where[t.index], model_mv, head)
        return ts

    def _built(self):
        if getattr(self, "_steps", None) is None:
            raise InvokeError("interpreter was not built successfully")

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
        Raises InvokeError if construction failed, or if the model was
        given as a bytearray or array that has changed size since.
        """
        steps = getattr(self, "_steps", None)
        if steps is None:
            raise InvokeError("interpreter was not built successfully")
        src = self._source
        if src is not None and len(src) != self._source_len:
            raise InvokeError(
                "the model's %s changed size after the interpreter was "
                "built (%d -> %d bytes): its memory may have moved; build "
                "a new Interpreter" % (type(src).__name__,
                                       self._source_len, len(src)))
        if profile:
            self._invoke_profiled(steps)
            return
        i = 0
        n = len(steps)
        while i < n:
            steps[i](steps[i + 1])
            i += 2

    def _invoke_profiled(self, steps):
        # Same loop with a clock read around each step; writes into the
        # preallocated array('i'), so it allocates nothing either.
        us = self._prof_us
        ticks = time.ticks_us
        diff = time.ticks_diff
        k = 0
        start = ticks()
        while 2 * k < len(steps):
            t0 = ticks()
            steps[2 * k](steps[2 * k + 1])
            us[k] = diff(ticks(), t0)
            k += 1
        us[k] = diff(ticks(), start)
        self._profiled = True

    def profile(self, table=False):
        """Per-operator times of the last invoke(profile=True): a list of
        (operator index, operator name, microseconds), one entry per
        operator that runs (RESHAPE-like views take no time and have
        none). table=True also prints op index, name, µs and share of
        the total. Raises InvokeError if no profiled invoke ran yet.
        Allocates (call it outside heap_lock).
        """
        from .profiler import report
        return report(self, table)

    def predict(self, x, dequantize=True, out=None):
        """Set the inputs, invoke(), return the outputs: one call at the REPL.

        x: the input's values for a one-input model (or [x], as OpenMV's
        ml.Model.predict takes), else a list / tuple with one entry per
        input. Each entry: real values (floats in a list, array('f'), a
        float ulab ndarray), quantized with the input's scale and zero
        point; or the tensor's own integers (list, array.array of its type,
        int ndarray) or raw bytes (bytes, bytearray, any buffer).
        Returns a list with one entry per output, flat, like OpenMV:
        real values (quantized outputs dequantized; a ulab ndarray when
        ulab imports, else array('f')); with dequantize=False, or for an
        output without quantization, the raw values as array.array.
        out: caller-owned buffers, one per output (a bare one for a
        one-output model; None: a new one for that output): array('f')
        / array('d') / a flat float ndarray of the output's size for
        real values, else an array.array of the tensor's type or a
        bytearray of its bytes (not a memoryview); they are filled and
        returned (as a list) instead of new ones: a large output needs
        no new block (a sensor loop reuses them).
        Raises InvokeError for a wrong count or size of values or of out.
        Allocates (use inputs[i].data and invoke() in a loop that must
        not).
        """
        from .repl import predict
        return predict(self, x, dequantize, out)

    def __getattr__(self, name):
        """OpenMV ml.Model's and TFLite's interfaces, imported on first
        use (tflm/api.py): input_shape, input_dtype, input_scale,
        input_zero_point and the output_ twins (lists, one entry per
        input / output), labels, top(k); get_input_details(),
        get_output_details(), set_tensor(), get_tensor(), set_input(),
        get_output(), allocate_tensors(), reset(). AttributeError for
        any other name."""
        if name.startswith("_") or name in ("inputs", "outputs", "path"):
            raise AttributeError(name)  # not set: construction failed
        from .api import attribute
        return attribute(self, name)

    def __repr__(self):
        """Operators, arena and model bytes, and every input and output
        (name, dtype, shape, scale, zero point): print(interp)."""
        from .repl import summary
        return summary(self)
