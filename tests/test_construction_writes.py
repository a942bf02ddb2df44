"""The sizing pass binds every activation and scratch buffer to the
model's own bytes (from a 16-byte aligned one, as the arena's head) where
they are as large as the largest activation (allocator._build), so that
it needs no buffer of its own: that holds only while no built-in kernel's
prepare writes an activation or a scratch buffer then, and a Python
custom op (whose prepare may) gets a buffer of its own. Checked here on
every operator the conformance generators make (their largest case),
the shared models and a custom op that writes its output, each held in a
bytearray padded so that the model's bytes are the sizing buffer, from
an odd address: construction leaves them as they were, and
plans the same arena as with a throw-away buffer (a kernel that checks
an activation's alignment in prepare: signal_util.aligned, bias_words)."""

import os

from conftest import PKG, SHARED, device_script
from host_tools import device
from host_tools.conformance import cases

SCRIPT = device_script("construction_writes.py")


def _models(tmp_path):
    from host_tools import opgen
    t = opgen.Tensor
    fill = tmp_path / "fill7.tflite"
    fill.write_bytes(opgen.single_op("CUSTOM:Fill7", [t([64])], [t([64])]))
    paths = [str(fill)]
    for op, gen in sorted(cases.discover().items()):
        for i in (3,):
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
    # every model but the custom op's on its own bytes
    other = [r[0] for r in built if r[3] != "model"]
    assert other == [paths[0]], other[:5]
    differ = [r[0] for r in built if r[4] != "equal"]
    assert not differ, differ
