"""`python -m host_tools inspect MODEL [--json]`: what is inside a model.

The summary lists the subgraphs; the operators of subgraph 0 with their
options and MACs; every tensor (shape, dtype, quantization, buffer,
bytes, and where it lives: flash for constants, its arena offset for
activations); the constant buffers by size with their file offset and
alignment; which operators this runtime supports; the planned arena; and
flash and RAM against each board in boards/.

--json dumps the whole model, in the spirit of `flatc --json`: every
table, vector and union of the file. It is read by the device's own
reader (tflm.flatbuf under CPython), so it shows what a board sees. The
reader needs a description of the schema (field names, vtable slots,
types); it is derived at run time from the official generated code
(tflite_micro's schema_py_generated): each accessor's source names its
vtable offset and number type (schema()). Only the description comes
from there: every value is read by tflm.flatbuf (tests/test_inspect.py
checks the dump field by field against the official object API).
Field names are the schema's, in snake_case as flatc writes them
(derived from the generated CamelCase: builtin_options2_type for the
schema's builtin_options_2_type); enum values print as names
(enum_names) for union types and the common enum fields (ENUM_FIELDS).
"""

import ast
import functools
import inspect as _pyinspect
import json
import os
import re
import struct
import sys

from tflm.flatbuf import FlatBuffer

# Generated number types -> (our reader's kind, bytes).
FLAGS = {"Int8": ("i8", 1), "Uint8": ("u8", 1), "Bool": ("bool", 1),
         "Int16": ("i16", 2), "Uint16": ("u16", 2), "Int32": ("i32", 4),
         "Uint32": ("u32", 4), "Int64": ("i64", 8), "Uint64": ("u64", 8),
         "Float32": ("f32", 4), "Float64": ("f64", 8)}

# Scalar fields whose values name members of an enum (table or '*',
# field) -> enum class of schema_py_generated.
ENUM_FIELDS = {
    ("Tensor", "type"): "TensorType",
    ("OperatorCode", "builtin_code"): "BuiltinOperator",
    ("OperatorCode", "deprecated_builtin_code"): "BuiltinOperator",
    ("Operator", "custom_options_format"): "CustomOptionsFormat",
    ("*", "padding"): "Padding",
    ("*", "fused_activation_function"): "ActivationFunctionType",
    ("FullyConnectedOptions", "weights_format"):
        "FullyConnectedOptionsWeightsFormat",
    ("*", "in_data_type"): "TensorType",
    ("*", "out_data_type"): "TensorType",
    ("*", "out_type"): "TensorType",
    ("*", "output_type"): "TensorType",
    ("*", "idx_out_type"): "TensorType",
}


def _gen():
    from tflite_micro.tensorflow.lite.micro.python import \
        schema_py_generated
    return schema_py_generated


class Field:
    """One schema field: name (snake_case), attr (object API name), slot
    (index in the vtable), kind ('scalar', 'vector', 'string', 'table',
    'tables', 'union'), fmt / size (number type of scalars and vector
    elements), ref (table class of tables, enum class of unions),
    default (of scalars)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return "Field(%r)" % self.__dict__


# schema.fbs names that CamelCase -> snake_case cannot recover
_SCHEMA_NAMES = {"builtin_options2": "builtin_options_2",
                 "builtin_options2_type": "builtin_options_2_type"}


def snake(name):
    """A generated accessor's name as schema.fbs spells the field
    (BuiltinOptionsType -> builtin_options_type)."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()
    return _SCHEMA_NAMES.get(s, s)


def _field(method, src):
    slot = re.findall(r"self\._tab\.Offset\((\d+)\)", src)
    if len(slot) != 1:
        return None
    f = Field(name=snake(method), attr=method[0].lower() + method[1:],
              slot=(int(slot[0]) - 4) // 2, fmt=None, size=4, ref=None,
              default=None)
    last = src.strip().splitlines()[-1].strip()
    flags = [x for x in re.findall(r"number_types\.(\w+)Flags", src)
             if x != "UOffsetT"]
    obj = re.findall(r"obj = (\w+)\(\)", src)
    if "._tab.Union(" in src:
        f.kind = "union"
    elif obj and "._tab.Vector(" in src:
        f.kind, f.ref = "tables", obj[0]
    elif obj:
        f.kind, f.ref = "table", obj[0]
    elif "._tab.String(" in src:
        f.kind = "string"
    elif flags:
        f.fmt, f.size = FLAGS[flags[0]]
        f.kind = "vector" if "._tab.Vector(" in src else "scalar"
        if f.kind == "scalar":
            f.default = ast.literal_eval(last[len("return "):])
            if f.fmt == "bool":
                f.default = bool(f.default)
    else:
        raise ValueError("cannot read accessor %s:\n%s" % (method, src))
    return f


