"""PADV2, STRIDED_SLICE, SLICE, PACK, UNPACK, SPLIT, SPLIT_V,
SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH vs
TFLM.

Seeded random single-op models from host_tools/conformance/gen_movement.py
run in the TFLM reference interpreter (the oracle) and, all in one
MicroPython process, in tflm (invoke under micropython.heap_lock(), each
model placed 0-3 bytes into a buffer so that constant parameters sit at
every alignment); outputs must be byte-identical. Hand-checked cases
follow TFLM's kernel tests (*_test.cc); models TFLM's Prepare rejects, or
that it would run out of bounds, must raise PrepareError naming the
operator and the reason.
"""

import random

import numpy as np
import pytest

from conftest import PKG, device_script
from mp_batch import run_on_device
from host_tools import device, opgen
from host_tools.conformance.gen_movement import (GENERATORS,
                                                 gen_space_to_batch)
from host_tools.oracle import Reference

T = opgen.Tensor
SEEDS = 24  # random models per op



def _random_input(g, dtype, shape):
    n = int(np.prod(shape, dtype=np.int64))
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return g.integers(0, 2, n).astype(bool)
    if dt.kind == "f":
        return (g.standard_normal(n) * 3).astype(dt)
    info = np.iinfo(dt)
    return g.integers(info.min, info.max, n, endpoint=True,
                      dtype=np.int64).astype(dt)


def run_batch(cases, tmp_path):
    """cases: list of (model bytes, inputs or None). Runs each in one
    MicroPython process (mp_batch); returns [(status, payload)] with
    status 'OK' (payload: list of output bytes) or 'ERR' (payload:
    'Type message', from load or from invoke)."""
    jobs = [(raw, [] if inputs is None else [inputs])
            for raw, inputs in cases]  # None: a model that must not load
    return [("OK", got[0] if got else []) if st == "OK" else ("ERR", got)
            for st, got in run_on_device(jobs, tmp_path)]


def oracle_case(raw, inputs, g):
    """(inputs, expected output bytes) from TFLM; inputs None -> random.
    """
    ref = Reference(raw)
    if inputs is None:
        inputs = [None] * ref.n_in
    ins = []
    for i, x in enumerate(inputs):
        d = ref.input_details(i)
        if x is None:
            x = _random_input(g, d["dtype"], d["shape"])
        ins.append(np.asarray(x, d["dtype"]).reshape(d["shape"]))
    return ins, [np.ascontiguousarray(o).tobytes() for o in ref.run(ins)]


def test_random_models_match_tflm(tmp_path):
    """SEEDS seeded models per op (sizes 1-4), bit-exact with TFLM."""
    g = np.random.default_rng(7)
    cases, want, names = [], [], []
    for op, gen in sorted(GENERATORS.items()):
        for i in range(SEEDS):
            rng = random.Random("movement:%s:%d" % (op, i))
            res = gen(rng, 1 + i % 4)
            raw, inputs = res if isinstance(res, tuple) else (res, None)
            try:
                ins, outs = oracle_case(raw, inputs, g)
            except RuntimeError as e:
                raise AssertionError("TFLM rejects %s case %d: %s"
                                     % (op, i, e))
            cases.append((raw, ins))
            want.append(outs)
            names.append("%s #%d" % (op, i))
    got = run_batch(cases, tmp_path)
    for name, w, (st, g_) in zip(names, want, got):
        assert st == "OK", "%s rejected: %s" % (name, g_)
        assert len(g_) == len(w), name
        for j, (a, b) in enumerate(zip(g_, w)):
            assert a == b, "%s output %d differs" % (name, j)


# --- hand-checked cases (TFLM's *_test.cc) --------------------------------

def i32(vals, shape=None):
    vals = list(vals)
    return T([len(vals)] if shape is None else shape, "int32",
              data=np.array(vals, np.int32))


def f32(vals):
    return np.array(vals, np.float32)


def i8(vals):
    return np.array(vals, np.int8)


def ss(shape, b, e, s, out, dtype, **opts):
    ins = [T(shape, dtype), i32(b), i32(e), i32(s)]
    return opgen.single_op("STRIDED_SLICE", ins, [T(out, dtype)], opts)


