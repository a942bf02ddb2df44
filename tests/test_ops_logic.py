"""EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL,
LOGICAL_AND and LOGICAL_OR vs TFLM, bit-exact.

Seeded random single-op models from host_tools/conformance/gen_logic.py
(int8 with different scales and zero points, int32, int64, float32 with
NaN, infinities and signed zeros, bool; broadcasting, constant inputs),
the same with a scratch array of 6 words (the broadcast walk continues
across chunks), every int8 pair at scales where the rescale decides, all
run in one MicroPython process per test (test_kernels_misc.run_cases:
invoke under micropython.heap_lock()) and compared with the TFLM oracle;
hand-checked cases after TFLM's comparisons_test.cc and logical_test.cc,
and the rejections.
"""

import random

import numpy as np

import conftest  # noqa: F401  (puts micropython/ on sys.path)
from host_tools import opgen
from host_tools.conformance import gen_logic
from test_kernels_misc import run_cases

T = opgen.Tensor
COMPARISONS = ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
               "LESS_EQUAL")


def _generated(ops, n, seed):
    cases = []
    for op in ops:
        for k in range(n):
            raw, given = gen_logic.GENERATORS[op](
                random.Random("%d:%s:%d" % (seed, op, k)), 1 + k % 4)
            cases.append((raw, lambda rng, j, g=given: g))
    return cases


def test_generated(tmp_path):
    """24 generator models per op (the inputs the generator made)."""
    cases = _generated(COMPARISONS + ("LOGICAL_AND", "LOGICAL_OR"), 24, 1)
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)


def _grid_case(op, s1, s2, z1, z2):
    """Every int8 pair (x1, x2) once: [256, 256] inputs."""
    v = np.arange(-128, 128, dtype=np.int8)
    g = [np.repeat(v, 256).reshape(256, 256),
         np.tile(v, 256).reshape(256, 256)]
    raw = opgen.single_op(op, [T([256, 256], "int8", scale=s1, zero_point=z1),
                               T([256, 256], "int8", scale=s2,
                                 zero_point=z2)],
                          [T([256, 256], "bool")])
    return raw, lambda rng, j: g


def test_int8_rescale_grid_and_chunks(tmp_path):
    """All 65536 int8 pairs: equal scales (raw compare after the zero
    points), a 2:1 ratio (exact ties), ratios whose rescaled values round
    together (s1 / s2 = 1 + 2**-10: many pairs compare equal though the
    real values differ), and tiny scales whose multiplier shifts right by
    31 or flushes to zero (everything equal); then generator models with
    a scratch array of 6 words."""
    cases = [
        _grid_case("EQUAL", 0.5, 0.5, 3, -7),
        _grid_case("GREATER", 0.5, 0.25, 0, 0),
        _grid_case("LESS_EQUAL", 0.5, 0.25, -128, 127),
        _grid_case("EQUAL", 0.25 * (1 + 2 ** -10), 0.25, 1, 1),
        _grid_case("GREATER_EQUAL", 0.0078125 * (1 + 2 ** -9), 0.0078125,
                   5, 0),
        _grid_case("NOT_EQUAL", 2.0 ** -38, 2.0 ** -38 * 1.5, 0, 0),
        _grid_case("LESS", 2.0 ** -45, 0.3, 0, 0),
    ]
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)
    # the first three are exact: check them against NumPy as well
    a = np.repeat(np.arange(-128, 128), 256).reshape(256, 256)
    b = np.tile(np.arange(-128, 128), 256).reshape(256, 256)
    want = [(a - 3) == (b + 7), (a * 0.5) > (b * 0.25),
            ((a + 128) * 0.5) <= ((b - 127) * 0.25)]
    for k, w in enumerate(want):
        got = (tmp_path / ("%d.out0_0" % k)).read_bytes()
        assert got == w.astype(np.uint8).tobytes(), k


def test_generated_chunked(tmp_path):
    cases = _generated(COMPARISONS + ("LOGICAL_AND", "LOGICAL_OR"), 6, 2)
    errs = run_cases(cases, tmp_path, scratch=6)
    assert errs == [None] * len(cases)


def _hand(op, shapes, dtype, ins, golden, qs=({}, {})):
    ts = [T(s, dtype, **q) for s, q in zip(shapes[:2], qs)]
    raw = opgen.single_op(op, ts, [T(shapes[2], "bool")])
    arrays = [np.array(v, dtype).reshape(s) for v, s in zip(ins, shapes)]
    return raw, arrays, np.array(golden, bool)


