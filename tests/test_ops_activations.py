"""int8 RELU, RELU6, LEAKY_RELU, LOGISTIC, TANH, HARD_SWISH, RSQRT, PRELU
and L2_NORMALIZATION vs TFLM, bit-exact.

Seeded random single-op models (host_tools/conformance/gen_activations.py)
run in one MicroPython process (invoke under micropython.heap_lock()) and
in TFLM; every lookup-table op also sees all 256 input values for a set of
(scale, zero point) pairs, extremes included; PRELU and L2_NORMALIZATION
also run with a tiny scratch array (chunked eval). Hand-checked cases
(after TFLM's *_test.cc) pin the values, and TFLM's Prepare rejections are
matched.
"""

import random

import numpy as np
import pytest

from conftest import run_mp
from host_tools import opgen
from host_tools.conformance import cases as conf_cases
from host_tools.conformance.gen_activations import GENERATORS
from host_tools.oracle import Reference
from test_kernels_misc import run_cases

T = opgen.Tensor
OPS = sorted(GENERATORS)
LUT_OPS = ("RELU", "RELU6", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH",
           "RSQRT")
ALL_Q = np.arange(-128, 128, dtype=np.int8)


def _gen_case(op, seed, i):
    """(model, make_inputs) of conformance case i of op."""
    rng = conf_cases.case_rng(seed, op, i)
    res = GENERATORS[op](rng, conf_cases.size_of(i))
    raw, given = res if isinstance(res, tuple) else (res, None)
    ins, _ = conf_cases.graph_io(raw)

    def make(g, j):
        if given is not None and j == 0:
            return given
        out = []
        for dtype, shape in ins:
            x = conf_cases.random_array(g, dtype, shape).reshape(shape)
            if op == "RSQRT":  # keep inputs at or above the zero point
                x = np.maximum(x, given[0].min() if given else x)
            out.append(x)
        return out
    return raw, make


def test_random_models(tmp_path):
    cases = [_gen_case(op, 11, i) for op in OPS for i in range(24)]
    run_cases(cases, tmp_path, sets=2)


@pytest.mark.parametrize("op", ["PRELU", "L2_NORMALIZATION"])
def test_chunked_scratch(tmp_path, op):
    cases = [_gen_case(op, 12, i) for i in range(12)]
    run_cases(cases, tmp_path, sets=1, scratch=5)


def _unary(op, s_in, z_in, s_out, z_out, n=256, opts=None):
    return opgen.single_op(op, [T([n], scale=s_in, zero_point=z_in)],
                           [T([n], scale=s_out, zero_point=z_out)], opts)


# (input scale, input zero point, output scale, output zero point)
QPARAMS = [(0.1, 0, 1 / 256, -128), (1e-4, -128, 1e-4, 127),
           (10.0, 127, 10.0, -128), (16 / 256, 0, 1 / 128, 0),
           (0.0273, -37, 0.0512, 21), (0.5, 5, 0.05, -3),
           (3.1e-3, 100, 2.3e-2, -100), (2.0 ** -20, 3, 2.0 ** -12, 0)]


def test_lut_ops_all_inputs(tmp_path):
    """Every int8 input value, for each (scale, zero point) set."""
    cases = []
    for op in LUT_OPS:
        for k, (si, zi, so, zo) in enumerate(QPARAMS):
            if op == "LOGISTIC":
                zo = -128
            if op == "HARD_SWISH" and so < si / 100:
                so = si / 64
            opts = {"alpha": (0.2, -0.7, 1.5, 0.0)[k % 4]} \
                if op == "LEAKY_RELU" else None
            x = ALL_Q if op != "RSQRT" else np.maximum(ALL_Q, zi)
            cases.append((_unary(op, si, zi, so, zo, opts=opts),
                          lambda g, j, x=x: [x]))
    run_cases(cases, tmp_path, sets=1)


