"""The FlatBuffer reader and model view agree with the official schema.

Oracle: the flatbuffers-generated TFLite schema shipped with TFLM's Python
package (schema_py_generated). Every real model in ../shared/models (except
the malformed corpus) and the digits demo model is read both ways and every
field our runtime uses is compared: model header, tensors (shape, type,
buffer, quantization, constant bytes), operators (resolved opcode, I/O,
every builtin option field). The same reader is then run on the MicroPython
unix port and from an odd address, and must see exactly the same model.
"""

import functools
import glob
import inspect
import json
import os
import re
import struct

import flatbuffers
import numpy as np
import pytest

from conftest import ROOT, SHARED, run_mp, shared
from tflite_micro.tensorflow.lite.micro.python import \
    schema_py_generated as s
from tflm import schema
from tflm.errors import FormatError
from tflm.model import Model

DIGITS = os.path.join(ROOT, "host_tools", "data", "digits_cnn_int8.tflite")


def _model_names():
    names = sorted(os.path.relpath(p, SHARED)
                   for p in glob.glob(os.path.join(SHARED, "*", "*.tflite")))
    names = [n for n in names if not n.startswith("malformed" + os.sep)]
    # Without the shared folder the list is empty: keep one id so the
    # parametrized tests report a skip instead of vanishing.
    return names or ["person_detect/person_detect.tflite"]


MODELS = _model_names()


def _path(name):
    return DIGITS if name == "digits" else shared(name)


ALL = MODELS + ["digits"]


@functools.lru_cache(maxsize=None)
def load(name):
    """(bytes, official ModelT, official raw Model, our Model)."""
    with open(_path(name), "rb") as f:
        buf = f.read()
    return (buf, s.ModelT.InitFromPackedBuf(buf, 0),
            s.Model.GetRootAs(buf, 0), Model(buf))


def _bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _ilist(v):
    """An optional numpy vector of the object API as a list of ints."""
    return [] if v is None else [int(x) for x in v]


def _str(v):
    return "" if v is None else v.decode("utf-8")


# ---------------------------------------------------------------------------
# Builtin option tables: field index, kind and default for every attribute,
# derived from the generated code.

_FLAGS = {  # flatbuffers number type -> (our kind, element size)
    "Int8Flags": ("i8", 1), "Uint8Flags": ("u8", 1),
    "BoolFlags": ("bool", 1), "Int32Flags": ("i32", 4),
    "Uint32Flags": ("u32", 4), "Float32Flags": ("f32", 4),
    "Uint64Flags": ("u64", 8),
}


@functools.lru_cache(maxsize=None)
def option_spec(options_type):
    """[(attr, field index, kind, default, is_vector)] of a BuiltinOptions
    union member, in schema order.

    The index is the position of the attribute in the generated *OptionsT
    __init__; it is checked against the vtable offset that the generated
    accessor of the non-T class reads (offset = 4 + 2 * index), and the
    kind is the number type that accessor reads.
    """
    name = _union_name(options_type)
    cls_t, cls = getattr(s, name + "T"), getattr(s, name)
    params = list(inspect.signature(cls_t.__init__).parameters.values())[1:]
    spec = []
    for index, p in enumerate(params):
        acc = getattr(cls, p.name[0].upper() + p.name[1:])
        src = inspect.getsource(acc)
        offsets = re.findall(r"self\._tab\.Offset\((\d+)\)", src)
        assert offsets == [str(4 + 2 * index)], (name, p.name, offsets)
        flags = [f for f in re.findall(r"number_types\.(\w+Flags)", src)
                 if f != "UOffsetTFlags"]
        assert len(flags) == 1 and flags[0] in _FLAGS, (name, p.name, flags)
        kind, size = _FLAGS[flags[0]]
        spec.append((p.name, index, kind, size, p.default,
                     "._tab.Vector(" in src))
    return spec


def _union_name(options_type):
    for k, v in vars(s.BuiltinOptions).items():
        if v == options_type and not k.startswith("_"):
            return k
    raise KeyError(options_type)


def read_option(table, index, kind, size, default, is_vector):
    """Read one option field with our flatbuf.Table."""
    if is_vector:
        if kind == "i32":
            return list(table.int_vector(index))
        start, n = table.vector(index, size)
        fmt = "<%d%s" % (n, {1: "B", 4: "I", 8: "Q"}[size])
        return list(struct.unpack_from(fmt, table.fb.mv, start)) if n else []
    if kind == "bool":
        return table.u8(index, int(default)) != 0
    return getattr(table, kind)(index, default)


