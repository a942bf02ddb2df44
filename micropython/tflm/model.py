"""Model view: subgraph 0 of a .tflite file, read in place.

Parses the schema tables (tensorflow/lite/schema/schema.fbs) into small
Tensor and Operator records. Constant data stays in the model's buffer:
a Tensor only remembers where its bytes are. Every index and size read from
the file is checked; errors name the tensor or operator and the offset.
"""

from micropython import const

from . import schema
from .errors import ModelError, op_label
from .flatbuf import FlatBuffer, Table
from .heap import pack
from .tensor import Tensor  # noqa: F401 (model.Tensor: tensor.py)

_CUSTOM = const(32)
_INT16 = const(7)
_INT8 = const(9)
# Model.used_codes(key=...): the flag of an operator with an output of
# fewer than SMALL elements (add.LUT_MIN) or an input of another shape
# than its output (kernels._LAZY's letter s)
SMALL = 256
SMALL_FLAG = const(128)
_MODEL_BUFFERS = const(4)
_MODEL_OPERATOR_CODES = const(1)
_MODEL_SUBGRAPHS = const(2)
_MODEL_VERSION = const(0)

# Sanity bounds, so that a corrupt file cannot ask for absurd work or RAM.
MAX_DIM = 1 << 24
MAX_BYTES = 1 << 28
_MAX_RANK = const(8)


class Operator:
    """One operator of subgraph 0.

    Attributes: index, code (BuiltinOperator), name, version, custom_code,
    inputs / outputs (tuples of tensor indices, -1 for an omitted optional
    input), options (Table of builtin_options or None), options_type.

    options and options_type are read from the model on each access
    (kernels read them in prepare only), so a loaded operator keeps no
    Table; assigning either stores the value given, which then wins.
    """

    version = 1
    custom_code = None
    _fb = None  # the model's FlatBuffer; None for an operator made by hand

    def __getattr__(self, key):
        # Called only for attributes that are not stored: see above.
        if key != "options" and key != "options_type":
            raise AttributeError(key)
        if self._fb is None:
            return None if key == "options" else 0
        t = Table(self._fb, self.pos)
        return t.table(4) if key == "options" else t.u8(3)

    def label(self):
        return op_label(self.index, self.name)

    def opt_int(self, field, default=0):
        """int32 builtin option field (e.g. Conv2DOptions.stride_w)."""
        t = self.options
        return t.i32(field, default) if t else default

    def opt_byte(self, field, default=0):
        """byte / bool / enum builtin option field (padding, activation)."""
        t = self.options
        return t.i8(field, default) if t else default

    def opt_float(self, field, default=0.0):
        t = self.options
        return t.f32(field, default) if t else default

    def __repr__(self):
        return "<Operator %d %s in=%s out=%s>" % (self.index, self.name,
                                                  self.inputs, self.outputs)


def _small(fb, shapes):
    """True if the first shape (start, n) of int32 vectors in fb has
    fewer than SMALL elements or another shape differs from it (in
    length or any dimension): see Model.used_codes."""
    s0, n0 = shapes[0]
    size = 1
    for j in range(n0):
        d = fb.i32(s0 + 4 * j)
        if d <= 0:
            return True
        size = min(size * d, SMALL)
    if size < SMALL:
        return True
    for s, n in shapes[1:]:
        if n != n0:
            return True
        for j in range(n):
            if fb.i32(s + 4 * j) != fb.i32(s0 + 4 * j):
                return True
    return False