Q = dict(scale=1.0, zero_point=0)


def hand_cases():
    """(name, model, inputs, expected outputs)."""
    c = []
    # strided_slice_test.cc In2D_NegStrideBeginMask
    c.append(("ss_negstride_beginmask",
              ss([2, 3], [1, -2], [2, -4], [1, -1], [1, 3], "float32",
                 begin_mask=2),
              [f32([1, 2, 3, 4, 5, 6])], [f32([6, 5, 4])]))
    # In2D_ShrinkAxis2_BeginEndAxis1_NegativeSlice
    c.append(("ss_shrink2",
              ss([4, 1], [0, -1], [0, 0], [1, 1], [4], "int8",
                 begin_mask=1, end_mask=1, shrink_axis_mask=2),
              [i8([0, 1, 2, 3])], [i8([0, 1, 2, 3])]))
    # MinusThreeMinusFourMinusOne
    c.append(("ss_minus3_minus4_minus1",
              ss([4], [-3], [-4], [-1], [1], "float32"),
              [f32([1, 2, 3, 4])], [f32([2])]))
    # In3D_Strided2 (int16): [2,3,2] begin 0 end [2,3,2] strides 2
    c.append(("ss_3d_strided2",
              ss([2, 3, 2], [0, 0, 0], [2, 3, 2], [2, 2, 2], [1, 2, 1],
                 "int16"),
              [np.arange(1, 13, dtype=np.int16)],
              [np.array([1, 5], np.int16)]))
    # slice_test.cc In3D, and a box with size -1
    c.append(("slice_3d",
              opgen.single_op("SLICE", [T([2, 3, 2], "float32"),
                                        i32([0, 0, 0]), i32([2, 3, 2])],
                              [T([2, 3, 2], "float32")]),
              [f32(range(1, 13))], [f32(range(1, 13))]))
    c.append(("slice_minus1",
              opgen.single_op("SLICE", [T([3, 2, 3, 1], "int8", **Q),
                                        i32([1, 0, 0, 0]),
                                        i32([2, 1, -1, 1])],
                              [T([2, 1, 3, 1], "int8", **Q)]),
              [i8([1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6,
                   6])], [i8([3, 3, 3, 5, 5, 5])]))
    # pack_test.cc PackFloatThreeInputs (axis 0) and NegativeAxis (-1)
    for axis, out, gold in ((0, [3, 2], [1, 4, 2, 5, 3, 6]),
                            (-1, [2, 3], [1, 2, 3, 4, 5, 6])):
        c.append(("pack_axis%d" % axis,
                  opgen.single_op("PACK",
                                  [T([2], "float32") for _ in range(3)],
                                  [T(out, "float32")], {"axis": axis}),
                  [f32([1, 4]), f32([2, 5]), f32([3, 6])], [f32(gold)]))
    # unpack_test.cc UnpackFloatThreeOutputsNegativeAxisTwo
    c.append(("unpack_axis-2",
              opgen.single_op("UNPACK", [T([3, 2], "int8", **Q)],
                              [T([2], "int8", **Q) for _ in range(3)],
                              {"axis": -2}),
              [i8([1, 2, 3, 4, 5, 6])], [i8([1, 2]), i8([3, 4]),
                                         i8([5, 6])]))
    # split_test.cc FourSplit
    c.append(("split_four",
              opgen.single_op("SPLIT", [i32([0], [1]), T([4], "float32")],
                              [T([1], "float32") for _ in range(4)]),
              [f32([1, 2, 3, 4])], [f32([1]), f32([2]), f32([3]),
                                    f32([4])]))
    # split_v_test.cc SPLIT_V_ThreeOutputs
    c.append(("split_v_three",
              opgen.single_op("SPLIT_V", [T([4, 3], "int32"),
                                          i32([1, 1, 2]), i32([0], [1])],
                              [T([1, 3], "int32"), T([1, 3], "int32"),
                               T([2, 3], "int32")]),
              [np.arange(1, 13, dtype=np.int32)],
              [np.array(v, np.int32) for v in ([1, 2, 3], [4, 5, 6],
                                               range(7, 13))]))
    # space_to_batch_nd_test.cc / batch_to_space_nd_test.cc basic cases
    s2b = [1, 3, 9, 11, 2, 4, 10, 12, 5, 7, 13, 15, 6, 8, 14, 16]
    c.append(("s2b_basic",
              opgen.single_op("SPACE_TO_BATCH_ND",
                              [T([1, 4, 4, 1], "int8", **Q), i32([2, 2]),
                               i32([0, 0, 0, 0], [2, 2])],
                              [T([4, 2, 2, 1], "int8", **Q)]),
              [i8(range(1, 17))], [i8(s2b)]))
    b2s = [1, 5, 2, 6, 9, 13, 10, 14, 3, 7, 4, 8, 11, 15, 12, 16]
    c.append(("b2s_basic",
              opgen.single_op("BATCH_TO_SPACE_ND",
                              [T([4, 2, 2, 1], "float32"), i32([2, 2]),
                               i32([0, 0, 0, 0], [2, 2])],
                              [T([1, 4, 4, 1], "float32")]),
              [f32(range(1, 17))], [f32(b2s)]))
    # pad_test.cc Test2DInt8V2: pad value 42
    gold = [42] * 9 + [1, 2, 42, 42, 3, 4] + [42] * 9
    c.append(("padv2_int8",
              opgen.single_op("PADV2", [T([1, 2, 2, 1], "int8", **Q),
                                        i32([1, 1, 0, 0, 1, 1, 0, 0],
                                            [4, 2]),
                                        T([1], "int8", data=[42], **Q)],
                              [T([3, 2, 4, 1], "int8", **Q)]),
              [i8([1, 2, 3, 4])], [i8(gold)]))
    # depth_to_space_test.cc-style: [1, 1, 2, 4] with block 2 -> rows
    # [1, 2, 5, 6] and [3, 4, 7, 8]; space_to_depth is the inverse
    c.append(("depth_to_space_int8",
              opgen.single_op("DEPTH_TO_SPACE", [T([1, 1, 2, 4], "int8", **Q)],
                              [T([1, 2, 4, 1], "int8", **Q)],
                              {"blockSize": 2}),
              [i8(range(1, 9))], [i8([1, 2, 5, 6, 3, 4, 7, 8])]))
    c.append(("space_to_depth_float",
              opgen.single_op("SPACE_TO_DEPTH", [T([1, 2, 4, 1], "float32")],
                              [T([1, 1, 2, 4], "float32")],
                              {"blockSize": 2}),
              [f32([1, 2, 5, 6, 3, 4, 7, 8])], [f32(range(1, 9))]))
    return c


