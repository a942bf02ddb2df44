"""tflm.Interpreter(model, cores=2) (tflm/cores.py): CONV_2D and
DEPTHWISE_CONV_2D split by output rows between two threads give TFLM's
outputs, the same as cores=1; invoke() allocates nothing; an exception
on the second core is an InvokeError; no _thread is a CoresError.

Random single-operator models (test_kernels_conv's generator: padding,
strides, dilation, groups, depth multipliers, 1x1 and 3x3 paths), each
split whatever its size (cores.MIN_MACS = 0), run by TFLM (the oracle)
and in the MicroPython unix port; and the demo CNN, plain and compiled
(host_tools compile); and a compiled CONV_2D whose output overlaps its
input in the arena (planner.overlap), which is not split. One
MicroPython process for all."""

import os
import subprocess

import numpy as np
import pytest

from conftest import ROOT, device_script, unix_arch
from host_tools import unix_port

pytest.importorskip("tflite_micro")
from test_kernels_conv import (CONV, DW, build_model, random_case,  # noqa
                               run_tflm)

DEMO = os.path.join(ROOT, "host_tools", "data", "digits_cnn_int8.tflite")
# (B, H, W, KH, KW, sh, sw, dh, dw, padding): each split path
GEOS = [(CONV, (1, 6, 5, 1, 1, 1, 1, 1, 1, 1)),   # 1x1: one row of pixels
        (CONV, (1, 7, 6, 1, 1, 2, 2, 1, 1, 1)),   # 1x1 strided: rows
        (CONV, (1, 9, 7, 3, 3, 1, 1, 1, 1, 0)),   # padding: d = m - 1
        (CONV, (1, 9, 8, 3, 2, 2, 1, 2, 1, 0)),   # stride, dilation
        (CONV, (1, 5, 5, 5, 5, 1, 1, 1, 1, 0)),   # padding 2
        (DW, (1, 9, 7, 3, 3, 1, 1, 1, 1, 0)),     # dw3
        (DW, (1, 10, 9, 3, 3, 2, 2, 1, 1, 0)),
        (DW, (1, 8, 8, 4, 3, 1, 2, 2, 1, 0)),     # any, dilation
        (DW, (1, 70, 60, 3, 3, 2, 1, 1, 1, 0))]   # row tiles


