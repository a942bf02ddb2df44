"""MIRROR_PAD, REVERSE_V2, BROADCAST_TO, SELECT_V2, ADD_N vs TFLM.

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

from host_tools import opgen
from host_tools.conformance.gen_extra import GENERATORS
from host_tools.oracle import Reference
from test_ops_movement import oracle_case, run_batch

T = opgen.Tensor
SEEDS = 16  # random models per op
Q = dict(scale=1.0, zero_point=0)


def test_random_models_match_tflm(tmp_path):
    """SEEDS seeded models per op (sizes 1-4), bit-exact with TFLM."""
    g = np.random.default_rng(11)
    cases, want, names = [], [], []
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
    got = run_batch(cases, tmp_path)
    for name, w, (st, g_) in zip(names, want, got):
        assert st == "OK", "%s rejected: %s" % (name, g_)
        assert len(g_) == len(w), name
        for j, (a, b) in enumerate(zip(g_, w)):
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
