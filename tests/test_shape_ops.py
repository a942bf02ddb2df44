"""RESHAPE, SQUEEZE, EXPAND_DIMS: TFLite's shape rules, zero copy;
TRANSPOSE: a real data move, bit-exact with TFLM."""

import glob
import json
import os

import numpy as np
import pytest

from conftest import SHARED, run_bytes, run_mp
from host_tools.arena import tflm_arena
from tflm import planner
from tflm.model import Model
from host_tools import opgen
from host_tools.oracle import Reference

T = opgen.Tensor


def shape_model(op, in_shape, out_shape, extra=None, options=None,
                out_scale=0.5, out_zp=3):
    m = opgen.Model()
    x = m.add_tensor(T(in_shape, scale=0.5, zero_point=3))
    ins = [x]
    if extra is not None:
        ins.append(m.add_tensor(extra))
    y = m.add_tensor(T(out_shape, scale=out_scale, zero_point=out_zp))
    m.add_op(op, ins, [y], options)
    m.inputs, m.outputs = [x], [y]
    return m.build()


def run_ok(raw, tmp_path, n):
    data = np.arange(n, dtype=np.int64).astype(np.int8).tobytes()
    got, info = run_bytes(raw, tmp_path, [[data]])
    assert got is not None, info
    want = Reference(raw).run([np.frombuffer(data, np.int8)])[0].tobytes()
    assert got[0][0] == want == data  # same bytes, as TFLM
    return info


def rejected(raw, tmp_path, n, words):
    data = bytes(n)
    got, info = run_bytes(raw, tmp_path, [[data]])
    assert got is None, "model was accepted"
    assert info["error"] == "PrepareError", info
    for w in words:
        assert w in info["message"], info["message"]
    return info["message"]


def i32(vals):
    return T([len(vals)], "int32", data=np.array(vals, np.int32))


@pytest.mark.parametrize("target,out", [
    ([2, -1], [2, 12]),          # single -1 inferred
    ([-1], [24]),                # flatten
    ([1, -1], [1, 24]),          # converters' flatten [N, -1]
    ([4, 3, 2], [4, 3, 2]),
])
def test_reshape_from_shape_tensor(tmp_path, target, out):
    raw = shape_model("RESHAPE", [2, 3, 4], out, extra=i32(target))
    info = run_ok(raw, tmp_path, 24)
    # zero copy: input and output share one buffer, arena holds one tensor
    assert info["arena"] == 32


def test_reshape_from_new_shape_option(tmp_path):
    raw = shape_model("RESHAPE", [2, 3, 4], [6, 4],
                      options={"new_shape": [6, -1]})
    run_ok(raw, tmp_path, 24)


def test_reshape_from_stored_output_shape(tmp_path):
    run_ok(shape_model("RESHAPE", [2, 3, 4], [3, 8]), tmp_path, 24)


@pytest.mark.parametrize("target,out,words", [
    ([-1, -1], [4, 6], ["more than one -1"]),
    ([5, -1], [4, 6], ["cannot infer -1"]),
    ([5, 5], [5, 5], ["holds 25 elements", "24"]),
    ([-2, -12], [2, 12], ["negative dimension"]),
    ([4, 6], [6, 4], ["(6, 4)", "(4, 6)", "op 0 (RESHAPE)"]),
])
def test_reshape_errors_name_op_and_shapes(tmp_path, target, out, words):
    raw = shape_model("RESHAPE", [2, 3, 4], out, extra=i32(target))
    rejected(raw, tmp_path, 24, words)


def test_reshape_refuses_to_requantize(tmp_path):
    raw = shape_model("RESHAPE", [2, 12], [24], out_scale=0.25)
    rejected(raw, tmp_path, 24, ["cannot requantize"])


def test_squeeze(tmp_path):
    raw = shape_model("SQUEEZE", [1, 4, 1, 3], [4, 3])
    run_ok(raw, tmp_path, 12)
    raw = shape_model("SQUEEZE", [1, 4, 1, 3], [1, 4, 3],
                      options={"squeeze_dims": [-2]})
    run_ok(raw, tmp_path, 12)


@pytest.mark.parametrize("dims,words", [
    ([1], ["dimension 1", "it is 4"]),
    ([4], ["out of range"]),
])
def test_squeeze_errors(tmp_path, dims, words):
    raw = shape_model("SQUEEZE", [1, 4, 1, 3], [4, 3],
                      options={"squeeze_dims": dims})
    rejected(raw, tmp_path, 12, words)


@pytest.mark.parametrize("axis,out", [(0, [1, 4, 3]), (-1, [4, 3, 1]),
                                      (1, [4, 1, 3])])