def test_hand_checked_cases(tmp_path):
    hc = hand_cases()
    got = run_batch([(raw, ins) for _, raw, ins, _ in hc], tmp_path)
    for (name, raw, ins, gold), (st, out) in zip(hc, got):
        assert st == "OK", "%s rejected: %s" % (name, out)
        gold = [np.ascontiguousarray(x).tobytes() for x in gold]
        assert out == gold, name
        _, ref = oracle_case(raw, ins, None)
        assert ref == gold, name + " (TFLM)"


# --- SPACE_TO_BATCH_ND padding -----------------------------------------------

def s2b_numpy(x, blk, pads, fill):
    """TensorFlow's space_to_batch of x (N, H, W, C) or (N, H, C)."""
    r3 = x.ndim == 3
    if r3:
        x = x[:, :, None, :]
        blk, pads = list(blk) + [1], list(pads) + [[0, 0]]
    n, c = x.shape[0], x.shape[3]
    x = np.pad(x, [(0, 0), tuple(pads[0]), tuple(pads[1]), (0, 0)],
               constant_values=fill)
    bh, bw = blk
    oh, ow = x.shape[1] // bh, x.shape[2] // bw
    y = x.reshape(n, oh, bh, ow, bw, c).transpose(2, 4, 0, 1, 3, 5)
    y = y.reshape(bh * bw * n, oh, ow, c)
    return y[:, :, 0, :] if r3 else y


