"""The interpreter: load, plan, prepare once; invoke without allocating.

Follows TFLM's MicroInterpreter (tensorflow/lite/micro/micro_interpreter.cc)
and MicroAllocator: resolve every operator first (all unsupported ones are
named in one error), plan all activations into one bytearray arena, bind
constants as views of the model bytes (never copies), then run each
kernel's prepare once. invoke() only calls the prepared eval functions.
"""

import time
from array import array

import micropython

from . import kernels, planner, verify
from .errors import ArenaError, InvokeError, TFLMError, UnsupportedOpError
from .model import Model

MIN_SCRATCH = 256


def _open_model(model):
    """(buffer, in_ram) for a path or buffer-protocol object.

    A path on a filesystem that maps files (vfs.VfsRom) is used in place
    through memoryview(file); otherwise the file is read into RAM.
    """
    if not isinstance(model, str):
        return memoryview(model), False
    f = open(model, "rb")
    try:
        return memoryview(f), False
    except TypeError:
        pass
    try:
        return f.read(), True
    finally:
        f.close()


def _pick(tensors, i, what):
    """tensors[i] for an int 0 <= i < len(tensors), else InvokeError."""
    if not isinstance(i, int) or isinstance(i, bool) \
            or not 0 <= i < len(tensors):
        raise InvokeError("%s index %r out of range: the model has %d %ss"
                          % (what, i, len(tensors), what))
    return tensors[i]