def test_expand_dims(tmp_path, axis, out):
    raw = shape_model("EXPAND_DIMS", [4, 3], out, extra=i32([axis]))
    run_ok(raw, tmp_path, 12)


def test_expand_dims_axis_out_of_range(tmp_path):
    raw = shape_model("EXPAND_DIMS", [4, 3], [4, 3, 1], extra=i32([4]))
    rejected(raw, tmp_path, 12, ["out of range"])


# --- Batched runs: many small models in one MicroPython process ----------

BATCH = r'''
import json
import micropython
import uctypes
import tflm

work, n = %r, %d


def read(p):
    with open(p, "rb") as f:
        return f.read()


def one(k):
    raw = read("%%s/m%%d.tflite" %% (work, k))
    try:
        it = tflm.Interpreter(raw)
    except tflm.TFLMError as e:
        return {"error": type(e).__name__, "message": str(e)}
    for i, t in enumerate(it.inputs):
        t.set(read("%%s/in%%d_%%d.bin" %% (work, k, i)))
    err = None
    micropython.heap_lock()
    try:
        it.invoke()
    except Exception as e:
        err = e
    micropython.heap_unlock()
    if err is not None:
        return {"invoke_error": type(err).__name__, "message": str(err)}
    for j, t in enumerate(it.outputs):
        with open("%%s/out%%d_%%d.bin" %% (work, k, j), "wb") as f:
            f.write(t.data)
    return {"arena": it.arena_size,
            "model": [uctypes.addressof(raw), len(raw)],
            "in_addr": [uctypes.addressof(t.data) for t in it.inputs],
            "out_addr": [uctypes.addressof(t.data) for t in it.outputs],
            "out_shape": [list(t.shape) for t in it.outputs],
            "out_q": [[t.scale, t.zero_point] for t in it.outputs]}


for k in range(n):
    print(json.dumps(one(k)))
'''


def run_batch(cases, tmp_path):
    """Run [(model bytes, [input arrays])] on the unix port in one process
    (each invoke under heap_lock). Returns one dict per case: 'error' /
    'message' if rejected, 'invoke_error' if invoke raised, else arena,
    model [address, length], in_addr, out_addr (uctypes.addressof of
    .data), out_shape, out_q and outs (raw output bytes)."""
    work = tmp_path / "batch"
    work.mkdir(exist_ok=True)
    for k, (raw, ins) in enumerate(cases):
        (work / ("m%d.tflite" % k)).write_bytes(raw)
        for i, a in enumerate(ins):
            (work / ("in%d_%d.bin" % (k, i))).write_bytes(
                np.ascontiguousarray(a).tobytes())
    out = run_mp(BATCH % (str(work), len(cases)), tmp_path)
    res = [json.loads(line) for line in out.strip().splitlines()]
    assert len(res) == len(cases), out
    for k, r in enumerate(res):
        if "arena" in r:
            r["outs"] = [(work / ("out%d_%d.bin" % (k, j))).read_bytes()
                         for j in range(len(r["out_addr"]))]
    return res


def tflm_run(raw, ins):
    """TFLM's outputs (numpy arrays), or None if TFLM rejects the model."""
    try:
        return Reference(raw).run(ins)
    except RuntimeError:
        return None


def shape_op(op, x, out, extra=None, options=None):
    """Single-op model: data input x (a Tensor), optional second input."""
    ins = [x] if extra is None else [x, extra]
    return opgen.single_op(op, ins, [out], options)


def q8(shape, dtype="int8"):
    """An activation with the quantization shape_model uses."""
    if dtype in ("int8", "uint8", "int16"):
        zp = 0 if dtype == "int16" else 3
        return T(shape, dtype, scale=0.5, zero_point=zp)
    return T(shape, dtype)


def values(shape, dtype, seed=0):
    """Distinct-ish test values of a dtype."""
    n = int(np.prod(shape, dtype=np.int64))
    rng = np.random.default_rng(seed)
    if dtype == "float32":
        return rng.standard_normal(n).astype(np.float32).reshape(shape)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -1 << 20), min(info.max, 1 << 20),
                        n, endpoint=True).astype(dtype).reshape(shape)


def check_view(r, x, want_shape):
    """A zero-copy result: same bytes as the input, at its address."""
    assert "arena" in r, r
    assert r["outs"][0] == x.tobytes()
    assert r["out_addr"][0] == r["in_addr"][0]
    assert r["out_shape"][0] == list(want_shape)


def check_rejected(r, *words):
    assert r.get("error") == "PrepareError", r
    for w in words:
        assert w in r["message"], r["message"]