# Hand-checked cases, after TFLM's kernel tests: (name, model, inputs,
# expected output). The expected values are the quantized real results
# (e.g. round(256 * sigmoid(x)) - 128), which TFLM's fixed point matches
# here.
def _hand_cases():
    c = []
    x = np.array([10, 20, 30, 40, 50, -10, -20, -30, -40, -50], np.int8)
    # logistic_test.cc (input scale 0.1): sigmoid(1..5), sigmoid(-1..-5).
    c.append(("LOGISTIC", opgen.single_op(
        "LOGISTIC", [T([2, 5], scale=0.1)],
        [T([2, 5], scale=1 / 256, zero_point=-128)]), [x],
        [59, 97, 116, 123, 126, -59, -97, -116, -123, -126]))
    # tanh_test.cc scales: tanh(-4, -1, -0.5, 0, 0.5, 1, 4) * 128.
    x = np.array([-64, -16, -8, 0, 8, 16, 64], np.int8)
    c.append(("TANH", opgen.single_op(
        "TANH", [T([1, 7], scale=16 / 256)],
        [T([1, 7], scale=1.99999955 / 256)]), [x],
        [-128, -97, -59, 0, 59, 97, 127]))
    # x * relu6(x + 3) / 6 at scale 0.05: x = -3, -1, 0, 1, 3, 6, -6, 0.5.
    x = np.array([-60, -20, 0, 20, 60, 120, -120, 10], np.int8)
    c.append(("HARD_SWISH", opgen.single_op(
        "HARD_SWISH", [T([8], scale=0.05)], [T([8], scale=0.05)]), [x],
        [0, -7, 0, 13, 60, 120, 0, 6]))
    # elementwise_test.cc RsqrtInt8 scales: 255 / sqrt((q + 15) * 142 / 255)
    # - 128 for q = 12, 68, 125, 127, -13, 16, 73.
    x = np.array([12, 68, 125, 127, -13, 16, 73], np.int8)
    c.append(("RSQRT", opgen.single_op(
        "RSQRT", [T([7], scale=142 / 255, zero_point=-15)],
        [T([7], scale=1 / 255, zero_point=-128)]), [x],
        [-62, -90, -99, -99, 114, -67, -92]))
    # activations_test.cc SimpleReluTestInt8.
    x = np.array([2, 4, 6, 8, 10, -2, -4, -6, -8, -10], np.int8)
    c.append(("RELU", opgen.single_op(
        "RELU", [T([2, 5], scale=0.5)], [T([2, 5], scale=0.5)]), [x],
        [2, 4, 6, 8, 10, 0, 0, 0, 0, 0]))
    # RELU6 at scale 0.5, zero point -100: 4, 5, 6, 7, 8, -1, -2 -> six is
    # -100 + 12 = -88.
    x = np.array([-92, -90, -88, -86, -84, -102, -104], np.int8)
    c.append(("RELU6", opgen.single_op(
        "RELU6", [T([7], scale=0.5, zero_point=-100)],
        [T([7], scale=0.5, zero_point=-100)]), [x],
        [-92, -90, -88, -88, -88, -100, -100]))
    # leaky_relu_test.cc Int8_1: alpha 0.5, scale 0.1.
    x = np.array([0, 10, 30, 10, -10, -20], np.int8)
    c.append(("LEAKY_RELU", opgen.single_op(
        "LEAKY_RELU", [T([2, 3], scale=0.1)], [T([2, 3], scale=0.1)],
        {"alpha": 0.5}), [x], [0, 10, 30, 10, -5, -10]))
    # prelu_test.cc QuantizedInt8: scale 2/255, alpha (0, 0.5, -0.5)
    # broadcast over the last dimension.
    s = 2 / 255
    x = np.array([0, 0, 0, 64, 64, 64, -127, -127, -127, -32, -32, -32],
                 np.int8)
    alpha = np.array([0, 64, -64], np.int8).reshape(1, 1, 3)
    c.append(("PRELU", opgen.single_op(
        "PRELU", [T([1, 2, 2, 3], scale=s), T([1, 1, 3], scale=s,
                                               data=alpha)],
        [T([1, 2, 2, 3], scale=s)]), [x],
        [0, 0, 0, 64, 64, 64, 0, -64, 64, 0, -16, 16]))
    # l2norm_test.cc SimpleInt8Test / MultipleBatchInt8Test / zeros.
    x = np.array([-71, 37, 44, 76, -46, 5] * 3 + [-1] * 6, np.int8)
    c.append(("L2_NORMALIZATION", opgen.single_op(
        "L2_NORMALIZATION", [T([4, 6], scale=4 / 255, zero_point=-1)],
        [T([4, 6], scale=1 / 128)]), [x],
        [-70, 38, 45, 77, -45, 6] * 3 + [0] * 6))
    return c


