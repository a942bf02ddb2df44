"""MEAN, SUM, REDUCE_MAX, ARG_MAX, ARG_MIN, GATHER, SHAPE, FILL, ZEROS_LIKE
vs TFLM.

Seeded random single-operator models come from the conformance
generators (host_tools/conformance/gen_reduce.py); the TFLM reference
interpreter (the oracle) runs them on CPython, tflm runs all of them in
one MicroPython process, invoking under micropython.heap_lock(). Outputs
must be bit-identical (float32 NaN matches any NaN, as in
test_float_ops.py). Hand-checked cases follow TFLM's *_test.cc.
"""

import random

import numpy as np

from conftest import run_mp
from host_tools import opgen
from mp_batch import run_on_device
from host_tools.conformance import gen_reduce
from host_tools.oracle import Reference

T = opgen.Tensor



def oracle(model, inputs):
    """('ok', outputs) / ('reject', msg) at build / ('fail', msg) at
    invoke, from TFLM."""
    try:
        ref = Reference(model)
    except RuntimeError as e:
        return "reject", str(e)
    try:
        return "ok", ref.run(inputs)
    except RuntimeError as e:
        return "fail", str(e)


def random_inputs(model, rng):
    """Random values for every model input (int8/int32 bytes, floats)."""
    from tflm.model import Model
    m = Model(model)
    out = []
    for t in (m.tensors[i] for i in m.inputs):
        if t.dtype == "float32":
            out.append(rng.standard_normal(t.size).astype(np.float32))
        else:
            info = np.iinfo(t.dtype)
            out.append(rng.integers(info.min, info.max + 1, size=t.size,
                                    dtype=np.int64).astype(t.dtype))
    return out


def same(got, want):
    """Bit equality; float32 NaN equals any NaN."""
    if want.dtype == np.float32:
        g = np.frombuffer(got, np.float32)
        w = want.reshape(-1)
        if len(g) != len(w):
            return False
        gb, wb = g.view(np.uint32), w.view(np.uint32)
        return bool(np.all((gb == wb) | (np.isnan(g) & np.isnan(w))))
    return got == np.ascontiguousarray(want).tobytes()


def run_batch(cases, tmp_path, scratch=None):
    """cases: list of (model bytes, inputs or None). Runs each on TFLM and
    (all in one process, mp_batch) on tflm; asserts that both reject the
    same models (TFLM may fail at invoke where tflm rejects at prepare)
    and otherwise match. Returns tflm's per-case statuses ('ok', 'reject'
    at build, 'fail' at invoke). scratch: the interpreter's scratch
    length (default: its own)."""
    rng = np.random.default_rng(7)
    expected, jobs = [], []
    for model, inputs in cases:
        if inputs is None:
            inputs = random_inputs(model, rng)
        expected.append(oracle(model, inputs))
        jobs.append((model, [inputs]))
    kinds = []
    results = run_on_device(jobs, tmp_path, scratch)
    for k, ((kind, outs), (st, got)) in enumerate(zip(expected, results)):
        ours = {"OK": "ok", "ERR": "reject", "IERR": "fail"}[st]
        # a model TFLM fails at invoke may be rejected at prepare here
        assert (ours == "ok") == (kind == "ok"), \
            "case %d: TFLM %s (%s), tflm %s %s" % (
                k, kind, "" if kind == "ok" else outs[:200], st,
                "" if st == "OK" else got)
        kinds.append(ours)
        if kind != "ok":
            continue
        for i, w in enumerate(outs):
            assert same(got[0][i], w), "case %d output %d:\nours %s\n" \
                "TFLM %s" % (k, i, np.frombuffer(got[0][i], w.dtype)[:40],
                             w.reshape(-1)[:40])
    return kinds


def generated(op, n, seed):
    """n cases from the conformance generator of op (sizes 1-4)."""
    gen = gen_reduce.GENERATORS[op]
    cases = []
    for k in range(n):
        r = gen(random.Random(seed * 1000 + k), 1 + k % 4)
        cases.append(r if isinstance(r, tuple) else (r, None))
    return cases