# --- RESHAPE seed cases: input [2, 3, 4] -----------------------------------

SEEDS = [([6, 4], [6, 4]), ([2, -1], [2, 12]), ([24], [24]),
         ([2, 2, 6], [2, 2, 6]), ([3, 8], [3, 8])]


def _reshape_sources(target, out):
    """The same reshape from each source: shape tensor, new_shape, stored
    output shape only."""
    return [shape_op("RESHAPE", q8([2, 3, 4]), q8(out), extra=i32(target)),
            shape_op("RESHAPE", q8([2, 3, 4]), q8(out),
                     options={"new_shape": target}),
            shape_op("RESHAPE", q8([2, 3, 4]), q8(out))]


def test_reshape_seed_cases_zero_copy(tmp_path):
    x = values([2, 3, 4], "int8")
    models = [m for target, out in SEEDS
              for m in _reshape_sources(target, out)]
    res = run_batch([(m, [x]) for m in models], tmp_path)
    outs = [out for _, out in SEEDS for _ in range(3)]
    for raw, r, out in zip(models, res, outs):
        check_view(r, x, out)
        assert r["arena"] == 32  # one 24-byte buffer, 16-byte aligned
        assert r["out_q"][0] == [0.5, 3]  # scale and zero point kept
        want = tflm_run(raw, [x])[0]
        assert want.shape == tuple(out)
        assert want.tobytes() == r["outs"][0]


def test_reshape_seed_errors(tmp_path):
    cases = [
        (i32([5, 5]), None, [5, 5],
         ["op 0 (RESHAPE)", "(5, 5) holds 25 elements", "(2, 3, 4) has 24"]),
        (None, {"new_shape": [5, 5]}, [5, 5], ["holds 25 elements"]),
        (None, None, [5, 5], ["holds 25 elements"]),
        (i32([-1, -1]), None, [4, 6], ["more than one -1"]),
        (None, {"new_shape": [-1, -1]}, [4, 6], ["more than one -1"]),
        (i32([5, -1]), None, [4, 6], ["cannot infer -1", "(5, -1)"]),
        (None, {"new_shape": [7, -1]}, [4, 6], ["cannot infer -1"]),
        (i32([-2, -12]), None, [2, 12], ["negative dimension -2"]),
        # sources disagree: the error names the op and both shapes
        (i32([4, 6]), None, [6, 4], ["op 0 (RESHAPE)", "(6, 4)", "(4, 6)"]),
        (None, {"new_shape": [2, -1]}, [12, 2],
         ["op 0 (RESHAPE)", "(12, 2)", "(2, 12)"]),
    ]
    models = [shape_op("RESHAPE", q8([2, 3, 4]), q8(out), extra=extra,
                       options=opts) for extra, opts, out, _ in cases]
    res = run_batch([(m, [values([2, 3, 4], "int8")]) for m in models],
                    tmp_path)
    for (extra, opts, out, words), raw, r in zip(cases, models, res):
        check_rejected(r, *words)
        if out == [5, 5]:  # TFLM only sees the stored shape
            assert tflm_run(raw, [values([2, 3, 4], "int8")]) is None


def test_reshape_to_scalar(tmp_path):
    models, ins = [], []
    for shape in ([1], [1, 1, 1]):
        empty = T([0], "int32", data=np.zeros(0, np.int32))
        models += [
            shape_op("RESHAPE", q8(shape), q8([]), extra=empty),
            shape_op("RESHAPE", q8(shape), q8([]), options={"new_shape": []}),
            shape_op("RESHAPE", q8(shape), q8([]), options={"new_shape": [0]}),
            shape_op("RESHAPE", q8(shape), q8([0])),  # legacy stored [0]
            shape_op("RESHAPE", q8(shape), q8([0]),
                     options={"new_shape": [0]}),
        ]
        ins += [values(shape, "int8", seed=len(ins) + k) for k in range(5)]
    res = run_batch([(m, [x]) for m, x in zip(models, ins)], tmp_path)
    for raw, x, r in zip(models, ins, res):
        check_view(r, x, [])
        assert tflm_run(raw, [x])[0].tobytes() == x.tobytes()