def test_hand_checked(tmp_path):
    hand = _hand_cases()
    for name, raw, ins, want in hand:
        got = Reference(raw).run(ins)[0].ravel().tolist()
        assert got == want, (name, "TFLM", got)
    run_cases([(raw, lambda g, j, ins=ins: ins) for _, raw, ins, _ in hand],
              tmp_path)
    for k, (name, _, _, want) in enumerate(hand):
        got = np.fromfile(str(tmp_path / ("%d.out0_0" % k)), np.int8)
        assert got.tolist() == want, name


def test_prepare_rejections(tmp_path):
    """Models TFLM's Prepare rejects are rejected here too."""
    bad = [
        # LOGISTIC int8 output zero point must be -128.
        _unary("LOGISTIC", 0.1, 0, 1 / 256, 0, n=4),
        # HARD_SWISH: input_scale / 128 / output_scale > 1.
        _unary("HARD_SWISH", 1.0, 0, 1e-3, 0, n=4),
        # L2_NORMALIZATION needs activation NONE.
        opgen.single_op("L2_NORMALIZATION", [T([2, 3], scale=0.1)],
                        [T([2, 3], scale=1 / 128)], {"activation": "RELU"}),
        # input and output types differ
        opgen.single_op("TANH", [T([4], scale=0.1)], [T([4], "float32")]),
    ]
    errors = run_cases([(raw, lambda g, j: [np.zeros(4, np.int8)])
                        for raw in bad], tmp_path)
    assert all(e and "PrepareError" in e for e in errors), errors


def test_l2norm_large_and_small_sums(tmp_path):
    """Row sums of squares from 0 to above 2**29 (GetInvSqrtQuantized-
    MultiplierExp's divide-by-4 loop), and a row TFLM's int32 sum would
    overflow, which is rejected."""
    big = opgen.single_op("L2_NORMALIZATION",
                          [T([2, 8300], scale=0.1, zero_point=127)],
                          [T([2, 8300], scale=1 / 128)])
    rows = np.concatenate([np.full(8300, -128, np.int8),
                           np.full(8300, 120, np.int8)])
    small = opgen.single_op("L2_NORMALIZATION",
                            [T([9, 2], scale=0.1, zero_point=3)],
                            [T([9, 2], scale=1 / 128)])
    xs = np.array([3, 3, 4, 3, 4, 4, 5, 3, 5, 5, 1, 3, 7, 3, -128, 127,
                   127, 127], np.int8)
    over = opgen.single_op("L2_NORMALIZATION",
                           [T([34000], scale=0.1, zero_point=127)],
                           [T([34000], scale=1 / 128)])
    errors = run_cases([(big, lambda g, j: [rows]),
                        (small, lambda g, j: [xs]), (over, None)], tmp_path)
    assert errors[:2] == [None, None] and "PrepareError" in errors[2]


