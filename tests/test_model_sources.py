"""Where a model can come from: a file read into RAM, or a bytes constant
of a module compiled with mpy-cross (how a frozen model is held)."""

import json
import subprocess

import numpy as np

from conftest import run_mp, shared
from host_tools.oracle import Reference
from host_tools.romfs import mpy_cross_cmd


def test_file_on_normal_filesystem_is_read_into_ram(tmp_path):
    path = shared("micro_speech_quantized", "micro_speech_quantized.tflite")
    out = run_mp("""
import json, tflm
it = tflm.Interpreter(%r)
print(json.dumps({"in_ram": it.model_in_ram}))
""" % path, tmp_path)
    assert json.loads(out.splitlines()[-1]) == {"in_ram": True}


def test_model_as_bytes_constant_of_compiled_module(tmp_path):
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    raw = open(path, "rb").read()
    src = tmp_path / "hw_model.py"
    src.write_text("MODEL = %r\n" % raw)
    arch = run_mp("import sys\nprint(sys.implementation._mpy >> 10)",
                  tmp_path).split()[-1]
    archs = {"1": "x86", "2": "x64"}
    subprocess.run(mpy_cross_cmd() + ["-march=" + archs[arch], str(src)],
                   check=True, timeout=60)
    assert (tmp_path / "hw_model.mpy").exists()
    src.unlink()
    xs = [-128, -40, 0, 77, 127]
    out = run_mp("""
import json, sys, tflm
sys.path.insert(0, %r)
import hw_model
assert hw_model.__file__.endswith('.mpy')
it = tflm.Interpreter(hw_model.MODEL)
res = []
for x in %r:
    it.input(0).set([x])
    it.invoke()
    res.append(list(it.output(0).get()))
print(json.dumps({"in_ram": it.model_in_ram, "out": res}))
""" % (str(tmp_path), xs), tmp_path)
    got = json.loads(out.splitlines()[-1])
    assert got["in_ram"] is False  # the bytes object itself, not a copy
    ref = Reference(raw)
    want = [ref.run([np.int8(x)])[0].ravel().tolist() for x in xs]
    assert got["out"] == want
