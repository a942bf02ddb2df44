"""Mutation fuzzing (host_tools/fuzz.py): every mutated model gives a
TFLMError or runs exactly like TFLM, on the MicroPython unix port.

CI runs a bounded seeded campaign (FUZZ_N mutations, env TFLM_FUZZ_N to
change); `make fuzz N=100000 SEED=7` runs more. Models that once failed are
kept in tests/fuzz_corpus and replayed here.
"""

import glob
import os
import random
import sys
import tempfile

import pytest

from conftest import ROOT, fc_multiplier
from host_tools import fuzz

FUZZ_N = int(os.environ.get("TFLM_FUZZ_N", "2500"))
FUZZ_SEED = int(os.environ.get("TFLM_FUZZ_SEED", "20240"))
CORPUS = os.path.join(ROOT, "tests", "fuzz_corpus")


def test_campaign(capsys):
    """FUZZ_N seeded mutations of every shared model and the demo model:
    no crash, hang, non-TFLMError exception, internal error, allocating
    invoke() or output different from TFLM's; on every model that runs,
    bad API calls (mp_cases.API_CALLS) raise only the documented
    exceptions and leave invoke() working without allocation."""
    failures, cases = fuzz.campaign(FUZZ_N, FUZZ_SEED, corpus=None,
                                    out=sys.stdout)
    ours, _ = fuzz.summarize(cases)
    assert not failures, [(c.id, c.what, r) for c, r in failures[:20]]
    assert sum(ours.values()) == FUZZ_N
    # The mutations must reach the kernels, not only the parser.
    assert ours["ok"] > FUZZ_N // 10 and ours["PrepareError"] > 0


def corpus_files():
    return sorted(glob.glob(os.path.join(CORPUS, "*.tflite"))
                  + glob.glob(os.path.join(CORPUS, "*.json")))


def test_corpus_replay():
    """Every model the fuzzer ever found failing now gives a TFLMError or
    runs like TFLM (recipes need ../shared/models)."""
    files = corpus_files()
    if not files:
        pytest.skip("tests/fuzz_corpus is empty")
    failures, cases = fuzz.replay(files)
    assert not failures, [(c.base, r) for c, r in failures]
    assert all(c.dev["r"] in ("ok", "err") for c in cases)


# ------------------------------------------------ the fuzzer's own machinery

FAKE_PORT = r"""#!%s
# Stands in for the micropython binary: answers like mp_cases.py, but
# case 2 dies with SIGSEGV and case 4 never answers.
import json, os, signal, sys, time
args = [a for a in sys.argv if a != "api"]
listing, first = args[-2], int(args[-1])
for line in open(listing):
    k = int(line.split("\t")[0])
    if k < first:
        continue
    if k == 2:
        os.kill(os.getpid(), signal.SIGSEGV)
    if k == 4:
        time.sleep(60)
    print(json.dumps({"id": k, "r": "err", "cls": "FormatError",
                      "msg": "fake"}), flush=True)
"""


def test_runner_survives_crash_and_hang(tmp_path, monkeypatch):
    """A driver process that segfaults or stops answering is recorded
    against that model and restarted after it."""
    fake = tmp_path / "fake_micropython"
    fake.write_text(FAKE_PORT % sys.executable)
    fake.chmod(0o755)
    monkeypatch.setenv("TFLM_MICROPYTHON", str(fake))
    cases = [fuzz.Case(k, "m%d.tflite" % k, [], "base", [], None, "")
             for k in range(7)]
    fuzz.run_device(cases, str(tmp_path), timeout=3)
    got = [c.dev["r"] for c in cases]
    assert got == ["err", "err", "crash", "err", "hang", "err", "err"]
    assert fuzz.verdict(cases[2]).startswith("crash")
    assert fuzz.verdict(cases[4]).startswith("hang")
    assert fuzz.verdict(cases[0]) is None


def test_walk_finds_structure():
    with open(fuzz.DEMO, "rb") as f:
        raw = f.read()
    lay = fuzz.walk(raw)
    assert lay.n_tensors == 19
    for name in ("uoffsets", "lengths", "soffsets", "vtable", "indices",
                 "shapes", "floats", "options", "vectors"):
        assert getattr(lay, name), name
    for p in lay.uoffsets:  # each one points inside the file
        assert 0 <= p + int.from_bytes(raw[p:p + 4], "little") < len(raw)


def test_mutations_are_seeded():
    with open(fuzz.DEMO, "rb") as f:
        raw = f.read()
    lay = fuzz.walk(raw)
    a = [fuzz.mutations(raw, lay, random.Random(5)) for _ in range(3)]
    b = [fuzz.mutations(raw, lay, random.Random(5)) for _ in range(3)]
    assert a == b
    edits, trunc, what = a[0]
    assert fuzz.apply(raw, edits, trunc) != raw or not edits