def test_reshape_shape_tensor_rules(tmp_path):
    x = values([2, 3, 4], "int8")
    models = [
        # a non-vector shape tensor is ignored (TFLite's ShapeIsVector)
        shape_op("RESHAPE", q8([2, 3, 4]), q8([4, 6]),
                 extra=T([1, 2], "int32", data=np.array([[6, 4]], np.int32)),
                 options={"new_shape": [4, 6]}),
        # shape tensor first: new_shape is not read when it exists
        shape_op("RESHAPE", q8([2, 3, 4]), q8([4, 6]), extra=i32([4, -1]),
                 options={"new_shape": [1, 1]}),
        # flatten [N, -1]
        shape_op("RESHAPE", q8([2, 3, 4]), q8([2, 12]),
                 options={"new_shape": [2, -1]}),
    ]
    res = run_batch([(m, [x]) for m in models], tmp_path)
    for raw, r, shape in zip(models, res, ([4, 6], [4, 6], [2, 12])):
        check_view(r, x, shape)
        assert tflm_run(raw, [x])[0].tobytes() == x.tobytes()


# --- TFLM's reshape_test.cc, squeeze_test.cc, expand_dims_test.cc ---------

def test_tflm_reshape_test_cases(tmp_path):
    seq = np.arange(1, 9)
    ok, bad = [], []
    for dtype in ("float32", "int8", "uint8", "int16"):
        x = seq.astype(dtype).reshape(1, 2, 4, 1)
        # ReshapeWithRegularShapesShouldSucceed
        ok.append((shape_op("RESHAPE", q8([1, 2, 4, 1], dtype),
                            q8([2, 2, 2], dtype), extra=i32([2, 2, 2])),
                   x, [2, 2, 2]))
        # ReshapeWithStretchDimensionShouldSucceed
        ok.append((shape_op("RESHAPE", q8([1, 2, 4, 1], dtype),
                            q8([2, 1, 4], dtype), extra=i32([2, 1, -1])),
                   x, [2, 1, 4]))
    for dtype in ("float32", "int8", "uint8"):
        # ReshapeWithScalarOutputShouldSucceed (rank-0 shape tensor)
        ok.append((shape_op("RESHAPE", q8([1], dtype), q8([], dtype),
                            extra=T([], "int32", data=np.int32(0))),
                   np.array([3], dtype), []))
    # ReshapeWithManyDimensionsShouldSucceed (8-D: our rank limit; TFLM's
    # test uses 9)
    ok.append((shape_op("RESHAPE", T([1, 1, 2, 1, 1, 1, 1, 1], "float32"),
                        T([1, 1, 1, 1, 1, 1, 1, 2], "float32"),
                        extra=i32([1, 1, 1, 1, 1, 1, 1, 2])),
               np.array([3, 2], np.float32), [1, 1, 1, 1, 1, 1, 1, 2]))
    # ReshapeWithLegacyScalarOutputShouldSucceed, without a shape tensor
    ok.append((shape_op("RESHAPE", T([1], "float32"), T([0], "float32")),
               np.array([3], np.float32), []))
    # ... and with one it fails
    bad.append((shape_op("RESHAPE", T([1], "float32"), T([0], "float32"),
                         extra=T([0], "int32", data=np.zeros(0, np.int32))),
                np.array([3], np.float32), True))
    # ReshapeWithMismatchedDimensionsShouldFail
    bad.append((shape_op("RESHAPE", T([1, 2, 4, 1], "float32"),
                         T([2, 1], "float32"), extra=i32([2, 1])),
                np.zeros(8, np.float32), True))
    # ReshapeWithInvalidShapeShouldFail (no shape tensor)
    bad.append((shape_op("RESHAPE", T([1, 2, 2], "float32"),
                         T([2, 1], "float32")),
                np.zeros(4, np.float32), True))
    # ReshapeWithTooManySpecialDimensionsShouldFail (TFLM reads only the
    # stored shape, which cannot hold -1 in a file, so only we see it)
    bad.append((shape_op("RESHAPE", T([1, 2, 4, 11], "float32"),
                         T([11, 1, 2, 4], "float32"),
                         extra=i32([-1, -1, 2, 4])),
                np.zeros(88, np.float32), False))
    res = run_batch([(m, [x]) for m, x, _ in ok + bad], tmp_path)
    for (raw, x, shape), r in zip(ok, res):
        check_view(r, x, shape)
        assert tflm_run(raw, [x])[0].tobytes() == x.tobytes()
    for (raw, x, tflm_rejects), r in zip(bad, res[len(ok):]):
        check_rejected(r, "op 0 (RESHAPE)")
        if tflm_rejects:
            assert tflm_run(raw, [x]) is None


