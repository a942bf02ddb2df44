"""FLOOR_DIV and FLOOR_MOD (float32) vs TFLM, bit-exact.

Seeded random models from host_tools/conformance/gen_logic.py
(broadcasting, constant inputs, quotients near integers, the whole
float32 range), every pair of 28 special values (signed zeros,
subnormals, infinities, NaNs with payloads, 2**24 + 1, ...) and 60,000
random pairs (whole range, near 1, random bit patterns, integers), run in
one MicroPython process per test (test_kernels_misc.run_cases, invoke
under micropython.heap_lock()) against the TFLM oracle; hand-checked
cases after TFLM's floor_div_test.cc / floor_mod_test.cc; division by
zero (InvokeError, as TFLM fails the invoke) and the rejections.
"""

import random

import numpy as np

import conftest  # noqa: F401  (puts micropython/ on sys.path)
from host_tools import opgen
from host_tools.conformance import gen_logic
from mp_batch import run_on_device
from test_kernels_misc import run_cases

T = opgen.Tensor


def test_generated(tmp_path):
    cases = []
    for op in ("FLOOR_DIV", "FLOOR_MOD"):
        for k in range(24):
            raw, given = gen_logic.GENERATORS[op](
                random.Random("1:%s:%d" % (op, k)), 1 + k % 4)
            cases.append((raw, lambda rng, j, g=given: g))
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)
    # the broadcast walk across chunks of 3 elements
    (tmp_path / "chunked").mkdir()
    errs = run_cases(cases[::4], tmp_path / "chunked", scratch=6)
    assert errs == [None] * len(cases[::4])


def _f(u):
    return np.array([u], np.uint32).view(np.float32)[0]


def _pairs():
    sp = np.array([0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, 7.0, -7.0,
                   0.3, 1e10, 16777217.0, 1e-45, -1e-45, 3e-39, 1e-38,
                   3e38, -3e38, np.inf, -np.inf, _f(0x7FA12345),
                   _f(0xFFC54321), _f(0x7FC11111), 2.5, 1e-30, 8388608.0,
                   0.1], np.float32)
    g = np.random.default_rng(2)

    def wide(n, lo, hi):
        return (g.standard_normal(n) * 10 ** g.uniform(lo, hi, n)).astype(
            np.float32)
    bits = g.integers(0, 1 << 32, 20000, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
    ints = g.integers(-100000, 100000, 20000).astype(np.float32)
    a = np.concatenate([np.repeat(sp, sp.size), wide(10000, -40, 38),
                        wide(10000, -3, 3), bits[:10000], ints[:10000]])
    b = np.concatenate([np.tile(sp, sp.size), wide(10000, -40, 38),
                        wide(10000, -3, 3), bits[10000:], ints[10000:]])
    return a, b


def test_special_and_random_pairs(tmp_path):
    a, b = _pairs()
    bz = b.copy()
    bz[bz == 0] = 1.0  # FLOOR_DIV fails the invoke on a zero divisor
    cases = []
    for op, d in (("FLOOR_MOD", b), ("FLOOR_DIV", bz)):
        raw = opgen.single_op(op, [T([a.size], "float32"),
                                   T([a.size], "float32")],
                              [T([a.size], "float32")])
        cases.append((raw, lambda rng, j, d=d: [a, d]))
    errs = run_cases(cases, tmp_path)
    assert errs == [None, None]
    # floor((double)a / b) where double division is exact enough: check
    # FLOOR_DIV against NumPy's double arithmetic too
    got = np.frombuffer((tmp_path / "1.out0_0").read_bytes(), np.float32)
    with np.errstate(all="ignore"):
        want = np.floor(a.astype(np.float64) / bz.astype(np.float64)
                        ).astype(np.float32)
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok].view(np.uint32), want[ok].view(np.uint32))


def _hand(op, s1, s2, x1, x2, golden):
    raw = opgen.single_op(op, [T(s1, "float32"), T(s2, "float32")],
                          [T(list(np.broadcast_shapes(tuple(s1), tuple(s2))),
                             "float32")])
    return raw, [np.array(x1, np.float32).reshape(s1),
                 np.array(x2, np.float32).reshape(s2)], \
        np.array(golden, np.float32)


