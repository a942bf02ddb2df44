"""BATCH_MATMUL (int8, int16, float32) vs TFLM.

Seeded random single-op models from host_tools/conformance/gen_matmul.py
run in the TFLM reference interpreter (the oracle) and, all in one
MicroPython process, in tflm (invoke under micropython.heap_lock(), each
model placed 0-3 bytes into a buffer); outputs must be byte-identical.
Hand-checked cases follow TFLM's batch_matmul_test.cc; models TFLM
rejects, or runs with undefined arithmetic, must raise PrepareError
naming the operator and the reason.
"""

import random

import numpy as np
import pytest

from host_tools import opgen
from host_tools.conformance.gen_matmul import GENERATORS
from host_tools.oracle import Reference
from test_ops_movement import oracle_case, run_batch

T = opgen.Tensor
SEEDS = 48  # random models


def test_random_models_match_tflm(tmp_path):
    """SEEDS seeded models (sizes 1-4), bit-exact with TFLM."""
    g = np.random.default_rng(13)
    cases, want, names = [], [], []
    for op, gen in sorted(GENERATORS.items()):
        for i in range(SEEDS):
            rng = random.Random("matmul:%s:%d" % (op, i))
            raw = gen(rng, 1 + i % 4)
            try:
                ins, outs = oracle_case(raw, None, g)
            except RuntimeError as e:
                raise AssertionError("TFLM rejects %s case %d: %s"
                                     % (op, i, e))
            cases.append((raw, ins))
            want.append(outs)
            names.append("%s #%d" % (op, i))
    got = run_batch(cases, tmp_path)
    for name, w, (st, g_) in zip(names, want, got):
        assert st == "OK", "%s rejected: %s" % (name, g_)
        assert g_ == w, "%s differs" % name


def _bmm(lshape, rshape, oshape, dtype="float32", adj_x=False, adj_y=False,
         ql=None, qr=None, qo=None, rdata=None):
    rhs = (T(rshape, dtype, **(qr or {})) if rdata is None else
           T(rshape, dtype, data=rdata, **(qr or {})))
    return opgen.single_op("BATCH_MATMUL",
                           [T(lshape, dtype, **(ql or {})), rhs],
                           [T(oshape, dtype, **(qo or {}))],
                           {"adj_x": adj_x, "adj_y": adj_y})


def _iota(n, start=1, dtype=np.float32):
    return np.arange(start, start + n).astype(dtype)


def hand_cases():
    """(name, model, inputs, expected outputs), from batch_matmul_test.cc."""
    c = []
    c.append(("float_ones", _bmm([3, 2, 1, 4], [3, 1, 4, 1], [3, 2, 1, 1]),
              [_iota(24), _iota(12)],
              [np.array([30, 70, 278, 382, 782, 950], np.float32)]))
    c.append(("float_flatten_lhs_adjoint",
              _bmm([3, 4, 2], [1, 4, 3], [3, 2, 3], adj_x=True),
              [_iota(24), _iota(12)],
              [np.array([118, 134, 150, 140, 160, 180, 294, 342, 390, 316,
                         368, 420, 470, 550, 630, 492, 576, 660],
                        np.float32)]))
    c.append(("float_simple", _bmm([1, 2, 3], [1, 3, 4], [1, 2, 4]),
              [_iota(6), _iota(12, 7)],
              [np.array([74, 80, 86, 92, 173, 188, 203, 218], np.float32)]))
    # RHS constant, not adjoint: transposed once at prepare
    c.append(("float_const_rhs",
              _bmm([1, 6, 2], [2, 3], [1, 6, 3],
                   rdata=np.array([6, 3, 7, 4, 6, 9], np.float32)),
              [np.array([6, 3, 7, 4, 6, 9, 2, 6, 7, 4, 3, 7], np.float32)],
              [np.array([48, 36, 69, 58, 45, 85, 72, 72, 123, 36, 42, 68,
                         58, 45, 85, 46, 51, 84], np.float32)]))
    lhs = np.array([1, 2, 3, 4, 5, 6, 7, 8, -9, -10,
                    1, 2, 3, 4, 5, 6, 7, -8, 9, -10], np.float32)
    rhs = np.repeat(np.arange(1, 11), 3).astype(np.float32)
    # int8: [-63.5, 64] -> scale 0.5, zero point -1; output [-127, 128]
    q8 = dict(scale=0.5, zero_point=-1)
    c.append(("int8_simple",
              _bmm([2, 10], [10, 3], [2, 3], "int8", ql=q8, qr=q8,
                   qo=dict(scale=1.0, zero_point=-1)),
              [(lhs * 2 - 1).astype(np.int8), (rhs * 2 - 1).astype(np.int8)],
              [np.array([22, 22, 22, 56, 56, 56], np.int8)]))
    s16 = float(np.float32(10.0 / 32767))
    q16 = dict(scale=s16, zero_point=0)

    def quant16(v):
        return np.round(v / np.float32(s16)).astype(np.int16)
    c.append(("int16_simple",
              _bmm([2, 10], [10, 3], [2, 3], "int16", ql=q16, qr=q16,
                   qo=dict(scale=1.0, zero_point=0)),
              [quant16(lhs), quant16(rhs)],
              [np.array([23, 23, 23, 57, 57, 57], np.int16)]))
    # the same int8 product with both operands transposed (adj_x, adj_y)
    # and a constant rhs
    l8 = (lhs * 2 - 1).astype(np.int8).reshape(2, 10)
    r8 = (rhs * 2 - 1).astype(np.int8).reshape(10, 3)
    c.append(("int8_both_adjoint_const",
              _bmm([10, 2], [3, 10], [2, 3], "int8", True, True, q8, q8,
                   dict(scale=1.0, zero_point=-1),
                   rdata=np.ascontiguousarray(r8.T)),
              [np.ascontiguousarray(l8.T)],
              [np.array([22, 22, 22, 56, 56, 56], np.int8)]))
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