def official_option(value, kind, is_vector):
    if is_vector:
        return _ilist(value)
    if kind == "bool":
        return bool(value)
    return value


# ---------------------------------------------------------------------------
# Field-by-field comparison with the official object API.

@pytest.mark.parametrize("name", ALL)
def test_header(name):
    buf, ref, _, m = load(name)
    sg = ref.subgraphs[0]
    assert m.version == ref.version == 3
    assert m.num_subgraphs == len(ref.subgraphs)
    assert m.name == _str(sg.name)
    assert list(m.inputs) == _ilist(sg.inputs)
    assert list(m.outputs) == _ilist(sg.outputs)
    assert len(m.tensors) == len(sg.tensors)
    assert len(m.operators) == len(sg.operators)


@pytest.mark.parametrize("name", ALL)
def test_tensors(name):
    buf, ref, _, m = load(name)
    for k, (t, r) in enumerate(zip(m.tensors, ref.subgraphs[0].tensors)):
        what = "%s tensor %d" % (name, k)
        assert t.index == k
        assert t.name == _str(r.name), what
        assert list(t.shape) == _ilist(r.shape), what
        assert t.type == r.type, what
        assert t.buffer == r.buffer, what
        assert t.is_variable == bool(r.isVariable), what
        # Derived attributes follow the official enum and shape.
        type_name = [k2 for k2, v in vars(s.TensorType).items()
                     if v == r.type and not k2.startswith("_")][0]
        assert t.dtype == type_name.lower(), what
        assert t.size == int(np.prod(_ilist(r.shape), dtype=np.int64))
        assert t.nbytes == t.size * t.itemsize
        # Quantization: float32 scales bit for bit, int64 zero points.
        q = r.quantization
        scales = [] if q is None or q.scale is None else list(q.scale)
        zps = _ilist(None if q is None else q.zeroPoint)
        assert [_bits(x) for x in t.scales] == \
            [_bits(float(x)) for x in scales], what
        assert list(t.zero_points) == zps, what
        assert t.quantized_dimension == (0 if q is None
                                         else q.quantizedDimension), what
        assert t.scale == (float(scales[0]) if scales else 0.0)
        assert t.zero_point == (zps[0] if zps else 0)
        # Constant bytes: our (const_pos, const_len) slice of the model is
        # exactly the official buffer's data.
        b = ref.buffers[r.buffer]
        data = b"" if b.data is None else bytes(np.asarray(b.data, np.uint8))
        if b.offset > 1:
            data = buf[b.offset:b.offset + b.size]
        if r.buffer == 0 or not data:
            assert t.const_pos is None and not t.is_const, what
        else:
            assert t.is_const, what
            assert t.const_len == len(data), what
            assert buf[t.const_pos:t.const_pos + t.const_len] == data, what


@pytest.mark.parametrize("name", ALL)
def test_operators(name):
    _, ref, _, m = load(name)
    for k, (op, r) in enumerate(zip(m.operators,
                                    ref.subgraphs[0].operators)):
        what = "%s op %d" % (name, k)
        oc = ref.operatorCodes[r.opcodeIndex]
        code = max(oc.deprecatedBuiltinCode, oc.builtinCode)
        assert op.index == k
        assert op.code == code, what
        assert op.version == oc.version, what
        if code == s.BuiltinOperator.CUSTOM:
            assert op.custom_code == _str(oc.customCode), what
            assert op.name == op.custom_code
        else:
            assert op.custom_code is None, what
            assert op.name == schema.builtin_name(code), what
        assert list(op.inputs) == _ilist(r.inputs), what
        assert list(op.outputs) == _ilist(r.outputs), what
        assert op.options_type == r.builtinOptionsType, what
        assert (op.options is None) == (r.builtinOptions is None), what


@pytest.mark.parametrize("name", ALL)
def test_builtin_options(name):
    _, ref, raw, m = load(name)
    raw_sg = raw.Subgraphs(0)
    for k, (op, r) in enumerate(zip(m.operators,
                                    ref.subgraphs[0].operators)):
        if r.builtinOptions is None:
            continue
        # Same table as the official reader's union accessor.
        assert op.options.pos == raw_sg.Operators(k).BuiltinOptions().Pos
        for attr, index, kind, size, default, vec in \
                option_spec(r.builtinOptionsType):
            what = "%s op %d %s.%s" % (name, k,
                                       _union_name(r.builtinOptionsType),
                                       attr)
            want = official_option(getattr(r.builtinOptions, attr), kind,
                                   vec)
            got = read_option(op.options, index, kind, size, default, vec)
            if kind == "f32":
                assert _bits(got) == _bits(want), what
            else:
                assert got == want, what
            # The Operator helpers that kernels use agree as well.
            if not vec and kind == "i32":
                assert op.opt_int(index, default) == want, what
            elif not vec and kind == "i8":
                assert op.opt_byte(index, default) == want, what
            elif not vec and kind == "f32":
                assert _bits(op.opt_float(index, default)) == _bits(want)


