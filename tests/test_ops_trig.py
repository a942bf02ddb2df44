"""SIN, COS, ELU (float32), LOG_SOFTMAX (int8, float32) vs TFLM.

SIN, COS and float32 ELU call the C library's sinf / cosf / expm1f in
TFLM: ours are within 1 ulp of TFLM's result for every input (NaN,
infinity and zero results identical, most results bit-exact) and within
0.6 ulp of the exact value (numpy's double sin / cos / expm1), over
tens of thousands of values: random bits, multiples of pi/2 and their
neighbours, huge arguments, subnormals, signed zeros, NaNs. int8
LOG_SOFTMAX is bit-exact (generated models, every input byte of a row
at many scales, the fixed-point logarithm against its plain Python
reference); float32 LOG_SOFTMAX within 2 ulp (expf and logf within 1
ulp each). Then hand-checked cases after TFLM's log_softmax_test.cc and
elementwise_test.cc, and the rejections.
"""

import random

import numpy as np
import pytest

import conftest  # noqa: F401  (puts micropython/ on sys.path)
from host_tools import opgen
from host_tools.conformance import gen_extra, gen_trig
from host_tools.conformance.runner import ulp_apart
from host_tools.oracle import Reference
from mp_batch import run_on_device
from test_kernels_misc import run_cases

T = opgen.Tensor


def _float_values(g):
    special = np.array([0x0, 0x80000000, 0x1, 0x80000001, 0x807FFFFF,
                        0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                        0x7F800001, 0xFF800001, 0x7FA00000, 0xFFEDCBA9,
                        0x7F7FFFFF, 0xFF7FFFFF, 0x3F490FDB, 0x3F490FDA,
                        0x3FC90FDB, 0x40490FDB, 0x39800000, 0x397FFFFF,
                        0x33000000, 0xB3000000, 0xC18C0000, 0xC18BFFFF,
                        0xBF000000, 0xBF000001],
                       np.uint32).view(np.float32)
    half_pi = (np.arange(-3000, 3000) * (np.pi / 2)).astype(np.float32)
    near = (half_pi.view(np.int32)[:, None] + np.arange(-2, 3)).reshape(-1)
    return np.concatenate([
        special, near.view(np.float32),
        g.uniform(-10, 10, 20000).astype(np.float32),
        g.uniform(-20, 0, 10000).astype(np.float32),
        g.integers(0, 1 << 32, 30000, dtype=np.uint64).astype(
            np.uint32).view(np.float32),
        np.clip(g.standard_normal(10000) * 10 ** g.uniform(-45, 38, 10000),
                -3e38, 3e38).astype(np.float32)]).astype(np.float32)


EXACT = {"SIN": np.sin, "COS": np.cos, "ELU": np.expm1}


@pytest.mark.parametrize("op", ["SIN", "COS", "ELU"])
def test_within_one_ulp(op, tmp_path):
    """Every result within 1 ulp of TFLM's (specials identical), 95% or
    more bit-exact, within 0.6 ulp of the exact value."""
    x = _float_values(np.random.default_rng(11))
    raw = opgen.single_op(op, [T([x.size], "float32")],
                          [T([x.size], "float32")])
    want = Reference(raw).run([x])[0]
    (st, got), = run_on_device([(raw, [[x]])], tmp_path)
    assert st == "OK", got
    got = np.frombuffer(got[0][0], np.float32)
    d = ulp_apart(got, want)
    assert d.max() <= 1
    assert np.count_nonzero(d) < x.size // 20
    fin = np.isfinite(x) & np.isfinite(got) & (got != 0)
    if op == "ELU":
        fin &= x < 0
    exact = EXACT[op](x[fin].astype(np.float64))
    gf = got[fin]
    err = np.abs(gf.astype(np.float64) - exact) / np.spacing(
        np.abs(gf)).astype(np.float64)
    assert err.max() < 0.6


def _generated(gens, ops, n):
    models = []
    for op in ops:
        for k in range(n):
            out = gens[op](random.Random("5:%s:%d" % (op, k)), 1 + k % 4)
            raw, ins = out if isinstance(out, tuple) else (out, None)
            models.append((op, raw, ins))
    return models


