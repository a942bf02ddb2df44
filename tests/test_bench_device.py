"""host_tools/bench_device.py with the unix port as the target
(tests/unix_target.py mounts the ROMFS image): every model runs through
the device driver, and the summary adds up
(its instruction figures mean something only on an emulated armv6m target
with one instruction per nanosecond; see bench/device.md)."""

import json
import os
import subprocess
import sys

from conftest import ROOT, run_mp, shared, unix_arch, unix_target_cmd
from host_tools import bench_device, macs


def test_bench_device_on_the_unix_port(tmp_path):
    shared("micro_speech_quantized", "micro_speech_quantized.tflite")
    models = [m for m in bench_device.MODELS
              if m[0] in ("micro_speech_quantized", "tiny_ad01_int8")]
    recs = bench_device.run(unix_target_cmd(), models, unix_arch())
    assert [r["name"] for r in recs] == [n for n, _ in models]
    rows = bench_device.summarize(recs, models, 1000.0)
    for (name, rel), r, rec in zip(models, rows, recs):
        path = os.path.join(bench_device.SHARED, rel)
        assert r["macs"] == macs.total(path)
        assert sum(k["macs"] for k in r["ops"].values()) == r["macs"]
        assert abs(sum(k["share"] for k in r["ops"].values()) - 1) < 1e-9
        assert r["instructions"] == rec["us"] * 1000
        # the same output bytes as a plain run on the unix port (zero
        # inputs: the arena's initial bytes)
        out = json.loads(run_mp(
            "import tflm, json\nit = tflm.Interpreter(%r)\nit.invoke()\n"
            "print(json.dumps(list(bytes(it.output(0).data))))" % path,
            tmp_path).strip().splitlines()[-1])
        assert r["output"] == out
    md = bench_device.markdown(rows, "unix port", "abc123")
    assert "| micro_speech_quantized | 336,000 |" in md
    assert "DEPTHWISE_CONV_2D" in md


def test_bench_device_needs_a_target():
    env = dict(os.environ)
    env.pop("TFLM_ARMV6M_CMD", None)
    env.pop("TFLM_ARMV7EMSP_CMD", None)
    proc = subprocess.run([sys.executable, "-m", "host_tools",
                           "bench-device"], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 2 and "needs a target" in proc.stderr


def test_bench_device_bad_model_or_target_is_one_line(tmp_path):
    """A misspelt model is refused before anything runs (nothing is
    overwritten); a target that prints nothing is one error line."""
    def bench(*argv):
        return subprocess.run([sys.executable, "-m", "host_tools",
                               "bench-device", "--out", str(tmp_path)]
                              + list(argv), cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
    proc = bench("--cmd", "true {image} {script}", "--models", "person_detct")
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
    proc = bench("--cmd", "true {image} {script}", "--models",
                 "micro_speech_quantized")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("error: the target printed no result "
                                  "for micro_speech_quantized")
    assert not os.listdir(str(tmp_path))


def test_device_page_has_every_arch():
    """device.md: armv6m's table (device.json's top level), then each
    other arch's, each with its own commit, target and goals; the
    generated float32 AD01 has AD01's MACs and fits a 1 MiB ROMFS with
    the package."""
    row = {"name": "m", "macs": 1000, "instructions": 4000.0,
           "per_mac": 4.0, "ops": {"ADD": {"instructions": 4000.0,
                                           "macs": 0, "per_mac": None,
                                           "share": 1.0}}, "output": []}
    dev = {"commit": "aaa", "target": "an M0", "per_us": 1000.0,
           "models": [row],
           "arches": {"armv7emsp": {"commit": "bbb", "target": "an M4F",
                                    "per_us": 1000.0,
                                    "models": [dict(row, per_mac=2.0)]}}}
    md = bench_device.page(dev)
    assert md.index("## armv6m") < md.index("## armv7emsp")
    assert "commit aaa on: an M0" in md and "commit bbb on: an M4F" in md
    assert "| m | 1,000 | 0.0 M | 4.0 | ADD - (100%) |" in md
    assert "| m | 1,000 | 0.0 M | 2.0 | ADD - (100%) |" in md
    assert "Issue 36's goal" in md and "Issue 16's goals" in md
    path = bench_device.model_file("gen:ad01_float32")
    assert macs.total(path) == macs.total(os.path.join(
        bench_device.SHARED, "tiny_ad01_int8/ad01_int8.tflite")) == 264192
    assert os.path.getsize(path) < 450 * 1024
