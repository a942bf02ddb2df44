"""Conformance suite (host_tools/conformance): ours vs TFLM, bit-exact.

* every corpus entry (tests/conformance_corpus: minimal models that once
  failed) runs again: our outputs must now equal TFLM's, run fresh;
* a fixed seeded sample: SAMPLE cases of every generator's op (every
  gen_*.py), which must all pass or be reported unsupported; no generator
  may make a model TFLM rejects;
* the runner itself: a deliberately failing generator (a model TFLM runs
  and ours rejects) is caught, shrunk to size 1, printed and saved; a
  model TFLM aborts on, a generator that raises, and wrong bytes are
  classified right; generation is reproducible from the seed.

Runs the MicroPython unix port ($TFLM_MICROPYTHON if set, e.g. the 32-bit
build) in a few processes, many models each.
"""

import io
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from host_tools.conformance import cases, runner

SAMPLE = 3        # cases per op in the seeded sample
SAMPLE_SEED = "ci"
JOBS = 2


# --- the corpus ---------------------------------------------------------

def test_corpus_replays():
    """Every saved failure now matches TFLM (run fresh)."""
    done = runner.replay(runner.CORPUS, jobs=JOBS)
    bad = ["%s: %s %s" % (c.name, c.status, c.reason) for c in done
           if c.status != "pass"]
    assert not bad, "\n".join(bad)


def test_corpus_entries_are_complete():
    names = runner.corpus_entries(runner.CORPUS)
    for name in names:
        with open(os.path.join(runner.CORPUS, name + ".json")) as f:
            rec = json.load(f)
        for key in ("op", "seed", "i", "size", "reason", "inputs",
                    "expected", "description"):
            assert key in rec, (name, key)


# --- the seeded sample over every generator -------------------------------

@pytest.fixture(scope="module")
def sample():
    out = io.StringIO()
    status, counts, failed = runner.run(
        SAMPLE, SAMPLE_SEED, jobs=JOBS, save_=False, out=out)
    return status, counts, failed, out.getvalue()


def test_sample_has_no_failures(sample):
    status, counts, failed, text = sample
    print(text)
    assert not failed and status == 0, text


def test_sample_has_no_invalid_models(sample):
    """Every generator makes models that TFLM accepts."""
    _, counts, _, text = sample
    bad = sorted(op for op, k in counts.items() if k["invalid"])
    assert not bad, text


def test_sample_covers_core_ops(sample):
    _, counts, _, _ = sample
    core = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED",
            "AVERAGE_POOL_2D", "MAX_POOL_2D", "ADD", "SOFTMAX", "QUANTIZE",
            "DEQUANTIZE", "TRANSPOSE", "CONCATENATION", "PAD", "RESHAPE",
            "SQUEEZE", "EXPAND_DIMS")
    for op in core:
        assert counts[op]["pass"] == SAMPLE, (op, counts[op])


# --- the runner catches what it should -----------------------------------

FAKE = '''
import numpy as np
from host_tools import opgen
T = opgen.Tensor


def bad_broadcast(rng, size):
    # TFLM runs ADD [1, n] + [1, n + 1] -> [1, n] (it does not check the
    # shapes); ours rejects it: a failure at every size.
    n = 4 * size
    s = rng.uniform(0.01, 1)
    return opgen.single_op("ADD", [T([1, n], scale=s), T([1, n + 1], scale=s)],
                           [T([1, n], scale=s)])


def softmax_bad_zp(rng, size):
    # TFLM aborts (TF_LITE_ENSURE on the output zero point).
    return opgen.single_op("SOFTMAX", [T([1, size], scale=0.1)],
                           [T([1, size], scale=1 / 256.0, zero_point=0)])


def add_abort(rng, size):
    # TFLM aborts the process (TFLITE_CHECK_LT in QuantizeMultiplier-
    # SmallerThanOneExp: output multiplier >= 1).
    return opgen.single_op("ADD", [T([size], scale=10.0), T([size], scale=.2)],
                           [T([size], scale=1e-6)])


def raises(rng, size):
    raise ValueError("generator bug %d" % size)


def with_inputs(rng, size):
    raw = opgen.single_op("DEQUANTIZE", [T([3], scale=0.5, zero_point=1)],
                          [T([3], "float32")])
    return raw, [np.array([1, 2, 3], np.int8)]


GENERATORS = {"FAKE_BAD_BROADCAST": bad_broadcast,
              "FAKE_SOFTMAX_ZP": softmax_bad_zp, "FAKE_RAISES": raises,
              "FAKE_ABORT": add_abort,
              "FAKE_INPUTS": with_inputs}
STRICT = {"FAKE_BAD_BROADCAST"}
'''


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("gens")
    (d / "gen_fake.py").write_text(FAKE)
    corpus = tmp_path_factory.mktemp("corpus")
    out = io.StringIO()
    res = runner.run(4, 7, ops=["FAKE_BAD_BROADCAST", "FAKE_SOFTMAX_ZP",
                                "FAKE_RAISES", "FAKE_INPUTS", "FAKE_ABORT"],
                     corpus=str(corpus), jobs=JOBS, gen_dirs=[str(d)],
                     out=out)
    return res, out.getvalue(), corpus


