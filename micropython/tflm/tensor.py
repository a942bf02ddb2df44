"""A tensor of subgraph 0: what the interpreter keeps of the model.

model.Model parses tensors into these records (model.Tensor is this
class); an interpreter keeps its inputs and outputs, and drops the parser
(model.py, flatbuf.py: interpreter.PARSE) once it is built, so that a
board's heap holds only this small class. Fields that a loaded tensor
reads from the model bytes (Tensor.__getattr__) are stored on the inputs
and outputs first (own, below).
"""

from . import schema
from .errors import tensor_label

# Tensor fields read from the model on demand (Tensor.__getattr__).
_LAZY = ("dtype", "itemsize", "name", "buffer", "is_variable",
         "quantized_dimension", "scale", "zero_point", "scales",
         "zero_points")


class Tensor:
    """One tensor of subgraph 0.

    Attributes: index, name, shape (tuple of ints), type (TensorType code),
    dtype ('int8', 'float32', ...), itemsize, size (elements), nbytes,
    scale and zero_point (per-tensor: first entry, 0.0 / 0 if absent),
    scales / zero_points (tuples, per-channel when longer than 1),
    quantized_dimension, buffer (index), const_pos / const_len (where its
    constant bytes are in the model, or const_pos None for activations),
    is_variable, data (memoryview, set by the interpreter).

    To keep little RAM per tensor, a loaded tensor stores only index,
    pos (its table in the model), shape, type, size, nbytes, the place
    of its constant bytes and data. dtype and itemsize follow from type;
    name, buffer, is_variable and the quantization are read from the
    model bytes on each access (__getattr__; kernels read them in
    prepare, never in invoke), until the interpreter stores them on
    compact copies of its inputs and outputs (own, below: size then
    follows from nbytes). Assigning any attribute stores
    the value given, which then wins (tests and tools build or alter
    tensors so).
    """

    data = None
    const_pos = None
    const_len = 0
    _fb = None  # the model's FlatBuffer; None for a tensor made by hand
    # an input or output of an interpreter built on arena=: set() and
    # view() raise its InvokeError once another one took the buffer
    _interp = None
    # own(): (name, buffer, is_variable, quantized_dimension, scales,
    # zero_points), read in place of the model bytes (one object: each
    # attribute costs the tensor RAM)
    _own = None

    def __init__(self, index):
        self.index = index

    @property
    def is_const(self):
        return self.const_pos is not None

    def __getattr__(self, key):
        # Called only for attributes that are not stored: see above.
        if key == "size":  # (own()'s copies: from nbytes)
            n = schema.type_size(self.type)
            return self.nbytes // n if n else 0
        if key not in _LAZY:
            raise AttributeError(key)
        if key == "dtype":
            return schema.type_name(self.type)
        if key == "itemsize":
            return schema.type_size(self.type)
        o = self._own
        if o is not None:
            k = _LAZY.index(key) - 2
            if k < 4:  # name, buffer, is_variable, quantized_dimension
                v = o[k]
                if k == 0 and type(v) is memoryview:  # (see own)
                    try:
                        return bytes(v).decode("utf-8")
                    except (UnicodeError, ValueError):
                        return "?" * len(v)
                return v
            v = o[4 + k % 2]  # the scales, the zero points (see own)
            if k > 5:  # scales, zero_points
                return v if isinstance(v, tuple) else (v,)
            if not isinstance(v, tuple):  # scale, zero_point: the first
                return v
            return v[0] if v else (0.0 if k == 4 else 0)
        fb = self._fb
        t = fb.table(self.pos) if fb is not None else None
        if key == "name":
            return t.string(3) if t is not None else ""
        if key == "buffer":
            return t.u32(2) if t is not None else 0
        if key == "is_variable":
            return t is not None and t.u8(5) != 0
        q = t.table(4) if t is not None else None
        if key == "quantized_dimension":
            return q.i32(6) if q is not None else 0
        # Scales (float32) or zero points (int64): per-channel vectors
        # stay in the model bytes, as Python floats they would cost ~20
        # bytes each on a board.
        # startswith / endswith: key[0] would intern a one-character
        # string, a new qstr made during construction (a new qstr pool,
        # kilobytes, when the last one is full)
        sc = key.startswith("s")
        start, n = (0, 0) if q is None else q.vector(2 if sc else 3,
                                                     4 if sc else 8)
        if not key.endswith("s"):  # scale / zero_point: the first entry
            if not n:
                return 0.0 if sc else 0
            return fb.f32(start) if sc else fb.i64(start)
        if sc:
            return tuple(fb.f32(start + 4 * i) for i in range(n))
        return tuple(fb.i64(start + 8 * i) for i in range(n))

    def _assigned(self, key):
        """True if attribute key was assigned (it then wins over the
        model's bytes), or if this port cannot tell."""
        try:
            return key in self.__dict__
        except AttributeError:  # a port without instance __dict__
            return True

    def scale_reader(self):
        """(n, scale(i)): the number of quantization scales and a function
        reading scale i (float32 from the model bytes, one float at a
        time: a per-channel tuple would be hundreds of small objects,
        scattered through a board's heap by the garbage between them)."""
        fb = self._fb
        if fb is None or self._assigned("scales"):
            sc = self.scales
            return len(sc), lambda i: sc[i]
        t = fb.table(self.pos)
        q = t.table(4)
        start, n = (0, 0) if q is None else q.vector(2, 4)
        return n, lambda i: fb.f32(start + 4 * i)

    def zero_point_count(self):
        """len(self.zero_points), without making the tuple."""
        fb = self._fb
        if fb is None or self._assigned("zero_points"):
            return len(self.zero_points)
        q = fb.table(self.pos).table(4)
        return 0 if q is None else q.vector(3, 8)[1]

    def label(self):
        return tensor_label(self.index, self.name)

    def set(self, values):
        """Write the tensor: bytes / any buffer of exactly nbytes, an
        array.array of the tensor's type, a ulab ndarray, or a sequence of
        size integers in the dtype's range. Raises InvokeError otherwise,
        leaving the tensor unchanged (also when the tensor's interpreter
        was built on an arena= buffer that another one has taken)."""
        if self._interp is not None:
            self._interp._check_arena()
        from .values import set_values
        set_values(self, values)

    def set_float(self, values):
        """Quantize real values with scale and zero_point, then set()."""
        from .values import quantize
        self.set(values if self.dtype == "float32" else
                 quantize(self, values))

    def get(self, out=None):
        """A copy of the values as array.array ('b' for int8, ...); with
        out (array.array of this typecode and size, or a writable buffer
        of nbytes), copied into out and out returned, allocating no
        block of the tensor's size. InvokeError for a wrong out."""
        from .values import get_values
        return get_values(self, out)

    def dequantize(self, out=None):
        """Real values: array('f'), or a ulab ndarray shaped like the
        tensor if ulab imports (values.dequantize);
        with out (array('f') / array('d') or a flat float ndarray of
        size values), written into out and out returned. InvokeError for
        a wrong out or a tensor without quantization."""
        from .values import dequantize
        return dequantize(self, out)

    def view(self):
        """The tensor's values in place, typed: int8 as -128..127 (data is
        raw bytes, 0..255), int16 and int32 as signed little-endian
        integers, uint8 and float32 as such: a view.View (v[i], v[i] =
        x, len, iteration; indices and written values checked, a
        constant tensor read-only). For integer types reading and
        writing allocate nothing (a loop under micropython.heap_lock()
        may use it; on a 32-bit port int32 values beyond +-2**30 are
        boxed). Make it once, outside the loop; it is valid while the
        interpreter lives (with arena=: while it owns the buffer).
        Raises InvokeError for a tensor without data or of another
        type, or of an interpreter whose arena= buffer another took."""
        if self._interp is not None:
            self._interp._check_arena()
        from .view import view
        return view(self)

    def __repr__(self):
        return "<Tensor %d '%s' %s %s>" % (self.index, self.name,
                                            self.dtype, self.shape)


