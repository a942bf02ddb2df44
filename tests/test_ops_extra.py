"""MIRROR_PAD, REVERSE_V2, BROADCAST_TO, SELECT_V2, ADD_N, GATHER_ND,
EMBEDDING_LOOKUP, CUMSUM, REDUCE_MIN, BROADCAST_ARGS,
DYNAMIC_UPDATE_SLICE, L2_POOL_2D, ELU (int8; float32 in test_ops_trig.py)
vs TFLM.

Seeded random single-op models from host_tools/conformance/gen_extra.py
run in the TFLM reference interpreter (the oracle) and, all in one
MicroPython process, in tflm (invoke under micropython.heap_lock(), each
model placed 0-3 bytes into a buffer so that constant parameters sit at
every alignment); outputs must be byte-identical. Hand-checked cases
follow TFLM's kernel tests (*_test.cc); models TFLM rejects, or would run
out of bounds, must raise PrepareError naming the operator and reason.
"""

import random

import numpy as np
import pytest

from conftest import run_mp
from host_tools import opgen
from host_tools.conformance.gen_extra import GENERATORS
from host_tools.oracle import Reference
from test_ops_movement import oracle_case, run_batch

T = opgen.Tensor
SEEDS = 16  # random models per op
Q = dict(scale=1.0, zero_point=0)


def test_random_models_match_tflm(tmp_path):
    """SEEDS seeded models per op (sizes 1-4), bit-exact with TFLM (the
    float32 outputs of an op in gen_extra.ULP: within that many ulps)."""
    from host_tools.conformance.gen_extra import ULP
    from host_tools.conformance.runner import ulp_apart
    g = np.random.default_rng(11)
    cases, want, names, ulps = [], [], [], []
    for op, gen in sorted(GENERATORS.items()):
        for i in range(SEEDS):
            rng = random.Random("extra:%s:%d" % (op, i))
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
            ulps.append(ULP.get(op, 0) if inputs is not None else 0)
    got = run_batch(cases, tmp_path)
    for name, w, ulp, (st, g_) in zip(names, want, ulps, got):
        assert st == "OK", "%s rejected: %s" % (name, g_)
        assert len(g_) == len(w), name
        for j, (a, b) in enumerate(zip(g_, w)):
            if ulp and a != b:  # float32 (the generator gave inputs)
                a = np.frombuffer(a, np.float32)
                b = np.frombuffer(b, np.float32)
                assert ulp_apart(a, b).max() <= ulp, (name, j)
            else:
                assert a == b, "%s output %d differs" % (name, j)


# --- hand-checked cases (TFLM's *_test.cc) --------------------------------

def ints(vals, dtype="int32", shape=None):
    vals = list(vals)
    return T([len(vals)] if shape is None else shape, dtype,
             data=np.array(vals, dtype))


def i8(vals):
    return np.array(vals, np.int8)


def f32(vals):
    return np.array(vals, np.float32)


def mirror(shape, pads, out, mode, dtype="int8", ptype="int32"):
    q = Q if dtype == "int8" else {}
    return opgen.single_op(
        "MIRROR_PAD", [T(shape, dtype, **q),
                       ints(np.ravel(pads), ptype, [len(shape), 2])],
        [T(out, dtype, **q)], {"mode": mode})


