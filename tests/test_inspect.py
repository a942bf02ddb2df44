"""`python -m host_tools inspect`: the --json dump, read by tflm's own
reader, equals the official flatbuffers object API (schema_py_generated
ModelT) field by field on every shared model; the summary reports the
operators, MACs, tensors, buffers, support, arena and boards.
"""

import glob
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, SHARED
from host_tools import inspect_tool as insp
from host_tools import macs, opgen, plan_tool
from tflite_micro.tensorflow.lite.micro.python import \
    schema_py_generated as s


def model_paths():
    out = sorted(p for p in glob.glob(os.path.join(SHARED, "**", "*.tflite"),
                                      recursive=True)
                 if os.sep + "malformed" + os.sep not in p)
    out += sorted(glob.glob(os.path.join(ROOT, "host_tools", "data",
                                         "*.tflite")))
    return out


PATHS = model_paths()


def _f32(x):
    return struct.pack("<f", x)


def _same_scalar(f, ours, ref):
    if f.fmt == "f32":
        return _f32(ours) == _f32(float(ref))
    if f.fmt == "f64":
        return struct.pack("<d", ours) == struct.pack("<d", float(ref))
    if f.fmt == "bool":
        return ours is bool(ref)
    return ours == int(ref)


def compare(d, obj, cls, where, counts):
    """Assert dump dict d (names=False) equals object-API object obj."""
    fields = insp.schema()[cls]
    # every field of the object API is described (none forgotten)
    assert {f.attr for f in fields} == set(vars(obj)), (where, cls)
    for f in fields:
        ref = getattr(obj, f.attr)
        w = "%s.%s" % (where, f.name)
        counts[0] += 1
        if f.name not in d:
            if f.kind == "scalar":
                assert _same_scalar(f, f.default, ref), w
            elif f.kind == "union":
                assert ref is None or getattr(obj, f.attr + "Type") == 0, w
            else:
                assert ref is None, w
            continue
        ours = d[f.name]
        if f.kind == "scalar":
            assert _same_scalar(f, ours, ref), (w, ours, ref)
        elif f.kind == "string":
            try:
                want = ref.decode("utf-8")
            except UnicodeDecodeError:
                want = "?" * len(ref)
            assert ours == want, w
        elif f.kind == "vector":
            ref = [] if ref is None else list(np.asarray(ref).reshape(-1))
            assert len(ours) == len(ref), w
            if f.fmt == "f32":
                assert [_f32(x) for x in ours] == \
                    [_f32(float(x)) for x in ref], w
            else:
                assert ours == [bool(x) if f.fmt == "bool" else int(x)
                                for x in ref], w
        elif f.kind == "table":
            compare(ours, ref, f.ref, w, counts)
        elif f.kind == "tables":
            assert len(ours) == len(ref), w
            for k, (a, b) in enumerate(zip(ours, ref)):
                compare(a, b, f.ref, "%s[%d]" % (w, k), counts)
        else:  # union
            member = insp.enum(f.ref)[getattr(obj, f.attr + "Type")]
            compare(ours, ref, member, w, counts)


@pytest.mark.parametrize("path", PATHS,
                         ids=[os.path.basename(p) for p in PATHS])
def test_json_dump_equals_official_object_api(path):
    raw = open(path, "rb").read()
    ref = s.ModelT.InitFromBuf(bytearray(raw), s.Model.GetRootAs(
        bytearray(raw), 0)._tab.Pos)
    d = insp.dump(raw, names=False)
    counts = [0]
    compare(d, ref, "Model", "model", counts)
    assert counts[0] > 50
    # With enum names the values map back to the same numbers.
    named = insp.dump(raw, names=True)
    assert _unname(named, "Model") == d


def _unname(d, cls):
    """dump(names=True) -> names=False, through the enum tables."""
    out = {}
    for f in insp.schema()[cls]:
        if f.name not in d:
            continue
        v = d[f.name]
        if f.kind == "scalar" and isinstance(v, str):
            e = insp.ENUM_FIELDS.get((cls, f.name)) or \
                insp.ENUM_FIELDS.get(("*", f.name))
            if e is None:  # a union type
                e = next(g.ref for g in insp.schema()[cls]
                         if g.name + "_type" == f.name)
            v = {n: k for k, n in insp.enum(e).items()}[v]
        elif f.kind == "table":
            v = _unname(v, f.ref)
        elif f.kind == "tables":
            v = [_unname(x, f.ref) for x in v]
        elif f.kind == "union":
            t = d[f.name + "_type"]
            v = _unname(v, t)
        out[f.name] = v
    return out


def test_schema_description_is_complete():
    sch = insp.schema()
    assert len(sch) > 150
    kinds = {f.kind for fs in sch.values() for f in fs}
    assert kinds == {"scalar", "vector", "string", "table", "tables",
                     "union"}
    op = {f.name: f for f in sch["Operator"]}
    assert op["builtin_options"].ref == "BuiltinOptions"
    assert op["builtin_options_type"].slot == 3
    assert op["large_custom_options_offset"].fmt == "u64"
    assert op["debug_metadata_index"].default == -1
    conv = {f.name: f for f in sch["Conv2DOptions"]}
    assert conv["stride_w"].slot == 1 and conv["stride_w"].fmt == "i32"