_SKIP = ("AsNumpy", "Length", "IsNone", "BufferHasIdentifier")


@functools.lru_cache(maxsize=None)
def schema():
    """{table name: [Field, in schema order]} for every table of the
    generated schema module; union fields get ref = their enum class
    name (from the object API's unpacking code)."""
    s = _gen()
    out = {}
    for name, cls in vars(s).items():
        if not (isinstance(cls, type) and hasattr(cls, "Init")
                and hasattr(s, name + "T")):
            continue
        fields = []
        for mname, m in vars(cls).items():
            if (not callable(m) or mname == "Init"
                    or mname.startswith("GetRootAs") or mname.endswith(_SKIP)):
                continue
            f = _field(mname, _pyinspect.getsource(m))
            if f is not None:
                fields.append(f)
        unpack = _pyinspect.getsource(getattr(s, name + "T")._UnPack)
        creators = dict(re.findall(r"self\.(\w+) = (\w+)Creator\(", unpack))
        for f in fields:
            if f.kind == "union":
                f.ref = creators[f.attr]
        out[name] = fields
    return out


@functools.lru_cache(maxsize=None)
def enum(name):
    """{value: member name} of an enum (or union) class."""
    cls = getattr(_gen(), name)
    return {v: k for k, v in vars(cls).items()
            if not k.startswith("_") and isinstance(v, int)}


def scalar(fb, pos, fmt):
    """The scalar of number type fmt at pos, read by tflm.flatbuf."""
    if fmt in ("u8", "u32", "u64", "i32", "i64", "f32"):
        return getattr(fb, fmt)(pos)
    if fmt == "i8":
        return (fb.u8(pos) ^ 0x80) - 0x80
    if fmt == "bool":
        return fb.u8(pos) != 0
    if fmt in ("u16", "i16"):  # (the device reader has no 16-bit fields)
        fb.check(pos, 2, "uint16")
        v = fb.mv[pos] | fb.mv[pos + 1] << 8
        return (v ^ 0x8000) - 0x8000 if fmt == "i16" else v
    if fmt == "f64":
        return struct.unpack("<d", struct.pack("<Q", fb.u64(pos)))[0]
    raise ValueError(fmt)


def _enum_name(table, f, v):
    e = ENUM_FIELDS.get((table, f.name)) or ENUM_FIELDS.get(("*", f.name))
    return enum(e).get(v, v) if e else v


def dump_table(table, cls, names=True, max_vector=None, defaults=False):
    """A dict of the fields present in table (a tflm.flatbuf.Table of
    schema table cls). names: enum values as member names; max_vector:
    vectors of numbers longer than this become {'length': n, 'offset':
    position of the first element in the file}; defaults: absent scalars too,
    with their schema default."""
    fb = table.fb
    out = {}
    fields = schema()[cls]
    more = (names, max_vector, defaults)
    for f in fields:
        p = table.field(f.slot, f.size if f.kind == "scalar" else 4)
        if not p:
            if defaults and f.kind == "scalar":
                out[f.name] = _enum_name(cls, f, f.default) if names \
                    else f.default
            continue
        if f.kind == "scalar":
            v = scalar(fb, p, f.fmt)
            if names:
                v = _enum_name(cls, f, v)
        elif f.kind == "string":
            v = table.string(f.slot)
        elif f.kind == "table":
            v = dump_table(table.table(f.slot), f.ref, *more)
        elif f.kind == "union":
            kind = table.u8(f.slot - 1)
            member = enum(f.ref).get(kind)
            if not kind or member not in schema():
                continue
            v = dump_table(table.table(f.slot), member, *more)
        else:
            start, n = table.vector(f.slot, f.size if f.kind == "vector"
                                    else 4)
            if max_vector is not None and n > max_vector \
                    and f.kind == "vector":
                v = {"length": n, "offset": start}
            elif f.kind == "tables":
                v = [dump_table(table.table_at(start, k), f.ref, *more)
                     for k in range(n)]
            elif f.fmt == "u8":
                v = list(bytes(fb.mv[start:start + n]))
            else:
                v = [scalar(fb, start + k * f.size, f.fmt) for k in range(n)]
        out[f.name] = v
    for f in fields:  # union types print as the member's name
        if names and f.kind == "union" and f.name + "_type" in out:
            t = out[f.name + "_type"]
            out[f.name + "_type"] = enum(f.ref).get(t, t)
    return out