def test_generated_float(tmp_path):
    """The conformance generators' float32 models (SIN, COS, ELU,
    LOG_SOFTMAX) within their ULP bound of TFLM."""
    gens = dict(gen_trig.GENERATORS, ELU=gen_extra.gen_elu)
    models = [m for m in _generated(gens, ("SIN", "COS", "ELU",
                                           "LOG_SOFTMAX"), 24)
              if m[2] is not None]
    assert len(models) >= 40
    jobs = [(raw, [ins]) for _, raw, ins in models]
    results = run_on_device(jobs, tmp_path)
    ulps = dict(gen_trig.ULP, **gen_extra.ULP)
    for (op, raw, ins), (st, got) in zip(models, results):
        assert st == "OK", (op, got)
        want = Reference(raw).run(ins)[0]
        d = ulp_apart(np.frombuffer(got[0][0], np.float32),
                      want.reshape(-1))
        assert d.max() <= ulps[op], op


def test_generated_int8(tmp_path):
    """int8 LOG_SOFTMAX and ELU models from the generators, bit-exact."""
    gens = dict(gen_trig.GENERATORS, ELU=gen_extra.gen_elu)
    cases = [(raw, _rand_int8(raw))
             for _, raw, ins in _generated(gens, ("LOG_SOFTMAX", "ELU"), 30)
             if ins is None]
    assert len(cases) >= 20
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def _rand_int8(raw):
    shape = tuple(Reference(raw).input_details(0)["shape"])

    def make(rng, j):
        return [rng.integers(-128, 128, size=shape, dtype=np.int8)]
    return make


def _row_model(scale, zp, depth=256, rows=1):
    return opgen.single_op(
        "LOG_SOFTMAX", [T([rows, depth], "int8", scale=scale, zero_point=zp)],
        [T([rows, depth], "int8", scale=16.0 / 256, zero_point=127)])


def test_log_softmax_int8_grids(tmp_path):
    """Every input byte in a row (and rows of one repeated byte, of two
    values, of a lone maximum) at input scales from 1e-3 to 30."""
    full = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    rows = np.array([[5] * 256, [127] + [-128] * 255,
                     [0, 1] * 128, list(range(-128, 128))[::-1]],
                    np.int8)
    cases = []
    for s in (1e-3, 0.0137, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 7.3, 30.0):
        cases.append((_row_model(s, 3), lambda rng, j, a=full: [a]))
        cases.append((_row_model(s, -128, rows=4),
                      lambda rng, j, a=rows: [a]))
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)


def test_log_q5_matches_reference(tmp_path):
    """log_softmax.log_q5 (viper) against lut_math.log_x_ge1 (plain
    Python, gemmlowp's arithmetic) for sums from 2**19 to 4095 * 2**19,
    with the reverse multiplier's threshold of several input scales."""
    from conftest import run_mp
    from host_tools import kernel_consts
    from tflm import quant
    from tflm.kernels.gemmlowp import beta_multiplier, mbqm_ref
    from tflm.kernels.lut_math import log_x_ge1

    class Op:
        def label(self):
            return "LOG_SOFTMAX"
    g = np.random.default_rng(2)
    sums = np.concatenate([
        (1 << 19) + np.arange(0, 3000),
        g.integers(1 << 19, 4095 << 19, 3000),
        (np.arange(1, 4096) << 19)]).astype(np.int64)
    lines = []
    want = []
    for k, s in enumerate(sums.tolist()):
        scale = (0.001, 0.1, 1.0, 30.0)[k % 4]
        mult, ls, dmin = beta_multiplier(Op(), 1.0, scale)
        rdiv, rsh = quant.quantize_multiplier(quant.div((1, 31 - ls),
                                                        (mult, 0)))
        L = log_x_ge1(s, 12, 5)
        adj = max(dmin - 1, mbqm_ref(L - (1 << 31), rdiv, rsh))
        want.append((L, adj))
        lines.append("%d %d %d %d" % (s, rdiv, -rsh, dmin - 1))
    (tmp_path / "in.txt").write_text("\n".join(lines))
    c = {"_" + k: v for k, v in kernel_consts(
        "kernels/log_softmax.py", ("V_",)).items()}
    out = run_mp("""
from array import array
from tflm.kernels import log_softmax as m
v = array('i', [0] * %d)
for k, c in enumerate(m._CONSTS):
    v[3 + k] = c
out = []
for line in open(%r):
    s, rd, rs, dm = [int(t) for t in line.split()]
    v[%d] = s
    v[%d] = rd
    v[%d] = rs
    v[%d] = dm
    m.log_q5(v)
    out.append('%%d %%d' %% (v[%d], v[%d]))
print(';'.join(out))
""" % (c["_V_LEN"], str(tmp_path / "in.txt"), c["_V_SUM"], c["_V_RDIV"],
       c["_V_RSHIFT"], c["_V_DMIN1"], c["_V_LOG"], c["_V_ADJ"]), tmp_path)
    got = [tuple(int(t) for t in ln.split())
           for ln in out.strip().split(";")]
    assert got == want


