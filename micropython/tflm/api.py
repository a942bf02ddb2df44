"""The interfaces other runtimes' users know, on top of Interpreter.

Imported on first use (Interpreter.__getattr__), so that they cost a board
no RAM until then. Two conventions:

OpenMV's ml.Model (model-level attributes, one entry per input / output):
    input_shape, output_shape: lists of shape tuples
    input_dtype, output_dtype: lists of array typecodes ('b' int8,
        'B' uint8, 'h' int16, 'i' int32, 'f' float32)
    input_scale, output_scale: lists of floats (1.0 if not quantized)
    input_zero_point, output_zero_point: lists of ints (0 if not quantized)
    labels: Interpreter(labels=...) if given, else lines of the .txt file
    next to the model file (model path
        with .tflite replaced by .txt), or None; assign a list to set them
    top(k=1): [(label or index, score)] of output 0, best first

TFLite's Python Interpreter / PyPI tflite_micro runtime:
    get_input_details(), get_output_details(): one dict per input /
        output: name, index (the model's tensor index), shape, dtype
        ('int8', ...), quantization (scale, zero_point)
    set_tensor(index, value), get_tensor(index): by tensor index, for
        inputs and outputs (the interpreter keeps no other tensor)
    set_input(value, index=0), get_output(index=0): by position
    allocate_tensors(): nothing to do (the arena is planned at
        construction), accepted for compatibility
    reset(): zeroes the model's state, as TFLM's
        MicroInterpreter::Reset: variable tensors (SVDF's and the
        LSTM's state: the zero point of an int8 one, else zeros) and
        what stateful kernels keep (the noise estimate of
        SignalFilterBankSpectralSubtraction)

Values: set_* take what Tensor.set takes (a buffer, array, list of the
tensor's integers; floats are quantized as by Tensor.set_float);
get_tensor / get_output return a copy (Tensor.get). None of these run on
the invoke() path; they allocate.
"""

from array import array

from .errors import InvokeError
from .values import TYPECODES

_ATTRS = ("shape", "dtype", "scale", "zero_point")


def attribute(interp, name):
    """Interpreter.__getattr__: the value of attribute `name`, or
    AttributeError."""
    if interp.inputs is None:  # construction did not finish
        raise AttributeError(name)
    interp._check_arena()  # arena= taken by another: InvokeError
    side, _, attr = name.partition("_")
    if side in ("input", "output") and attr in _ATTRS:
        ts = interp.inputs if side == "input" else interp.outputs
        return [_attr(t, attr) for t in ts]
    if name == "labels":
        return _labels(interp)
    if name == "model":
        return model(interp)
    if name == "tensors":
        return tensors(interp)
    if name == "compiled":  # compiled.build sets _compiled
        return getattr(interp, "_compiled", None)
    f = _METHODS.get(name)
    if f is None:
        raise AttributeError(name)
    return lambda *a, **k: f(interp, *a, **k)


def _attr(t, attr):
    if attr == "shape":
        return tuple(t.shape)
    if attr == "dtype":
        return TYPECODES.get(t.dtype, t.dtype)
    if attr == "scale":
        return t.scale if t.scale else 1.0
    return t.zero_point if t.scale else 0


def read_labels(path):
    """The labels in text file path: one per line (OpenMV's format),
    stripped, trailing empty lines dropped, a UTF-8 byte-order mark at
    the start dropped (editors on Windows write one); read a line at a
    time (no block of the file's size). Raises OSError, ValueError for a
    file that is not UTF-8 text."""
    lines = []
    try:
        with open(path) as f:
            while True:
                ln = f.readline()
                if not ln:
                    break
                if not lines and ln.startswith("\ufeff"):
                    ln = ln[1:]
                lines.append(ln.strip())
    except UnicodeError:
        raise ValueError("labels file %r is not UTF-8 text" % path)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def labels_arg(labels):
    """Interpreter(labels=...): a list or tuple of labels (a list copy),
    or the path of a text file (read_labels). TypeError for anything
    else; OSError naming a file that cannot be read."""
    if isinstance(labels, str):
        try:
            return read_labels(labels)
        except OSError as e:
            raise OSError(e.args[0], "cannot read the labels file %r"
                          % labels)
    if isinstance(labels, (list, tuple)):
        for x in labels:
            if not isinstance(x, str):
                raise TypeError("labels must be strings, got %s"
                                % type(x).__name__)
        return list(labels)
    raise TypeError("labels must be a list of labels or the path of a "
                    "text file, not %s" % type(labels).__name__)


def check_labels(labels, outs):
    """ValueError unless labels (given to the constructor, or read by
    top()) are as many as output 0's values (the classes top() ranks);
    outs: the outputs."""
    if not outs:
        return
    if len(labels) != outs[0].size:
        raise ValueError("labels: %d given, but output 0 has %d values"
                         % (len(labels), outs[0].size))


