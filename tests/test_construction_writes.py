"""The sizing pass binds every activation and scratch buffer to the
model's own bytes where they are as large as the largest activation
(allocator._build), so that it needs no buffer of its own: that holds
only while no kernel's prepare writes an activation or a scratch buffer
then. Checked here on every operator the conformance generators make
(two cases each) and on the shared models, each held in a bytearray
padded so that the model's bytes are the sizing buffer: construction
leaves them as they were."""

import os

from conftest import PKG, SHARED, device_script
from host_tools import device
from host_tools.conformance import cases

SCRIPT = device_script("construction_writes.py")


def _models(tmp_path):
    paths = []
    for op, gen in sorted(cases.discover().items()):
        for i in range(2):
            try:
                raw, _ = cases.make_case(gen, 7, i, cases.size_of(i))
            except Exception:  # noqa: B902 - a generator's own limits
                continue
            p = tmp_path / ("%s_%d.tflite" % (op.replace("@", "_"), i))
            p.write_bytes(raw)
            paths.append(str(p))
    if os.path.isdir(SHARED):
        for d in sorted(os.listdir(SHARED)):
            if d == "malformed" or not os.path.isdir(os.path.join(SHARED,
                                                                  d)):
                continue
            for fn in sorted(os.listdir(os.path.join(SHARED, d))):
                if fn.endswith(".tflite"):
                    paths.append(os.path.join(SHARED, d, fn))
    return paths


def test_sizing_pass_leaves_the_model_bytes(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(SCRIPT)
    paths = _models(tmp_path)
    out = []
    for k in range(0, len(paths), 40):  # several runs: argv stays short
        proc = device.run_script(str(script), [PKG] + paths[k:k + 40],
                                 timeout=600, heap="64M")
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
        out += proc.stdout.splitlines()
    rows = [line.split() for line in out]
    assert len(rows) == len(paths), out[-5:]
    built = [r for r in rows if r[1] == "ok"]
    changed = [r[0] for r in built if r[2] != "same"]
    assert not changed, changed
    # the check means something: most models build, on their own bytes
    assert len(built) >= 0.9 * len(rows), [r for r in rows if r[1] != "ok"]
    on_model = [r for r in built if r[3] == "model"]
    assert len(on_model) == len(built), [r for r in built
                                         if r[3] != "model"][:5]
