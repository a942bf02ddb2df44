"""`python -m host_tools plan`: lists every activation with the board's
own plan, and draws it as a valid PNG."""

import subprocess
import sys

from conftest import ROOT, device_script, shared
from host_tools import plan_tool
from host_tools.demo import MODEL as DEMO
from host_tools.png import read_size
from tflm import planner
from tflm.model import Model


def activations(path):
    with open(path, "rb") as f:
        m = Model(f.read())
    root = planner.alias_roots(m)
    return m, [i for i in planner.lifetimes(m)
               if not m.tensors[root[i]].is_const]


def run_cli(*args):
    proc = subprocess.run([sys.executable, "-m", "host_tools", "plan"]
                          + list(args), capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_lists_every_activation_with_the_planner_offsets():
    path = shared("tiny_kws_ref_int8", "kws_ref_model.tflite")
    out = run_cli(path)
    m, acts = activations(path)
    arena, bufs, root = planner.plan_model(m)
    rows = {}
    for line in out.splitlines()[1:-1]:
        f = line.split()
        rows[int(f[0])] = f
    assert sorted(rows) == sorted(acts)
    for i in acts:
        t = m.tensors[i]
        b = bufs[root[i]]
        # columns: index name dtype shape bytes offset first last [alias]
        assert int(rows[i][4]) == t.nbytes
        assert int(rows[i][5]) == b.offset
    # the flatten RESHAPE output shares its input's bytes
    aliases = [f for f in rows.values() if len(f) == 9]
    assert aliases and all(f[8] == "t%d" % root[int(f[0])]
                           for f in aliases)
    assert "arena: %d bytes" % arena in out.splitlines()[-1]
    assert arena == 16000  # TFLM's head for this model


def test_lifetimes_and_no_overlap():
    """Buffers alive together share no byte, but an input linked to its
    operator's output (planner.overlap) where it starts its least
    distance or more after it; person_detect's plan is then smaller than
    any without shared bytes (peak_live)."""
    plan = plan_tool.compute(shared("person_detect", "person_detect.tflite"))
    bufs = plan["buffers"]
    at = dict((b["root"], b) for b in bufs)
    shared_bytes = 0
    for a in bufs:
        assert a["offset"] + a["size"] <= plan["arena"]
        assert a["offset"] % planner.ALIGN == 0
        for b in bufs:
            if a is b or a["last"] < b["first"] or b["last"] < a["first"]:
                continue
            if (a["offset"] + a["size"] <= b["offset"]
                    or b["offset"] + b["size"] <= a["offset"]):
                continue
            x, y = (a, b) if a["link"] and at[a["link"][0]] is b else (b, a)
            k = x["link"]  # x: the input, linked to y
            assert k is not None and at[k[0]] is y, (x, y)
            assert x["offset"] - y["offset"] >= k[1]
            shared_bytes += 1
    assert shared_bytes
    assert plan["arena"] < plan["peak_live"] <= plan["no_reuse"]


def test_png(tmp_path):
    png = tmp_path / "plan.png"
    out = run_cli(DEMO, "--png", str(png))
    assert "wrote" in out
    data = png.read_bytes()
    w, h = read_size(data)
    assert 400 <= w <= 2000 and 300 <= h <= 2000
    assert 1000 < len(data) < 500000
    # the IEND chunk closes the file; zlib data decompresses to h rows
    import zlib
    assert data.endswith(b"IEND\xaeB`\x82")
    idat = data[data.index(b"IDAT") + 4:data.index(b"IEND") - 8]
    assert len(zlib.decompress(idat)) == h * (1 + 3 * w)


BOARD_PLAN = device_script("plan_tool.py")


def test_board_plans_equal_host_plans(tmp_path):
    """MicroPython's sort is not stable: the planner must not depend on
    tie order, or the plan tool would not show what the board does."""
    from conftest import SHARED, run_mp
    import glob
    import json
    import os
    paths = sorted(glob.glob(os.path.join(SHARED, "*", "*.tflite")))
    paths = [p for p in paths if os.sep + "malformed" + os.sep not in p]
    paths.append(DEMO)
    out = json.loads(run_mp("PATHS = %r\n" % (paths,) + BOARD_PLAN,
                                   tmp_path).splitlines()[-1])
    for p in paths:
        plan = plan_tool.compute(p)
        want = [plan["arena"], sorted([b["root"], b["offset"]]
                                      for b in plan["buffers"])]
        assert out[p] == want, p


def test_table_shows_the_overlaps_the_plan_uses():
    """"tN +D" marks an input whose bytes its output shares in the plan:
    person_detect's; the keyword spotter has links too, but its plan
    without them is no larger, so it keeps that one and shows none."""
    import re
    kws = plan_tool.compute(shared("tiny_kws_ref_int8",
                                   "kws_ref_model.tflite"))
    assert any(b["link"] for b in kws["buffers"])
    mark = re.compile(r" t\d+ \+\d+$")
    assert not [ln for ln in plan_tool.table(kws) if mark.search(ln)]
    pd = plan_tool.compute(shared("person_detect", "person_detect.tflite"))
    assert [ln for ln in plan_tool.table(pd) if mark.search(ln)]