def test_tflm_squeeze_test_cases(tmp_path):
    x24 = np.arange(1, 25, dtype=np.int32).reshape(1, 24, 1)
    cases = [  # (in shape, squeeze_dims, stored out shape, out shape)
        ([1, 24, 1], [], [24], [24]),             # SqueezeAll
        ([1, 24, 1], [2], [1, 24], [1, 24]),      # SqueezeSelectedAxis
        ([1, 24, 1], [-1, 0], [24], [24]),        # SqueezeNegativeAxis
        ([1] * 7, [], [1], [1]),                  # SqueezeAllDims
        ([1] * 7, [], [], []),                    # ... stored as a scalar
    ]
    models, ins = [], []
    for shape, dims, out, _ in cases:
        opts = {"squeeze_dims": dims} if dims else None
        models.append(shape_op("SQUEEZE", T(shape, "int32"), T(out, "int32"),
                               options=opts))
        ins.append(x24 if shape[1:2] == [24]
                   else np.array([3], np.int32).reshape(shape))
    bad = [([1, 4, 1, 3], [1], [4, 3], ["dimension 1", "it is 4"]),
           ([1, 4, 1, 3], [4], [4, 3], ["out of range"]),
           ([1, 4, 1, 3], [-5], [4, 3], ["out of range"]),
           ([1, 4, 1, 3], [0], [4, 3], ["(4, 3)", "(4, 1, 3)"])]
    for shape, dims, out, _ in bad:
        models.append(shape_op("SQUEEZE", q8(shape), q8(out),
                               options={"squeeze_dims": dims}))
        ins.append(values(shape, "int8"))
    res = run_batch(list(zip(models, [[x] for x in ins])), tmp_path)
    for (shape, dims, out, want), raw, x, r in zip(cases, models, ins, res):
        check_view(r, x, want)
        assert tflm_run(raw, [x])[0].tobytes() == x.tobytes()
    for (_, _, _, words), r in zip(bad, res[len(cases):]):
        check_rejected(r, "op 0 (SQUEEZE)", *words)


def test_tflm_expand_dims_test_cases(tmp_path):
    cases = [  # (dtype, in shape, axis, out shape) from expand_dims_test.cc
        ("int8", [2, 2], 0, [1, 2, 2]),
        ("float32", [2, 2], 1, [2, 1, 2]),
        ("int8", [2, 2], 2, [2, 2, 1]),
        ("int16", [3, 1, 2], 3, [3, 1, 2, 1]),
        ("int8", [3, 1, 2], -4, [1, 3, 1, 2]),
        ("float32", [3, 1, 2], -3, [3, 1, 1, 2]),
        ("int8", [1, 2, 3], -2, [1, 2, 1, 3]),
        ("float32", [1, 3, 2], -1, [1, 3, 2, 1]),
    ]
    models, ins = [], []
    for k, (dtype, shape, axis, out) in enumerate(cases):
        axis_t = i32([axis]) if k % 2 else \
            T([1], "int64", data=np.array([axis], np.int64))
        models.append(shape_op("EXPAND_DIMS", q8(shape, dtype),
                               q8(out, dtype), extra=axis_t))
        ins.append(values(shape, dtype, seed=k))
    # ExpandDimsInputOutputDimsMismatchShallFail, ...AxisOutOfRangeShallFail
    bad = [([1, 3, 2], -1, [1, 3, 1, 2], ["(1, 3, 1, 2)", "(1, 3, 2, 1)"]),
           ([1, 3, 2], 4, [1, 3, 2, 1], ["axis 4 is out of range"]),
           ([1, 3, 2], -5, [1, 3, 2, 1], ["axis -5 is out of range"])]
    for shape, axis, out, _ in bad:
        models.append(shape_op("EXPAND_DIMS", q8(shape, "float32"),
                               q8(out, "float32"), extra=i32([axis])))
        ins.append(values(shape, "float32"))
    res = run_batch(list(zip(models, [[x] for x in ins])), tmp_path)
    for k, (raw, x, r) in enumerate(zip(models, ins, res[:len(cases)])):
        check_view(r, x, cases[k][3])
        got = tflm_run(raw, [x])
        if k % 2:  # TFLM takes int32 axes only (we also take int64)
            assert got[0].tobytes() == x.tobytes()
        else:
            assert got is None
    for (_, _, _, words), raw, x, r in zip(bad, models[len(cases):],
                                            ins[len(cases):],
                                            res[len(cases):]):
        check_rejected(r, "op 0 (EXPAND_DIMS)", *words)
        assert tflm_run(raw, [x]) is None


# --- Aliases: chains, constants, model inputs and outputs -----------------