def test_runner_reports_and_shrinks_a_failure(fake_run):
    (status, counts, failed), text, corpus = fake_run
    assert status == 1, text
    assert counts["FAKE_BAD_BROADCAST"]["fail"] == 4, text
    # each failing case shrinks to the smallest size that still fails
    assert sorted(c.size for c in failed) == [1, 1, 1, 1], text
    assert "FAIL FAKE_BAD_BROADCAST seed=7 i=3 size=1" in text, text
    assert "ours rejected a model TFLM runs" in text
    assert "in1: int8 [1, 5] scale" in text  # the minimal model, described
    saved = sorted(os.listdir(str(corpus)))
    assert "FAKE_BAD_BROADCAST_7_3.tflite" in saved, saved
    with open(os.path.join(str(corpus), "FAKE_BAD_BROADCAST_7_3.json")) as f:
        rec = json.load(f)
    assert rec["size"] == 1 and rec["op"] == "FAKE_BAD_BROADCAST"
    assert len(rec["inputs"]) == 2 and len(rec["expected"]) == 1
    assert len(bytes.fromhex(rec["inputs"][1])) == 5
    # the saved entry replays (and still fails: ours rejects it)
    done = runner.replay(str(corpus), jobs=1,
                         names=["FAKE_BAD_BROADCAST_7_3"])
    assert [c.status for c in done] == ["fail"]


def test_runner_counts_invalid_models(fake_run):
    (_, counts, _), text, _ = fake_run
    assert counts["FAKE_SOFTMAX_ZP"]["invalid"] == 4, text
    assert counts["FAKE_RAISES"]["invalid"] == 4, text
    assert "generator raised ValueError: generator bug" in text
    assert "softmax_common.cc" in text, text  # TFLM's own message
    # a TFLM abort kills the worker: that case is invalid, the rest run
    assert counts["FAKE_ABORT"]["invalid"] == 4, text
    assert "TFLM aborted" in text, text


def test_runner_uses_generator_inputs(fake_run):
    (_, counts, _), text, _ = fake_run
    assert counts["FAKE_INPUTS"]["pass"] == 4, text


def _case(strict=False):
    gen = cases.Generator("X", None, "gen_x", strict)
    return runner.Case(0, gen, 1, 0, 1)


