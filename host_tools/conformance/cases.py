"""Conformance cases: generator discovery, seeded case generation, inputs.

A case is (op, seed, i, size): its generator runs with
random.Random(f"{seed}:{op}:{i}") and the size budget, and the model's
inputs come from the generator or, after it, from the same rng
(random_inputs). Everything here runs under CPython.
"""

import glob
import importlib
import importlib.util
import os
import random
import traceback

import numpy as np

from .. import opgen

HERE = os.path.dirname(os.path.abspath(__file__))

# TensorType code -> numpy dtype (little-endian), for the types a
# conformance model may have as an input or output.
NP_TYPES = {opgen.DTYPES[k]: np.dtype(k).newbyteorder("<")
            for k in ("float32", "float64", "int8", "uint8", "int16",
                      "uint16", "int32", "uint32", "int64", "uint64",
                      "bool")}


class Generator:
    """One op's generator: name, gen function, module name, strict flag
    (strict: our runtime must run every model; see __init__.py) and ulp,
    the float32 ulps an output may differ by (0: bit for bit)."""

    def __init__(self, op, gen, module, strict, ulp=0):
        self.op, self.gen, self.module, self.strict = op, gen, module, strict
        self.ulp = ulp

    def __repr__(self):
        return "<Generator %s (%s)>" % (self.op, self.module)