def test_alias_chain_reshape_squeeze_expand_dims(tmp_path):
    def chain(tail_add):
        m = opgen.Model()
        x = m.add_tensor(q8([2, 3, 4]))
        a = m.add_tensor(q8([1, 6, 4]))
        b = m.add_tensor(q8([6, 4]))
        c = m.add_tensor(q8([6, 4, 1]))
        d = m.add_tensor(q8([24, 1]))
        m.add_op("RESHAPE", [x], [a], {"new_shape": [1, 6, -1]})
        m.add_op("SQUEEZE", [a], [b], {"squeeze_dims": [0]})
        m.add_op("EXPAND_DIMS", [b, i32([-1])], [c])
        m.add_op("RESHAPE", [c, i32([-1, 1])], [d])
        m.inputs, m.outputs = [x], [d]
        if tail_add:  # a real consumer after the chain
            y = m.add_tensor(T([24, 1], scale=0.25, zero_point=-2))
            z = m.add_tensor(T([24, 1], scale=0.75, zero_point=1))
            m.add_op("ADD", [d, y], [z])
            m.inputs, m.outputs = [x, y], [z]
        return m.build()

    x = values([2, 3, 4], "int8")
    y = values([24, 1], "int8", seed=1)
    plain, added = chain(False), chain(True)
    r, r2 = run_batch([(plain, [x]), (added, [x, y])], tmp_path)
    check_view(r, x, [24, 1])
    assert r["arena"] == 32  # four views, one buffer
    assert r2["outs"][0] == tflm_run(added, [x, y])[0].tobytes()


def test_constant_input_gives_view_of_model_bytes(tmp_path):
    c = values([2, 6], "int8", seed=3)
    m = opgen.Model()
    k = m.add_tensor(T([2, 6], scale=0.5, zero_point=3, data=c))
    r1 = m.add_tensor(q8([12]))
    m.add_op("RESHAPE", [k, i32([-1])], [r1])
    m.inputs, m.outputs = [], [r1]
    alone = m.build()
    # ... and feeding an ADD with a model input
    m2 = opgen.Model()
    k = m2.add_tensor(T([2, 6], scale=0.5, zero_point=3, data=c))
    r1 = m2.add_tensor(q8([3, 4]))
    x = m2.add_tensor(q8([3, 4]))
    z = m2.add_tensor(T([3, 4], scale=0.7, zero_point=-5))
    m2.add_op("RESHAPE", [k, i32([3, 4])], [r1])
    m2.add_op("ADD", [r1, x], [z])
    m2.inputs, m2.outputs = [x], [z]
    fed = m2.build()
    xin = values([3, 4], "int8", seed=4)
    r, r2 = run_batch([(alone, []), (fed, [xin])], tmp_path)
    start, length = r["model"]
    assert start <= r["out_addr"][0] < start + length  # a view of the file
    assert r["outs"][0] == c.tobytes() == tflm_run(alone, [])[0].tobytes()
    assert r["arena"] == 0
    assert r2["outs"][0] == tflm_run(fed, [xin])[0].tobytes()


MODEL_IO_ALIAS = r'''
import tflm
it = tflm.Interpreter(open(%r, "rb").read())
x, y = it.inputs[0], it.outputs[0]
x.set(bytes(range(24)))
it.invoke()
first = bytes(y.data)
x.set(bytes([7] * 24))      # overwriting the input ...
print(first == bytes(range(24)), bytes(y.data) == bytes([7] * 24))
'''


def test_model_input_and_output_share_bytes(tmp_path):
    # input -> RESHAPE -> output: the output is the input's memory, so
    # writing the next input changes the last output (docs/api.md).
    path = tmp_path / "io.tflite"
    path.write_bytes(shape_op("RESHAPE", q8([2, 3, 4]), q8([4, 6])))
    out = run_mp(MODEL_IO_ALIAS % str(path), tmp_path)
    assert out.split() == ["True", "True"]


def test_computed_shape_tensor_checked_at_invoke(tmp_path):
    def model():
        m = opgen.Model()
        x = m.add_tensor(q8([2, 3, 4]))
        s = m.add_tensor(T([2], "int32"))
        y = m.add_tensor(q8([6, 4]))
        m.add_op("RESHAPE", [x, s], [y])
        m.inputs, m.outputs = [x, s], [y]
        return m.build()

    x = values([2, 3, 4], "int8")
    shapes = [[6, 4], [-1, 4], [6, -1], [4, 6], [-1, -1], [5, 4]]
    raw = model()
    res = run_batch([(raw, [x, np.array(s, np.int32)]) for s in shapes],
                    tmp_path)
    for s, r in zip(shapes, res):
        if s in ([6, 4], [-1, 4], [6, -1]):
            assert r["outs"][0] == x.tobytes(), r
            assert r["out_addr"][0] == r["in_addr"][0]
        else:  # raised without allocating (invoke runs under heap_lock)
            assert r.get("invoke_error") == "InvokeError", r
            assert "op 0 (RESHAPE)" in r["message"]
            assert "(6, 4)" in r["message"]
        # TFLM ignores the values and always gives the stored shape
        assert tflm_run(raw, [x, np.array(s, np.int32)])[0].tobytes() \
            == x.tobytes()


