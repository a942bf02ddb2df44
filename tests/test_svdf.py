"""SVDF (tflm/kernels/svdf.py) against TFLM and a hand-computed case.

* generated models (host_tools/conformance/gen_recurrent.py): int8 with
  int16 state, int8 with int8 state (any zero point: the state starts at
  it and reset() restores it), float32, and models shaped like TFLM's
  keyword benchmark (int16 features, QUANTIZE, two SVDF layers,
  FULLY_CONNECTED, SOFTMAX to int16, QUANTIZE to int32), each run
  through 6 invokes in a row on one interpreter, reset(), the first
  input again and one more; every output bit-exact with TFLM's (invoke
  under heap_lock, models at every alignment). The conformance suite
  runs single invokes of the same generator, chains of SVDF operators
  over one state included;
* a float32 case small enough to compute by hand: the state's history
  over three invokes gives 300.5, 230.5, 223.5;
* what TFLM would crash on or refuses, refused at load with the
  operator and tensor named: no bias, a state that is not a variable,
  weights_time and state of different types, a rank that does not divide
  the filters, float TANH; and a variable tensor that a stateless
  operator reads.
"""

import random

import numpy as np
import pytest

from host_tools import opgen
from host_tools.conformance import gen_recurrent as gr
from sequences import (RESET, check, check_rejections, check_stateful,
                       run_ours, run_tflm)

T = opgen.Tensor
CASES = 16  # generated models per kind


def _inputs(rng, x):
    g = np.random.default_rng(rng.getrandbits(32))
    if x.dtype == "float32":
        return [(g.standard_normal(x.shape) * 2).astype(np.float32)]
    if x.dtype == "int16":
        return [g.integers(-6000, 6000, size=x.shape).astype(np.int16)]
    return [g.integers(-128, 128, size=x.shape).astype(np.int8)]


def generated(kind, n=CASES):
    """[(name, model, steps)] for kind 'int16', 'int8', 'float32' or
    'keyword' (gen_recurrent.keyword_model)."""
    out = []
    for i in range(n):
        rng = random.Random("svdf:%s:%d" % (kind, i))
        if kind == "keyword":
            raw = gr.keyword_model(rng, 1 + i % 4)
            x = T(opgen.parse(raw).subgraphs[0].tensors[0].shape, "int16")
        else:
            ts = gr.svdf_tensors(rng, 1 + i % 4,
                                 "float32" if kind == "float32" else "int8",
                                 narrow=kind == "int8")
            raw, x = gr.svdf_model(ts), ts[0]
        steps = [_inputs(rng, x) for _ in range(6)]
        steps += [RESET, steps[0], _inputs(rng, x)]
        out.append(("SVDF %s #%d" % (kind, i), raw, steps))
    return out


@pytest.mark.parametrize("kind", ["int16", "int8", "float32", "keyword"])
def test_sequences_match_tflm(kind, tmp_path):
    """Every invoke of every sequence equals TFLM's outputs; TFLM's own
    outputs show the state at work and the reset
    (sequences.check_stateful)."""
    check_stateful(generated(kind), tmp_path)


def _hand_model(act="NONE"):
    x = T([1, 2], "float32")
    wf = T([1, 2], "float32", data=np.array([[1, 2]], np.float32))
    wt = T([1, 3], "float32", data=np.array([[1, 10, 100]], np.float32))
    b = T([1], "float32", data=np.array([0.5], np.float32))
    s = T([1, 3], "float32", is_variable=True)
    y = T([1, 1], "float32")
    return gr.svdf_model((x, wf, wt, b, s, y,
                          {"rank": 1, "activation": act}))


def test_hand_computed_float(tmp_path):
    """x = [1, 1], [2, 0], [0, 1] give features 3, 2, 2; the state
    [0, 0, 3] -> [0, 3, 2] -> [3, 2, 2] against time weights [1, 10, 100]
    plus 0.5: 300.5, 230.5, 223.5; after reset() 300.5 again. With
    RELU_N1_TO_1 each is 1.0."""
    xs = [np.array(v, np.float32) for v in ([1, 1], [2, 0], [0, 1])]
    steps = [[x] for x in xs] + [RESET, [xs[0]]]
    for act, want in (("NONE", [300.5, 230.5, 223.5, 300.5]),
                      ("RELU_N1_TO_1", [1.0, 1.0, 1.0, 1.0])):
        st, got = run_ours([(_hand_model(act), steps)], tmp_path)[0]
        assert st == "OK", got
        vals = [float(np.frombuffer(g[0], np.float32)[0])
                for g in got if g is not None]
        assert vals == want, act


