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