HAND = [
    # floor_div_test.cc FloorDivTestSimpleFloat / NegativeValueFloat /
    # BroadcastFloat
    _hand("FLOOR_DIV", [1, 2, 2, 1], [1, 2, 2, 1], [10, 9, 11, 3],
          [2, 2, 3, 4], [5, 4, 3, 0]),
    _hand("FLOOR_DIV", [1, 2, 2, 1], [1, 2, 2, 1], [10, -9, -11, 7],
          [2, 2, -3, -4], [5, -5, 3, -2]),
    _hand("FLOOR_DIV", [1, 2, 2, 1], [1], [10, -9, -11, 7], [-3],
          [-4, 3, 3, -3]),
    # floor_mod_test.cc FloorModFloatSimple / NegativeValue / Broadcast
    _hand("FLOOR_MOD", [1, 2, 2, 1], [1, 2, 2, 1], [10, 9, 11, 3],
          [2, 2, 3, 4], [0, 1, 2, 3]),
    _hand("FLOOR_MOD", [1, 2, 2, 1], [1, 2, 2, 1], [10, -9, -11, 7],
          [2, 2, -3, -4], [0, 1, -2, -1]),
    _hand("FLOOR_MOD", [1, 2, 2, 1], [1], [10, -9, -11, 7], [-3],
          [-2, -0.0, -2, -2]),  # fmodf(-9, -3) = -0.0
    # double rounding: 2**24 + 1.5 floors to 2**24 + 1, then rounds to
    # even 2**24 (a float32 quotient would give 2**24 + 2); 1e10 mod 0.3
    # and -0.3 mod 1e10 (one rounding of -0.3 + 1e10)
    _hand("FLOOR_DIV", [3], [3], [25165826.0, -1e-30, 1.0],
          [1.5, 3.0, np.inf], [16777216.0, -1.0, 0.0]),
    _hand("FLOOR_MOD", [3], [3], [1e10, -0.3, -5.0], [0.3, 1e10, 5.0],
          [0.2357173, 1e10, -0.0]),
]


def test_hand_checked(tmp_path):
    cases = [(raw, lambda rng, j, a=arrays: a) for raw, arrays, _ in HAND]
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)
    for k, (_, _, golden) in enumerate(HAND):
        got = (tmp_path / ("%d.out0_0" % k)).read_bytes()
        assert got == golden.tobytes(), (k, np.frombuffer(got, np.float32),
                                         golden)


def test_division_by_zero(tmp_path):
    """A zero (or -0.0) divisor anywhere fails FLOOR_DIV's invoke, as
    TFLM's "Division by 0"; the next invoke with good data runs."""
    raw = opgen.single_op("FLOOR_DIV", [T([4], "float32"),
                                        T([4], "float32")],
                          [T([4], "float32")])
    one = np.ones(4, np.float32)
    res = run_on_device([(raw, [[one, np.array([1, 2, 0, 3], np.float32)]]),
                         (raw, [[one, np.array([-0.0, 1, 1, 1],
                                               np.float32)]]),
                         (raw, [[one, 2 * one]])], tmp_path)
    for st, msg in res[:2]:
        assert st == "IERR" and "InvokeError" in msg and \
            "Division by 0" in msg, (st, msg)
    assert res[2][0] == "OK"
    assert res[2][1][0][0] == np.zeros(4, np.float32).tobytes()


def test_rejections(tmp_path):
    """TFLM's Eval has float32 only (it fails the invoke for int32)."""
    bad = [
        (("FLOOR_DIV", [T([4], "int32"), T([4], "int32")],
          [T([4], "int32")]), ("int32", "float32")),
        (("FLOOR_MOD", [T([4], "int8", scale=0.1, zero_point=0)] * 2,
          [T([4], "int8", scale=0.1, zero_point=0)]), ("int8",)),
        (("FLOOR_MOD", [T([4], "float32"), T([4], "int32")],
          [T([4], "float32")]), ("int32", "float32")),
        (("FLOOR_DIV", [T([2, 3], "float32"), T([3, 2], "float32")],
          [T([2, 3], "float32")]), ("broadcast",)),
    ]
    cases = [(opgen.single_op(*m), None) for m, _ in bad]
    errs = run_cases(cases, tmp_path)
    for (m, words), e in zip(bad, errs):
        assert e is not None and "PrepareError" in e, (m[0], e)
        assert m[0] in e, e
        for w in words:
            assert w in e, (w, e)