class Interpreter:
    """Runs a .tflite model (subgraph 0).

    model: a path, or any buffer (bytes, bytearray, memoryview of a /rom
    file, uctypes.bytearray_at over flash). A buffer is never copied; a
    path is used in place where the filesystem maps files (ROMFS) and
    read into RAM elsewhere (model_in_ram).
    arena_size: optional budget in bytes; if the plan needs more, ArenaError
    says how much, before the arena is allocated.

    Attributes: inputs, outputs (lists of model.Tensor: name, shape,
    dtype, scale, zero_point, data), arena_size (bytes planned for the
    activations), persistent_size (bytes of the persistent arena: kernel
    data kept for eval, such as multipliers, shifts, biases and the
    scratch words; TFLM's arena tail), copied_bytes (constant bytes
    copied for alignment), model_in_ram, tensors (built on access).
    Besides the two arena blocks, a built interpreter keeps about 7 KB
    for person_detect on a 32-bit port (state tuples and views).
    Raises FormatError / ModelError for a bad file, UnsupportedOpError
    listing every operator without a kernel, PrepareError from a kernel,
    ArenaError when the arena does not fit (arena_size or free RAM). Any
    model file gives one of these TFLMErrors, never another exception
    (see verify.py); OSError comes only from opening a path.

    When the constructor raises, no Interpreter exists (Python binds no
    object), so there is nothing to invoke; an object whose construction
    did not finish (e.g. a subclass that caught the error) raises
    InvokeError from invoke(), input() and output(). Bad calls on a built
    interpreter (wrong input size in Tensor.set, input / output index out
    of range) raise InvokeError and leave it usable.
    """

    def __init__(self, model, arena_size=None):
        self._steps = self._tensors = self._kept = None
        self.copied_bytes = self.persistent_size = 0
        buf, self.model_in_ram = _open_model(model)
        self._stage = "parsing the model"
        try:
            self._build(buf, arena_size)
        except TFLMError:
            raise
        except Exception as e:  # last line of defence: see verify.py
            raise verify.internal_error(e, self._stage)

    def _build(self, buf, arena_size):
        self.model = m = Model(buf)
        self._tensors = m.tensors
        self.inputs = [m.tensors[i] for i in m.inputs]
        self.outputs = [m.tensors[i] for i in m.outputs]
        self._stage = "resolving operators"
        mods = self._resolve()
        self._stage = "planning the arena"
        verify.check_plan_size(m)
        need, buffers, groups = planner.plan_model(m)
        if arena_size is not None and arena_size < need:
            raise ArenaError("arena of %d bytes is too small: the plan "
                             "needs %d" % (arena_size, need))
        self.arena_size = need
        self._stage = "allocating a %d-byte arena" % need
        self.arena = bytearray(need)
        self._stage = "binding tensors"
        self._bind(groups, buffers)
        verify.check_bindings(self, groups)
        self.scratch_len = self._scratch_len()
        self._stage = "allocating %d words of scratch" % self.scratch_len
        self.scratch = array("i", bytes(4 * self.scratch_len))
        self._kept = []
        steps = self._prepare(mods)
        self._stage = "allocating the persistent arena"
        self._steps = self._persist(steps)
        self._release(groups)

    def _resolve(self):
        mods, missing = [], []
        hint = ""
        for op in self.model.operators:
            if op.custom_code is None:
                mod = kernels.find(op.code)
            else:  # a Python kernel from tflm.register_op (custom.py)
                from .custom import find
                mod = find(op.custom_code)
                if mod is None:
                    hint = "; register custom ops with tflm.register_op"
            if mod is None:
                missing.append(op.label())
            mods.append(mod)
        if missing:
            raise UnsupportedOpError("no kernel for " + ", ".join(missing)
                                     + hint)
        return mods

    def _bind(self, root, buffers):
        model_mv = self.model.fb.mv
        arena = memoryview(self.arena)
        for t in self.tensors:
            r = self.tensors[root[t.index]]
            if r.is_const:
                t.data = model_mv[r.const_pos:r.const_pos + t.nbytes]
            else:
                b = buffers.get(r.index)
                if b is not None:
                    t.offset = b.offset
                    t.data = arena[b.offset:b.offset + t.nbytes]

    def _scratch_len(self):
        n = MIN_SCRATCH
        for t in self.tensors:
            if not t.is_const and t.shape:
                n = max(n, 2 * t.shape[-1])
        return n

    def _prepare(self, mods):
        steps = []
        ran = []
        tensors = self.tensors
        for op, mod in zip(self.model.operators, mods):
            self._stage = "preparing " + op.label()
            ins = [tensors[i] if i >= 0 else None for i in op.inputs]
            outs = [tensors[i] if i >= 0 else None for i in op.outputs]
            fn, state = mod.prepare(op, ins, outs, self)
            if fn is not None:
                steps.append((fn, state))
                ran.append(op.index)
        # For invoke(profile=True): the operator index of each step, and
        # per-step microseconds plus the total (last slot), preallocated.
        self._prof_ops = array("i", ran)
        self._prof_us = array("i", bytes(4 * len(ran) + 4))
        self._profiled = False
        return steps

    def keep(self, a, itemsize=4):
        """Move array a into the persistent arena after prepare; returns a.

        a: this op's own array('i') (itemsize 4), array('b') or
        bytearray (itemsize 1), final once prepare returns, and an item
        of the op's state tuple. Once all kernels are prepared, its bytes
        are copied into one bytearray (TFLM's persistent tail of the
        arena: multipliers, shifts, biases, tables), and every state
        tuple gets a view of that copy in its place: eval code reads it
        through viper pointers only. The heap then holds one block
        instead of one object per array (issue: ~16 bytes each, plus
        fragmentation). Only top-level items of the state tuple are
        replaced: do not keep an array that eval indexes from Python,
        that a nested tuple holds, or that a memoryview slice in the
        state refers to (the slice would keep the old array alive).
        """
        # None passes through; after load (a tool preparing a kernel
        # again) the array stays where it is
        if a is not None and self._kept is not None:
            self._kept.append((a, itemsize))
        return a

    def _persist(self, steps):
        box = getattr(self, "_work_box", None)  # conv_util.work_buffer
        if box is not None:
            self._kept.append((box[0], 4))
        # Sizes rounded up to words, so that every view is 4-aligned.
        total = 0
        for a, size in self._kept:
            total += (len(a) * size + 3) & ~3
        self.persistent = tail = bytearray(total)
        # The scratch array stays a block of its own (kernels keep views
        # of its halves), counted with the persistent arena.
        self.persistent_size = total + 4 * self.scratch_len
        mv = memoryview(tail)
        views = {}
        off = 0
        for a, size in self._kept:
            n = len(a) * size
            v = mv[off:off + n]
            _copy(v, a, n)
            views[id(a)] = v
            off += (n + 3) & ~3
        self._kept = None
        if box is not None:
            box[0] = views[id(box[0])]
        out = []
        for fn, st in steps:
            if isinstance(st, tuple):
                st = tuple([views.get(id(x), x) for x in st])
            out.append((fn, st))
        return out

    def _release(self, groups):
        # Keep where each tensor's bytes are (compact), drop the parsed
        # lists: `tensors` rebuilds Tensor views on demand.
        where = array("i", bytes(4 * len(self._tensors)))
        for t in self._tensors:
            r = self._tensors[groups[t.index]]
            if r.is_const:
                where[t.index] = -2 - r.const_pos
            else:
                off = getattr(r, "offset", None)
                where[t.index] = -1 if off is None else off
        self._where = where
        self._tensors = None
        self.model.release()

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
        arena = memoryview(self.arena)
        for t in ts:
            w = self._where[t.index]
            if w <= -2:
                t.data = model_mv[-2 - w:-2 - w + t.nbytes]
            elif w >= 0:
                t.offset = w
                t.data = arena[w:w + t.nbytes]
        return ts

    def int32_array(self, t):
        """An aligned array('i') copy of constant int32 tensor t (e.g. a
        bias), so viper may use ptr32 on it; counted in copied_bytes."""
        fb = self.model.fb
        pos = t.const_pos
        a = array("i", (fb.i32(pos + 4 * k) for k in range(t.size)))
        self.copied_bytes += 4 * t.size
        return a

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
        Raises InvokeError if construction failed.
        """
        steps = getattr(self, "_steps", None)
        if steps is None:
            raise InvokeError("interpreter was not built successfully")
        if profile:
            self._invoke_profiled(steps)
            return
        for fn, state in steps:
            fn(state)

    def _invoke_profiled(self, steps):
        # Same loop with a clock read around each step; writes into the
        # preallocated array('i'), so it allocates nothing either.
        us = self._prof_us
        ticks = time.ticks_us
        diff = time.ticks_diff
        k = 0
        start = ticks()
        for fn, state in steps:
            t0 = ticks()
            fn(state)
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

    def predict(self, x, dequantize=True):
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
        Raises InvokeError for a wrong count or size of values. Allocates
        (use inputs[i].data and invoke() in a loop that must not).
        """
        from .repl import predict
        return predict(self, x, dequantize)

    def __repr__(self):
        """Operators, arena and model bytes, and every input and output
        (name, dtype, shape, scale, zero point): print(interp)."""
        from .repl import summary
        return summary(self)


@micropython.viper
def _copy(dst, src, n: int):
    """dst[0:n] = the first n bytes of src's buffer (any buffer types)."""
    d = ptr8(dst)
    s = ptr8(src)
    i: int = 0
    while i < n:
        d[i] = s[i]
        i += 1