# --- TRANSPOSE ------------------------------------------------------------

def transpose_model(shape, perm, dtype="int8"):
    out = [shape[p] for p in perm]
    return shape_op("TRANSPOSE", q8(shape, dtype), q8(out, dtype),
                    extra=i32(perm))


def test_reshape_versus_transpose(tmp_path):
    x = np.arange(1, 7, dtype=np.int8).reshape(2, 3)
    rs = shape_op("RESHAPE", q8([2, 3]), q8([3, 2]), extra=i32([3, 2]))
    tr = transpose_model([2, 3], [1, 0])
    r1, r2 = run_batch([(rs, [x]), (tr, [x])], tmp_path)
    got1 = np.frombuffer(r1["outs"][0], np.int8).reshape(3, 2)
    got2 = np.frombuffer(r2["outs"][0], np.int8).reshape(3, 2)
    assert got1.tolist() == [[1, 2], [3, 4], [5, 6]]
    assert got2.tolist() == [[1, 4], [2, 5], [3, 6]]
    assert r1["out_addr"][0] == r1["in_addr"][0]
    assert r2["out_addr"][0] != r2["in_addr"][0]  # a real copy
    assert tflm_run(tr, [x])[0].tolist() == got2.tolist()


def _random_transposes(rng, n, ranks, dtypes):
    cases = []
    for k in range(n):
        rank = int(ranks[k % len(ranks)])
        # small dims, often 1 (TFLM's "shrinked" cases), total <= ~2000
        shape = [int(rng.choice([1, 2, 3, 4, 5, 7])) for _ in range(rank)]
        perm = [int(p) for p in rng.permutation(rank)]
        dtype = dtypes[k % len(dtypes)]
        cases.append((shape, perm, dtype))
    return cases


def test_transpose_random_bit_exact_with_tflm(tmp_path):
    rng = np.random.default_rng(8)
    # TFLM takes ranks 1-5 and int8 / int16 / float32
    cases = _random_transposes(rng, 45, [1, 2, 3, 4, 5],
                               ["int8", "int8", "int16", "float32"])
    cases += [([2, 3, 4, 5, 6], [4, 2, 0, 1, 3], "int8"),   # no merging
              ([3, 1, 4, 1, 5], [4, 3, 2, 1, 0], "int8"),
              ([6, 4], [0, 1], "int8"),                     # identity
              ([2, 3, 4], [0, 2, 1], "int16"),
              ([1, 2, 3, 4], [0, 3, 1, 2], "int8")]         # NHWC -> NCHW
    models, ins = [], []
    for k, (shape, perm, dtype) in enumerate(cases):
        models.append(transpose_model(shape, perm, dtype))
        ins.append(values(shape, dtype, seed=k))
    res = run_batch([(m, [x]) for m, x in zip(models, ins)], tmp_path)
    for (shape, perm, dtype), raw, x, r in zip(cases, models, ins, res):
        assert "arena" in r, (shape, perm, r)
        want = tflm_run(raw, [x])[0]
        assert want.tobytes() == np.transpose(x, perm).tobytes()
        assert r["outs"][0] == want.tobytes(), (shape, perm, dtype)
        assert r["out_shape"][0] == list(want.shape)


def test_transpose_beyond_tflm(tmp_path):
    # rank 6 (TFLite's limit; TFLM stops at 5), rank 0, and any fixed-size
    # type (TFLM: int8 / int16 / float32): checked against numpy.
    rng = np.random.default_rng(9)
    cases = _random_transposes(rng, 8, [6], ["int8", "int32"])
    cases += [([2, 3, 4], [2, 0, 1], "int32"), ([5, 3], [1, 0], "uint8"),
              ([2, 2, 3], [1, 2, 0], "int64"), ([], [], "int8"),
              ([3, 4, 1, 2, 2, 3], [5, 0, 3, 1, 4, 2], "float32")]
    models, ins = [], []
    for k, (shape, perm, dtype) in enumerate(cases):
        perm_t = i32(perm) if perm else \
            T([0], "int32", data=np.zeros(0, np.int32))
        out = [shape[p] for p in perm]
        models.append(shape_op("TRANSPOSE", q8(shape, dtype), q8(out, dtype),
                               extra=perm_t))
        ins.append(np.asarray(values(shape, dtype, seed=k)))
    res = run_batch([(m, [x]) for m, x in zip(models, ins)], tmp_path)
    for (shape, perm, dtype), x, r in zip(cases, ins, res):
        assert "arena" in r, (shape, perm, r)
        assert r["outs"][0] == np.transpose(x, perm).tobytes(), (shape, perm)


