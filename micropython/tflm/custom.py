"""Custom operators written in Python: tflm.register_op.

A model's CUSTOM operator (OperatorCode.custom_code 'MyOp') runs a kernel
the user registers before building the Interpreter:

    import tflm

    def my_prepare(op, ins, outs, options):
        # once, when the Interpreter is built: check and precompute
        if ins[0].shape != outs[0].shape:
            raise ValueError('shapes differ')
        return (ins[0].data, outs[0].data, options['shift'])

    def my_eval(state):
        # at every invoke(): read inputs, write outputs
        src, dst, shift = state
        for i in range(len(src)):
            dst[i] = src[i] >> shift    # (int8 bytes: see below)

    tflm.register_op('MyOp', my_prepare, my_eval)
    interp = tflm.Interpreter('/rom/model.tflite')

prepare(op, ins, outs, options) -> state
    op: model.Operator (op.name is the custom code, op.label() names it
    in messages; op.custom_options is the raw bytes, a memoryview of the
    model). ins / outs: lists of model.Tensor (None for an omitted
    optional input) with .data bound (memoryview of the arena, or of the
    model for constants: never write into those), .shape, .dtype,
    .scale, .zero_point, ... options: the custom_options decoded from
    FlexBuffers (usually a dict; see flexbuffers.py), None when the
    operator has none, or the raw memoryview when the model says they
    are not FlexBuffers. An exception raised by prepare becomes a
    PrepareError naming the operator. Like every kernel's, prepare runs
    twice (interpreter.py): first in a sizing pass whose result is
    dropped, where every activation's .data is a view of one throw-away
    buffer (so an input and an output may look like the same bytes),
    then for real: keep prepare free of side effects.
eval(state)
    Runs at every invoke(), with the value prepare returned. Tensor data
    are raw bytes: for int8 use e.g. a @micropython.viper function with
    ptr8 (sign-extend with (v ^ 0x80) - 0x80), or memoryview.cast where
    the port has it.

Allocation: built-in kernels allocate nothing during invoke(), so an
application may call it under micropython.heap_lock(). A Python kernel
normally allocates (floats, big ints, slices, lists, any temporary
object): do not invoke a model with such a kernel under heap_lock. A
kernel whose eval is viper code over memoryviews / arrays bound at
prepare allocates nothing, like the built-in ones.
Exceptions raised by eval propagate out of invoke() unchanged.

A model whose CUSTOM operators are not registered is rejected at load:
UnsupportedOpError lists every operator without a kernel by name.
"""

from .errors import FormatError, PrepareError

_OPS = {}

# Operator table fields (schema.fbs).
_OP_CUSTOM_OPTIONS, _OP_CUSTOM_FORMAT = 5, 6
_OP_LARGE_OFFSET, _OP_LARGE_SIZE = 9, 10
FLEXBUFFERS = 0  # CustomOptionsFormat


def register_op(name, prepare, eval):
    """Register a Python kernel for CUSTOM operators named name.

    name: the model's custom_code (str). prepare(op, ins, outs, options)
    -> state and eval(state): see the module doc. Registering a name
    again replaces its kernel (for Interpreters built afterwards).
    Raises TypeError if prepare or eval is not callable.
    """
    if not isinstance(name, str):
        raise TypeError("custom op name must be a str")
    if not callable(prepare) or not callable(eval):
        raise TypeError("prepare and eval must be callable")
    _OPS[name] = _Kernel(name, prepare, eval)


def unregister_op(name):
    """Forget the kernel registered for name (no error if there is none)."""
    _OPS.pop(name, None)


def registered():
    """Sorted names of the registered custom operators."""
    return sorted(_OPS)


def find(name):
    """The kernel object for a custom code (has .prepare like a kernel
    module), or None if nothing is registered under that name."""
    return _OPS.get(name)


def custom_options(op):
    """The raw custom_options of an operator: a memoryview of the model
    bytes (zero-copy), or None if it has none.

    Reads Operator.custom_options, or, when that is absent, the
    large_custom_options_offset / size pair (options stored after the
    flatbuffer, counted from the start of the file; valid if offset > 1,
    as schema.fbs says). Raises FormatError when they lie outside the
    model.
    """
    fb = getattr(op, "_fb", None)
    if fb is None:
        return None
    t = fb.table(op.pos)
    start, n = t.vector(_OP_CUSTOM_OPTIONS, 1)
    if not start:
        off = t.u64(_OP_LARGE_OFFSET)
        if off <= 1:
            return None
        n = t.u64(_OP_LARGE_SIZE)
        fb.check(off, n, "custom options of %s" % op.label())
        start = off
    return fb.mv[start:start + n]


def options_format(op):
    """Operator.custom_options_format (0: FLEXBUFFERS)."""
    fb = getattr(op, "_fb", None)
    return 0 if fb is None else fb.table(op.pos).i8(_OP_CUSTOM_FORMAT)


class _Kernel:
    """A registered custom op, shaped like a kernel module for the
    Interpreter: prepare(op, ins, outs, ctx) -> (eval_fn, state)."""

    def __init__(self, name, prepare, eval):
        self.name = name
        self.user_prepare = prepare
        self.user_eval = eval

    def prepare(self, op, ins, outs, ctx):
        raw = custom_options(op)
        op.custom_options = raw
        options = raw
        if raw is not None and options_format(op) == FLEXBUFFERS:
            from .flexbuffers import loads
            try:
                options = loads(raw) if len(raw) else None
            except FormatError as e:
                raise PrepareError("%s: custom_options: %s" % (op.label(), e))
        try:
            state = self.user_prepare(op, ins, outs, options)
        except PrepareError:
            raise
        except Exception as e:
            raise PrepareError("%s: prepare of custom op %r raised %s: %s"
                               % (op.label(), self.name, type(e).__name__,
                                  e))
        return self.user_eval, state