def test_recipe_roundtrip(tmp_path):
    """Failing mutants of large models are saved as recipes that rebuild
    the same bytes."""
    with open(fuzz.DEMO, "rb") as f:
        raw = f.read()
    edits, trunc = [(100, b"\xff\xfe"), (7000, b"\x00")], 7500
    mutant = fuzz.apply(raw, edits, trunc)
    path = tmp_path / "m.tflite"
    path.write_bytes(mutant)
    c = fuzz.Case(0, str(path), [], fuzz.DEMO, edits, trunc, "test")
    old = fuzz.CORPUS_MAX_BYTES
    try:
        fuzz.CORPUS_MAX_BYTES = 100  # force a recipe
        name = fuzz.save(c, str(tmp_path / "corpus"), "reason")
    finally:
        fuzz.CORPUS_MAX_BYTES = old
    assert name.endswith(".json")
    assert fuzz.load_corpus_file(str(tmp_path / "corpus" / name)) == mutant


def test_nan_outputs_compare_equal():
    """Float outputs: NaN payloads (host float unit) do not count."""
    nan1, nan2 = "0000c07f", "f00ac5ff"
    d = {"out": [nan1 + "0000803f"], "dt": ["float32"]}
    assert fuzz.same_outputs(d, {"out": [nan2 + "0000803f"]})
    assert not fuzz.same_outputs(d, {"out": [nan2 + "00000040"]})
    assert not fuzz.same_outputs({"out": ["00"], "dt": ["int8"]},
                                 {"out": ["01"]})


def test_tflm_worker_survives_tflm_crash():
    """TFLM crashes on malformed.malicious.tflite: the worker reports the
    crash (its forked child died) and goes on."""
    mal = os.path.join(fuzz.SHARED, "malformed", "malicious.tflite")
    if not os.path.exists(mal):
        pytest.skip("malformed models missing")
    with tempfile.TemporaryDirectory() as work:
        good = os.path.join(work, "good.tflite")
        with open(fuzz.DEMO, "rb") as f, open(good, "wb") as g:
            g.write(f.read())
        cases = [fuzz.Case(0, mal, [], mal, [], None, ""),
                 fuzz.Case(1, good, [], good, [], None, "")]
        for c in cases:
            c.dev = {"r": "ok", "src": "f", "out": ["00"]}
        fuzz.run_tflm(cases)
    assert cases[0].ref["r"] in ("crash", "err")
    assert cases[1].ref["r"] == "ok" and len(cases[1].ref["out"]) == 1


# (in_scale, w_scale, out_scale, in_zp, weight, expected) where the
# float32 product of the scales gives a multiplier one step off, so that
# input 11 (the fill pattern's first byte) gives expected +- 1 with it.
FC_CASES = (
    (0.029176952317357063, 0.05259830877184868, 0.4288594424724579, -119,
     -115, -53),
    (0.09889930486679077, 0.08036623895168304, 0.21420490741729736, -121,
     -15, -74),
    (0.05106569081544876, 0.04350261390209198, 0.23384852707386017, -78,
     -68, -58),
    (0.08757567405700684, 0.045543134212493896, 0.8823911547660828, -114,
     -123, -69),
)


def _fc_models():
    from host_tools import opgen
    from tflm import quant
    from tflm.kernels.gemmlowp import mbqm_ref
    T = opgen.Tensor
    for xs, ws, ys, zin, wv, want in FC_CASES:
        acc = wv * (11 - zin)
        assert mbqm_ref(acc, *quant.conv_multiplier(xs, ws, ys)) == want
        assert mbqm_ref(acc, *fc_multiplier(xs, ws, ys)) != want
        yield opgen.single_op(
            "FULLY_CONNECTED",
            [T([1, 1], scale=xs, zero_point=zin),
             T([1, 1], scale=ws, data=[[wv]])],
            [T([1, 1], scale=ys, zero_point=-want)])


def test_fc_multiplier_matches_oracle(tmp_path):
    """Found by fuzzing (ad01 with random inputs): the oracle's per-tensor
    FULLY_CONNECTED multiplier is (double)in * (double)w / out, not the
    float32 product; these models differ by one in the output otherwise."""
    paths = []
    for k, raw in enumerate(_fc_models()):
        p = tmp_path / ("fc%d.tflite" % k)
        p.write_bytes(raw)
        paths.append(str(p))
    failures, cases = fuzz.replay(paths)
    assert not failures, [(c.base, r) for c, r in failures]
    assert all(c.dev["r"] == "ok" and c.ref["r"] == "ok" for c in cases)
    assert all(c.dev["out"] == ["00"] for c in cases)