def hand_cases():
    """(name, model, inputs, expected outputs)."""
    c = []
    x6 = i8([1, 2, 3, 4, 5, 6])
    # mirror_pad_test.cc PadOneSide_right_Reflect / _left_Symmetric
    c.append(("mirror_right_reflect",
              mirror([2, 3], [[0, 1], [0, 1]], [3, 4], "REFLECT"), [x6],
              [i8([1, 2, 3, 2, 4, 5, 6, 5, 1, 2, 3, 2])]))
    c.append(("mirror_left_symmetric",
              mirror([2, 3], [[1, 0], [1, 0]], [3, 4], "SYMMETRIC",
                     ptype="int64"), [x6],
              [i8([1, 1, 2, 3, 1, 1, 2, 3, 4, 4, 5, 6])]))
    # a 1-D float32 reflect of 2 on each side: [3 2 | 1 2 3 4 | 3 2]
    c.append(("mirror_float_reflect",
              mirror([4], [[2, 2]], [8], "REFLECT", "float32"),
              [f32([1, 2, 3, 4])], [f32([3, 2, 1, 2, 3, 4, 3, 2])]))
    # reverse_test.cc-style: [2, 3] reversed along axis 1, then 0 and 1
    c.append(("reverse_axis1",
              opgen.single_op("REVERSE_V2", [T([2, 3], "float32"),
                                             ints([1])],
                              [T([2, 3], "float32")]),
              [f32([1, 2, 3, 4, 5, 6])], [f32([3, 2, 1, 6, 5, 4])]))
    c.append(("reverse_both",
              opgen.single_op("REVERSE_V2", [T([2, 3], "int16"),
                                             ints([-1, 0])],
                              [T([2, 3], "int16")]),
              [np.arange(1, 7, dtype=np.int16)],
              [np.array([6, 5, 4, 3, 2, 1], np.int16)]))
    # broadcast_to_test.cc-style: [3] -> [2, 3]; [2, 1] -> [2, 2]
    c.append(("broadcast_row",
              opgen.single_op("BROADCAST_TO", [T([3], "int32"),
                                               ints([2, 3])],
                              [T([2, 3], "int32")]),
              [np.array([1, 2, 3], np.int32)],
              [np.array([1, 2, 3, 1, 2, 3], np.int32)]))
    c.append(("broadcast_col",
              opgen.single_op("BROADCAST_TO", [T([2, 1], "int8", **Q),
                                               ints([2, 2], "int64")],
                              [T([2, 2], "int8", **Q)]),
              [i8([7, -8])], [i8([7, 7, -8, -8])]))
    # select_test.cc SelectFloat; a broadcast of a column and a scalar
    c.append(("select_float",
              opgen.single_op("SELECT_V2", [T([1, 1, 1, 4], "bool"),
                                            T([1, 1, 1, 4], "float32"),
                                            T([1, 1, 1, 4], "float32")],
                              [T([1, 1, 1, 4], "float32")]),
              [np.array([1, 0, 1, 0], bool), f32([.1, .2, .3, .4]),
               f32([.5, .6, .7, .8])], [f32([.1, .6, .3, .8])]))
    c.append(("select_broadcast",
              opgen.single_op("SELECT_V2", [T([2, 1], "bool"),
                                            T([2, 2], "int8", **Q),
                                            T([1], "int8", **Q)],
                              [T([2, 2], "int8", **Q)]),
              [np.array([1, 0], bool), i8([1, 2, 3, 4]), i8([9])],
              [i8([1, 2, 9, 9])]))
    # add_n_test.cc FloatAddN: ((0 + a) + b) + c in float32
    a, b, d = f32([-2, .2, .7, .8]), f32([.1, .2, .3, .5]), \
        f32([.5, .1, .1, .2])
    c.append(("add_n_float",
              opgen.single_op("ADD_N", [T([1, 2, 2, 1], "float32")
                                        for _ in range(3)],
                              [T([1, 2, 2, 1], "float32")]),
              [a, b, d], [((np.float32(0) + a) + b) + d]))
    # int8, unit scales: out = sum; with input zero point 1, TFLM's
    # accumulator starts at -1 (the input offset), not 0
    for zp, gold in ((0, [4, 6]), (1, [1, 3])):
        q = dict(scale=1.0, zero_point=zp)
        c.append(("add_n_int8_zp%d" % zp,
                  opgen.single_op("ADD_N", [T([2], "int8", **q),
                                            T([2], "int8", **q)],
                                  [T([2], "int8", **Q)]),
                  [i8([1, 2]), i8([3, 4])], [i8(gold)]))
    # gather_nd_test.cc GatherNd_Simple / _Slice (float32, int8)
    c.append(("gather_nd_simple",
              opgen.single_op("GATHER_ND", [T([2, 2], "float32"),
                                            ints([1, 0, 0, 1], shape=[2, 2])],
                              [T([2], "float32")]),
              [f32([1.1, 1.2, 2.1, 2.2])], [f32([2.1, 1.2])]))
    c.append(("gather_nd_slice",
              opgen.single_op("GATHER_ND", [T([2, 2], "int8", **Q),
                                            ints([1, 0], shape=[2, 1])],
                              [T([2, 2], "int8", **Q)]),
              [i8([1, 2, 3, 4])], [i8([3, 4, 1, 2])]))
    # as TFLM, only the flat position is checked: (0, 3) of [2, 2] is 3
    c.append(("gather_nd_flat",
              opgen.single_op("GATHER_ND", [T([2, 2], "int8", **Q),
                                            T([1, 2], "int32")],
                              [T([1], "int8", **Q)]),
              [i8([1, 2, 3, 4]), np.array([0, 3], np.int32)], [i8([4])]))
    # embedding_lookup_test.cc SimpleTest-style, and the hybrid int8 ->
    # float32 lookup (q * scale)
    tab = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    c.append(("embedding_float",
              opgen.single_op("EMBEDDING_LOOKUP",
                              [T([3], "int32"), T([3, 2, 2], "float32")],
                              [T([3, 2, 2], "float32")]),
              [np.array([1, 0, 2], np.int32), tab],
              [tab[[1, 0, 2]]]))
    q8 = np.array([[1, -2], [127, -128]], np.int8)
    c.append(("embedding_hybrid",
              opgen.single_op("EMBEDDING_LOOKUP",
                              [T([2], "int32"),
                               T([2, 2], "int8", scale=0.25, zero_point=0,
                                 data=q8)], [T([2, 2], "float32")]),
              [np.array([1, 1], np.int32)],
              [f32([31.75, -32, 31.75, -32])]))
    # cumsum_test.cc-style: [1 2 3 4] along axis 0 / -1, all four modes
    for excl, rev, gold in ((False, False, [1, 3, 6, 10]),
                            (True, False, [0, 1, 3, 6]),
                            (False, True, [10, 9, 7, 4]),
                            (True, True, [9, 7, 4, 0])):
        c.append(("cumsum_%d%d" % (excl, rev),
                  opgen.single_op("CUMSUM", [T([1, 4], "float32"),
                                             ints([-1], shape=[])],
                                  [T([1, 4], "float32")],
                                  {"exclusive": excl, "reverse": rev}),
                  [f32([1, 2, 3, 4])], [f32(gold)]))
    # int8 with unit scales: out = sum - zp (TFLM's accumulator starts at
    # the input offset), so zero point 0 gives the plain sums
    c.append(("cumsum_int8",
              opgen.single_op("CUMSUM", [T([2, 2], "int8", **Q),
                                         ints([0], shape=[])],
                              [T([2, 2], "int8", **Q)]),
              [i8([1, 2, 100, 126])], [i8([1, 2, 101, 127])]))
    # reduce_test.cc-style REDUCE_MIN (float32 keep_dims, int8)
    c.append(("reduce_min_float",
              opgen.single_op("REDUCE_MIN", [T([2, 2], "float32"),
                                             ints([1])],
                              [T([2, 1], "float32")], {"keep_dims": True}),
              [f32([1, -2, 3, 0])], [f32([-2, 0])]))
    c.append(("reduce_min_int8",
              opgen.single_op("REDUCE_MIN", [T([2, 3], "int8", **Q),
                                             ints([0, -2])],
                              [T([3], "int8", **Q)]),
              [i8([5, -7, 127, 4, 9, 126])], [i8([4, -7, 126])]))
    # broadcast_args_test.cc-style: [2, 1] and [3] -> [2, 3]; int64 with
    # an output longer than both
    c.append(("broadcast_args",
              opgen.single_op("BROADCAST_ARGS", [T([2], "int32"),
                                                 ints([3])],
                              [T([2], "int32")]),
              [np.array([2, 1], np.int32)], [np.array([2, 3], np.int32)]))
    c.append(("broadcast_args_int64",
              opgen.single_op("BROADCAST_ARGS", [T([1], "int64"),
                                                 T([2], "int64")],
                              [T([3], "int64")]),
              [np.array([5], np.int64), np.array([4, 1], np.int64)],
              [np.array([1, 4, 5], np.int64)]))
    # dynamic_update_slice_test.cc-style: a [2, 2] update into [3, 3]
    # at (1, 1); at (-1, 5) the start is clamped to (0, 1)
    dus = opgen.single_op("DYNAMIC_UPDATE_SLICE",
                          [T([3, 3], "float32"), T([2, 2], "float32"),
                           T([2], "int32")], [T([3, 3], "float32")])
    for at, gold in (([1, 1], [1, 2, 3, 4, -1, -2, 7, -3, -4]),
                     ([-1, 5], [1, -1, -2, 4, -3, -4, 7, 8, 9])):
        c.append(("dus_%d_%d" % tuple(at), dus,
                  [f32(range(1, 10)), f32([-1, -2, -3, -4]),
                   np.array(at, np.int32)], [f32(gold)]))
    c.append(("dus_int64",
              opgen.single_op("DYNAMIC_UPDATE_SLICE",
                              [T([4], "int16"), T([1], "int16"),
                               ints([2 ** 40], "int64")],
                              [T([4], "int16")]),
              [np.arange(4, dtype=np.int16), np.array([9], np.int16)],
              [np.array([0, 1, 2, 9], np.int16)]))
    # l2_pool_2d_test.cc FloatPoolingOpTestL2Pool: 2x2 windows, stride 2
    c.append(("l2_pool",
              opgen.single_op("L2_POOL_2D", [T([1, 2, 4, 1], "float32")],
                              [T([1, 1, 2, 1], "float32")],
                              {"padding": "VALID", "stride_h": 2,
                               "stride_w": 2, "filter_height": 2,
                               "filter_width": 2}),
              [f32([0, 6, 2, 4, 3, 2, 10, 7])], [f32([3.5, 6.5])]))
    # ELU int8, scales 1/16: round(16 * (exp(q / 16) - 1)) below 0
    e16 = dict(scale=1 / 16, zero_point=0)
    c.append(("elu_int8",
              opgen.single_op("ELU", [T([6], "int8", **e16)],
                              [T([6], "int8", **e16)]),
              [i8([-128, -16, -1, 0, 16, 127])],
              [i8([-16, -10, -1, 0, 16, 127])]))
    return c


