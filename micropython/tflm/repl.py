"""REPL conveniences behind Interpreter.predict() and print(interp).

Imported only when used (not on the invoke() path). predict() follows
OpenMV's ml.Model.predict: inputs in, a list of real-valued outputs back
(quantized outputs dequantized with their scale and zero point).
"""

import sys

from .errors import InvokeError
from .values import is_float_values


def _is_value(x):
    """True for one tensor's worth of values (not a list of inputs)."""
    if isinstance(x, (list, tuple)):
        return not x or isinstance(x[0], (int, float))
    return True


def split_inputs(interp, x):
    """The per-input values of predict(x): x itself for a one-input model
    (or [x] / (x,), OpenMV style; a bare int or float is [x]), else a list
    / tuple of one value per input. Raises InvokeError when the count does
    not match."""
    n = len(interp.inputs)
    if n == 1:
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return [[x]]  # a bare number for a one-element input
        if isinstance(x, (list, tuple)) and len(x) == 1 \
                and not _is_value(x):
            return [x[0]]
        return [x]
    if not isinstance(x, (list, tuple)) or len(x) != n or _is_value(x):
        raise InvokeError("the model has %d inputs: pass a list or tuple "
                          "of %d values" % (n, n))
    return list(x)


def _flat(v):
    """v with nested lists / tuples flattened (row-major, as the tensor
    stores its values): predict([[1.0, 2.0], [3.0, 4.0]])."""
    if not isinstance(v, (list, tuple)) or not v or \
            not isinstance(v[0], (list, tuple)):
        return v
    out = []
    for x in v:
        if isinstance(x, (list, tuple)):
            out.extend(_flat(x))
        else:
            out.append(x)
    return out


def set_input(t, v):
    """Writes v into input tensor t: floats (list with a float, array
    'f'/'d', float ndarray) are quantized with t's scale and zero point
    (set_float); anything else is taken as the tensor's own values or raw
    bytes (Tensor.set). Nested lists / tuples are flattened."""
    v = _flat(v)
    if is_float_values(v):
        t.set_float(v)
    else:
        t.set(v)


def output_values(t, dequantize, out=None):
    """Real values of output t (dequantize=True and t quantized or
    float32), else its raw values as array.array; written into out
    when given (Tensor.dequantize / Tensor.get)."""
    if dequantize and (t.dtype == "float32" or t.scale):
        return t.dequantize(out)
    return t.get(out)


def predict(interp, x, dequantize=True, out=None):
    """interp.predict(x, dequantize=True, out=None) (api.py): set the
    inputs, invoke(), return the outputs: one call at the REPL.

    x: the input's values for a one-input model (or [x], as OpenMV's
    ml.Model.predict takes), else a list / tuple with one entry per
    input. Each entry: real values (floats in a list, array('f'), a
    float ulab ndarray), quantized with the input's scale and zero
    point; or the tensor's own integers (list, array.array of its type,
    int ndarray) or raw bytes (bytes, bytearray, any buffer).
    Returns a list with one entry per output, like OpenMV: real
    values (quantized outputs dequantized): when ulab imports, a float
    ndarray shaped like the output tensor (leading 1s dropped where
    the firmware's ulab holds fewer dimensions, flat where it still
    has too many: Tensor.dequantize), else a flat array('f'); with
    dequantize=False, or for an output without quantization, the raw
    values as a flat array.array.
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
    outs = interp.outputs
    if out is not None:
        if len(outs) == 1 and not isinstance(out, (list, tuple)):
            out = [out]
        if not isinstance(out, (list, tuple)) or len(out) != len(outs):
            raise InvokeError("out: pass a list of %d buffers, one per "
                              "output" % len(outs))
    for t, v in zip(interp.inputs, split_inputs(interp, x)):
        set_input(t, v)
    interp.invoke()
    if out is None:
        return [output_values(t, dequantize) for t in outs]
    # a None entry: a new buffer for that output
    return [output_values(outs[k], dequantize, out[k])
            for k in range(len(outs))]


def _tensor_line(kind, i, t):
    s = "  %s %d '%s' %s %s" % (kind, i, t.name, t.dtype, tuple(t.shape))
    if t.scale:
        s += " scale %g zero_point %d" % (t.scale, t.zero_point)
    return s


def _op_counts(ops):
    names, counts = [], {}
    for op in ops:
        if op.name not in counts:
            names.append(op.name)
            counts[op.name] = 0
        counts[op.name] += 1
    return ", ".join(n if counts[n] == 1 else "%s x%d" % (n, counts[n])
                     for n in names)


def summary(interp):
    """The text of print(interp) / repr(interp)."""
    model = getattr(interp, "model", None)
    if model is None or getattr(interp, "_steps", None) is None:
        return "<Interpreter (not built)>"
    ops = model.operators
    try:
        size = len(model.fb.mv)
    except (AttributeError, TypeError):
        size = 0
    in_model = tail_in_model(interp)
    tail = tail_in_ram(interp)
    lines = ["<Interpreter: %d operator%s (%s)" % (
        len(ops), "" if len(ops) == 1 else "s", _op_counts(ops)),
        "  arena %d bytes (%d head + %d tail%s), model %d bytes %s, "
        "%d bytes copied" % (
            interp.arena_size + tail, interp.arena_size, tail,
            ", in the arena= buffer" if getattr(interp, "_held", None)
            is not None else "", size,
            "read into RAM" if interp.model_in_ram else "used in place",
            interp.copied_bytes)]
    c = getattr(interp, "_compiled", None)
    if c is True:
        lines.append("  built from its compiled block (host_tools compile)%s"
                     % (", the tail (%d bytes) read in place from the "
                        "model's bytes" % (interp.persistent_size - tail)
                        if in_model else ""))
    elif c is not None:
        lines.append("  compiled block not used: %s" % c)
    cores = sys.modules.get("tflm.cores")
    if cores is not None:  # cores=2: the operators split between cores
        n = 0
        for k in range(0, len(interp._steps), 2):
            if interp._steps[k] is cores._split:
                n += 1
        if n:
            lines.append("  cores=2: %d operator%s split between the "
                         "cores" % (n, "" if n == 1 else "s"))
    for i, t in enumerate(interp.inputs):
        lines.append(_tensor_line("input", i, t))
    for i, t in enumerate(interp.outputs):
        lines.append(_tensor_line("output", i, t))
    model.release()  # the interpreter keeps no parsed operators
    return "\n".join(lines) + ">"


def tail_in_ram(interp):
    """The bytes of the arena's tail in RAM (what arena= needs beyond the
    head): persistent_size, but where the tail is read in place from the
    model's bytes (tail_in_model) the kernels' states alone, which
    follow the head in the arena (compiled.py)."""
    if not tail_in_model(interp):
        return interp.persistent_size
    return len(interp.arena) - interp.arena_size


def tail_in_model(interp):
    """True where a compiled model's tail is read in place from the
    model's bytes (compiled.build): the arena then holds the head only
    (its _stage is "" then, compiled.py: an attribute of its own would
    cost every interpreter RAM)."""
    return getattr(interp, "_compiled", None) is True and \
        interp.persistent_size > 0 and getattr(interp, "_stage", None) == ""