COUNTS = {"MEAN": 60, "SUM": 50, "REDUCE_MAX": 50, "ARG_MAX": 40,
          "ARG_MIN": 40, "GATHER": 50, "SHAPE": 15, "FILL": 25,
          "ZEROS_LIKE": 15}


def test_generated_match_tflm(tmp_path):
    """All ops' random models in one MicroPython process."""
    cases = []
    for j, op in enumerate(sorted(COUNTS)):
        cases += generated(op, COUNTS[op], j + 1)
    kinds = run_batch(cases, tmp_path)
    assert kinds.count("ok") == len(cases), kinds


def test_sums_in_small_scratch_chunks(tmp_path):
    """int8 MEAN / SUM with a 3-word scratch: outputs in many chunks."""
    cases = generated("MEAN", 16, 11) + generated("SUM", 16, 12)
    assert run_batch(cases, tmp_path, scratch=3) == ["ok"] * len(cases)


def test_mean_large_counts(tmp_path):
    """Counts up to 2**16 per output with extreme scale ratios: TFLM
    clamps the 1/count shift to 31 + shift; sums near +-2**23."""
    g = np.random.default_rng(3)
    cases = []
    for shape, axes, s_in, s_out, zp in (
            ([1, 256, 256, 1], [1, 2], 1e-4, 10.0, -128),
            ([1, 256, 256, 1], [1, 2], 10.0, 1e-4, 127),
            ([2, 128, 129, 2], [1, -2], 0.02, 0.013, 5),
            ([4, 4096], [1], 1e-4, 9.9, 127),
            ([4, 4096], [-1], 3.0, 1e-4, -128)):
        for op in ("MEAN", "SUM"):
            out = [1 if i in [a % len(shape) for a in axes] else d
                   for i, d in enumerate(shape)]
            raw = opgen.single_op(op, [q8(shape, s_in, zp),
                                       T([len(axes)], "int32", data=axes)],
                                  [q8(out, s_out, -zp // 2)],
                                  {"keep_dims": True})
            lo, hi = (-128, -120) if g.random() < 0.5 else (120, 128)
            x = g.integers(lo, hi, size=shape, dtype=np.int64)
            cases.append((raw, [x.astype(np.int8)]))
    assert run_batch(cases, tmp_path) == ["ok"] * len(cases)


# --- hand-checked cases (after TFLM's kernel tests) -------------------------

def q8(shape, scale, zp, data=None):
    return T(shape, "int8", scale=scale, zero_point=zp, data=data)


def run_one(model, inputs, tmp_path):
    """Our outputs (after checking them against TFLM)."""
    kinds = run_batch([(model, inputs)], tmp_path)
    assert kinds == ["ok"]
    return [np.array(v) for v in oracle(model, inputs)[1]]


def test_mean_int8_hand(tmp_path):
    # reduce_test.cc MeanInt84DWithoutKeepDims-like: scale 1, zp 0 in and
    # out, mean of [1, 2, 3, 4] and [5, 6, 7, 9] over the last axis.
    x = np.array([[1, 2, 3, 4], [5, 6, 7, 9]], np.int8)
    raw = opgen.single_op("MEAN", [q8([2, 4], 1.0, 0),
                                   T([1], "int32", data=[-1])],
                          [q8([2], 1.0, 0)], {"keep_dims": False})
    out = run_one(raw, [x], tmp_path)[0]
    # 10 / 4 = 2.5 -> 3 (round half away), 27 / 4 = 6.75 -> 7
    assert out.tolist() == [3, 7]


def test_mean_multiplier_truncates(tmp_path):
    """MEAN folds 1/count into the multiplier with an int64 division that
    truncates: (m << k) / 365. Here a rounded-up multiplier would give -34
    (found by search with gemmlowp.mbqm_ref)."""
    x = np.full(365, -78, np.int8)
    x[:60] = -79  # sum -28530
    raw = opgen.single_op("MEAN", [q8([1, 365], 0.3, 0),
                                   T([1], "int32", data=[1])],
                          [q8([1], 0.7, 0)])
    assert run_one(raw, [x], tmp_path)[0].tolist() == [-33]


def test_sum_int8_hand(tmp_path):
    # Sum with requantization: input scale 0.5, output scale 1, zp 2:
    # (sum - 4 * zp_in) * 0.5 + 2.
    x = np.array([[10, 20, 30, 41], [-128, -128, 127, 127]], np.int8)
    raw = opgen.single_op("SUM", [q8([2, 4], 0.5, 1),
                                  T([1], "int32", data=[1])],
                          [q8([2, 1], 1.0, 2)], {"keep_dims": True})
    out = run_one(raw, [x], tmp_path)[0]
    # (101 - 4) * 0.5 = 48.5 -> 49; (-2 - 4) * 0.5 = -3 -> -1 with zp
    assert out.reshape(-1).tolist() == [49 + 2, -3 + 2]


def test_reduce_max_int8_hand(tmp_path):
    # reduce_test.cc ReduceMax: max over axes 1 and 2 of a 4-D tensor.
    x = np.arange(-12, 12, dtype=np.int8).reshape(1, 2, 3, 4)
    x[0, 1, 0, 2] = 100
    raw = opgen.single_op("REDUCE_MAX", [q8([1, 2, 3, 4], 0.1, -3),
                                         T([2], "int32", data=[1, -2])],
                          [q8([1, 1, 1, 4], 0.1, -3)], {"keep_dims": True})
    out = run_one(raw, [x], tmp_path)[0]
    assert out.reshape(-1).tolist() == [8, 9, 100, 11]


def test_arg_min_max_hand(tmp_path):
    # arg_min_max_test.cc: GetMaxArgFloat / GetMinArg with ties.
    x = np.array([[1, 9, 7, 9], [3, 3, 3, 1]], np.float32)
    for op, want in (("ARG_MAX", [1, 0]), ("ARG_MIN", [0, 3])):
        raw = opgen.single_op(op, [T([2, 4], "float32"),
                                   T([1], "int32", data=[1])],
                              [T([2], "int32")], {"output_type": "int32"})
        out = run_one(raw, [x], tmp_path)[0]
        assert out.tolist() == want
    # NaN: plain C comparisons (LessFn) - a NaN never wins, and a first
    # NaN is never replaced; -0.0 ties with 0.0 (first kept).
    x = np.array([[np.nan, -1, -3, 2], [-1, np.nan, -3, 2],
                  [0.0, -0.0, 1, 0.0]], np.float32)
    raw = opgen.single_op("ARG_MIN", [T([3, 4], "float32"),
                                      T([1], "int32", data=[-1])],
                          [T([3], "int32")], {"output_type": "int32"})
    assert run_one(raw, [x], tmp_path)[0].tolist() == [0, 2, 0]


def test_arg_axis_input_checked(tmp_path):
    """An axis input whose value does not fit the output shape (undefined
    in TFLM) raises InvokeError under heap_lock; a valid one works."""
    raw = opgen.single_op("ARG_MAX", [q8([2, 3], 1.0, 0), T([1], "int32")],
                          [T([2], "int32")], {"output_type": "int32"})
    path = tmp_path / "m.tflite"
    path.write_bytes(raw)
    out = run_mp(
        "import micropython, tflm\n"
        "def main():\n"
        "    it = tflm.Interpreter(open(%r, 'rb').read())\n"
        "    it.inputs[0].set([1, 7, 3, 9, 2, -6])\n"
        "    for a in (1, -1, 0, 2, -3, 1 << 20):\n"
        "        it.inputs[1].set([a])\n"
        "        micropython.heap_lock()\n"
        "        try:\n"
        "            it.invoke()\n"
        "            r = 'ok'\n"
        "        except tflm.InvokeError:\n"
        "            r = 'bad'\n"
        "        micropython.heap_unlock()\n"
        "        print(a, r, list(it.outputs[0].get()))\n"
        "main()\n" % str(path), tmp_path)
    lines = out.split("\n")
    assert lines[0] == "1 ok [1, 0]" and lines[1] == "-1 ok [1, 0]", out
    assert all(" bad " in ln for ln in lines[2:6]), out


def test_gather_hand(tmp_path):
    # gather_test.cc GatherOp_Shuffle / axis 1 with int8.
    x = np.array([[-2, 1, 3], [4, 5, -6]], np.int8)
    idx = np.array([2, 0, 0], np.int32)
    raw = opgen.single_op("GATHER", [q8([2, 3], 1.0, 0), T([3], "int32")],
                          [q8([2, 3], 1.0, 0)], {"axis": 1})
    out = run_one(raw, [x, idx], tmp_path)[0]
    assert out.tolist() == [[3, -2, -2], [-6, 4, 4]]


def test_gather_index_out_of_range(tmp_path):
    """TFLM's eval fails; ours raises InvokeError, reads nothing out of
    bounds, and both agree on which models fail."""
    cases = []
    for bad in (3, -1, 1 << 24, -(1 << 31)):
        raw = opgen.single_op("GATHER", [q8([3, 2], 1.0, 0),
                                         T([2], "int32")],
                              [q8([2, 2], 1.0, 0)])
        x = np.arange(6, dtype=np.int8).reshape(3, 2)
        cases.append((raw, [x, np.array([0, bad], np.int32)]))
    assert run_batch(cases, tmp_path) == ["fail"] * len(cases)


def test_shape_fill_zeros_like_hand(tmp_path):
    # shape_test.cc, fill_test.cc, zeros_like_test.cc
    raw = opgen.single_op("SHAPE", [T([1, 3, 1, 5], "float32")],
                          [T([4], "int32")], {"out_type": "int32"})
    out = run_one(raw, [np.zeros(15, np.float32)], tmp_path)[0]
    assert out.tolist() == [1, 3, 1, 5]
    raw = opgen.single_op("FILL", [T([2], "int64", data=[2, 3]),
                                   T([], "float32")], [T([2, 3], "float32")])
    out = run_one(raw, [np.float32(4.25)], tmp_path)[0]
    assert (out == 4.25).all() and out.shape == (2, 3)
    raw = opgen.single_op("ZEROS_LIKE", [T([2, 2], "int32")],
                          [T([2, 2], "int32")])
    out = run_one(raw, [np.array([1, -2, 3, 4], np.int32)], tmp_path)[0]
    assert out.tolist() == [[0, 0], [0, 0]]


def test_rejections_match_tflm(tmp_path):
    """Models TFLM rejects (at prepare or eval) are rejected here too."""
    I32 = "int32"
    cases = [
        # int8 REDUCE_MAX with a different output scale (TFLM: eval error)
        (opgen.single_op("REDUCE_MAX", [q8([2, 3], 0.5, 0),
                                        T([1], I32, data=[1])],
                         [q8([2], 0.25, 0)]), None),
        # GATHER of int32 params
        (opgen.single_op("GATHER", [T([4], I32), T([2], I32)], [T([2], I32)]),
         None),
        # FILL with dims as a model input
        (opgen.single_op("FILL", [T([2], I32), T([], I32)], [T([2, 3], I32)]),
         [np.array([2, 3], np.int32), np.array(1, np.int32)]),
        # ARG_MAX with an int64 output
        (opgen.single_op("ARG_MAX", [q8([2, 3], 1.0, 0),
                                     T([1], I32, data=[1])],
                         [T([2], "int64")], {"output_type": "int64"}), None),
    ]
    kinds = run_batch(cases, tmp_path)
    assert all(k in ("reject", "fail") for k in kinds), kinds


def test_scalar_input_ignores_axes(tmp_path):
    """A rank-0 input: TFLM's ResolveAxis ignores the axis values (even
    out-of-range ones) and reduces nothing; an empty axis tensor reduces
    nothing for any rank. float32 MEAN / SUM then give 0.0 + x: -0.0
    becomes 0.0 (and NaN stays NaN)."""
    I32 = "int32"
    bits = np.array([0x80000000, 0x7FC00000, 0xFF812345, 0x3F800000,
                     0x80000001, 0x7F7FFFFF], np.uint32).view(np.float32)
    cases = []
    for op in ("MEAN", "SUM", "REDUCE_MAX"):
        for axes in ([0], [-1], [3, -7], []):
            for keep in (False, True):
                for dt in ("int8", "float32"):
                    so, zo = (0.3, -5) if op == "REDUCE_MAX" else (0.11, 7)
                    x = q8([], 0.3, -5) if dt == "int8" else T([], dt)
                    y = q8([], so, zo) if dt == "int8" else T([], dt)
                    raw = opgen.single_op(
                        op, [x, T([len(axes)], I32, data=axes)], [y],
                        {"keep_dims": keep})
                    v = np.array(-77, np.int8) if dt == "int8" else bits[:1]
                    cases.append((raw, [v.reshape(())]))
        if op != "REDUCE_MAX":  # rank 2, no axes: each output its input
            raw = opgen.single_op(op, [T([2, 3], "float32"),
                                       T([0], I32, data=[])],
                                  [T([2, 3], "float32")])
            cases.append((raw, [bits.reshape(2, 3)]))
    assert run_batch(cases, tmp_path) == ["ok"] * len(cases)


def test_shift_above_30_rejected(tmp_path):
    """int8 MEAN / SUM with in_scale / out_scale >= 2**30 (after MEAN's
    1/count folding): TFLM's x * (1 << shift) overflows int32 (x86 and
    Arm builds disagree), so prepare refuses; 2**29 still runs, like
    TFLM."""
    I32 = "int32"
    cases = []
    for op, s_in, s_out in (("SUM", 1e9, 1e-4), ("MEAN", 1e9, 1e-4),
                            ("SUM", 3.0, 1e-9), ("SUM", 2.0 ** 29, 1.0),
                            ("MEAN", 2.0 ** 31, 1.0)):
        cases.append(opgen.single_op(
            op, [q8([3, 4], s_in, 0), T([1], I32, data=[1])],
            [q8([3], s_out, 0)]))
    for k, raw in enumerate(cases):
        (tmp_path / ("%d.tflite" % k)).write_bytes(raw)
    out = run_mp("""
import tflm
for k in range(%d):
    try:
        tflm.Interpreter(open('%s/%%d.tflite' %% k, 'rb').read())
        print('OK')
    except tflm.PrepareError as e:
        print('ERR', e)
""" % (len(cases), tmp_path), tmp_path)
    lines = out.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == ["ERR"] * 3 + ["OK"] * 2, lines
    assert all("shift" in ln for ln in lines[:3]), lines
    # MEAN of 4 at 2**31 folds to shift 30: must also match TFLM
    (tmp_path / "b").mkdir()
    assert run_batch([(cases[3], None), (cases[4], None)],
                     tmp_path / "b") == ["ok", "ok"]


def test_failed_invokes_do_not_leak(tmp_path):
    """GATHER (index out of range) and ARG_MAX (axis input out of range)
    raise an InvokeError made at prepare; re-raising that one object grew
    its traceback at every invoke (a slow heap leak on a board that
    retries). A fresh copy is raised now (the object itself under
    heap_lock, where nothing can grow)."""
    I32 = "int32"
    g = opgen.single_op("GATHER", [q8([4], 0.5, 0), T([2], I32)],
                        [q8([2], 0.5, 0)])
    a = opgen.single_op("ARG_MAX", [q8([2, 3], 0.5, 0), T([1], I32)],
                        [T([2], I32)], {"output_type": "int32"})
    (tmp_path / "g.tflite").write_bytes(g)
    (tmp_path / "a.tflite").write_bytes(a)
    out = run_mp("""
import gc
import tflm
G = (b'\\x01\\x02\\x03\\x04', b'\\x07\\0\\0\\0\\0\\0\\0\\0')
A = (b'\\x01\\x02\\x03\\x04\\x05\\x06', b'\\x05\\0\\0\\0')
for name, ins in (('g', G), ('a', A)):
    it = tflm.Interpreter(open('%s/' + name + '.tflite', 'rb').read())
    for i, d in enumerate(ins):
        it.inputs[i].data[:] = d
    n = 0
    for k in range(1100):
        if k == 100:
            gc.collect()
            free = gc.mem_free()
        try:
            it.invoke()
        except tflm.InvokeError:
            n += 1
    gc.collect()
    print(n, free - gc.mem_free())
""" % tmp_path, tmp_path)
    rows = [list(map(int, ln.split())) for ln in out.strip().splitlines()]
    assert [r[0] for r in rows] == [1100, 1100], rows
    assert all(r[1] < 2000 for r in rows), rows