F = [1, 1, 4]
HAND = [
    # comparisons_test.cc EqualBool, EqualFloat, GreaterInt, LessEqualInt
    _hand("EQUAL", (F, F, F), "bool", ([1, 0, 0, 1], [1, 0, 1, 0]),
          [1, 1, 0, 0]),
    _hand("NOT_EQUAL", (F, F, F), "bool", ([1, 0, 0, 1], [1, 0, 1, 0]),
          [0, 0, 1, 1]),
    _hand("EQUAL", (F, F, F), "float32", ([0.1, 0.9, 0.7, 0.3],
                                          [0.1, 0.2, 0.3, 0.5]),
          [1, 0, 0, 0]),
    _hand("GREATER", (F, F, F), "int32", ([-1, 9, 7, 3], [1, 2, 7, 5]),
          [0, 1, 0, 0]),
    _hand("LESS_EQUAL", (F, F, F), "int32", ([-1, 9, 7, 3], [1, 2, 7, 5]),
          [1, 0, 1, 1]),
    # GreaterEqualBroadcast: [-1, 9, 7, 3] >= 7
    _hand("GREATER_EQUAL", (F, [1, 1, 1], F), "int32",
          ([-1, 9, 7, 3], [7]), [0, 1, 1, 0]),
    # int8 at scales 0.5 / 0.25: the real values 1, 2, 3, 4 and 1.25, 2,
    # 2.75, 4.25 compared
    _hand("LESS", (F, F, F), "int8", ([2, 4, 6, 8], [5, 8, 11, 17]),
          [1, 0, 0, 1], ({"scale": 0.5, "zero_point": 0},
                         {"scale": 0.25, "zero_point": 0})),
    # IEEE 754: -0 == 0, NaN unordered (only != is true), infinities
    _hand("EQUAL", ([4], [4], [4]), "float32",
          ([-0.0, np.nan, np.inf, 1.0], [0.0, np.nan, np.inf, np.nan]),
          [1, 0, 1, 0]),
    _hand("NOT_EQUAL", ([4], [4], [4]), "float32",
          ([-0.0, np.nan, np.inf, 1.0], [0.0, np.nan, np.inf, np.nan]),
          [0, 1, 0, 1]),
    _hand("GREATER_EQUAL", ([4], [4], [4]), "float32",
          ([-0.0, np.nan, -np.inf, 3e38], [0.0, 1.0, -3e38, np.inf]),
          [1, 0, 0, 0]),
    # int64: high words first (signed), then low words (unsigned)
    _hand("GREATER", ([5], [5], [5]), "int64",
          ([2 ** 32 + 2 ** 31, -1, -(2 ** 63), 2 ** 63 - 1, 7],
           [2 ** 32 + 1, 0, 2 ** 63 - 1, -(2 ** 63), 7]),
          [1, 0, 0, 1, 0]),
    _hand("LESS_EQUAL", ([5], [1], [5]), "int64",
          ([-(2 ** 32), 2 ** 31, 2 ** 31 - 1, 2 ** 32, -1], [2 ** 31]),
          [1, 1, 1, 0, 1]),
    _hand("NOT_EQUAL", ([3], [3], [3]), "int64",
          ([2 ** 40 + 5, 5, -5], [5, 5, 2 ** 64 - 5 - 2 ** 64]),
          [1, 0, 0]),
    # logical_test.cc LogicalOr / LogicalAnd, and with broadcast
    _hand("LOGICAL_OR", (F, F, F), "bool", ([1, 0, 0, 1], [1, 0, 1, 0]),
          [1, 0, 1, 1]),
    _hand("LOGICAL_AND", (F, F, F), "bool", ([1, 0, 0, 1], [1, 0, 1, 0]),
          [1, 0, 0, 0]),
    _hand("LOGICAL_AND", (F, [1, 1, 1], F), "bool", ([1, 0, 0, 1], [1]),
          [1, 0, 0, 1]),
    _hand("LOGICAL_OR", (F, [1, 1, 1], F), "bool", ([1, 0, 0, 1], [0]),
          [1, 0, 0, 1]),
]


def test_hand_checked(tmp_path):
    cases = [(raw, lambda rng, j, a=arrays: a) for raw, arrays, _ in HAND]
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)
    for k, (_, _, golden) in enumerate(HAND):
        got = (tmp_path / ("%d.out0_0" % k)).read_bytes()
        assert got == golden.astype(np.uint8).tobytes(), k


def test_rejections(tmp_path):
    """Models tflm must refuse with a PrepareError naming the op (TFLM
    aborts on them, or computes with undefined values: not run there)."""
    q = {"scale": 0.1, "zero_point": 0}
    b4 = T([4], "bool")
    bad = [
        # TFLM's GREATER reads int16 with parameters it never set
        (("GREATER", [T([4], "int16", **q), T([4], "int16", **q)], [b4]),
         ("int16", "undefined")),
        (("EQUAL", [T([4], "int16", **q), T([4], "int16", **q)], [b4]),
         ("int16", "supported")),
        # QuantizeMultiplierSmallerThanOneExp aborts for scale >= 1
        (("LESS", [T([4], "int8", scale=1.0, zero_point=0),
                   T([4], "int8", **q)], [b4]), ("scale", "(0, 1)")),
        (("LESS", [T([4], "int8"), T([4], "int8", **q)], [b4]),
         ("scale",)),
        (("GREATER", [T([4], "bool"), T([4], "bool")], [b4]),
         ("bool", "supported")),
        (("EQUAL", [T([4], "int32"), T([4], "float32")], [b4]),
         ("int32", "float32")),
        (("EQUAL", [T([4], "int32"), T([4], "int32")], [T([4], "int32")]),
         ("bool",)),
        (("LOGICAL_AND", [T([4], "int8", **q), T([4], "int8", **q)], [b4]),
         ("int8", "bool")),
        (("LESS", [T([2, 3], "int32"), T([3, 2], "int32")],
          [T([2, 3], "bool")]), ("broadcast",)),
        (("EQUAL", [T([1] * 7, "int32"), T([1] * 7, "int32")],
          [T([1] * 7, "bool")]), ("rank",)),
    ]
    cases = [(opgen.single_op(*m), None) for m, _ in bad]
    errs = run_cases(cases, tmp_path)
    for (m, words), e in zip(bad, errs):
        assert e is not None and "PrepareError" in e, (m[0], e)
        assert m[0] in e, e
        for w in words:
            assert w in e, (w, e)