def test_inv_sqrt_viper_matches_python(tmp_path):
    """l2norm._inv_sqrt (viper, 16-bit limbs) == lut_math.inv_sqrt, which
    follows GetInvSqrtQuantizedMultiplierExp, over many sums."""
    from tflm.kernels.lut_math import inv_sqrt
    rng = random.Random(3)
    vals = list(range(0, 300)) + [rng.randrange(1 << 31) for _ in range(300)]
    vals += [(1 << k) + d for k in range(2, 31) for d in (-1, 0, 1)
             if (1 << k) + d < 1 << 31]
    out = run_mp("""
from array import array
from tflm.kernels.l2norm import _inv_sqrt
vals = %r
st = array('i', [0, 1518500250])
m = array('i', [0])
s = array('i', [0])
res = []
for v in vals:
    st[0] = v
    _inv_sqrt(st, m, s)
    res.append((m[0], s[0]))
print(res)
""" % vals, tmp_path)
    got = eval(out.strip().splitlines()[-1])
    want = []
    for v in vals:
        mult, shift = inv_sqrt(v)
        want.append((mult, shift + 7))
    assert got == want


def test_rsqrt_below_zero_point_raises(tmp_path):
    """TFLM fails the invoke ("Rsqrt is only defined for positive
    values"); tflm raises InvokeError, allocating nothing."""
    raw = _unary("RSQRT", 0.5, 10, 0.1, 0, n=4)
    with pytest.raises(RuntimeError):
        Reference(raw).run([np.array([10, 11, 9, 12], np.int8)])
    path = tmp_path / "m.tflite"
    path.write_bytes(raw)
    out = run_mp("""
import micropython
import tflm
from tflm.interpreter import Interpreter
it = Interpreter(open(%r, 'rb').read())

def run(vals):
    it.inputs[0].data[:] = vals
    r = 'ok'
    micropython.heap_lock()
    try:
        it.invoke()
    except tflm.InvokeError:
        r = 'InvokeError'
    finally:
        micropython.heap_unlock()
    return r

for vals in (b'\\x0a\\x0b\\x0c\\x7f', b'\\x0a\\x0b\\x09\\x0c') * 2:
    print(run(vals), list(it.outputs[0].get()))
""" % str(path), tmp_path)
    lines = out.strip().splitlines()
    assert [ln.split()[0] for ln in lines] == ["ok", "InvokeError"] * 2


def test_overflowing_scale_ratios_rejected(tmp_path):
    """Scale ratios where TFLM's int32 arithmetic is undefined (x * (1 <<
    shift) with shift >= 31 in MultiplyByQuantizedMultiplier or
    hard_swish's SaturatingLeftShift, a float -> int32 conversion out of
    range in RELU6's six): x86 and Arm builds of TFLM disagree there, so
    prepare raises PrepareError. The largest ratios that are defined run
    and match TFLM."""
    P = "PRELU"
    bad = [
        _unary("RELU", 1000.0, 0, 1e-9, 0, n=4),            # shift 40
        _unary("RELU", 2.0 ** 30, 0, 1.0, 0, n=4),          # shift 31
        _unary("LEAKY_RELU", 7.3, 0, 1e-9, 0, n=4, opts={"alpha": -0.0}),
        _unary("LEAKY_RELU", 0.1, 0, 0.1, 0, n=4, opts={"alpha": -3.3e38}),
        _unary("RELU6", 1e-9, 0, 1e-9, 0, n=4),             # 6 / 1e-9
        _unary("HARD_SWISH", 1e9, 0, 1e9, 127, n=4),        # reluish 2**36
        _unary("RSQRT", 1.4e-45, 0, 0.5, 0, n=4),           # shift 76
        opgen.single_op(P, [T([4], scale=1e3), T([4], scale=1.0)],
                        [T([4], scale=1e-9)]),
        opgen.single_op(P, [T([4], scale=1e9), T([4], scale=1e9)],
                        [T([4], scale=1e-9)]),
    ]
    (tmp_path / "bad").mkdir()
    errors = run_cases([(raw, None) for raw in bad], tmp_path / "bad")
    assert all(e and "PrepareError" in e for e in errors), errors
    good = [
        _unary("RELU", 2.0 ** 29.5, 3, 1.0, -7),             # shift 30
        _unary("LEAKY_RELU", 1.0, 3, 1.0, -7, opts={"alpha": -2.0 ** 29}),
        _unary("RELU6", 2.9e-9, 5, 1.0, 0),                  # six 2.07e9
        _unary("HARD_SWISH", 2.0 ** 24, 0, 2.0 ** 20, 127),  # reluish 31
        _unary("RSQRT", 2.0 ** -40, -128, 2.0 ** -29.5, 0),  # shift 50
        opgen.single_op(P, [T([256], scale=1.0), T([256], scale=2.0 ** 29)],
                        [T([256], scale=1.0)]),
    ]
    rev = ALL_Q[::-1].copy()
    run_cases([(raw, lambda g, j, k=k: [ALL_Q] + ([rev] if k == 5 else []))
               for k, raw in enumerate(good)], tmp_path)