def test_space_to_batch_pads_with_zero_point(tmp_path):
    """Padded SPACE_TO_BATCH_ND: the padding is the output zero point
    (int8) or 0.0, as TFLite; TFLM leaves it uninitialized, so the
    oracle is compared outside the padding only."""
    g = np.random.default_rng(3)
    cases, want, masks = [], [], []
    padded = dynamic = 0
    for i in range(20):
        res = gen_space_to_batch(random.Random("s2b:%d" % i), 1 + i % 4,
                                 padded=True)
        raw, given = res if isinstance(res, tuple) else (res, None)
        m = opgen.parse(raw)
        ts = m.subgraphs[0].tensors
        x_t, y_t = ts[m.subgraphs[0].inputs[0]], ts[m.subgraphs[0].outputs[0]]
        rank = len(x_t.shape)
        if given is None:  # constant block_shape and paddings
            blk = np.frombuffer(bytes(m.buffers[ts[1].buffer].data),
                                np.int32)
            pads = np.frombuffer(bytes(m.buffers[ts[2].buffer].data),
                                 np.int32)
        else:
            blk, pads = given[1], given[2]
        blk, pads = list(blk), np.reshape(pads, (rank - 2, 2)).tolist()
        dt = np.int8 if x_t.type == opgen.DTYPES["int8"] else np.float32
        x = _random_input(g, dt, list(x_t.shape)).reshape(list(x_t.shape))
        zp = int(y_t.quantization.zeroPoint[0]) if dt == np.int8 else 0
        want.append(s2b_numpy(x, blk, pads, zp).tobytes())
        flag = s2b_numpy(np.zeros(x.shape, np.int8), blk, pads, 1)
        masks.append(np.repeat(flag.ravel() == 0, np.dtype(dt).itemsize))
        cases.append((raw, [x] if given is None else [x, given[1],
                                                      given[2]]))
        padded += sum(sum(p) for p in pads) > 0
        dynamic += given is not None
    assert padded >= 10 and dynamic >= 1, (padded, dynamic)
    got = run_batch(cases, tmp_path)
    for k, ((raw, ins), w, keep, (st, out)) in enumerate(
            zip(cases, want, masks, got)):
        assert st == "OK", out
        assert out[0] == w, "case %d" % k
        ref = np.frombuffer(Reference(raw).run(ins)[0].tobytes(), np.uint8)
        assert (ref[keep] == np.frombuffer(w, np.uint8)[keep]).all(), k


# --- SLICE with begin / size computed by the graph ---------------------------

def test_slice_begin_size_at_invoke(tmp_path):
    """begin / size as model inputs (int32, int64): TFLM reads them at
    invoke, so does tflm; a box that does not fit raises InvokeError."""
    cases, want = [], []
    for it in ("int32", "int64"):
        raw = opgen.single_op("SLICE", [T([3, 4, 2], "int8", **Q),
                                        T([3], it), T([3], it)],
                              [T([2, 2, 2], "int8", **Q)])
        x = np.arange(24, dtype=np.int8)
        for b, n, ok in (([1, 2, 0], [2, 2, 2], True),
                         ([1, 1, 0], [-1, 2, -1], True),
                         ([1, 0, 0], [2, -1, 2], False),  # -1: 4, not 2
                         ([2, 0, 0], [2, 2, 2], False),   # past the end
                         ([-1, 0, 0], [2, 2, 2], False),
                         ([0, 0, 0], [2, 2, 3], False)):
            ins = [x, np.array(b, it), np.array(n, it)]
            cases.append((raw, ins))
            want.append(oracle_case(raw, ins, None)[1] if ok else None)
    got = run_batch(cases, tmp_path)
    for k, (w, (st, out)) in enumerate(zip(want, got)):
        if w is None:
            assert st == "ERR" and out.startswith("InvokeError"), (k, out)
            assert "do not give a box" in out
        else:
            assert st == "OK" and out == w, (k, out)