def test_option_tables_used():
    """The option tables of the real models are all covered above."""
    if not os.path.isdir(SHARED):
        pytest.skip("../shared/models is absent")
    used = set()
    for name in ALL:
        try:
            _, ref, _, _ = load(name)
        except pytest.skip.Exception:
            continue
        used.update(_union_name(r.builtinOptionsType)
                    for r in ref.subgraphs[0].operators)
    if not used:
        pytest.skip("no models")
    for needed in ("Conv2DOptions", "DepthwiseConv2DOptions",
                   "FullyConnectedOptions", "Pool2DOptions",
                   "SoftmaxOptions", "ReshapeOptions", "AddOptions"):
        assert needed in used
    for u in used - {"NONE"}:
        assert option_spec(getattr(s.BuiltinOptions, u))


def test_schema_names_match_official_enums():
    """schema.builtin_name / type_name / type_size agree with the official
    BuiltinOperator and TensorType enums."""
    for k, v in vars(s.BuiltinOperator).items():
        if not k.startswith("_"):
            assert schema.builtin_name(v) == k, (k, v)
    sizes = {"FLOAT32": 4, "FLOAT16": 2, "INT32": 4, "UINT8": 1, "INT64": 8,
             "BOOL": 1, "INT16": 2, "INT8": 1, "FLOAT64": 8, "UINT32": 4,
             "UINT16": 2}
    for k, v in vars(s.TensorType).items():
        if not k.startswith("_"):
            assert schema.type_name(v) == k.lower(), (k, v)
            if k in sizes:
                assert schema.type_size(v) == sizes[k], k