def test_classify():
    ok = {"r": "ok", "out": ["00ff", "0000803f"], "dt": ["int8", "float32"]}
    c = _case()
    c.ref, c.dev = ok, dict(ok)
    runner.classify(c)
    assert c.status == "pass"
    # one int8 element off by one
    c.dev = dict(ok, out=["01ff", "0000803f"])
    runner.classify(c)
    assert c.status == "fail"
    assert "output 0 (int8): 1 of 2 elements differ, max |diff| 1" \
        in c.reason, c.reason
    # float32 compared as bit patterns: -0.0 is not 0.0
    c.ref = {"r": "ok", "out": ["00000000"], "dt": ["float32"]}
    c.dev = {"r": "ok", "out": ["00000080"], "dt": ["float32"]}
    runner.classify(c)
    assert c.status == "fail" and "ours -0.0, TFLM 0.0" in c.reason
    # no kernel / a kernel without that type: unsupported, unless strict
    for dev in ({"r": "err", "cls": "UnsupportedOpError", "stage": "build",
                 "msg": "no kernel for op 0 (X)"},
                {"r": "err", "cls": "PrepareError", "stage": "build",
                 "msg": "op 0 (X): t is int8; only float32 X is supported"}):
        c = _case()
        c.ref, c.dev = ok, dev
        runner.classify(c)
        assert c.status == "unsupported"
        c = _case(strict=True)
        c.ref, c.dev = ok, dev
        runner.classify(c)
        assert c.status == "fail"
    # any other rejection, exception or crash of ours fails
    for dev in ({"r": "err", "cls": "PrepareError", "stage": "build",
                 "msg": "op 0 (X): output has shape (2,), expected (3,)"},
                {"r": "bug", "cls": "IndexError", "stage": "invoke",
                 "msg": "index out of range"},
                {"r": "bug", "cls": "MemoryError", "stage": "invoke",
                 "msg": "invoke() allocated on the heap"},
                {"r": "crash", "msg": "micropython exited with status -11"}):
        c = _case()
        c.ref, c.dev = ok, dev
        runner.classify(c)
        assert c.status == "fail", dev
    c = _case()
    c.ref = {"r": "invalid", "msg": "TFLM rejected"}
    runner.classify(c)
    assert c.status == "invalid"
    # a small target's heap could not hold the outputs' hex after invoke()
    # ran (the harness's own conversion): not judged
    c = _case()
    c.ref, c.dev = ok, {"r": "bug", "cls": "MemoryError", "stage": "output",
                        "msg": "memory allocation failed"}
    runner.classify(c)
    assert c.status == "invalid" and "as hex" in c.reason, c.reason


# --- generators -------------------------------------------------------------

def test_generation_is_reproducible():
    gens = cases.discover()
    for op in ("CONV_2D", "QUANTIZE", "RESHAPE"):
        a = cases.make_case(gens[op], 5, 2, 3)
        b = cases.make_case(gens[op], 5, 2, 3)
        assert a == b
        c = cases.make_case(gens[op], 6, 2, 3)
        assert c != a


def test_every_generator_module_imports():
    errors = []
    gens = cases.discover(errors=errors)
    assert not errors, errors
    assert len(gens) >= 15


def test_size_budget_bounds_the_models():
    """Size 1 makes tiny models (every dimension small)."""
    gens = cases.discover()
    for op in ("CONV_2D", "ADD", "TRANSPOSE", "CONCATENATION", "SOFTMAX"):
        for i in range(10):
            raw, ins = cases.make_case(gens[op], 1, i, 1)
            assert all(len(b) <= 4 * 5 ** 4 for b in ins), op


def test_cli_list_and_single_case():
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "host_tools", "conformance",
                        "--list"], capture_output=True, text=True, cwd=ROOT,
                       env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "CONV_2D" in p.stdout and "gen_core" in p.stdout
    p = subprocess.run([sys.executable, "-m", "host_tools", "conformance",
                        "--ops", "QUANTIZE", "--case", "3", "--size", "2",
                        "--no-save", "--jobs", "1"], capture_output=True,
                       text=True, cwd=ROOT, env=env, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "QUANTIZE" in p.stdout and "1 cases, 1 ops" in p.stdout


# --- our side on another MicroPython (--target-cmd) ----------------------

def test_target_cmd_runs_the_cases_on_another_micropython(tmp_path):
    """--target-cmd: the package (for the target's arch) and the cases go
    into a ROMFS image that a target command runs driver.py with; here
    the unix port stands in for an emulated board. A target that fails
    fails every case, with a rerun hint that repeats the command."""
    from conftest import unix_target_cmd
    from host_tools.fit import unix_arch
    cmd = unix_target_cmd()
    saved = dict(runner.TARGET)
    try:
        runner.TARGET.update(cmd=cmd, arch=unix_arch())
        out = io.StringIO()
        status, counts, _ = runner.run(
            n=2, seed="target", ops=["CONV_2D", "DEPTHWISE_CONV_2D",
                                     "FULLY_CONNECTED"],
            save_=False, jobs=1, out=out, shrink_=False)
        assert status == 0, out.getvalue()
        assert all(c.get("pass") == 2 for c in counts.values()), counts
        runner.TARGET.update(cmd="false {image} {script}")
        out = io.StringIO()
        status, counts, _ = runner.run(
            n=1, seed="target", ops=["CONV_2D"], save_=False, jobs=1,
            out=out, shrink_=False)
        assert status == 1 and counts["CONV_2D"].get("fail") == 1, counts
        assert "exited with status" in out.getvalue()
        assert "--target-cmd 'false {image} {script}'" in out.getvalue()
    finally:
        runner.TARGET.update(saved)