def test_space_batch_params_at_invoke(tmp_path):
    """block_shape and crops / paddings as model inputs: values that do
    not fit the stored shapes raise InvokeError at invoke."""
    cases, want = [], []
    for op, xs, ys in (("BATCH_TO_SPACE_ND", [4, 2, 3, 2], [1, 3, 5, 2]),
                       ("SPACE_TO_BATCH_ND", [1, 3, 5, 2], [4, 2, 3, 2])):
        raw = opgen.single_op(op, [T(xs, "int8", **Q), T([2], "int32"),
                                   T([2, 2], "int32")], [T(ys, "int8", **Q)])
        x = np.arange(np.prod(xs)).astype(np.int8)
        for blk, pads, ok in (([2, 2], [[0, 1], [1, 0]], True),
                              ([2, 2], [[1, 0], [0, 1]], True),
                              ([4, 1], [[0, 1], [1, 0]], False),
                              ([2, 2], [[0, 1], [1, 1]], False),
                              ([2, 2], [[-1, 2], [1, 0]], False),
                              ([0, 2], [[0, 1], [1, 0]], False),
                              ([2, -2], [[0, 1], [1, 0]], False)):
            ins = [x, np.array(blk, np.int32), np.array(pads, np.int32)]
            cases.append((raw, ins))
            want.append(ok)
    got = run_batch(cases, tmp_path)
    for k, (ok, (raw, ins), (st, out)) in enumerate(zip(want, cases, got)):
        if not ok:
            assert st == "ERR" and out.startswith("InvokeError"), (k, out)
            assert "do not fit" in out, out
            continue
        assert st == "OK", (k, out)
        ref = Reference(raw).run(ins)[0].tobytes()
        if raw == cases[0][0]:  # BATCH_TO_SPACE_ND: no padding
            assert out[0] == ref, k
        else:
            blk, pads = list(ins[1]), ins[2].tolist()
            x = ins[0].reshape(1, 3, 5, 2)
            assert out[0] == s2b_numpy(x, blk, pads, 0).tobytes(), k


# --- rejections --------------------------------------------------------------

def _nonconst(op, ins, outs, k, opts=None):
    """ins with ins[k] turned into a model input."""
    ins = list(ins)
    t = ins[k]
    ins[k] = T(t.shape, t.dtype)
    return opgen.single_op(op, ins, outs, opts)