def _repack(ref):
    b = flatbuffers.Builder(0)
    b.Finish(ref.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_extended_builtin_code():
    """Codes above 127 live only in builtin_code (deprecated_builtin_code
    then holds PLACEHOLDER_FOR_GREATER_OP_CODES = 127): the max rule picks
    the real code; a model packed by the official builder also parses."""
    _, ref, _, _ = load("digits")
    ref = s.ModelT.InitFromPackedBuf(_repack(ref), 0)  # private copy
    oc = ref.operatorCodes[0]
    oc.deprecatedBuiltinCode = 127
    oc.builtinCode = s.BuiltinOperator.STABLEHLO_ADD
    m = Model(_repack(ref))
    ops = [op for op, r in zip(m.operators, ref.subgraphs[0].operators)
           if r.opcodeIndex == 0]
    assert ops
    for op in ops:
        assert op.code == s.BuiltinOperator.STABLEHLO_ADD
        assert op.name == "STABLEHLO_ADD"


def test_buffer_stored_after_flatbuffer():
    """Buffer.offset / Buffer.size (schema.fbs: data appended after the
    FlatBuffer, offset > 1) give the same constant bytes."""
    _, ref0, _, m0 = load("digits")
    ref = s.ModelT.InitFromPackedBuf(_repack(ref0), 0)  # private copy
    t = next(t for t in m0.tensors if t.is_const and t.const_len > 16)
    data = bytes(np.asarray(ref.buffers[t.buffer].data, np.uint8))
    b = ref.buffers[t.buffer]
    b.data, b.offset, b.size = None, 1 << 40, len(data)
    head = _repack(ref)
    pos = (len(head) + 15) & ~15
    b.offset = pos
    head = _repack(ref)
    assert (len(head) + 15) & ~15 == pos  # same layout, only the value
    m = Model(head + bytes(pos - len(head)) + data)
    t2 = m.tensors[t.index]
    assert (t2.const_pos, t2.const_len) == (pos, len(data))
    assert [x.shape for x in m.tensors] == [x.shape for x in m0.tensors]
    # A size that runs past the end of the file is refused.
    with pytest.raises(FormatError, match="outside"):
        Model(head + bytes(pos - len(head)) + data[:-1])


# ---------------------------------------------------------------------------
# The same reader from an odd address and on the MicroPython unix port.

# Runs under CPython and MicroPython: a JSON-able digest of everything the
# runtime reads. Floats are compared as float32 bit patterns.
DIGEST_SRC = r'''
import struct

def _fbits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]

def read_opt(tb, index, kind, size, default, vec):
    if vec:
        if kind == "i32":
            return list(tb.int_vector(index))
        start, n = tb.vector(index, size)
        rd = {1: tb.fb.u8, 4: tb.fb.u32, 8: tb.fb.u64}[size]
        return [rd(start + size * i) for i in range(n)]
    if kind == "bool":
        return int(tb.u8(index, default))
    v = getattr(tb, kind)(index, default)
    return _fbits(v) if kind == "f32" else v

def digest(m, specs):
    ts = []
    for t in m.tensors:
        ts.append([t.name, list(t.shape), t.type, t.buffer,
                   [_fbits(x) for x in t.scales], list(t.zero_points),
                   t.quantized_dimension, int(t.is_variable),
                   t.const_pos, t.const_len])
    ops = []
    for op in m.operators:
        opts = None
        if op.options is not None:
            opts = [op.options.pos] + [read_opt(op.options, *f)
                                       for f in specs[str(op.options_type)]]
        ops.append([op.code, op.version, op.custom_code, list(op.inputs),
                    list(op.outputs), op.options_type, opts])
    return [m.version, m.num_subgraphs, m.name, list(m.inputs),
            list(m.outputs), ts, ops]
'''

_ns = {}
exec(DIGEST_SRC, _ns)


def specs_for(m):
    """{options_type: [(index, kind, size, default, is_vector)]} (JSON)."""
    out = {}
    for op in m.operators:
        if op.options is not None:
            out[str(op.options_type)] = [
                [i, k, sz, int(d) if k == "bool" else d, v]
                for _, i, k, sz, d, v in option_spec(op.options_type)]
    return out


def cpython_digest(m, specs):
    return json.loads(json.dumps(_ns["digest"](m, specs)))


@pytest.mark.parametrize("name", ALL)
def test_odd_address(name):
    """A memoryview starting at an odd address parses identically."""
    buf, _, _, m = load(name)
    ba = bytearray(len(buf) + 1)
    ba[1:] = buf
    mv = memoryview(ba)[1:]
    m2 = Model(mv)
    specs = specs_for(m)
    assert cpython_digest(m2, specs) == cpython_digest(m, specs)
    for t in m2.tensors:
        if t.is_const:
            assert bytes(mv[t.const_pos:t.const_pos + t.const_len]) == \
                buf[t.const_pos:t.const_pos + t.const_len]


DEVICE_MODELS = ["person_detect/person_detect.tflite",
                 "micro_speech_quantized/micro_speech_quantized.tflite"]


def test_micropython_sees_the_same(tmp_path):
    """The reader on the MicroPython unix port gives the CPython digest,
    from bytes and from an odd-address memoryview."""
    paths = [shared(n) for n in DEVICE_MODELS]
    want, specs = [], []
    for n in DEVICE_MODELS:
        m = load(n)[3]
        specs.append(specs_for(m))
        want.append(cpython_digest(m, specs[-1]))
    code = DIGEST_SRC + r'''
import json
from tflm.model import Model
for path, specs in zip(%r, json.loads(%r)):
    with open(path, "rb") as f:
        buf = f.read()
    print(json.dumps(digest(Model(buf), specs)))
    ba = bytearray(len(buf) + 1)
    ba[1:] = buf
    print(json.dumps(digest(Model(memoryview(ba)[1:]), specs)))
''' % (paths, json.dumps(specs))
    lines = run_mp(code, tmp_path).strip().splitlines()
    assert len(lines) == 2 * len(paths)
    for k, w in enumerate(want):
        assert w[5] and w[6]
        assert json.loads(lines[2 * k]) == w, DEVICE_MODELS[k]
        assert json.loads(lines[2 * k + 1]) == w, DEVICE_MODELS[k]


def test_file_identifier_names_a_non_model():
    """A file that is not a TFLite model (here the README) is named as
    such, by its identifier, not by an offset far outside it (issue 17);
    a model whose identifier bytes are changed is refused the same way."""
    with open(os.path.join(ROOT, "README.md"), "rb") as f:
        text = f.read()
    with pytest.raises(FormatError, match="not a TFLite model \\(no file "
                       "identifier 'TFL3' at offset 4, found b'lm f'\\): "
                       "root table at offset"):
        Model(text)
    # The identifier is optional (TFLM runs a valid model without it):
    # only a model that is also broken is refused.
    with open(shared("hello_world_int8", "hello_world_int8.tflite"),
              "rb") as f:
        good = bytearray(f.read())
    good[4:8] = b"TFL2"
    Model(bytes(good))
    good[0:4] = b"\xff\xff\xff\x7f"  # root offset outside the file
    with pytest.raises(FormatError, match="found b'TFL2'"):
        Model(bytes(good))