def test_wide_sums(tmp_path):
    """Sums far from a trained model's: int8 depth 600 at the extremes
    (each int32 sum near 2**25, several gather chunks, more columns than
    a scratch chunk), and int16 depth 300 of -32768 * -32768 products
    (past 2**38: the int64 limbs carry), vs TFLM."""
    q = dict(scale=0.01, zero_point=-128)
    raw8 = _bmm([2, 600], [600, 150], [2, 150], "int8", ql=q,
                qr=dict(scale=0.02, zero_point=127),
                qo=dict(scale=200.0, zero_point=3))
    g = np.random.default_rng(3)
    l8 = g.choice(np.array([-128, 127], np.int8), 1200)
    r8 = g.choice(np.array([-128, 127], np.int8), 90000)
    q16 = dict(scale=1.0, zero_point=0)
    raw16 = _bmm([2, 300], [300, 3], [2, 3], "int16", ql=q16, qr=q16,
                 qo=dict(scale=float(2 ** 24), zero_point=0))
    l16 = np.full(600, -32768, np.int16)
    l16[300:] = 32767
    r16 = np.full(900, -32768, np.int16)
    cases = [(raw8, [l8, r8]), (raw16, [l16, r16])]
    got = run_batch(cases, tmp_path)
    for (raw, ins), (st, out) in zip(cases, got):
        assert st == "OK", out
        _, ref = oracle_case(raw, ins, None)
        assert out == ref
    # the int16 sums: 300 * 2**30 and -300 * 32767 * 32768, / 2**24
    assert np.frombuffer(out[0], np.int16).tolist() == \
        [19200] * 3 + [-19199] * 3


def reject_cases():
    """(model, words the PrepareError must contain, TFLM rejects it too)."""
    q = dict(scale=0.5, zero_point=0)
    c = []
    c.append((opgen.single_op("BATCH_MATMUL", [T([2, 3], "int8", **q),
                                               T([3, 4], "float32")],
                              [T([2, 4], "int8", **q)]),
              ["rhs", "mixed types"], True))
    c.append((_bmm([2, 3], [3, 4], [2, 4], "int32"),
              ["int32", "float32, int8 and int16"], True))
    c.append((_bmm([3], [3, 4], [4]), ["rank 1", "2 to 5"], True))
    c.append((_bmm([1, 1, 1, 1, 2, 3], [3, 4], [1, 1, 1, 1, 2, 4]),
              ["rank 6", "2 to 5"], True))
    c.append((_bmm([2, 2, 3], [3, 3, 4], [3, 2, 4]),
              ["do not broadcast"], True))
    c.append((_bmm([2, 3], [2, 4], [2, 4]), ["depths 3 and 2"], True))
    c.append((_bmm([2, 3], [3, 4], [2, 5]), ["output", "expected (2, 4)"],
              True))
    c.append((_bmm([2, 2, 3], [2, 3, 4], [16]), ["output", "(2, 2, 4)"],
              True))  # the right count, a lower rank
    c.append((_bmm([2, 3], [3, 4], [2, 4], "int16",
                   ql=dict(scale=0.5, zero_point=1), qr=q, qo=q),
              ["zero point 1", "must be 0"], True))
    # shift 15 for int16: TFLM's int64 rounding shifts by -1
    c.append((_bmm([2, 3], [3, 4], [2, 4], "int16", ql=q, qr=q,
                   qo=dict(scale=2.0 ** -16, zero_point=0)),
              ["too large", "shift 15"], False))
    c.append((_bmm([2, 3], [3, 4], [2, 4], "int8", ql=q, qr=q),
              ["has no quantization"], False))
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