def reject_cases():
    """(model, words in the PrepareError message, TFLM rejects too)."""
    def x4():
        return T([2, 3], "int8", **Q)

    c = []
    c.append((ss([4], [0], [4], [0], [4], "int8"), ["stride", "0"], True))
    c.append((_nonconst("STRIDED_SLICE", [x4(), i32([0, 0]), i32([2, 3]),
                                          i32([1, 1])], [x4()], 1),
              ["begin", "constant"], True))
    c.append((ss([1, 1, 1, 1, 2], [0] * 5, [1, 1, 1, 1, 2], [1] * 5,
                 [1, 1, 1, 1, 2], "int8"), ["rank 5"], True))
    c.append((ss([4], [1], [3], [1], [3], "int8"), ["output", "(2,)"],
              True))
    # shrink with a negative stride / a begin past the end: TFLM writes
    # nothing (its output keeps stale bytes)
    c.append((ss([4], [2], [0], [-1], [], "int8", shrink_axis_mask=1),
              ["shrink_axis", "writes no output"], False))
    c.append((ss([4], [5], [6], [1], [], "int8", shrink_axis_mask=1),
              ["shrink_axis", "writes no output"], False))
    c.append((opgen.single_op("SLICE", [x4(), i32([1, 0]), i32([2, 3])],
                              [T([2, 3], "int8", **Q)]),
              ["axis 0", "begin 1, size 2"], False))
    c.append((_nonconst("SPLIT", [i32([0], [1]), T([4], "int8", **Q)],
                        [T([2], "int8", **Q) for _ in range(2)], 0),
              ["axis", "constant"], True))
    c.append((opgen.single_op("SPLIT", [i32([0], [1]), T([5], "int8", **Q)],
                              [T([2], "int8", **Q) for _ in range(2)]),
              ["add up to 4", "has 5"], False))
    c.append((opgen.single_op("PACK", [T([2, 3], "int8", **Q),
                                       T([2, 3], "int8", **Q)],
                              [T([2, 3, 3], "int8", **Q)],
                              {"axis": 1}),
              ["dimension 1 is 3"], False))
    c.append((opgen.single_op("SPACE_TO_BATCH_ND",
                              [T([1, 3, 4, 1], "int8", **Q), i32([2, 2]),
                               i32([0, 0, 0, 0], [2, 2])],
                              [T([4, 1, 2, 1], "int8", **Q)]),
              ["not divisible"], False))
    c.append((opgen.single_op("BATCH_TO_SPACE_ND",
                              [T([4, 2, 2, 1], "int16"), i32([2, 2]),
                               i32([0, 0, 0, 0], [2, 2])],
                              [T([1, 4, 4, 1], "int16")]),
              ["int16", "supports float32, int8"], False))  # TFLM: Eval
    c.append((opgen.single_op("DEPTH_TO_SPACE", [T([1, 1, 1, 3], "int8", **Q)],
                              [T([1, 2, 2, 1], "int8", **Q)],
                              {"blockSize": 2}),
              ["3 channels", "block_size**2 = 4"], True))
    c.append((opgen.single_op("SPACE_TO_DEPTH", [T([1, 2, 2, 1], "int16")],
                              [T([1, 1, 1, 4], "int16")], {"blockSize": 2}),
              ["int16", "float32 or int8"], True))
    for bs in (0, -1):
        c.append((opgen.single_op("SPACE_TO_DEPTH",
                                  [T([1, 2, 2, 1], "int8", **Q)],
                                  [T([1, 1, 1, 4], "int8", **Q)],
                                  {"blockSize": bs}),
                  ["block_size %d" % bs], True))
    c.append((opgen.single_op("DEPTH_TO_SPACE", [T([1, 1, 1, 4], "int8", **Q)],
                              [T([1, 2, 2, 1], "int8", **Q)]),
              ["block_size 0"], True))  # options of type NONE: default 0
    c.append((opgen.single_op("SPACE_TO_DEPTH", [T([1, 3, 2, 1], "int8", **Q)],
                              [T([1, 1, 1, 4], "int8", **Q)],
                              {"blockSize": 2}),
              ["3x2", "block_size 2"], True))
    c.append((opgen.single_op("DEPTH_TO_SPACE", [T([1, 1, 4], "int8", **Q)],
                              [T([1, 2, 1], "int8", **Q)],
                              {"blockSize": 2}),
              ["rank 4"], True))
    c.append((opgen.single_op("DEPTH_TO_SPACE", [T([1, 1, 1, 4], "int8", **Q)],
                              [T([1, 2, 2, 1], "float32")],
                              {"blockSize": 2}),
              ["int8", "float32", "the same for both"], True))
    # TFLM writes the output shape it computes over the stored one
    c.append((opgen.single_op("DEPTH_TO_SPACE", [T([1, 1, 1, 4], "int8", **Q)],
                              [T([1, 4, 1, 1], "int8", **Q)],
                              {"blockSize": 2}),
              ["(1, 4, 1, 1)", "gives (1, 2, 2, 1)"], False))
    # pad_test.cc Test2DInt8V2ExpectFailurePadValueQuantizationMismatch
    c.append((opgen.single_op("PADV2", [T([1, 2, 2, 1], "int8", **Q),
                                        i32([0] * 8, [4, 2]),
                                        T([1], "int8", data=[3],
                                          scale=.5, zero_point=0)],
                              [T([1, 2, 2, 1], "int8", **Q)]),
              ["constant_values", "scale and zero point"], True))
    # an int64 perm: TFLM reads any perm as int32 values (here [2, 0, 0]
    # and then whatever follows: garbage); refused
    c.append((opgen.single_op(
        "TRANSPOSE", [T([2, 3, 4], "int8", **Q),
                      T([3], "int64", data=np.array([2, 0, 1], np.int64))],
        [T([4, 2, 3], "int8", **Q)]), ["perm", "int32", "int64"], False))
    return c