def _labels(interp):
    path = getattr(interp, "path", None)
    if not path:
        return None
    base = path[:-7] if path.endswith(".tflite") else path
    try:
        lines = read_labels(base + ".txt")
    except OSError:
        return None
    interp.labels = lines  # read once
    return lines


def top(interp, k=1):
    """The k best classes of output 0: [(label, score)], best first; the
    label is the class index where there are no labels. Scores are
    output 0's real values (dequantized). ValueError for labels that are
    not as many as output 0's values (interp.labels set to another list,
    or a sibling .txt file of other lines)."""
    from .repl import output_values
    if _int(k, "k") < 1:
        raise ValueError("k must be >= 1, got %d" % k)
    t = interp.output(0)  # InvokeError for a model without outputs
    # flat, also where ulab would shape them like the tensor
    flat = array("f", range(t.size)) if t.dtype == "float32" or t.scale \
        else None
    scores = output_values(t, True, flat)
    labels = interp.labels
    if labels:
        check_labels(labels, [t])
    # ties in index order (MicroPython's sort is not stable)
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
    return [(labels[i] if labels else i, scores[i])
            for i in order]


def _details(ts):
    return [{"name": t.name, "index": t.index, "shape": tuple(t.shape),
             "dtype": t.dtype,
             "quantization": (t.scale if t.scale else 0.0,
                              t.zero_point if t.scale else 0)}
            for t in ts]


def _int(x, what):
    if not isinstance(x, int) or isinstance(x, bool):
        raise TypeError("%s must be an int, not %s" % (what,
                                                     type(x).__name__))
    return x


def _by_index(interp, index):
    _int(index, "tensor index")
    for t in interp.inputs + interp.outputs:
        if t.index == index:
            return t
    raise InvokeError("tensor %r is not an input or output (the "
                      "interpreter keeps only those: %s)" % (
                          index, [t.index for t in interp.inputs +
                                  interp.outputs]))


def _set(t, value):
    from .repl import set_input
    set_input(t, value)


def model(interp):
    """interp.model: the model.Model view of the model's bytes (version,
    tensors, operators, inputs, outputs). A built interpreter keeps no
    parsed model (it drops the parser, interpreter.PARSE): each access
    parses the header again (the bytes verified at construction are not
    verified again), importing model.py and flatbuf.py for as long as
    the result lives, so bind it once. Allocates: ArenaError when the
    heap cannot hold it; FormatError if the model's buffer was changed."""
    import sys
    from .errors import out_of_memory
    from .interpreter import PARSE, _forget
    had = [k for k in PARSE if k in sys.modules]
    try:
        from .model import Model
        return Model(interp._buf, check=False, verified=True)
    except MemoryError:
        raise out_of_memory("parsing the model again (interp.model)")
    finally:
        # what the parse imported goes again when the model does
        for k in PARSE:
            if k not in had:
                _forget(k)


def tensors(interp):
    """interp.tensors: all tensors of subgraph 0 (model.Tensor), bound to
    their bytes. Built from the model on each access (the interpreter
    keeps only inputs and outputs, to save RAM): use the list you get, do
    not read it in a loop. Allocates."""
    if interp._tensors is not None:
        return interp._tensors
    from .interpreter import _bind
    m = model(interp)
    ts = m.tensors
    m.release()
    model_mv = m.fb.mv
    head = memoryview(interp.arena)[:interp.arena_size]
    for t in ts:
        _bind(t, interp._where[t.index], model_mv, head)
    return ts


def _predict(interp, x, dequantize=True, out=None):
    from .repl import predict
    return predict(interp, x, dequantize, out)


def _profile(interp, table=False):
    from .profiler import report
    return report(interp, table)


def _pick(ts, index, what):
    _int(index, what + " index")
    if not 0 <= index < len(ts):
        raise InvokeError("%s index %r out of range (%d %ss)"
                          % (what, index, len(ts), what))
    return ts[index]


def _reset(interp):
    # The variable tensors' (view, reset byte), found by the kernels
    # that keep their state in them (KernelContext.variable).
    for d, b in interp._variables or ():
        for k in range(len(d)):
            d[k] = b
    for v in interp._states or ():
        for k in range(len(v)):
            v[k] = 0


_METHODS = {
    "top": top,
    "get_input_details": lambda it: _details(it.inputs),
    "get_output_details": lambda it: _details(it.outputs),
    "set_tensor": lambda it, index, value: _set(_by_index(it, index), value),
    "get_tensor": lambda it, index: _by_index(it, index).get(),
    "set_input": lambda it, value, index=0: _set(
        _pick(it.inputs, index, "input"), value),
    "get_output": lambda it, index=0: _pick(it.outputs, index,
                                            "output").get(),
    "allocate_tensors": lambda it: None,
    "reset": _reset,
    "predict": _predict,
    "profile": _profile,
}