def test_dump_of_a_built_model_has_the_values_written():
    raw = opgen.single_op(
        "CONV_2D", [opgen.Tensor([1, 5, 5, 2], scale=0.5, zero_point=-3),
                    opgen.Tensor([3, 3, 3, 2], scale=[0.1, 0.2, 0.3],
                                 data=np.ones((3, 3, 3, 2), np.int8)),
                    opgen.Tensor([3], "int32", scale=[.05, .1, .15],
                                 data=np.zeros(3, np.int32))],
        [opgen.Tensor([1, 3, 3, 3], scale=1.0)],
        {"padding": "VALID", "stride_w": 2, "activation": "RELU6"})
    d = insp.dump(raw)
    op = d["subgraphs"][0]["operators"][0]
    assert d["operator_codes"][0]["builtin_code"] == "CONV_2D"
    assert op["builtin_options_type"] == "Conv2DOptions"
    assert op["builtin_options"]["padding"] == "VALID"
    assert op["builtin_options"]["stride_w"] == 2
    assert op["builtin_options"]["fused_activation_function"] == "RELU6"
    t = d["subgraphs"][0]["tensors"][1]
    assert t["type"] == "INT8" and t["shape"] == [3, 3, 3, 2]
    assert d["buffers"][t["buffer"]]["data"] == [1] * 54
    e = insp.dump(raw, max_vector=10)
    assert e["buffers"][t["buffer"]]["data"]["length"] == 54
    off = e["buffers"][t["buffer"]]["data"]["offset"]
    assert raw[off:off + 54] == bytes([1] * 54) and off % 16 == 0


def _cli(*args):
    p = subprocess.run([sys.executable, "-m", "host_tools", "inspect"]
                       + list(args), capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_summary_hello_world():
    path = os.path.join(SHARED, "hello_world_int8", "hello_world_int8.tflite")
    if not os.path.exists(path):
        pytest.skip("shared model missing")
    out = _cli(path)
    assert "3 operators" in out and "FULLY_CONNECTED" in out
    assert "total MACs: %d" % macs.total(path) in out
    assert "planned arena: %d bytes" % plan_tool.compute(path)["arena"] \
        in out
    assert "supported: every operator" in out
    assert "fused_activation_function=RELU" in out
    assert "flash @" in out and "arena @" in out and "input" in out
    assert "Constant buffers" in out and "Boards" in out and "pico" in out
    dumped = json.loads(_cli(path, "--json"))
    assert dumped == insp.dump(open(path, "rb").read())


def test_summary_every_model():
    for path in PATHS:
        lines = insp.summary(open(path, "rb").read(), path)
        assert any(x.startswith("Operators") for x in lines), path


def test_summary_custom_op_and_external_buffers():
    from flatbuffers import flexbuffers as fx
    from test_external_buffers import externalize
    opts = fx.Dumps({"alpha": 2, "mode": "fast"})
    m = opgen.Model()
    x = opgen.Tensor([1, 4], scale=0.5)
    y = opgen.Tensor([1, 4], scale=0.5)
    m.add_op("ADD", [x, opgen.Tensor([1, 4], scale=0.5,
                                     data=np.arange(4, dtype=np.int8))], [y])
    m.add_op("CUSTOM:MyOp", [y], [opgen.Tensor([1, 4])],
             custom_options=opts)
    raw, where = externalize(m.build())
    text = "\n".join(insp.summary(raw))
    assert "MyOp *" in text
    assert "unsupported operators: op 1 (MyOp)" in text
    assert '"alpha": 2' in text and '"mode": "fast"' in text
    assert "(after the flatbuffer)" in text
    (k, pos), = where.items()
    assert "flash @%d" % pos in text


def test_malformed_models_give_clean_errors():
    """A malformed file gives a TFLMError from the reader, never another
    exception (the dump follows only checked offsets)."""
    from tflm.errors import TFLMError
    paths = glob.glob(os.path.join(SHARED, "malformed", "*.tflite"))
    for path in paths:
        raw = open(path, "rb").read()
        try:
            insp.dump(raw)
            insp.summary(raw)
        except TFLMError:
            pass


def test_summary_operator_without_the_tensors_its_macs_read():
    """A FULLY_CONNECTED without outputs, a CONV_2D with a rank-1 filter:
    tflm's reader accepts both (the kernels reject them at prepare), so the
    summary lists them with no MACs instead of raising IndexError from
    macs.op_macs (regression)."""
    T = opgen.Tensor
    m = opgen.Model()
    x = T([1, 4], scale=0.5)
    m.add_op("FULLY_CONNECTED", [x, T([3, 4], scale=0.1,
                                      data=np.ones((3, 4), np.int8))],
             [T([1, 3], scale=0.5)])
    m.add_op("CONV_2D", [T([1, 2, 2, 1], scale=0.5),
                         T([4], scale=0.1, data=np.ones(4, np.int8))],
             [T([1, 2, 2, 1], scale=0.5)])
    mt = s.ModelT.InitFromPackedBuf(bytearray(m.build()), 0)
    mt.subgraphs[0].operators[0].outputs = []
    b = __import__("flatbuffers").Builder(1024)
    b.Finish(mt.Pack(b), file_identifier=b"TFL3")
    lines = insp.summary(bytes(b.Output()))
    ops = [x for x in lines if x.strip().startswith(("0 FULLY", "1 CONV"))]
    assert len(ops) == 2 and all(" - " in x for x in ops), ops
