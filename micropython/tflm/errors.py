"""Exceptions raised by tflm. Every error is a TFLMError subclass.

Messages name what failed: the operator (index and builtin name), the tensor
(index and name) and, for format errors, the byte offset in the model file.
"""


class TFLMError(Exception):
    """Base class of every error raised by tflm."""


class FormatError(TFLMError):
    """The model bytes are not a valid FlatBuffer / TFLite model.

    The message names the byte offset (from the start of the model) that
    failed a bounds or consistency check.
    """


class ModelError(TFLMError):
    """The model is well-formed FlatBuffer data but not a usable TFLite
    graph: bad tensor or buffer index, bad shape, bad quantization."""


class UnsupportedOpError(TFLMError):
    """One or more operators have no kernel; all are listed at once."""


class PrepareError(TFLMError):
    """A kernel's prepare step rejected its operator (shapes, types,
    options or quantization do not fit the kernel)."""


class ArenaError(TFLMError):
    """The tensor arena is too small; the message gives the bytes needed."""


class InvokeError(TFLMError):
    """A bad call on the interpreter: wrong input size, bad index, or
    invoke() on an interpreter that failed to build."""

    def __str__(self):
        return message(self)


def message(err):
    """err's message (str): its first argument, decoded where it is a
    view of UTF-8 bytes (a compiled model's InvokeError keeps its message
    in the model's bytes: tflm/compiled.py T_ERROR)."""
    a = err.args
    if len(a) != 1:
        return str(a) if a else ""
    if type(a[0]) is memoryview:
        return str(bytes(a[0]), "utf-8")
    return str(a[0])


def op_label(index, name):
    """'op 3 (CONV_2D)': how messages name an operator."""
    return "op %d (%s)" % (index, name)


def tensor_label(index, name):
    """"tensor 7 'conv1/out'": how messages name a tensor."""
    return "tensor %d '%s'" % (index, name)


def raise_made(err):
    """Raise err, an exception made at prepare (eval may not allocate).

    MicroPython appends every raise's frames to the exception object
    raised (~50 bytes per raise on a 32-bit port, never freed), so a loop
    that catches the error would grow err until the heap runs out; and
    `err.__traceback__ = None`, MicroPython's reset for that, only works
    on built-in exception types, not on InvokeError (a Python class: the
    assignment lands in its instance dict). So a fresh copy of err is
    raised (its message a str: message()), garbage once caught; under
    heap_lock (making it raises MemoryError, preallocated) err itself,
    whose traceback cannot grow then (a compiled model's: str(err) reads
    its message, which sys.print_exception shows as <memoryview>)."""
    try:
        a = err.args
        fresh = type(err)(*(a if len(a) != 1 else (message(err),)))
    except MemoryError:
        fresh = err
    raise fresh


def out_of_memory(stage, *hint):
    """The ArenaError for a MemoryError caught while the Interpreter was
    `stage` ('preparing op 3 (CONV_2D)', ...): the model needs more RAM
    than the heap has free (here rather than in verify.py, which may
    already be dropped, or not importable on a full heap, when one is
    caught). hint (optional): None, or a function returning what needs
    less (a plain construction's: source.arena_hint), called once the
    heap is collected and appended to the message where the model's
    objects (not the package's code) did not fit. (No default value: a
    function's defaults are a tuple on the heap for good.)"""
    import gc
    gc.collect()  # room for the message: the failed block is free
    f = getattr(gc, "mem_free", None)  # None under CPython (host tests)
    h = None  # the hint, where the model's objects did not fit
    try:
        # loading the construction modules or a compiled model's code,
        # importing kernels (no more string constants: each is a qstr,
        # and one more can take a new pool, kilobytes, at import)
        if "tflm.api" in stage or "tflm.repl" in stage:  # once built
            why = ("its code needs more RAM than the heap has in one "
                   "piece: on a tight heap, import tflm.api and tflm.repl "
                   "right after tflm, before building the interpreter")
        elif "loading" in stage or "importing" in stage:
            # the package's own code, not the model's data; from ROMFS
            # (.mpy, their machine code in place) only the heap can give
            rom = __file__.startswith("/rom/")
            why = ("the package's code (compiled on the board from .py "
                   "files, or native code of .mpy ones) needs more RAM "
                   "than is free; %s a compiled model (host_tools compile: "
                   "no construction modules) need less" % (
                       "a smaller arena= buffer and" if rom else
                       ".mpy files (make mpy), ROMFS (make deploy) and"))
        else:
            why = "the model needs more RAM than is free"
            if hint:
                h = hint[0]
        why = "out of memory while %s: %s%s" % (
            stage, why, " (%d bytes free in all)" % f() if f else "")
    except MemoryError:  # no room for the message: the stage alone
        try:  # (the same format string: no new qstr)
            return ArenaError("out of memory while %s: %s%s"[:-6] % stage)
        except MemoryError:
            return ArenaError("out of memory")
    if h is not None:
        try:  # (where both do not fit, the message without it)
            why += h()
        except MemoryError:
            pass
    return ArenaError(why)
