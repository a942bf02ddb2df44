"""Interpreter.invoke(profile=True) / profile(): per-operator times on the
unix port, without allocating and without changing any output byte."""

import json

import numpy as np

from conftest import device_script, run_mp, shared
from host_tools import inputs
from host_tools.cli_run import model_io
from host_tools.demo import MODEL as DEMO
from host_tools.oracle import Reference
from tflm.kernels import ALIAS_CODES
from tflm.model import Model

SCRIPT = device_script("profiler.py")


def run(model, tmp_path, data):
    inp = tmp_path / "in.bin"
    inp.write_bytes(data)
    out = run_mp("MODEL = %r\nINP = %r\n" % (model, str(inp)) + SCRIPT,
                 tmp_path)
    lines = out.strip().splitlines()
    return json.loads(lines[-1]), "\n".join(lines[lines.index("TABLE"):-1])


def check(model, tmp_path):
    ins, _ = model_io(model)
    data = inputs.random_input(ins[0], np.random.default_rng(3))
    res, table = run(model, tmp_path, data)
    with open(model, "rb") as f:
        m = Model(f.read())
    ran = [op for op in m.operators if op.code not in ALIAS_CODES]
    rows = res["rows"]
    # one entry per operator that runs, in order, with the right name
    assert [r[0] for r in rows] == [op.index for op in ran]
    assert [r[1] for r in rows] == [op.name for op in ran]
    assert all(r[2] >= 0 for r in rows)
    assert sum(r[2] for r in rows) <= res["total"]
    assert res["early"] == "InvokeError"
    # profiling changes no output byte; both are TFLM's bytes
    want = Reference(model).run([np.frombuffer(data, np.int8)])[0]
    assert bytes(res["plain"]) == want.tobytes()
    assert res["profiled"] == res["plain"]
    # the table has a row per op and the total
    for i, name, _ in rows:
        assert any(ln.split()[:2] == [str(i), name]
                   for ln in table.splitlines())
    assert "total" in table.splitlines()[-1]
    return rows


def test_profile_kws(tmp_path):
    rows = check(shared("tiny_kws_ref_int8", "kws_ref_model.tflite"),
                 tmp_path)
    names = [r[1] for r in rows]
    assert names.count("CONV_2D") == 5 and "RESHAPE" not in names
    # the convolutions dominate this model
    conv = sum(r[2] for r in rows if r[1].endswith("CONV_2D"))
    assert conv > 0.5 * sum(r[2] for r in rows)


def test_profile_demo(tmp_path):
    check(DEMO, tmp_path)