def test_broadcast_args_conflict_fails_invoke(tmp_path):
    """BROADCAST_ARGS of [2, 3] and [4] (model inputs): TFLM aborts the
    process (TFLITE_CHECK_EQ, so not run here); ours raises InvokeError,
    and leaves the next invoke with valid shapes correct."""
    raw = opgen.single_op("BROADCAST_ARGS", [T([2], "int32"),
                                             T([1], "int32")],
                          [T([2], "int32")])
    got = run_batch([(raw, [np.array([2, 3], np.int32),
                            np.array([4], np.int32)]),
                     (raw, [np.array([2, 3], np.int32),
                            np.array([1], np.int32)])], tmp_path)
    assert got[0][0] == "ERR" and got[0][1].startswith("InvokeError"), got
    assert "do not broadcast" in got[0][1], got
    assert got[1] == ("OK", [np.array([2, 3], np.int32).tobytes()]), got


def test_index_out_of_range_fails_invoke(tmp_path):
    """GATHER_ND / EMBEDDING_LOOKUP with an index out of range: TFLM's
    eval fails; ours raises InvokeError naming the op and indices."""
    cases = [
        (opgen.single_op("GATHER_ND", [T([3, 2], "int8", **Q),
                                       T([2, 2], "int32")],
                         [T([2], "int8", **Q)]),
         [i8(range(6)), np.array([0, 0, 2, 2], np.int32)]),
        (opgen.single_op("GATHER_ND", [T([3, 2], "float32"),
                                       T([1, 1], "int32")],
                         [T([1, 2], "float32")]),
         [f32(range(6)), np.array([-1], np.int32)]),
        (opgen.single_op("EMBEDDING_LOOKUP", [T([2], "int32"),
                                              T([3, 2], "float32")],
                         [T([2, 2], "float32")]),
         [np.array([0, 3], np.int32), f32(range(6))]),
        (opgen.single_op("EMBEDDING_LOOKUP", [T([1], "int32"),
                                              T([3, 2], "int8", **Q)],
                         [T([1, 2], "int8", **Q)]),
         [np.array([-1], np.int32), i8(range(6))]),
    ]
    for raw, ins in cases:
        with pytest.raises(RuntimeError):
            oracle_case(raw, ins, None)
    got = run_batch(cases, tmp_path)
    for st, msg in got:
        assert st == "ERR" and msg.startswith("InvokeError"), (st, msg)
        assert "op 0 (" in msg and "outside" in msg, msg