class Model:
    """A parsed model: version, tensors, operators, inputs, outputs.

    buf: any buffer (bytes, bytearray, memoryview); not copied.
    check=False reads only the header fields (see check()); verified=True
    also skips verify.structure, for bytes an interpreter has verified
    (reads stay bounds-checked: a FormatError at worst).
    Raises FormatError (bad offsets) or ModelError (bad graph data).
    Follows schema.fbs; operator codes resolve as
    max(builtin_code, deprecated_builtin_code) like TFLM's GetBuiltinCode.
    """

    def __init__(self, buf, check=True, verified=False):
        fb = FlatBuffer(buf)
        # Every attribute is set before the first object that dies, so
        # that on a board what lives on is allocated first, packed low.
        self.fb = fb
        self._t = self._o = None
        self.version = self.num_subgraphs = self._sg = 0
        self._buffers = self._codes = self.inputs = self.outputs = None
        self.name = None
        self.n_tensors = self.n_operators = 0
        if not verified:  # (bytes an interpreter verified: api.model)
            from . import verify  # construction only: CONSTRUCTION
            verify.structure(fb)  # bounds what the parsing below reads
        root = fb.root()
        self.version = root.u32(_MODEL_VERSION)
        if self.version != 3:
            raise ModelError("model schema version %d, expected 3"
                             % self.version)
        self._buffers = root.vector(_MODEL_BUFFERS, 4)
        self._check_buffer0()
        sg_start, n_sg = root.vector(_MODEL_SUBGRAPHS, 4)
        if n_sg < 1:
            raise ModelError("model has no subgraph")
        self.num_subgraphs = n_sg
        sg = root.table_at(sg_start, 0)
        self._sg = sg.pos
        pack()
        self._codes = self._opcodes(root)
        self.n_tensors = n = sg.vector(0, 4)[1]
        self.n_operators = sg.vector(3, 4)[1]
        self.inputs = self._indices(sg, 1, n, "subgraph input")
        self.outputs = self._indices(sg, 2, n, "subgraph output")
        self.name = sg.string(4)
        if check:
            self.check()

    def used_codes(self, custom=False, key=None):
        """The builtin codes of the operator codes that subgraph 0's
        operators use (a model may list others), read without parsing
        tensors and operators; custom codes are left out. custom=True:
        the custom codes (str) instead. With key (one of those codes):
        the set of TensorType codes of the inputs and outputs of the
        operators with that code instead, and each input's code + 64
        (kernels._LAZY's upper-case letters: a type among the inputs),
        and SMALL_FLAG when one of them has an int8 or int16 first output
        with fewer than SMALL elements or an input of another shape
        (tensor indices out of range are skipped: the verifier reports
        them)."""
        fb = self.fb
        sg = Table(fb, self._sg)
        t0, nt = sg.vector(0, 4)
        o0, no = sg.vector(3, 4)
        out = set()
        for k in range(no):
            op = sg.table_at(o0, k)
            ci = op.u32(0)
            if ci >= len(self._codes) or \
                    (self._codes[ci][2] is None) == custom:
                continue
            code = self._codes[ci][2 if custom else 0]
            if key is None:
                out.add(code)
            elif code == key:
                shapes = []
                quant = False  # the first output int8 or int16
                for f in (2, 1):  # outputs first: their shape leads
                    start, n = op.vector(f, 4)
                    for j in range(n):
                        i = fb.i32(start + 4 * j)
                        if 0 <= i < nt:
                            t = sg.table_at(t0, i)
                            out.add(t.i8(1))
                            if f == 1:
                                out.add(t.i8(1) | 64)
                            shapes.append(t.vector(0, 4))
                            if len(shapes) == 1:
                                quant = t.i8(1) in (_INT8, _INT16)
                if shapes and quant and _small(fb, shapes):
                    out.add(SMALL_FLAG)
        return out

    def check(self):
        """Parse the tensors and operators and verify them (verify.py,
        check_model): what Model(buf) does unless check=False, which
        reads only the header fields (version, operator codes, inputs,
        outputs, counts, name). Raises FormatError / ModelError."""
        self._t = self.tensors
        self._o = self.operators
        from . import verify
        verify.check_model(self)

    # The interpreter releases the parsed lists once its kernels are
    # prepared (they cost ~170 bytes per tensor on a board); a later
    # access parses the model again, giving new, equal objects.

    @property
    def tensors(self):
        """List of Tensor (subgraph 0), parsed again after release()."""
        if self._t is None:
            self._t = self._tensors(Table(self.fb, self._sg))
        return self._t

    @property
    def operators(self):
        """List of Operator (subgraph 0), parsed again after release()."""
        if self._o is None:
            self._o = self._operators(Table(self.fb, self._sg), self._codes,
                                      self.n_tensors)
        return self._o

    def release(self):
        """Drop the parsed Tensor and Operator lists (see above)."""
        self._t = self._o = None

    def tensor(self, i):
        """Tensor i of subgraph 0, parsed on its own (no list is built):
        what the interpreter uses once the lists are released. i must be
        a valid index (checked when the model was loaded)."""
        if self._t is not None:
            return self._t[i]
        sg = Table(self.fb, self._sg)
        return self._tensor(sg.table_at(sg.vector(0, 4)[0], i), i)

    def operator(self, k):
        """Operator k of subgraph 0, parsed on its own (see tensor())."""
        if self._o is not None:
            return self._o[k]
        sg = Table(self.fb, self._sg)
        return self._operator(sg.table_at(sg.vector(3, 4)[0], k), k,
                              self._codes, self.n_tensors)

    def _opcodes(self, root):
        start, n = root.vector(_MODEL_OPERATOR_CODES, 4)
        codes = [None] * n
        for k in range(n):
            t = root.table_at(start, k)
            code = max(t.i8(0), t.i32(3))
            custom = t.string(1, None) if code == _CUSTOM else None
            codes[k] = (code, t.i32(2, 1), custom)
        return codes

    def _indices(self, table, field, n, what):
        idx = table.int_vector(field)
        for i in idx:
            if not 0 <= i < n:
                raise ModelError("%s index %d out of range (%d tensors)"
                                 % (what, i, n))
        return idx

    def _tensors(self, sg):
        start, n = sg.vector(0, 4)
        ts = [None] * n
        for k in range(n):
            ts[k] = self._tensor(sg.table_at(start, k), k)
            if k & 7 == 7:
                pack()  # a record leaves ~1 KB of garbage (heap.py)
        return ts

    def _tensor(self, t, k):
        ts = Tensor(k)
        ts._fb = self.fb
        ts.pos = t.pos
        ts.shape = t.int_vector(0)
        ts.type = t.i8(1)
        ts.size = _element_count(ts)
        ts.nbytes = ts.size * ts.itemsize
        if ts.nbytes > MAX_BYTES:
            raise ModelError("%s needs %d bytes" % (ts.label(), ts.nbytes))
        self._buffer(ts)
        return ts

    def _check_buffer0(self):
        # schema.fbs reserves buffer 0 as the empty buffer that activations
        # point to; TFLM would read data found there as the constant value
        # of every such tensor, this runtime as nothing: refuse the file.
        start, nbuf = self._buffers
        if nbuf == 0:
            return
        bt = Table(self.fb, self.fb.deref(start, "buffer"))
        n = bt.vector(0, 1)[1] or (bt.u64(2) if bt.u64(1) > 1 else 0)
        if n:
            raise ModelError("buffer 0 holds %d bytes: the schema reserves "
                             "it as the empty buffer of activations" % n)

    def _buffer(self, ts):
        start, nbuf = self._buffers
        b = ts.buffer
        if b >= nbuf and not (b == 0 and nbuf == 0):
            raise ModelError("%s uses buffer %d of %d"
                             % (ts.label(), b, nbuf))
        if b == 0:
            return
        bt = Table(self.fb, self.fb.deref(start + 4 * b, "buffer"))
        pos, n = bt.vector(0, 1)
        off = bt.u64(1)
        if not pos and off > 1:
            # No data vector: Buffer.offset / size place the bytes after
            # the flatbuffer, counted from the file's start (valid if
            # offset > 1, schema.fbs; TFLM ignores them). Used in place.
            n = bt.u64(2)
            self.fb.check(off, n, "data of buffer %d (Buffer.offset)" % b)
            pos = off
        if n == 0:
            return
        if n != ts.nbytes:
            raise ModelError("%s has %d bytes of constant data, its shape %s "
                             "needs %d" % (ts.label(), n, ts.shape, ts.nbytes))
        ts.const_pos = pos
        ts.const_len = n

    def _operators(self, sg, codes, n):
        start, count = sg.vector(3, 4)
        ops = [None] * count
        for k in range(count):
            ops[k] = self._operator(sg.table_at(start, k), k, codes, n)
            if k & 7 == 7:
                pack()  # a record leaves ~1 KB of garbage (heap.py)
        return ops

    def _operator(self, t, k, codes, n):
        op = Operator()
        op.index = k
        op._fb = self.fb
        op.pos = t.pos
        ci = t.u32(0)
        if ci >= len(codes):
            raise ModelError("op %d: opcode_index %d out of range (%d "
                             "codes)" % (k, ci, len(codes)))
        op.code, version, custom = codes[ci]
        if version != 1:
            op.version = version
        if custom is not None:
            op.custom_code = custom
        op.name = custom or schema.builtin_name(op.code)
        op.inputs = t.int_vector(1)
        op.outputs = t.int_vector(2)
        for i in op.inputs + op.outputs:
            if not -1 <= i < n:
                raise ModelError("%s: tensor index %d out of range (%d "
                                 "tensors)" % (op.label(), i, n))
        return op


def _element_count(ts):
    """Product of the shape, checked for negative and absurd dimensions."""
    if len(ts.shape) > _MAX_RANK:
        raise ModelError("%s has rank %d" % (ts.label(), len(ts.shape)))
    n = 1
    for d in ts.shape:
        if d < 0 or d > MAX_DIM:
            raise ModelError("%s has bad dimension %d in shape %s"
                             % (ts.label(), d, ts.shape))
        n *= d
        if n > MAX_BYTES:
            raise ModelError("%s has too many elements: shape %s"
                             % (ts.label(), ts.shape))
    return n
