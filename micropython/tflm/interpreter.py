"""The interpreter: load, plan, prepare once; invoke without allocating.

Follows TFLM's MicroInterpreter (tensorflow/lite/micro/micro_interpreter.cc)
and MicroAllocator: resolve every operator first (all unsupported ones are
named in one error), plan all activations into one bytearray arena, bind
constants as views of the model bytes (never copies), then run each
kernel's prepare once. invoke() only calls the prepared eval functions.
"""

from array import array

from . import kernels, planner
from .errors import ArenaError, InvokeError, UnsupportedOpError
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


class Interpreter:
    """Runs a .tflite model (subgraph 0).

    model: a path, or any buffer (bytes, bytearray, memoryview of a /rom
    file, uctypes.bytearray_at over flash); never copied.
    arena_size: optional budget in bytes; if the plan needs more, ArenaError
    says how much, before the arena is allocated.

    Attributes: inputs, outputs (lists of model.Tensor: name, shape,
    dtype, scale, zero_point, data), arena_size (bytes planned),
    copied_bytes (constant bytes copied for alignment), model_in_ram.
    Raises FormatError / ModelError for a bad file, UnsupportedOpError
    listing every operator without a kernel, PrepareError from a kernel.
    """

    def __init__(self, model, arena_size=None):
        self._steps = None
        self.copied_bytes = 0
        buf, self.model_in_ram = _open_model(model)
        self.model = m = Model(buf)
        self.tensors = m.tensors
        self.inputs = [m.tensors[i] for i in m.inputs]
        self.outputs = [m.tensors[i] for i in m.outputs]
        mods = self._resolve()
        need, self._buffers, groups = planner.plan_model(m)
        if arena_size is not None and arena_size < need:
            raise ArenaError("arena of %d bytes is too small: the plan "
                             "needs %d" % (arena_size, need))
        self.arena_size = need
        self.arena = bytearray(need)
        self._bind(groups)
        self.scratch_len = self._scratch_len()
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

    def _bind(self, root):
        model_mv = self.model.fb.mv
        arena = memoryview(self.arena)
        for t in self.tensors:
            r = self.tensors[root[t.index]]
            if r.is_const:
                t.data = model_mv[r.const_pos:r.const_pos + t.nbytes]
            else:
                b = self._buffers.get(r.index)
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
        tensors = self.tensors
        for op, mod in zip(self.model.operators, mods):
            ins = [tensors[i] if i >= 0 else None for i in op.inputs]
            outs = [tensors[i] if i >= 0 else None for i in op.outputs]
            fn, state = mod.prepare(op, ins, outs, self)
            if fn is not None:
                steps.append((fn, state))
        return steps

    def int32_array(self, t):
        """An aligned array('i') copy of constant int32 tensor t (e.g. a
        bias), so viper may use ptr32 on it; counted in copied_bytes."""
        fb = self.model.fb
        pos = t.const_pos
        a = array("i", (fb.i32(pos + 4 * k) for k in range(t.size)))
        self.copied_bytes += 4 * t.size
        return a

    def invoke(self):
        """Run the model once. Allocates nothing.

        Raises InvokeError if construction failed.
        """
        steps = self._steps
        if steps is None:
            raise InvokeError("interpreter was not built successfully")
        for fn, state in steps:
            fn(state)