def test_failed_invokes_do_not_leak(tmp_path):
    """RSQRT's InvokeError is made at prepare; raising that one object
    again and again grew its traceback (MicroPython appends each raise's
    frames, ~36 bytes on a 32-bit port): a loop that retries on error ran
    a board out of heap. Without heap_lock a fresh copy is raised now."""
    path = tmp_path / "m.tflite"
    path.write_bytes(_unary("RSQRT", 0.5, 10, 0.1, 0, n=4))
    out = run_mp("""
import gc
import tflm
it = tflm.Interpreter(open(%r, 'rb').read())
it.inputs[0].data[:] = b'\\x0a\\x0b\\x09\\x0c'
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
""" % str(path), tmp_path)
    n, grown = map(int, out.split()[-2:])
    assert n == 1100 and grown < 2000, (n, grown)


# --- int16 (16x8) LOGISTIC, TANH, LEAKY_RELU --------------------------------

ALL_Q16 = np.arange(-32768, 32768, dtype=np.int16)
Q15 = 2.0 ** -15


def _unary16(op, s_in, s_out, z_in=0, z_out=0, n=65536, opts=None,
             out_dtype="int16"):
    return opgen.single_op(
        op, [T([n], "int16", scale=s_in, zero_point=z_in)],
        [T([n], out_dtype, scale=s_out, zero_point=z_out)], opts)


def test_int16_all_inputs(tmp_path):
    """Every int16 input value: LOGISTIC / TANH at the power-of-two input
    scales (TFLM's multiplier 3 << k, and scales within CheckedLog2's
    1e-3 of one, which take that path too), general scales (the
    doubling loop up to shift 31, multipliers up to 32767), an output
    scale off 2**-15 by 0.05%; LEAKY_RELU with zero points, negative
    and large alphas and shifts above 15 (v << shift wraps in int32)."""
    f32 = np.float32
    near12 = float(f32(2.0 ** -12 * 1.0006))   # CheckedLog2: -12
    off12 = float(f32(2.0 ** -12 * 1.0008))    # not a power of two
    cases = []
    for op in ("LOGISTIC", "TANH"):
        for s_in in (2.0 ** -12, 2.0 ** -11, near12, off12, 3.0517578e-05,
                     1e-3, 0.37, 2.6, 1e-9, 4e-14):
            cases.append(_unary16(op, s_in, Q15))
        cases.append(_unary16(op, 1e-3, float(f32(Q15 * 1.0005))))
    for s_in, s_out, z_in, z_out, alpha in (
            (0.01, 0.01, 0, 0, 0.5), (1e-3, 2e-3, 100, -7, -0.3),
            (1e-4, 1e-5, -32768, 32767, 3.5), (0.05, 1e-7, 0, 0, 0.2),
            (1e-5, 0.3, 5, 0, -2.0), (0.02, 0.02, 0, 0, 0.0)):
        cases.append(_unary16("LEAKY_RELU", s_in, s_out, z_in, z_out,
                              opts={"alpha": alpha}))
    run_cases([(raw, lambda g, j: [ALL_Q16]) for raw in cases], tmp_path)


