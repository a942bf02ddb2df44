"""The interpreter: load, plan, prepare once; invoke without allocating.

Follows TFLM's MicroInterpreter (tensorflow/lite/micro/micro_interpreter.cc)
and MicroAllocator: resolve every operator first (all unsupported ones are
named in one error), plan all activations into one bytearray arena, bind
constants as views of the model bytes (never copies), then run each
kernel's prepare once. invoke() only calls the prepared eval functions.
"""

import time
from array import array

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
    dtype, scale, zero_point, data), arena_size (bytes planned),
    copied_bytes (constant bytes copied for alignment), model_in_ram.
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
        self._steps = None
        self.copied_bytes = 0
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
        self.tensors = m.tensors
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
        self._steps = self._prepare(mods)

    def _resolve(self):
        mods, missing = [], []
        for op in self.model.operators:
            mod = kernels.find(op.code) if op.custom_code is None else None
            if mod is None:
                missing.append(op.label())
            mods.append(mod)
        if missing:
            raise UnsupportedOpError("no kernel for " + ", ".join(missing))
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
        """Run the model once. Allocates nothing.

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