def dump(buf, names=True, max_vector=None, defaults=False):
    """The whole model (a Model table) as a dict, read by tflm.flatbuf
    (see dump_table)."""
    fb = FlatBuffer(buf)
    return dump_table(fb.root(), "Model", names, max_vector, defaults)


def to_json(obj, indent=0):
    """JSON text: tables one field per line, vectors of numbers on one
    line (so a weights buffer does not take a line per byte)."""
    pad = "  " * indent
    if isinstance(obj, dict) and obj:
        items = ["%s  %s: %s" % (pad, json.dumps(k), to_json(v, indent + 1))
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and any(isinstance(x, (dict, list))
                                     for x in obj):
        items = [pad + "  " + to_json(v, indent + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj)


# ---------------------------------------------------------------------------
# Summary

def _fmt_n(n):
    for unit, div in (("G", 10 ** 9), ("M", 10 ** 6), ("K", 10 ** 3)):
        if n >= div:
            return "%.2f%s" % (n / div, unit)
    return str(n)


def alignment(pos):
    """Largest power of two (up to 64) dividing a file offset."""
    a = 1
    while a < 64 and pos % (2 * a) == 0:
        a *= 2
    return a


def _quant(t):
    q = t.get("quantization") or {}
    sc, zp = q.get("scale") or [], q.get("zero_point") or []
    if not sc:
        return "-"
    if isinstance(sc, dict):  # elided (max_vector)
        return "%d ch (dim %d)" % (sc["length"],
                                   q.get("quantized_dimension", 0))
    if len(sc) == 1:
        return "s=%.4g zp=%d" % (sc[0], zp[0] if zp else 0)
    return "%d ch (dim %d) s=%.3g..%.3g" % (len(sc),
                                          q.get("quantized_dimension", 0),
                                          min(sc), max(sc))


def _options_text(op):
    parts = []
    opts = op.get("builtin_options")
    if opts:
        parts += ["%s=%s" % (k, ("%.4g" % v) if isinstance(v, float) else v)
                  for k, v in opts.items()]
    return " ".join(parts)


def _buffers(fb):
    """[(index, data position, length, external)] of every buffer."""
    root = fb.root()
    start, n = root.vector(4, 4)  # Model.buffers
    out = []
    for k in range(n):
        b = root.table_at(start, k)
        pos, size = b.vector(0, 1)
        ext = False
        if not pos and b.u64(1) > 1:
            pos, size, ext = b.u64(1), b.u64(2), True
        out.append((k, pos, size, ext))
    return out


def summary(raw, name="model"):
    """The report as a list of lines."""
    from tflm import kernels
    from tflm.errors import TFLMError
    from tflm.model import Model

    from .macs import op_macs
    d = dump(raw, names=True, max_vector=4096)
    fb = FlatBuffer(raw)
    sg0 = d.get("subgraphs", [{}])[:1]
    for op, full in zip(sg0[0].get("operators", []) if sg0 else [],
                        _op_options(fb)):
        op["builtin_options"] = full  # with defaults, for the listing
    L = []
    sgs = d.get("subgraphs", [])
    L.append("%s: %d bytes, schema version %s, %d subgraph(s)%s"
             % (name, len(raw), d.get("version"), len(sgs),
                ", description %r" % d["description"]
                if d.get("description") else ""))
    for k, sg in enumerate(sgs):
        L.append("  subgraph %d %r: %d tensors, %d operators, inputs %s, "
                 "outputs %s%s" % (k, sg.get("name", ""),
                                   len(sg.get("tensors", [])),
                                   len(sg.get("operators", [])),
                                   sg.get("inputs", []),
                                   sg.get("outputs", []),
                                   "" if k == 0 else
                                   " (tflm runs subgraph 0 only)"))
    for md in d.get("metadata", []):
        L.append("  metadata %r: buffer %s" % (md.get("name"),
                                                md.get("buffer")))
    try:
        m = Model(raw)
        err = None
    except TFLMError as e:
        m, err = None, "%s: %s" % (type(e).__name__, e)
    plan = None
    if m is not None:
        try:
            from tflm import planner
            plan = planner.plan_model(m)
        except TFLMError as e:
            err = "%s: %s" % (type(e).__name__, e)
    codes = d.get("operator_codes", [])
    sg = sgs[0] if sgs else {}
    tensors = sg.get("tensors", [])
    ops = sg.get("operators", [])
    L += ["", "Operators (subgraph 0):",
          "%4s %-24s %-16s %-8s %9s  %s" % ("op", "name", "inputs",
                                            "outputs", "MACs", "options")]
    missing, total = [], 0
    for k, op in enumerate(ops):
        oc = codes[op.get("opcode_index", 0)] if \
            op.get("opcode_index", 0) < len(codes) else {}
        custom = oc.get("custom_code")
        mo = m.operators[k] if m is not None else None
        opname = mo.name if mo is not None else custom or str(
            oc.get("builtin_code"))
        macs = _macs(op_macs, m, mo)
        total += macs
        supported = mo is not None and (
            kernels.module_name(mo.code) is not None
            if mo.custom_code is None else
            kernels.custom_module_name(mo.custom_code) is not None or
            _registered(mo.custom_code))
        if not supported:
            missing.append("op %d (%s)" % (k, opname))
        text = _options_text(op)
        if custom is not None:
            text = "custom options: " + _custom_text(mo)
        L.append("%4d %-24s %-16s %-8s %9s  %s" % (
            k, opname + ("" if supported else " *"),
            ",".join(str(i) for i in op.get("inputs", [])),
            ",".join(str(i) for i in op.get("outputs", [])),
            _fmt_n(macs) if macs else "-", text))
    L.append("total MACs: %s%s" % (_fmt_n(total), "" if not missing else
                                    "   (* no kernel in this runtime)"))
    root, bufs = (plan[2], plan[1]) if plan else ({}, {})
    L += ["", "Tensors (subgraph 0):",
          "%4s %-28s %-8s %-16s %-24s %5s %8s  %s" % (
              "t", "name", "dtype", "shape", "quantization", "buf",
              "bytes", "where")]
    consts = m.tensors if m is not None else []
    for k, t in enumerate(tensors):
        shape = t.get("shape", [])
        dtype = str(t.get("type", "FLOAT32")).lower()
        nbytes = consts[k].nbytes if m is not None else 0
        if m is not None and consts[k].is_const:
            where = "flash @%d" % consts[k].const_pos
        elif k in root and root[k] in bufs:
            where = "arena @%d" % bufs[root[k]].offset
            if root[k] != k:
                where += " (view of t%d)" % root[k]
        elif k in root and m is not None and m.tensors[root[k]].is_const:
            where = "flash (view of t%d)" % root[k]
        else:
            where = "-"
        if k in sg.get("inputs", []):
            where += " input"
        if k in sg.get("outputs", []):
            where += " output"
        L.append("%4d %-28s %-8s %-16s %-24s %5s %8s  %s" % (
            k, _short(t.get("name", ""), 28), dtype,
            "x".join(str(x) for x in shape) or "scalar", _quant(t),
            t.get("buffer", 0), nbytes, where))
    users = {}
    for k, t in enumerate(tensors):
        users.setdefault(t.get("buffer", 0), []).append(k)
    blist = sorted([b for b in _buffers(fb) if b[2]], key=lambda b: -b[2])
    L += ["", "Constant buffers (largest first; data 16-byte aligned is "
          "what schema.fbs asks):",
          "%6s %9s %10s %6s  %s" % ("buffer", "bytes", "offset", "align",
                                   "tensors")]
    for k, pos, size, ext in blist:
        L.append("%6d %9d %10d %6d  %s%s" % (
            k, size, pos, alignment(pos),
            ",".join("t%d" % i for i in users.get(k, [])) or "(metadata)",
            " (after the flatbuffer)" if ext else ""))
    L.append("total constant data: %d bytes in %d buffers"
             % (sum(b[2] for b in blist), len(blist)))
    L.append("")
    if err:
        L.append("tflm rejects this model: " + err)
    elif missing:
        L.append("unsupported operators: " + ", ".join(missing))
    else:
        L.append("supported: every operator has a kernel in this runtime")
    if plan:
        L.append("planned arena: %d bytes for %d activation buffers "
                 "(`python -m host_tools plan` shows the layout)"
                 % (plan[0], len(plan[1])))
        L += [""] + _board_lines(raw)
    return L


def _macs(op_macs, m, op):
    """op_macs(m, op), 0 for no operator or one whose tensors lack what
    it reads (a malformed model, e.g. a rank-0 filter or a missing
    output: the summary still lists the operator)."""
    if op is None:
        return 0
    try:
        return op_macs(m, op)
    except (IndexError, TypeError):
        return 0


def _op_options(fb):
    """Builtin options of every operator of subgraph 0, defaults
    included (dicts; None where an operator has none)."""
    root = fb.root()
    start, n = root.vector(2, 4)  # Model.subgraphs
    if not n:
        return []
    sg = root.table_at(start, 0)
    start, n = sg.vector(3, 4)  # SubGraph.operators
    out = []
    for k in range(n):
        op = sg.table_at(start, k)
        member = enum("BuiltinOptions").get(op.u8(3))
        t = op.table(4)
        out.append(dump_table(t, member, True, 64, True)
                   if t is not None and member in schema() else None)
    return out


def _registered(name):
    from tflm import custom
    return custom.find(name) is not None


def _custom_text(op):
    from tflm import custom, flexbuffers
    from tflm.errors import TFLMError
    if op is None:
        return "?"
    raw = custom.custom_options(op)
    if raw is None or not len(raw):
        return "none"
    if custom.options_format(op) != custom.FLEXBUFFERS:
        return "%d bytes" % len(raw)
    try:
        text = json.dumps(flexbuffers.loads(raw), default=repr)
        return text if len(text) <= 300 else text[:299] + "..."
    except TFLMError as e:
        return "bad FlexBuffer: %s" % e


def _short(name, n):
    return name if len(name) <= n else ".." + name[-(n - 2):]


def _board_lines(raw):
    """Flash and RAM against each boards/*/board.json: the model is
    measured on the unix port as `python -m host_tools boards` does (code,
    runtime and arena on a 32-bit board, the file in RAM unless in ROMFS),
    and each board's verdict is boards.explain()'s."""
    import tempfile
    from . import boards
    try:
        bl = boards.load_boards()
    except OSError:
        return []
    if not bl:
        return []
    with tempfile.TemporaryDirectory(prefix="tflm_inspect_") as tmp:
        path = os.path.join(tmp, "model.tflite")
        with open(path, "wb") as f:
            f.write(raw)
        try:
            cost = boards.model_cost(path)
        except Exception as e:  # noqa: BLE001 - no unix port: say so
            return ["Boards: not measured (%s: %s)"
                    % (type(e).__name__, str(e).splitlines()[0][:80])]
    if cost.error:
        return ["Boards: none (%s)" % cost.error]
    out = ["Boards (RAM = code %s + runtime %s + arena %s on a 32-bit board, "
           "+ the file when it is read from the filesystem):"
           % (_k(cost.code), _k(cost.runtime), _k(cost.arena)),
           "%-14s %-16s %-16s" % ("board", "filesystem", "ROMFS")]
    for b in bl:
        fs = "fits" if boards.fits(b, cost, False) else "does not fit"
        rom = ("fits" if boards.fits(b, cost, True) else "does not fit") \
            if b.get("romfs") else "no ROMFS"
        out.append("%-14s %-16s %-16s" % (b["id"], fs, rom))
    return out


def _k(n):
    return "%dK" % ((n + 1023) // 1024)


def add_parser(sub):
    p = sub.add_parser("inspect", help="summary of a model (operators, "
                       "tensors, buffers, arena, boards), or --json: the "
                       "whole model as the board reads it")
    p.add_argument("model")
    p.add_argument("--json", action="store_true",
                   help="dump every table of the model as JSON (like "
                        "flatc --json)")
    p.add_argument("--max-vector", type=int, default=None,
                   help="with --json: print vectors longer than this as "
                        "{length, offset}")
    return p


def main(args):
    from tflm.errors import TFLMError
    with open(args.model, "rb") as f:
        raw = f.read()
    try:
        if args.json:
            print(to_json(dump(raw, True, args.max_vector)))
        else:
            print("\n".join(summary(raw, os.path.basename(args.model))))
    except TFLMError as e:
        print("%s: %s: %s" % (args.model, type(e).__name__, e),
              file=sys.stderr)
        return 1
    return 0