def _int8_tensors(**change):
    """A valid int8 SVDF (batch 1, 3 inputs, 2 units, rank 2, memory 4),
    with the named tensors or options replaced."""
    t = dict(
        x=T([1, 3], scale=0.1, zero_point=3),
        wf=T([4, 3], scale=0.05, zero_point=0, data=np.arange(12) - 6),
        wt=T([4, 4], "int16", scale=0.002, zero_point=0,
             data=np.arange(16) * 100),
        bias=T([2], "int32", scale=float(np.float32(0.01) *
                                         np.float32(0.002)),
               zero_point=0, data=[5, -5]),
        s=T([1, 16], "int16", scale=0.01, zero_point=0, is_variable=True),
        y=T([1, 2], scale=0.5, zero_point=-1),
        opts={"rank": 2})
    t.update(change)
    return t


def _svdf(t, inputs=None):
    m = opgen.Model()
    ins = inputs or [t["x"], t["wf"], t["wt"], t["bias"], t["s"]]
    m.add_op("SVDF", ins, [t["y"]], t["opts"])
    return m.build()


def reject_cases():
    """[(name, model, words the error must contain)]."""
    base = _int8_tensors()
    cases = [("valid", _svdf(base), None)]
    t = dict(base)
    cases.append(("no bias", _svdf(t, [t["x"], t["wf"], t["wt"], -1,
                                       t["s"]]), ["SVDF", "bias"]))
    cases.append(("state not variable", _svdf(_int8_tensors(
        s=T([1, 16], "int16", scale=0.01, zero_point=0))),
        ["SVDF", "not a variable"]))
    cases.append(("types differ", _svdf(_int8_tensors(
        s=T([1, 16], "int8", scale=0.01, zero_point=0, is_variable=True))),
        ["SVDF", "int16", "int8"]))
    cases.append(("rank", _svdf(_int8_tensors(opts={"rank": 3})),
                  ["SVDF", "rank 3"]))
    cases.append(("bias scale", _svdf(_int8_tensors(
        bias=T([2], "int32", scale=1.0, zero_point=0, data=[1, 2]))),
        ["SVDF", "bias", "scale"]))
    x = T([1, 2], "float32")
    cases.append(("float tanh", gr.svdf_model((
        x, T([1, 2], "float32", data=np.ones((1, 2), np.float32)),
        T([1, 3], "float32", data=np.ones((1, 3), np.float32)),
        T([1], "float32", data=np.ones(1, np.float32)),
        T([1, 3], "float32", is_variable=True), T([1, 1], "float32"),
        {"rank": 1, "activation": "TANH"})), ["SVDF", "not supported"]))
    m = opgen.Model()
    v = T([1, 4], is_variable=True, scale=0.5, zero_point=0)
    a = T([1, 4], scale=0.5, zero_point=0)
    m.add_op("ADD", [a, v], [T([1, 4], scale=0.5, zero_point=0)])
    cases.append(("stateless op reads a variable", m.build(),
                  ["ADD", "variable"]))
    return cases


def test_rejections(tmp_path):
    """Each bad model is refused at load naming the op and what is
    wrong; the valid one loads and runs."""
    cases = reject_cases()
    x = np.array([[1, 2, 3]], np.int8)
    check_rejections(cases, x, tmp_path)


def test_valid_hand_model_matches_tflm(tmp_path):
    """The reject cases' valid model (rank 2, int16 state) over 5
    invokes equals TFLM."""
    raw = reject_cases()[0][1]
    rng = np.random.default_rng(5)
    steps = [[rng.integers(-128, 128, (1, 3)).astype(np.int8)]
             for _ in range(5)]
    check("hand int8", run_tflm(raw, steps),
          run_ours([(raw, steps)], tmp_path)[0])


def test_macs():
    """SVDF's MACs: batch x filters x (inputs + memory): the valid hand
    model (batch 1, 3 inputs, 4 filters, memory 4) has 1 * 4 * 7."""
    from host_tools import macs
    assert macs.total(reject_cases()[0][1]) == 28