def test_log_softmax_float_specials(tmp_path):
    """float32 rows with infinities, NaNs, all-equal values and huge
    spreads: the same bits as TFLM where the result is not finite, the
    rest within 2 ulp."""
    inf, nan = np.inf, np.nan
    x = np.array([[1, 2, 3, 4], [inf, 0, 1, 2], [-inf, 0, 1, 2],
                  [nan, 0, 1, 2], [-inf, -inf, -inf, -inf],
                  [3e38, -3e38, 0, 1], [7, 7, 7, 7], [1e-40, 0, -0.0, 1e-30],
                  [100, 0, -100, 50]], np.float32)
    raw = opgen.single_op("LOG_SOFTMAX", [T(list(x.shape), "float32")],
                          [T(list(x.shape), "float32")])
    want = Reference(raw).run([x])[0].reshape(-1)
    (st, got), = run_on_device([(raw, [[x]])], tmp_path)
    assert st == "OK", got
    assert ulp_apart(np.frombuffer(got[0][0], np.float32), want).max() <= 2


HAND = [
    # log_softmax_test.cc LogSoftmaxFloat: two rows of 4 (values in the
    # test as log-softmax of 0 / 1 / 2 / 3 shifted rows)
    ("LOG_SOFTMAX", [[0, -6, 2, 4], [3, -2, 10, 1]],
     [[-4.14297, -10.14297, -2.14297, -.14297],
      [-7.00104, -12.00104, -.00104087, -9.00104]]),
    # sin / cos at 0 and the float32s nearest pi/2 (below it), pi and
    # 3 pi/2 (above them)
    ("SIN", [[0.0, 1.5707963, 3.1415927, 4.712389]],
     [[0.0, 1.0, -8.742278e-08, -1.0]]),
    ("COS", [[0.0, 1.5707963, 3.1415927, 4.712389]],
     [[1.0, 7.54979e-08, -1.0, 1.1924881e-08]]),
    ("ELU", [[-6.0, -1.0, 0.0, 2.5]], [[-0.99752125, -0.63212055, 0.0,
                                        2.5]]),
]


def test_hand_checked(tmp_path):
    jobs = []
    for op, x, _ in HAND:
        x = np.array(x, np.float32)
        raw = opgen.single_op(op, [T(list(x.shape), "float32")],
                              [T(list(x.shape), "float32")])
        jobs.append((raw, [[x]]))
    for (op, _, golden), (st, got) in zip(HAND,
                                           run_on_device(jobs, tmp_path)):
        assert st == "OK", got
        y = np.frombuffer(got[0][0], np.float32)
        assert np.allclose(y, np.array(golden, np.float32).reshape(-1),
                           rtol=1e-5, atol=1e-7), (op, y)


def test_rejections(tmp_path):
    """Models tflm refuses with a PrepareError naming the op."""
    q = {"scale": 0.1, "zero_point": 0}
    out8 = {"scale": 16.0 / 256, "zero_point": 127}
    bad = [
        (("SIN", [T([4], "int8", **q)], [T([4], "int8", **q)]),
         ("float32",)),
        (("COS", [T([4], "float32")], [T([5], "float32")]), ("shape",)),
        (("COS", [T([4], "float32")], [T([4], "int32")]), ("float32",)),
        (("ELU", [T([4], "int32")], [T([4], "int32")]), ("float32",)),
        (("LOG_SOFTMAX", [T([4], "int8", **q)],
          [T([4], "int8", scale=1 / 256, zero_point=127)]), ("16/256",)),
        (("LOG_SOFTMAX", [T([4], "int8", **q)],
          [T([4], "int8", scale=16 / 256, zero_point=0)]), ("16/256",)),
        (("LOG_SOFTMAX", [T([1, 4096], "int8", **q)],
          [T([1, 4096], "int8", **out8)]), ("4095",)),
        (("LOG_SOFTMAX", [T([4], "int16", **q)], [T([4], "int16", **q)]),
         ("float32",)),
        (("LOG_SOFTMAX", [T([4], "float32")], [T([2, 2], "float32")]),
         ("shape",)),
    ]
    cases = [(opgen.single_op(*m), None) for m, _ in bad]
    errs = run_cases(cases, tmp_path)
    for (m, words), e in zip(bad, errs):
        assert e is not None and "PrepareError" in e, (m[0], e)
        assert m[0] in e, e
        for w in words:
            assert w in e, (w, e)
