"""ABS, NEG, CEIL, FLOOR, ROUND, SQRT, SQUARE, EXP, LOG and LOGICAL_NOT
vs TFLM.

Seeded random models from host_tools/conformance/gen_logic.py (int8,
int16 and float32 ABS, float32 values around integers and halves, special
values, random bit patterns), every int8 and int16 input of ABS at
several scale pairs, thousands of float32 values (signed zeros, NaNs with
payloads, signaling NaNs, infinities, subnormals, random bits) through
every float32 op, all bit-exact against the TFLM oracle in one
MicroPython process per test (test_kernels_misc.run_cases, invoke under
micropython.heap_lock()); EXP and LOG within 1 ulp of TFLM (which calls
the C library's expf / logf); hand-checked cases after TFLM's
elementwise_test.cc, ceil_test.cc, floor_test.cc, round_test.cc and
neg_test.cc; the rejections.
"""

import random

import numpy as np
import pytest

import conftest  # noqa: F401  (puts micropython/ on sys.path)
from host_tools import opgen
from host_tools.conformance import gen_logic
from host_tools.oracle import Reference
from mp_batch import run_on_device
from test_kernels_misc import run_cases

T = opgen.Tensor
UNARY = ("LOGICAL_NOT", "ABS", "NEG", "CEIL", "FLOOR", "ROUND", "SQRT",
         "SQUARE")
FLOAT_OPS = ("ABS", "NEG", "CEIL", "FLOOR", "ROUND", "SQRT", "SQUARE")


def test_generated(tmp_path):
    """20 generator models per op (the inputs the generator made)."""
    cases = []
    for op in UNARY:
        for k in range(20):
            raw, given = gen_logic.GENERATORS[op](
                random.Random("1:%s:%d" % (op, k)), 1 + k % 4)
            cases.append((raw, lambda rng, j, g=given: g))
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)


def _special_floats():
    g = np.random.default_rng(1)
    special = np.array(
        [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997,
         -0.49999997, 0.50000006, -0.50000006, 1e-45, -1e-45, 8388607.5,
         -8388607.5, 8388608, 16777215, 3e38, -3e38, np.inf, -np.inf,
         1.17549435e-38, 1.1754942e-38, 0.99999994, -0.99999994, 4.0, 2.0,
         7.25, -7.75, 1.0, -1.0, 3.4028235e38], np.float32)
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001,
                     0x7FA00000, 0xFFEDCBA9], np.uint32).view(np.float32)
    rnd = (g.standard_normal(3000) * 10 ** g.uniform(-40, 38, 3000)
           ).astype(np.float32)
    bits = g.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    return np.concatenate([special, nans, rnd, bits])


def _int_grids():
    """ABS over every int16 value (unquantized; scales equal, which clamps
    32768; ratios) and every int8 value (zero points and scale ratios
    from 1e-3 up to 2e6, whose rescale wraps in int32 as TFLM's)."""
    cases = []
    xi = np.arange(-32768, 32768, dtype=np.int16)
    for q in (None, (0.5, 0.5), (0.5, 0.25), (0.3, 0.7), (1e-3, 3.0),
              (0.1, 1e-5)):
        qs = [{}, {}] if q is None else [{"scale": s, "zero_point": 0}
                                         for s in q]
        raw = opgen.single_op("ABS", [T([256, 256], "int16", **qs[0])],
                              [T([256, 256], "int16", **qs[1])])
        cases.append((raw, lambda rng, j: [xi.reshape(256, 256)]))
    x8 = np.arange(-128, 128, dtype=np.int8)
    for s1, z1, s2, z2 in ((0.5, 3, 0.5, -7), (0.5, -128, 0.25, 100),
                           (0.3, 5, 0.7, -128), (1e-3, 0, 3.0, 0),
                           (2.0, 10, 1e-6, 0), (1.0, 127, 2.0 ** -22, 0)):
        raw = opgen.single_op(
            "ABS", [T([256], "int8", scale=s1, zero_point=z1)],
            [T([256], "int8", scale=s2, zero_point=z2)])
        cases.append((raw, lambda rng, j: [x8]))
    return cases


