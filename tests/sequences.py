"""Running a model through a sequence of invokes (and resets) on one
interpreter, in our runtime and in TFLM, and comparing every step: what
the tests of stateful operators share (test_signal_ops.py,
test_svdf.py).

A case is (model bytes, steps); a step is a list of input arrays (one
per model input) or RESET (interp.reset()). run_ours runs all cases in
one MicroPython process, each model placed k % 4 bytes into a buffer and
each invoke under micropython.heap_lock(); run_tflm runs one case in
TFLM; check compares them.
"""

import binascii
import os

import numpy as np

from host_tools import case_driver, device
from host_tools.oracle import Reference

RESET = "reset"       # a step of a sequence: interp.reset()

# --- our runtime: many models, each a sequence of steps, one process ------


def run_ours(cases, tmp_path, status=False):
    """cases: [(model bytes, steps)], a step being a list of input arrays
    (one per model input) or RESET. Runs every case in one MicroPython
    process (host_tools/mp_cases.py, a "!reset" input set for RESET);
    returns per case ("OK", [outputs per step: list of bytes, None for a
    reset]; with status, per step (outputs, what invoke() returned: 0
    for None)), ("ERR", "Type message") for a model rejected at load,
    ("IERR", ...) for a TFLMError from invoke / reset, or ("BUG", ...)
    for any other exception."""
    d = str(tmp_path)
    todo = []
    for k, (raw, steps) in enumerate(cases):
        pre = os.path.join(d, "%d" % k)
        with open(pre + ".tflite", "wb") as f:
            f.write(raw)
        sets = []
        for j, st in enumerate(steps):
            if isinstance(st, str):
                sets.append(["!reset"])
                continue
            sets.append([])
            for i, x in enumerate(st):
                path = "%s.s%d.in%d" % (pre, j, i)
                with open(path, "wb") as f:
                    f.write(np.ascontiguousarray(x).tobytes())
                sets[-1].append(path)
        todo.append(_Case(k, pre + ".tflite", sets))
    case_driver.run_unix(todo, d, "seq", lambda c: c.model, 600,
                         heap=device.HEAP)
    out = []
    for c in todo:
        r = c.dev
        msg = "%s %s" % (r.get("cls"), r.get("msg"))
        if r["r"] == "err":
            out.append(("ERR" if r["stage"] == "build" else "IERR", msg))
        elif r["r"] == "bug":
            out.append(("BUG", msg))
        else:
            assert r["r"] == "ok", "case %d: %s" % (c.id, r)
            got = r["sets"] if r["sets"] is not None else [r["out"]]
            got = [None if o is None else [binascii.unhexlify(h) for h in o]
                   for o in got]
            if status:  # per step (outputs, what invoke() returned)
                got = [None if o is None else (o, st)
                       for o, st in zip(got, r["st"])]
            out.append(("OK", got))
    return out


class _Case:
    def __init__(self, k, model, sets):
        self.id, self.model, self.sets, self.dev = k, model, sets, None


# --- TFLM ----------------------------------------------------------------

def run_tflm(raw, steps):
    """TFLM's outputs for each step (None for a reset) on one
    interpreter."""
    ref = Reference(raw)
    res = []
    for st in steps:
        if isinstance(st, str):
            ref.interp.reset()
            res.append(None)
        else:
            res.append([np.ascontiguousarray(o).tobytes()
                        for o in ref.run(st)])
    return res


def run_tflm_status(raw, steps):
    """run_tflm's outputs with what TFLM's invoke() returned: per step
    (outputs, status) (0: kTfLiteOk, 15: kTfLiteAbort), None for a
    reset."""
    ref = Reference(raw)
    res = []
    for st in steps:
        if isinstance(st, str):
            ref.interp.reset()
            res.append(None)
            continue
        for i, x in enumerate(st):
            d = ref.interp.get_input_details(i)
            ref.interp.set_input(np.asarray(x, dtype=d["dtype"]).reshape(
                d["shape"]), i)
        code = ref.interp.invoke()
        res.append(([np.ascontiguousarray(ref.interp.get_output(j)).tobytes()
                     for j in range(ref.n_out)], code))
    return res


def check(name, want, result, ranges=None):
    """Our result for a case equals TFLM's outputs (want, per step);
    ranges: {output index: (first byte, end byte)} compared instead of
    the whole output."""
    st, got = result
    assert st == "OK", "%s: ours %s %s" % (name, st, got)
    assert len(got) == len(want), name
    for j, (w, g) in enumerate(zip(want, got)):
        if w is None:
            continue
        assert len(g) == len(w), "%s step %d: %d outputs, TFLM %d" % (
            name, j, len(g), len(w))
        for i, (a, b) in enumerate(zip(w, g)):
            if ranges and i in ranges:
                lo, hi = ranges[i]
                a, b = a[lo:hi], b[lo:hi]
            assert a == b, "%s step %d output %d differs:\n ours %s\n" \
                " TFLM %s" % (name, j, i, b.hex()[:200], a.hex()[:200])


def check_stateful(cases, tmp_path):
    """cases: [(name, model, steps)] of a stateful operator, each sequence
    with one RESET. TFLM's own outputs must show the state at work (the
    second input given to a fresh interpreter gives other outputs in at
    least half of the models) and the reset (the first input gives the
    first outputs again); then every invoke of ours must equal TFLM's."""
    want = [run_tflm(raw, steps) for _, raw, steps in cases]
    changed = 0
    for (name, raw, steps), w in zip(cases, want):
        k = steps.index(RESET)
        assert w[k + 1] == w[0], name
        changed += w[1] != run_tflm(raw, [steps[1]])[0]
    assert changed >= len(cases) // 2, "the state rarely matters"
    got = run_ours([(raw, steps) for _, raw, steps in cases], tmp_path)
    for (name, _, _), w, res in zip(cases, want, got):
        check(name, w, res)


def check_rejections(cases, x, tmp_path):
    """cases: [(name, model, words)]: with words None the model must load
    and run on input x; otherwise loading must raise a TFLMError whose
    message contains every word."""
    got = run_ours([(raw, [[x]] if words is None else [])
                    for _, raw, words in cases], tmp_path)
    for (name, _, words), (st, msg) in zip(cases, got):
        if words is None:
            assert st == "OK", (name, msg)
            continue
        assert st == "ERR", (name, st, msg)
        for w in words:
            assert w in msg, (name, w, msg)