def test_add_n_int8_sum_wraps_like_tflm(tmp_path):
    """20 int8 inputs at 127 with zero point -128: the int32 sum of the
    scaled inputs ((21 * 128 + 20 * 127) * 2**19) wraps, as TFLM's."""
    qi = dict(scale=0.5, zero_point=-128)
    cases = []
    for n, out_scale in ((20, 0.25), (20, 3e-6), (16, 1e-5)):
        raw = opgen.single_op("ADD_N", [T([3], "int8", **qi)
                                        for _ in range(n)],
                              [T([3], "int8", scale=out_scale,
                                 zero_point=5)])
        ins = [i8([127, -128, 100]) for _ in range(n)]
        cases.append((raw, ins))
    got = run_batch(cases, tmp_path)
    for (raw, ins), (st, out) in zip(cases, got):
        assert st == "OK", out
        assert out == oracle_case(raw, ins, None)[1]


def test_hand_checked_cases(tmp_path):
    hc = hand_cases()
    got = run_batch([(raw, ins) for _, raw, ins, _ in hc], tmp_path)
    for (name, raw, ins, gold), (st, out) in zip(hc, got):
        assert st == "OK", "%s rejected: %s" % (name, out)
        gold = [np.ascontiguousarray(x).tobytes() for x in gold]
        assert out == gold, name
        _, ref = oracle_case(raw, ins, None)
        assert ref == gold, name + " (TFLM)"