def test_special_values_and_int_grids(tmp_path):
    """Every float32 op over 6,000+ values (bit-exact, NaN payloads and
    signs included), ABS over every int8 / int16 value."""
    x = _special_floats()
    cases = []
    for op in FLOAT_OPS:
        raw = opgen.single_op(op, [T([x.size], "float32")],
                              [T([x.size], "float32")])
        cases.append((raw, lambda rng, j: [x]))
    cases += _int_grids()
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)
    # SQRT is correctly rounded: check it against exact integer roots too
    got = np.frombuffer((tmp_path / "5.out0_0").read_bytes(), np.float32)
    fin = np.isfinite(x) & (x > 0)
    assert np.array_equal(got[fin], _exact_sqrt(x[fin]))


def test_int16_abs_chunks(tmp_path):
    """int16 ABS with a 6-word scratch array: rescaled in chunks of 6."""
    errs = run_cases(_int_grids()[:6], tmp_path, scratch=6)
    assert errs == [None] * 6


def _exact_sqrt(x):
    """Correctly rounded float32 square roots of positive finite x, from
    double (a double square root of a float32, rounded to float32, is
    correctly rounded: 53 >= 2 * 24 + 2)."""
    return np.sqrt(x.astype(np.float64)).astype(np.float32)


@pytest.mark.parametrize("op", ["EXP", "LOG"])
def test_within_one_ulp(op, tmp_path):
    """EXP and LOG against TFLM (glibc's expf / logf): every result
    within 1 ulp, NaN / infinity / zero results identical, and 98% or
    more bit-exact; LOG within 0.6 ulp of the exact logarithm."""
    g = np.random.default_rng(3)
    if op == "EXP":
        extra = [g.uniform(-104, 89, 20000), g.uniform(-1, 1, 5000)]
    else:
        extra = [g.integers(0, 1 << 31, 20000, dtype=np.uint64).astype(
            np.uint32).view(np.float32), 1 + g.uniform(-0.3, 0.3, 5000),
            np.arange(0x3F800000 - 2000, 0x3F800000 + 2000,
                      dtype=np.uint32).view(np.float32),
            g.uniform(0, 100, 5000)]
    x = np.concatenate([_special_floats()] +
                       [np.asarray(e, np.float32) for e in extra])
    raw = opgen.single_op(op, [T([x.size], "float32")],
                          [T([x.size], "float32")])
    want = Reference(raw).run([x])[0].view(np.int32)
    (st, got), = run_on_device([(raw, [[x]])], tmp_path)
    assert st == "OK", got
    got = np.frombuffer(got[0][0], np.int32)
    wf = want.view(np.float32)
    special = ~np.isfinite(wf) | (wf == 0)
    assert np.array_equal(got[special], want[special])
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1
    assert np.count_nonzero(diff) < x.size // 50
    if op == "LOG":
        fin = ~special
        with np.errstate(all="ignore"):
            exact = np.log(x[fin].astype(np.float64))
        gf = got.view(np.float32)[fin]
        err = np.abs(gf.astype(np.float64) - exact) / np.spacing(
            np.abs(gf)).astype(np.float64)
        assert err.max() < 0.6


def _hand(op, dtype, ins, golden, q=({}, {})):
    shape = [len(ins)]
    raw = opgen.single_op(op, [T(shape, dtype, **q[0])],
                          [T(shape, dtype, **q[1])])
    return raw, [np.array(ins, dtype)], np.array(golden, dtype)