def own(lists, copy=True):
    """Store the fields that each tensor of lists (a tuple of lists) reads
    from the model bytes (name, buffer, is_variable, the quantization:
    _LAZY but dtype and itemsize) in one tuple (_own; an attribute
    assigned wins; a single scale or zero point as itself, not a
    1-tuple), on a compact copy that takes the tensor's place in its
    lists (one copy for a tensor in two of them): its index, shape,
    type, nbytes, data and _own (the name as a view of its bytes in the
    model: no str object), and what else was assigned, but no
    FlatBuffer (the tensors no longer need the parser, model.py and
    flatbuf.py, which an interpreter drops once built:
    interpreter.PARSE), no table position and no size (nbytes //
    itemsize on access): six attributes fill the smallest instance
    table that holds them (eight took a larger one). A few small
    objects per tensor: for an interpreter's inputs and outputs.
    copy=False (a plain construction's) stores the tuple on each tensor
    itself instead (no copy objects made after the arena:
    test_board_heap). On a port without instance __dict__ a tensor
    stays lazy."""
    done = {}
    for ts in lists:
        for k, t in enumerate(ts):
            try:
                d = t.__dict__
            except AttributeError:  # a port without it: lazy
                continue
            c = done.get(id(t))
            if c is None and t._fb is not None:
                # one scale or zero point is kept as itself, not in a
                # tuple (a 16-byte block less each; __getattr__ makes it).
                # No getattr(t, key): it would make each key (a str of
                # _LAZY) a qstr now, after the arena, where a new qstr's
                # bytes may take a block of their own for good, above the
                # arena (a compiled KWS and unload() then left the largest
                # free block 43 KB on a 102 KB heap, not 73 KB)
                o = tuple(v[0] if j > 3 and len(v) == 1 else v for j, v in
                          enumerate(d[key] if key in d else
                                    t.__getattr__(key) for key in
                                    _LAZY[2:6] + _LAZY[8:]))
                if "name" not in d:  # its bytes in the model, no str
                    start, n = t._fb.table(t.pos).vector(3, 1)
                    if start:
                        o = (t._fb.mv[start:start + n],) + o[1:]
                if not copy:  # the fields on the tensor itself (_own
                    # takes _fb's place in its table: no growth)
                    del t._fb
                    t._own = o
                    continue
                c = Tensor(t.index)
                c.shape = t.shape
                c.type = t.type
                c.nbytes = t.nbytes
                c.data = t.data
                c._own = o
                cd = c.__dict__
                for key in d:  # anything else assigned (no tuple of
                    # names: a constant tuple takes the heap while the
                    # module is imported)
                    if not (key in cd or key == "pos" or key == "_fb"
                            or key == "size"):
                        setattr(c, key, d[key])
                done[id(t)] = c
            if c is not None:
                ts[k] = c