# --- rejections -------------------------------------------------------

def _nonconst(op, ins, outs, k, opts=None):
    """A model whose input k is a graph input instead of a constant."""
    ins = list(ins)
    t = ins[k]
    ins[k] = T(t.shape, t.dtype)
    return opgen.single_op(op, ins, outs, opts)


def reject_cases():
    """(model, words the PrepareError must contain, TFLM rejects it too)."""
    c = []
    # REFLECT pad as large as the dimension: TFLM reads out of bounds
    c.append((mirror([2, 3], [[0, 0], [3, 0]], [2, 6], "REFLECT"),
              ["too large", "REFLECT"], False))
    c.append((mirror([2, 3], [[0, 0], [4, 0]], [2, 7], "SYMMETRIC"),
              ["too large", "SYMMETRIC"], False))
    c.append((mirror([2, 3], [[0, 0], [1, 0]], [2, 3], "REFLECT"),
              ["output", "padded by"], False))
    c.append((mirror([2, 3], [[0, 0], [1, 0]], [2, 4], "REFLECT", "int16"),
              ["int16", "float32 and int8"], False))  # TFLM: Eval
    c.append((_nonconst("MIRROR_PAD", [T([2], "int8", **Q),
                                       ints([1, 1], shape=[1, 2])],
                        [T([4], "int8", **Q)], 1, {"mode": "REFLECT"}),
              ["paddings", "constant"], False))
    c.append((opgen.single_op("MIRROR_PAD", [T([2], "int8", **Q),
                                             ints([1, 1, 0], shape=[3])],
                              [T([4], "int8", **Q)], {"mode": "REFLECT"}),
              ["paddings", "(1, 2)"], True))
    rv = [T([2, 3, 4], "int8", **Q)]
    c.append((opgen.single_op("REVERSE_V2", rv + [ints([0, 2])],
                              [T([2, 3, 4], "int8", **Q)]),
              ["not consecutive"], False))  # TFLM: Eval
    c.append((opgen.single_op("REVERSE_V2", rv + [ints([1, 1])],
                              [T([2, 3, 4], "int8", **Q)]),
              ["not consecutive"], False))
    c.append((opgen.single_op("REVERSE_V2", rv + [ints([3])],
                              [T([2, 3, 4], "int8", **Q)]),
              ["axis 3", "out of range"], False))
    c.append((opgen.single_op("REVERSE_V2", rv + [ints([0], "int64")],
                              [T([2, 3, 4], "int8", **Q)]),
              ["axis", "int32"], True))
    c.append((_nonconst("REVERSE_V2", rv + [ints([0])],
                        [T([2, 3, 4], "int8", **Q)], 1),
              ["axis", "constant"], False))
    c.append((opgen.single_op("REVERSE_V2", [T([2], "float16"), ints([0])],
                              [T([2], "float16")]),
              ["float16", "supports"], True))
    bt = [T([2, 3], "int8", **Q)]
    c.append((opgen.single_op("BROADCAST_TO", bt + [ints([2, 2])],
                              [T([2, 2], "int8", **Q)]),
              ["cannot broadcast"], True))
    c.append((opgen.single_op("BROADCAST_TO", bt + [ints([4, 2, 3])],
                              [T([2, 2, 3], "int8", **Q)]),
              ["output", "(4, 2, 3)"], True))
    c.append((opgen.single_op("BROADCAST_TO", bt + [ints([3])],
                              [T([3], "int8", **Q)]),
              ["rank 2", "not below"], True))
    c.append((opgen.single_op("BROADCAST_TO", bt + [ints([1] * 6)],
                              [T([1] * 6, "int8", **Q)]),
              ["at most 5"], True))
    c.append((_nonconst("BROADCAST_TO", bt + [ints([2, 3])],
                        [T([2, 3], "int8", **Q)], 1),
              ["shape", "constant"], True))
    s2 = [T([2], "int8", **Q), T([2], "int8", **Q)]
    c.append((opgen.single_op("ADD_N", s2[:1], [T([2], "int8", **Q)]),
              ["at least two"], True))
    c.append((opgen.single_op("ADD_N", [T([2], "int16"), T([2], "int16")],
                              [T([2], "int16")]),
              ["int16", "int8 and float32"], True))
    c.append((opgen.single_op("ADD_N", [T([2], "int8", **Q),
                                        T([1, 2], "int8", **Q)],
                              [T([2], "int8", **Q)]),
              ["shape (1, 2) differs"], True))
    c.append((opgen.single_op("ADD_N", [T([2], "int8", **Q),
                                        T([2], "int8", scale=.5)],
                              [T([2], "int8", **Q)]),
              ["scale / zero point differ"], True))
    # multiplier 2 * 1 / (2**20 * 2**-20) = 2: TFLM aborts
    c.append((opgen.single_op("ADD_N", s2, [T([2], "int8",
                                              scale=2.0 ** -20)]),
              ["multiplier", "(0, 1)"], False))
    sel = [T([2], "bool"), T([2], "int8", **Q), T([2], "int8", **Q)]
    c.append((opgen.single_op("SELECT_V2", [T([2], "int8", **Q)] + sel[1:],
                              [T([2], "int8", **Q)]),
              ["condition", "bool"], True))
    c.append((opgen.single_op("SELECT_V2", sel[:2] + [T([3], "int8", **Q)],
                              [T([3], "int8", **Q)]),
              ["do not broadcast"], True))
    c.append((opgen.single_op("SELECT_V2", [T([2], "bool"), T([2], "int32"),
                                            T([2], "int32")],
                              [T([2], "int32")]),
              ["int32", "float32, int8, int16"], False))  # TFLM: Eval
    c.append((opgen.single_op("GATHER_ND", [T([2, 2], "int8", **Q),
                                            T([2, 3], "int32")],
                              [T([2], "int8", **Q)]),
              ["3 entries", "rank 2"], True))
    c.append((opgen.single_op("GATHER_ND", [T([2, 2], "int16"),
                                            T([1, 1], "int32")],
                              [T([1, 2], "int16")]),
              ["int16", "float32 and int8"], True))
    c.append((opgen.single_op("GATHER_ND", [T([2, 2], "int8", **Q),
                                            T([1, 1], "int64")],
                              [T([1, 2], "int8", **Q)]),
              ["int64", "int32"], True))
    c.append((opgen.single_op("EMBEDDING_LOOKUP",
                              [T([2], "int32"), T([3], "float32")],
                              [T([2], "float32")]),
              ["rank >= 2"], True))
    c.append((opgen.single_op("EMBEDDING_LOOKUP",
                              [T([2, 1], "int32"), T([3, 2], "float32")],
                              [T([2, 2], "float32")]),
              ["1-D int32"], True))
    c.append((opgen.single_op("EMBEDDING_LOOKUP",
                              [T([2], "int32"),
                               T([3, 2], "int8", scale=.5, zero_point=1)],
                              [T([2, 2], "float32")]),
              ["zero point 0"], True))
    c.append((opgen.single_op("EMBEDDING_LOOKUP",
                              [T([2], "int32"), T([3, 2], "float32")],
                              [T([2, 2], "int8", **Q)]),
              ["output", "int8", "float32"], True))
    cs = [T([2, 3], "int8", **Q)]
    c.append((_nonconst("CUMSUM", cs + [ints([1], shape=[])],
                        [T([2, 3], "int8", **Q)], 1),
              ["axis", "constant"], False))
    c.append((opgen.single_op("CUMSUM", cs + [ints([2], shape=[])],
                              [T([2, 3], "int8", **Q)]),
              ["axis 2", "out of range"], False))  # TFLM: Eval
    c.append((opgen.single_op("CUMSUM", cs + [ints([0, 1])],
                              [T([2, 3], "int8", **Q)]),
              ["one int32 value"], True))
    c.append((opgen.single_op("CUMSUM", [T([2], "int16"),
                                         ints([0], shape=[])],
                              [T([2], "int16")]),
              ["int16", "float32"], True))
    c.append((opgen.single_op("CUMSUM", cs + [ints([0], shape=[])],
                              [T([3, 2], "int8", **Q)]),
              ["must be equal"], True))
    c.append((opgen.single_op("REDUCE_MIN", [T([2, 2], "int8", **Q),
                                             ints([1])],
                              [T([2], "int8", scale=.5)]),
              ["scale and zero point"], False))  # TFLM: Eval
    c.append((opgen.single_op("REDUCE_MIN", [T([2, 2], "int16"),
                                             ints([1])], [T([2], "int16")]),
              ["int16", "int8 and float32"], False))
    c.append((opgen.single_op("BROADCAST_ARGS", [ints([2, 3]), ints([4])],
                              [T([2], "int32")]),
              ["do not broadcast", "(2, 3)", "(4,)"], False))  # TFLM: abort
    c.append((opgen.single_op("BROADCAST_ARGS", [T([2], "int32"),
                                                 T([1], "int64")],
                              [T([2], "int32")]),
              ["int32 or all int64"], True))
    c.append((opgen.single_op("BROADCAST_ARGS", [T([2], "int32"),
                                                 T([1, 1], "int32")],
                              [T([2], "int32")]),
              ["must be 1-D"], True))
    du = [T([3, 3], "int8", **Q), T([2, 4], "int8", **Q)]
    c.append((opgen.single_op("DYNAMIC_UPDATE_SLICE", du + [T([2], "int32")],
                              [T([3, 3], "int8", **Q)]),
              ["does not fit"], True))
    c.append((opgen.single_op("DYNAMIC_UPDATE_SLICE",
                              [du[0], T([2, 2], "int8", **Q),
                               T([3], "int32")], [T([3, 3], "int8", **Q)]),
              ["start_indices", "shape (2,)"], True))
    c.append((opgen.single_op("DYNAMIC_UPDATE_SLICE",
                              [T([2], "bool"), T([1], "bool"),
                               T([1], "int32")], [T([2], "bool")]),
              ["bool", "float32, int8, int16"], False))  # TFLM: Eval
    c.append((opgen.single_op("L2_POOL_2D", [T([1, 2, 2, 1], "int8", **Q)],
                              [T([1, 1, 1, 1], "int8", **Q)],
                              {"padding": "VALID", "filter_height": 2,
                               "filter_width": 2}),
              ["int8", "float32"], True))
    c.append((opgen.single_op("ELU", [T([2], "int32")], [T([2], "int32")]),
              ["int32", "int8, float32"], False))  # TFLM: Eval fails
    return c