def discover(dirs=(), errors=None):
    """{op: Generator} from every gen_*.py of this package, then of dirs
    (extra folders, for tests). A module that fails to import is skipped
    and its traceback appended to errors (a list) if given. An op defined
    twice keeps the first (gen_core.py is read first); the others are
    named 'OP@module'."""
    found = {}
    # gen_core first: it owns the original kernels' op names.
    paths = sorted(glob.glob(os.path.join(HERE, "gen_*.py")),
                   key=lambda p: (not p.endswith("gen_core.py"), p))
    for d in dirs:
        paths += sorted(glob.glob(os.path.join(str(d), "gen_*.py")))
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        try:
            if os.path.dirname(os.path.abspath(path)) == HERE:
                mod = importlib.import_module(__package__ + "." + name)
            else:
                spec = importlib.util.spec_from_file_location(
                    "conformance_extra_" + name, path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
            gens = dict(getattr(mod, "GENERATORS"))
        except Exception:  # noqa: B902 - another helper's module: report
            if errors is not None:
                errors.append("%s: %s" % (name, traceback.format_exc()))
            continue
        strict = set(getattr(mod, "STRICT", ()))
        ulps = dict(getattr(mod, "ULP", {}))
        for op, gen in gens.items():
            key = op if op not in found else "%s@%s" % (op, name)
            found[key] = Generator(key, gen, name, op in strict,
                                   ulps.get(op, 0))
    return found


def case_rng(seed, op, i):
    """The random.Random of case i of op under seed."""
    return random.Random("%s:%s:%d" % (seed, op, i))


def size_of(i):
    """The size budget of case i: cycles 1, 2, 3, 4."""
    return 1 + i % 4


def graph_io(raw):
    """([(dtype, shape)] of the model inputs, same for outputs), read with
    our own reader (micropython/tflm/model.py, under CPython)."""
    from tflm.model import Model  # lazy: much faster than opgen.parse
    m = Model(raw)

    def info(i):
        t = m.tensors[i]
        return NP_TYPES.get(t.type), [int(d) for d in t.shape]
    return ([info(i) for i in m.inputs], [info(i) for i in m.outputs])


def random_array(g, dtype, shape):
    """Random values of a dtype: integers over their full range, bool
    0 / 1, floats moderate (normal times a scale in [0.1, 10])."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype is None:
        raise ValueError("no random inputs for this tensor type")
    if dtype.kind == "b":
        return g.integers(0, 2, size=n).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return g.integers(int(info.min), int(info.max), size=n,
                          dtype=np.int64 if info.max < 2 ** 63 else
                          np.uint64, endpoint=True).astype(dtype)
    scale = float(np.exp(g.uniform(np.log(0.1), np.log(10.0))))
    return (g.standard_normal(n) * scale).astype(dtype)


def input_bytes(raw, inputs, rng):
    """Raw bytes per model input: the generator's arrays (cast to the
    input's dtype) or, where None, random values drawn from rng."""
    ins, _ = graph_io(raw)
    g = np.random.default_rng(rng.getrandbits(64))
    out = []
    for k, (dtype, shape) in enumerate(ins):
        given = inputs[k] if inputs is not None and k < len(inputs) else None
        if given is None:
            arr = random_array(g, dtype, shape)
        else:
            arr = np.asarray(given).astype(dtype)
        n = int(np.prod(shape, dtype=np.int64))
        if arr.size != n:
            raise ValueError("input %d: %d values for shape %s"
                             % (k, arr.size, shape))
        out.append(arr.tobytes())
    return out


def make_case(generator, seed, i, size):
    """(model bytes, [input bytes]) of a case. Raises what the generator
    raises."""
    rng = case_rng(seed, generator.op.split("@")[0], i)
    res = generator.gen(rng, size)
    inputs = None
    if isinstance(res, tuple):
        raw, inputs = res
    else:
        raw = res
    raw = bytes(raw)
    return raw, input_bytes(raw, inputs, rng)


# --- describing a model -------------------------------------------------

_TYPE_NAMES = {v: k for k, v in opgen.DTYPES.items()}
_OP_NAMES = {v: k for k, v in opgen.OPS.items()}


def _fmt_list(v, n=4):
    v = list(v)
    s = ", ".join("%.6g" % x if isinstance(x, float) else str(x)
                  for x in v[:n])
    return "[%s%s]" % (s, ", ... (%d)" % len(v) if len(v) > n else "")


def _tensor_desc(t, buffers):
    s = "%s %s" % (_TYPE_NAMES.get(t.type, t.type),
                   [int(d) for d in t.shape] if t.shape is not None else [])
    q = t.quantization
    if q is not None and q.scale is not None and len(q.scale):
        if len(q.scale) == 1:
            s += " scale %.6g zp %d" % (q.scale[0], q.zeroPoint[0])
        else:
            s += " scales %s zps %s dim %d" % (
                _fmt_list(q.scale), _fmt_list(q.zeroPoint),
                q.quantizedDimension)
    b = buffers[t.buffer] if t.buffer else None
    if b is not None and b.data is not None and len(b.data):
        dt = NP_TYPES.get(t.type)
        if dt is not None and dt.kind in "iu" and len(b.data) <= 64:
            vals = np.frombuffer(bytes(bytearray(b.data)), dt)
            s += " const %s" % _fmt_list(vals.tolist(), 8)
        else:
            s += " const"
    return s


def _options_desc(opts):
    if opts is None:
        return ""
    parts = []
    for k, v in sorted(vars(opts).items()):
        if isinstance(v, (int, float, bool)) or v is None:
            parts.append("%s=%s" % (k, v))
        elif isinstance(v, (list, np.ndarray)):
            parts.append("%s=%s" % (k, [x.item() if hasattr(x, "item")
                                        else x for x in v]))
    return " {%s}" % ", ".join(parts)


def _custom_desc(raw):
    """' {key: value, ...}' of FlexBuffers custom options, '' if none."""
    if raw is None or not len(raw):
        return ""
    try:
        from flatbuffers import flexbuffers
        d = flexbuffers.Loads(bytes(bytearray(raw)))
    except Exception:  # noqa: B902 - not a FlexBuffer: show its size
        return " (custom options: %d bytes)" % len(raw)
    if isinstance(d, dict):
        return " {%s}" % ", ".join("%s=%r" % kv for kv in sorted(d.items()))
    return " %r" % (d,)


def describe(raw):
    """A few lines naming the op, its options and every tensor it uses
    (dtype, shape, quantization, small constants)."""
    m = opgen.parse(raw)
    sg = m.subgraphs[0]
    lines = []
    for op in sg.operators or []:
        code = m.operatorCodes[op.opcodeIndex]
        name = _OP_NAMES.get(max(code.builtinCode,
                                 code.deprecatedBuiltinCode), "?")
        if code.customCode is not None:  # CUSTOM:Name {FlexBuffers map}
            name = "CUSTOM:" + bytes(code.customCode).decode("utf-8",
                                                             "replace")
        lines.append("%s%s%s" % (name, _options_desc(op.builtinOptions),
                                 _custom_desc(op.customOptions)))
        for role, idx in (("in", op.inputs), ("out", op.outputs)):
            for k, ti in enumerate(idx if idx is not None else []):
                if ti < 0:
                    lines.append("  %s%d: (omitted)" % (role, k))
                    continue
                lines.append("  %s%d: %s" % (role, k, _tensor_desc(
                    sg.tensors[ti], m.buffers)))
    return "\n".join(lines)