def test_cores2_equals_tflm_and_cores1(tmp_path):
    rng = np.random.default_rng(36)
    cases = []
    for kind, geo in GEOS * 2:
        c = random_case(rng, kind, geo)
        while c["bias"] is None:  # (TFLM's depthwise needs a bias)
            c = random_case(rng, kind, geo)
        cases.append(c)
    for kind in (CONV, DW) * 6:
        c = random_case(rng, kind)
        while c["bias"] is None:
            c = random_case(rng, kind)
        cases.append(c)
    lines = []
    for k, c in enumerate(cases):
        mb = build_model(c)
        c["ref"] = run_tflm(mb, c["x"])
        for what, data in (("m%d.tflite", mb), ("i%d.bin", c["x"].tobytes())):
            (tmp_path / (what % k)).write_bytes(data)
        lines.append("c%d %s %s %s" % (k, tmp_path / ("m%d.tflite" % k),
                                       tmp_path / ("i%d.bin" % k),
                                       tmp_path / ("o%d.bin" % k)))
    # the demo CNN, plain and compiled for this port
    from host_tools import compile as comp
    raw = open(DEMO, "rb").read()
    compiled, _ = comp.compile_model(raw, unix_arch())
    (tmp_path / "demo.c.tflite").write_bytes(compiled)
    from tflite_micro.python.tflite_micro import runtime
    t = runtime.Interpreter.from_bytes(raw, arena_size=1 << 20)
    d = t.get_input_details(0)
    x = np.random.default_rng(1).integers(-128, 128, d["shape"]).astype(
        np.int8)
    t.set_input(x, 0)
    t.invoke()
    demo_ref = t.get_output(0)
    (tmp_path / "demo.bin").write_bytes(x.tobytes())
    # (before the demo CNN, whose compiled form the runner uses last)
    # a compiled single CONV_2D whose plan has its output overlap its
    # input (planner.overlap): never split (cores._overlaps), same bits
    c2 = cases[2]  # GEOS[2]: 3x3, stride 1
    ovl, _ = comp.compile_model(build_model(c2), unix_arch())
    (tmp_path / "ovl.tflite").write_bytes(ovl)
    lines.append("ovl %s %s %s" % (tmp_path / "ovl.tflite",
                                   tmp_path / "i2.bin", tmp_path / "ovl.out"))
    for name, path in (("demo", DEMO), ("democ", tmp_path / "demo.c.tflite")):
        lines.append("%s %s %s %s" % (name, path, tmp_path / "demo.bin",
                                      tmp_path / (name + ".out")))
    (tmp_path / "manifest.txt").write_text("\n".join(lines) + "\n")
    script = tmp_path / "runner.py"
    script.write_text("ROOT = %r\n" % ROOT + device_script("cores_runner.py"))
    r = subprocess.run([unix_port.micropython_bin(), "-X", "heapsize=16M",
                        str(script), str(tmp_path / "manifest.txt")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.rstrip().endswith("DONE"), \
        r.stdout + r.stderr
    res = {ln.split()[1]: ln.split()[2:] for ln in r.stdout.splitlines()
           if ln.startswith("CASE")}
    for k, c in enumerate(cases):
        n, same, locked = res["c%d" % k]
        assert same == "True" and locked == "ok", (k, res["c%d" % k])
        got = np.frombuffer((tmp_path / ("o%d.bin" % k)).read_bytes(),
                            np.int8).reshape(c["out_shape"])
        assert np.array_equal(got, c["ref"]), k
        if k < len(GEOS) * 2:  # these split (B = 1, OH >= 2)
            assert n == "1", (k, n)
    for name in ("demo", "democ"):
        n, same, locked = res[name]
        assert int(n) >= 1 and same == "True" and locked == "ok", res[name]
        got = np.frombuffer((tmp_path / (name + ".out")).read_bytes(),
                            np.int8)
        assert np.array_equal(got, demo_ref.reshape(-1)), name
    n, same, locked = res["ovl"]
    assert n == "0" and same == "True" and locked == "ok", res["ovl"]
    got = np.frombuffer((tmp_path / "ovl.out").read_bytes(), np.int8)
    assert np.array_equal(got, cases[2]["ref"].reshape(-1))
    out = r.stdout
    assert "WORKER InvokeError op " in out and "on the second core: " \
        "TypeError" in out, out
    assert "AFTER True" in out and "SPIN True" in out, out
    assert "REPR ['cores=2: 3 operators split between the cores']" in out, out
    assert "NOTHREAD CoresError True" in out, out
    assert out.count("BAD ValueError") == 2 and "BAD TypeError" in out, out


def test_layout_numbers_follow_the_kernels():
    """cores.py reads the kernels' parameter blocks and sizes the second
    core's work buffers with numbers of its own (a const name is no
    attribute on a board): each must equal the kernel's constant."""
    from host_tools import kernel_consts
    from tflm import cores
    conv = kernel_consts("kernels/conv.py", ("S_", "P_", "BLK", "DBLK",
                                             "A", "NPAIRS", "QP"))
    dw = kernel_consts("kernels/depthwise_conv.py", ("S_", "P_", "DWB", "A",
                                                     "NPAIRS", "QP"))
    qp = cores._QP
    for name, v in (("B", cores._B), ("H", cores._H), ("W", cores._W),
                    ("C", cores._C), ("OH", cores._OH), ("OW", cores._OW),
                    ("OC", cores._OC), ("KH", cores._KH), ("KW", cores._KW),
                    ("SH", cores._SH), ("PH", cores._PH)):
        assert conv["P_" + name] + qp == v == dw["P_" + name] + qp, name
    assert conv["P_CIN"] + qp == cores._CIN
    assert conv["P_NB"] + qp == cores._NB
    assert (dw["P_TH"] + qp, dw["P_PWW"] + qp, dw["P_DH"] + qp) == (
        cores._TH, cores._PWW, cores._DH)
    for name in ("X", "OUT"):
        assert conv["S_" + name] == dw["S_" + name] == getattr(
            cores, "_S_" + name)
    # the pairs (fixedpoint.rel): after qp and the parameter words
    assert (conv["A"], conv["NPAIRS"], dw["A"], dw["NPAIRS"]) == (
        cores._CONV_A, cores._CONV_PAIRS, cores._DW_A, cores._DW_PAIRS)
    assert conv["A"] == qp + cores._CONV_P and dw["A"] == qp + cores._DW_P
    assert conv["QP"] == dw["QP"] == qp
    assert max(v for k, v in conv.items() if k.startswith("S_")) + 1 == \
        conv["NPAIRS"]
    assert max(v for k, v in dw.items() if k.startswith("S_")) + 1 == \
        dw["NPAIRS"]
    assert (conv["S_SCRATCH"], conv["S_WIN"], dw["S_WORK"]) == (
        cores._S_SCRATCH, cores._S_WIN, cores._S_WORK)
    assert (conv["BLK"], conv["DWB"] if "DWB" in conv else dw["DWB"]) == (
        cores._BLK, cores._DWB)
    assert conv["P_DBLK"] + qp == cores._DB
    # the parameter words cores.split copies
    assert max(v for k, v in conv.items() if k.startswith("P_")) + 1 == \
        cores._CONV_P
    assert max(v for k, v in dw.items() if k.startswith("P_")) + 1 == \
        cores._DW_P