def test_rejections(tmp_path):
    rc = reject_cases()
    for k, (raw, _, tflm_rejects) in enumerate(rc):
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


def test_l2_pool_sqrt_is_correctly_rounded(tmp_path):
    """l2_pool._sqrt_clamp against numpy's float32 sqrt (IEEE, correctly
    rounded) on 20000 patterns: random normals and subnormals, squares
    of float32 values (exact roots) and their neighbours (ties near),
    0, +inf, NaN; no clamp."""
    g = np.random.default_rng(5)
    bits = np.concatenate([
        g.integers(0, 0x7F800000, 12000, dtype=np.uint32),
        g.integers(1, 0x800000, 3000, dtype=np.uint32),
        np.array([0, 1, 0x7F7FFFFF, 0x7F800000, 0x7FC00000], np.uint32)])
    r = g.uniform(1, 2, 1600).astype(np.float32) * np.float32(2.0) ** \
        g.integers(-60, 60, 1600).astype(np.float32)
    sq = (r.astype(np.float64) ** 2).astype(np.float32).view(np.uint32)
    bits = np.concatenate([bits, sq, sq + 1, sq - 1])
    want = np.sqrt(bits.view(np.float32)).view(np.uint32)
    code = """
from array import array
from tflm.kernels.l2_pool import _sqrt_clamp
y = array('I', %r)
_sqrt_clamp(y, 0, len(y), array('I', [0xFF800000, 0x7F800000]))
print(' '.join('%%x' %% v for v in y))
""" % ([int(b) for b in bits],)
    got = [int(v, 16) for v in run_mp(code, tmp_path).split()]
    bad = [(hex(b), hex(g_), hex(w)) for b, g_, w in zip(bits, got, want)
           if g_ != w and not (w & 0x7FFFFFFF > 0x7F800000
                               and g_ & 0x7FFFFFFF > 0x7F800000)]
    assert len(got) == len(bits) and not bad, bad[:10]