def test_transpose_errors(tmp_path):
    m = opgen.Model()  # perm computed by the graph: not supported (TFLM too)
    x = m.add_tensor(q8([2, 3]))
    p = m.add_tensor(T([2], "int32"))
    y = m.add_tensor(q8([3, 2]))
    m.add_op("TRANSPOSE", [x, p], [y])
    m.inputs, m.outputs = [x, p], [y]
    cases = [
        (shape_op("TRANSPOSE", q8([2, 3]), q8([3, 2]), extra=i32([0, 0])),
         ["not a permutation"]),
        (shape_op("TRANSPOSE", q8([2, 3]), q8([3, 2]), extra=i32([1, 0, 2])),
         ["3 entries", "rank 2"]),
        (shape_op("TRANSPOSE", q8([2, 3]), q8([3, 2]), extra=i32([1, -1])),
         ["not a permutation"]),
        (shape_op("TRANSPOSE", q8([2, 3, 4]), q8([4, 3, 2]),
                  extra=i32([2, 0, 1])), ["(4, 3, 2)", "(4, 2, 3)"]),
        (shape_op("TRANSPOSE", q8([2, 3]), T([3, 2], scale=0.25),
                  extra=i32([1, 0])), ["cannot requantize"]),
        (shape_op("TRANSPOSE", q8([1] * 7), q8([1] * 7),
                  extra=i32(list(range(7)))), ["rank 7"]),
        (m.build(), ["must be a constant"]),
    ]
    res = run_batch([(raw, []) for raw, _ in cases], tmp_path)
    for (_, words), r in zip(cases, res):
        check_rejected(r, "op 0 (TRANSPOSE)", *words)


# --- Arena: the zero-copy saving against TFLM's own plan ------------------

def _reshape_models():
    found = []
    for path in sorted(glob.glob(os.path.join(SHARED, "**", "*.tflite"),
                                 recursive=True)):
        try:
            with open(path, "rb") as f:
                m = Model(f.read())
        except Exception:  # malformed test files
            continue
        if any(op.name == "RESHAPE" for op in m.operators):
            found.append(os.path.relpath(path, SHARED))
    return found


def test_shared_models_with_reshape_fit_tflm_arena():
    rels = _reshape_models()
    if not rels:
        pytest.skip("no shared models")
    for rel in rels:
        path = os.path.join(SHARED, rel)
        with open(path, "rb") as f:
            m = Model(f.read())
        total, buffers, root = planner.plan_model(m)
        for op in m.operators:
            if op.name == "RESHAPE":
                assert root[op.outputs[0]] == root[op.inputs[0]]
                assert op.outputs[0] not in buffers
        head = tflm_arena(path)["head"]
        assert total <= head, rel


def _arenas(raw, tmp_path):
    path = tmp_path / "peak.tflite"
    path.write_bytes(raw)
    return planner.plan_model(Model(raw))[0], tflm_arena(str(path))["head"]


def test_reshape_at_memory_peak_saves_its_size(tmp_path):
    n = 1024
    w = T([4, n], scale=0.01, data=np.ones((4, n), np.int8))
    b = T([4], "int32", scale=0.005, data=np.zeros(4, np.int32))
    # input -> RESHAPE -> FULLY_CONNECTED: TFLM holds input and copy at
    # op 0 (2n); we hold one buffer, then it and the FC output (n + 16).
    m = opgen.Model()
    x = m.add_tensor(T([1, 32, 32, 1], scale=0.5))
    r = m.add_tensor(T([1, n], scale=0.5))
    y = m.add_tensor(T([1, 4], scale=1.0))
    m.add_op("RESHAPE", [x, i32([1, n])], [r])
    m.add_op("FULLY_CONNECTED", [r, w, b], [y])
    ours, head = _arenas(m.build(), tmp_path)
    assert (ours, head) == (n + 16, 2 * n)
    # the reshape output is also a model output, the FC reads the input:
    # the saving is the whole reshape output.
    m = opgen.Model()
    x = m.add_tensor(T([1, n], scale=0.5))
    r = m.add_tensor(T([32, 32], scale=0.5))
    y = m.add_tensor(T([1, 4], scale=1.0))
    m.add_op("RESHAPE", [x, i32([32, 32])], [r])
    m.add_op("FULLY_CONNECTED", [x, w, b], [y])
    m.inputs, m.outputs = [x], [r, y]
    ours, head = _arenas(m.build(), tmp_path)
    assert ours <= head - n