def test_rejections(tmp_path):
    rc = reject_cases()
    for raw, _, tflm_rejects in rc:
        if tflm_rejects:
            with pytest.raises(RuntimeError):
                Reference(raw)
    got = run_batch([(raw, None) for raw, _, _ in rc], tmp_path)
    for k, ((raw, words, _), (st, msg)) in enumerate(zip(rc, got)):
        assert st == "ERR", "case %d accepted" % k
        assert msg.startswith("PrepareError"), msg
        assert "op 0 (" in msg, msg
        for w in words:
            assert w in msg, (k, w, msg)


# --- options of another union type -------------------------------------------

def retype_options(raw, options_type):
    """raw with op 0's builtin_options_type replaced (its table kept): TFLM's
    parser then ignores the table and uses the defaults."""
    import flatbuffers
    from tflite_micro.tensorflow.lite.micro.python import \
        schema_py_generated as s
    m = s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
    m.subgraphs[0].operators[0].builtinOptionsType = options_type
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_options_of_another_type_are_not_read(tmp_path):
    """A StridedSliceOptions / PackOptions / UnpackOptions table whose union
    type says another table (or NONE): TFLM reads none of its fields
    (regression: the masks / counts were read anyway). STRIDED_SLICE then
    slices without masks, like TFLM; PACK / UNPACK get values_count / num
    0, for which TFLM copies nothing: rejected."""
    x = np.arange(1, 7, dtype=np.int8)
    # begin_mask would give x[0:3]; without it x[1:3]
    sl = ss([6], [1], [3], [1], [2], "int8", begin_mask=1)
    cases = [(retype_options(sl, t), [x]) for t in (0, 59)]
    pk = opgen.single_op("PACK", [T([2], "int8", **Q), T([2], "int8", **Q)],
                         [T([2, 2], "int8", **Q)], {"axis": 0})
    up = opgen.single_op("UNPACK", [T([2, 3], "int8", **Q)],
                         [T([3], "int8", **Q), T([3], "int8", **Q)],
                         {"axis": 0})
    cases += [(retype_options(pk, 64), [x[:2], x[2:4]]),
              (retype_options(up, 0), [x])]
    want = Reference(cases[0][0]).run([x])[0]
    assert want.tobytes() == x[1:3].tobytes()
    got = run_batch(cases, tmp_path)
    for st, out in got[:2]:
        assert st == "OK" and out == [x[1:3].tobytes()], (st, out)
    for st, msg in got[2:]:
        assert st == "ERR" and "PrepareError" in msg, (st, msg)
        assert "values_count 0" in msg or "num 0" in msg, msg


LEAK_RUNNER = device_script("movement_leak.py")


def test_invoke_errors_do_not_grow_the_heap(tmp_path):
    """SLICE / SPACE_TO_BATCH_ND with begin / block_shape computed by the
    graph: 300 invokes that raise the InvokeError made at prepare (under
    heap_lock too) keep the heap's free bytes (regression: every raise
    appended its traceback to that one exception, ~48 bytes per raise)."""
    paths = []
    for k, (op, ins, y) in enumerate((
            ("SLICE", [T([3, 4], "int8", **Q), T([2], "int32"),
                       T([2], "int32")], T([2, 2], "int8", **Q)),
            ("SPACE_TO_BATCH_ND", [T([1, 4, 4, 1], "int8", **Q),
                                   T([2], "int32"), T([2, 2], "int32")],
             T([4, 2, 2, 1], "int8", **Q)))):
        p = tmp_path / ("%d.tflite" % k)
        p.write_bytes(opgen.single_op(op, ins, [y]))
        paths.append(str(p))
    script = tmp_path / "leak.py"
    script.write_text(LEAK_RUNNER)
    proc = device.run_script(str(script), [PKG] + paths, timeout=120)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    leaks = [int(x.split()[1]) for x in proc.stdout.splitlines()
             if x.startswith("LEAK")]
    assert len(leaks) == 2 and max(leaks) < 1000, leaks