HAND = [
    # elementwise_test.cc Abs, Sqrt, Square, LogicalNot
    _hand("ABS", "float32", [0.01, -0.01, 10, -10], [0.01, 0.01, 10, 10]),
    _hand("SQRT", "float32", [0, 1, 2, 4], [0, 1, 2 ** 0.5, 2]),
    _hand("SQUARE", "float32", [1, 2, 0.5, -3], [1, 4, 0.25, 9]),
    _hand("LOGICAL_NOT", "bool", [1, 0, 0, 1], [0, 1, 1, 0]),
    # AbsInt8: |q - zp| at equal scales plus the output zero point
    _hand("ABS", "int8", [-128, -5, 0, 7, 127], [127, 14, 9, 16, 127],
          ({"scale": 0.5, "zero_point": 0}, {"scale": 0.5,
                                             "zero_point": 9})),
    # int16 without quantization: std::abs wraps -32768
    _hand("ABS", "int16", [-32768, -3, 3, 32767], [-32768, 3, 3, 32767]),
    _hand("ABS", "int16", [-32768, -3, 3, 32767], [32767, 3, 3, 32767],
          ({"scale": 0.5, "zero_point": 0}, {"scale": 0.5,
                                             "zero_point": 0})),
    # neg_test.cc, ceil_test.cc, floor_test.cc, round_test.cc
    _hand("NEG", "float32", [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0],
          [2.0, 1.0, -0.0, -1.0, -2.0, -3.0]),
    _hand("CEIL", "float32", [-2.1, -1.9, 0.3, 1.0, 1.1, -0.5],
          [-2.0, -1.0, 1.0, 1.0, 2.0, -0.0]),
    _hand("FLOOR", "float32", [-2.1, -1.9, 0.3, 1.0, 1.1, -0.5],
          [-3.0, -2.0, 0.0, 1.0, 1.0, -1.0]),
    _hand("ROUND", "float32", [-6.5, 9.0, 11.0001, 13.5, 14.5, -0.4],
          [-6.0, 9.0, 11.0, 14.0, 14.0, 0.0]),
]


def test_hand_checked(tmp_path):
    cases = [(raw, lambda rng, j, a=arrays: a) for raw, arrays, _ in HAND]
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)
    for k, (_, _, golden) in enumerate(HAND):
        got = (tmp_path / ("%d.out0_0" % k)).read_bytes()
        assert got == golden.tobytes(), (k, np.frombuffer(got, golden.dtype),
                                         golden)


def test_rejections(tmp_path):
    """Models tflm refuses with a PrepareError naming the op (TFLM fails
    them at prepare or invoke, or aborts: not run there)."""
    q = {"scale": 0.1, "zero_point": 0}
    f4 = T([4], "float32")
    bad = [
        (("NEG", [T([4], "int8", **q)], [T([4], "int8", **q)]),
         ("int8", "float32")),
        (("SQRT", [T([4], "int32")], [T([4], "int32")]), ("float32",)),
        (("LOG", [T([4], "int8", **q)], [T([4], "int8", **q)]),
         ("float32",)),
        (("ABS", [T([4], "int32")], [T([4], "int32")]), ("int16",)),
        (("ABS", [T([4], "int8")], [T([4], "int8")]), ("quantization",)),
        (("ABS", [T([4], "int16", scale=0.1, zero_point=3)],
          [T([4], "int16", **q)]), ("zero point",)),
        (("ABS", [T([4], "int16", **q)], [T([4], "int16")]),
         ("quantization",)),
        (("ABS", [T([4], "int8", scale=1.0, zero_point=0)],
          [T([4], "int8", scale=2.0 ** -40, zero_point=0)]),
         ("too large",)),
        (("LOGICAL_NOT", [T([4], "int8", **q)], [T([4], "int8", **q)]),
         ("bool",)),
        (("FLOOR", [f4], [T([4], "int32")]), ("int32", "float32")),
        (("CEIL", [T([2, 2], "float32")], [f4]), ("shape",)),
        (("SQUARE", [T([4], "float32")], [T([5], "float32")]), ("shape",)),
    ]
    cases = [(opgen.single_op(*m), None) for m, _ in bad]
    errs = run_cases(cases, tmp_path)
    for (m, words), e in zip(bad, errs):
        assert e is not None and "PrepareError" in e, (m[0], e)
        assert m[0] in e, e
        for w in words:
            assert w in e, (w, e)