def _hand16():
    """(model, input, golden): leaky_relu_test.cc Int16_1 (scale 0.01,
    alpha 0.5), and LOGISTIC / TANH at input scale 2**-12 (multiplier 3,
    shift 0: d = 3 * x) worked by hand from reference_integer_ops::
    Logistic / Tanh and sigmoid_table_uint16 (T): x = 4096 (1.0): d =
    12288; LOGISTIC h = d >> 9 = 24, ((T[24] = 47911) << 9) + 512 >> 10
    = 23956 (sigmoid(1) * 32768 = 23955.6); TANH h = d >> 8 = 48,
    ((T[48] = 57724) << 8) - 2**23 + 128 >> 8 = 24956 (tanh(1) * 32768 =
    24956.0). x = 1: d = 3, h = 0, f = 3: LOGISTIC (32768 << 9) + 3 *
    (33451 - 32768) + 512 >> 10 = 16386, x = -1: 2**25 - 16779265 + 511
    >> 10 = 16382; TANH (32768 << 8) + 3 * 683 - 2**23 + 128 >> 8 = 8.
    The ends (x = -32768, 32767: d = -98304, 98301) were taken from
    TFLM."""
    out = []
    out.append((opgen.single_op(
        "LEAKY_RELU", [T([2, 3], "int16", scale=0.01)],
        [T([2, 3], "int16", scale=0.01)], {"alpha": 0.5}),
        [0, 100, 300, 100, -100, -200], [0, 100, 300, 100, -50, -100]))
    x = [-32768, -4096, -1, 0, 1, 4096, 32767]
    out.append((_unary16("LOGISTIC", 2.0 ** -12, Q15, n=7), x,
                [11, 8812, 16382, 16384, 16386, 23956, 32757]))
    out.append((_unary16("TANH", 2.0 ** -12, Q15, n=7), x,
                [-32767, -24956, -8, 0, 8, 24956, 32767]))
    return out


def test_int16_hand_checked(tmp_path):
    hand = _hand16()
    for raw, x, want in hand:
        got = Reference(raw).run([np.array(x, np.int16)])[0]
        assert got.ravel().tolist() == want, ("TFLM", got)
    run_cases([(raw, lambda g, j, x=x: [np.array(x, np.int16)])
               for raw, x, _ in hand], tmp_path)
    for k, (_, _, want) in enumerate(hand):
        got = np.fromfile(str(tmp_path / ("%d.out0_0" % k)), np.int16)
        assert got.tolist() == want, k


def test_int16_prepare_rejections(tmp_path):
    """What TFLM's Prepare rejects for int16 (checked on the oracle too),
    and what its debug build aborts on or its eval overflows on (not run
    there): PrepareError here."""
    x4 = [np.zeros(4, np.int16)]
    tflm_rejects = [
        _unary16("LOGISTIC", 1e-3, Q15, z_in=1, n=4),     # zero points 0
        _unary16("LOGISTIC", 1e-3, Q15, z_out=-1, n=4),
        _unary16("TANH", 1e-3, Q15, z_in=-5, n=4),
        _unary16("LOGISTIC", 1e-3, 1 / 256, n=4),        # output 2**-15
        _unary16("TANH", 1e-3, 2.0 ** -14, n=4),
        _unary16("TANH", 1e-3, float(np.float32(Q15 * 1.0008)), n=4),
        _unary16("LOGISTIC", 1e-3, 1 / 256, z_out=-128, n=4,
                 out_dtype="int8"),                      # types differ
        _unary16("LEAKY_RELU", 1e-3, 1e-3, n=4, out_dtype="int8",
                 opts={"alpha": 0.1}),
    ]
    errors = run_cases([(raw, lambda g, j: x4) for raw in tflm_rejects],
                       tmp_path)
    assert all(e and "PrepareError" in e for e in errors), errors
    (tmp_path / "dcheck").mkdir()
    # 2.7: multiplier 33177 (DCHECK); 1e-14: multiplier 0, which TFLM's
    # eval takes for the power-of-two case, 3 << 31 (overflow)
    errors = run_cases([(_unary16(op, s, Q15, n=4), None)
                        for op in ("LOGISTIC", "TANH") for s in (2.7, 1e-14)],
                       tmp_path / "dcheck")
    assert all(e and "PrepareError" in e for e in errors), errors
