"""SUB, MUL, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM (and ADD, whose int8
kernel they share) vs TFLM, bit-exact.

Seeded random single-op models from host_tools/conformance/gen_binary.py
(broadcasting, size-1 dimensions, constant inputs, scales over [1e-4, 10],
zero points over int8, activations; float32 / int32 where supported),
models with extreme scales, ranks 5-6, a tiny scratch array (chunked
broadcast walks), all run in one MicroPython process per test
(test_kernels_misc.run_cases: invoke under micropython.heap_lock()) and
compared with the TFLM oracle. Models over all 256 x 256 input pairs pin
down how TFLM computes the SUB and MUL multipliers (double, not float32).
Hand-checked cases follow TFLM's mul_test.cc, sub_test.cc,
squared_difference_test.cc and maximum_minimum_test.cc.
"""

import random

import numpy as np
import pytest

import conftest  # noqa: F401  (puts micropython/ on sys.path)
from host_tools import opgen
from host_tools.conformance import gen_binary
from test_kernels_misc import run_cases
from tflm.model import Model

T = opgen.Tensor
NP = {"int8": np.int8, "int16": np.int16, "int32": np.int32,
      "float32": np.float32}


def _inputs_for(raw, given=None):
    """make_inputs for run_cases: the generator's arrays (set 0) or seeded
    random values of each graph input's shape and dtype."""
    m = Model(raw)
    specs = [(tuple(m.tensors[i].shape), m.tensors[i].dtype)
             for i in m.inputs]

    def make(rng, j):
        if given is not None and j == 0:
            return given
        out = []
        for shape, dt in specs:
            if dt == "float32":
                out.append(rng.standard_normal(shape).astype(np.float32))
            else:
                info = np.iinfo(NP[dt])
                out.append(rng.integers(info.min, info.max + 1, size=shape,
                                        dtype=np.int64).astype(NP[dt]))
        return out
    return make


def _generated(op, n, seed):
    """n run_cases cases of op from gen_binary (ADD: its quantized())."""
    gen = gen_binary.GENERATORS.get(op) or (
        lambda rng, size: gen_binary.quantized(op, rng, size))
    cases = []
    for k in range(n):
        r = gen(random.Random(seed * 1000 + k), 1 + k % 4)
        raw, given = r if isinstance(r, tuple) else (r, None)
        cases.append((raw, _inputs_for(raw, given)))
    return cases


@pytest.mark.parametrize("op,seed", [("SUB", 1), ("MUL", 2),
                                     ("SQUARED_DIFFERENCE", 3),
                                     ("MAXIMUM", 4), ("MINIMUM", 5),
                                     ("ADD", 6)])
def test_generated(op, seed, tmp_path):
    """40 seeded generator models per op, 2 input sets each."""
    cases = _generated(op, 40, seed)
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_generated_chunked(tmp_path):
    """A scratch array of 6 words: every broadcast walk continues across
    chunks of 3 elements (gather odometer, lookup tables kept)."""
    cases = []
    for k, op in enumerate(("SUB", "MUL", "SQUARED_DIFFERENCE", "MAXIMUM",
                            "MINIMUM", "ADD")):
        cases += _generated(op, 12, 50 + k)
    errs = run_cases(cases, tmp_path, sets=1, scratch=6)
    assert errs == [None] * len(cases)


# --- extreme scales -------------------------------------------------------

def _grid():
    """Every (x1, x2) int8 pair once: two [256, 256] inputs."""
    v = np.arange(-128, 128, dtype=np.int8)
    return [np.repeat(v, 256).reshape(256, 256),
            np.tile(v, 256).reshape(256, 256)]


def _grid_case(op, s1, s2, so, zps=(0, 0, 0), act="NONE"):
    ins = [T([256, 256], "int8", scale=s, zero_point=z)
           for s, z in zip((s1, s2), zps)]
    opts = None if op == "SQUARED_DIFFERENCE" else {"activation": act}
    raw = opgen.single_op(op, ins, [T([256, 256], "int8", scale=so,
                                      zero_point=zps[2])], opts)
    g = _grid()
    return raw, lambda rng, j: g


def _f32(x):
    return float(np.float32(x))


def extreme_case(op, rng):
    """A SUB, MUL or SQUARED_DIFFERENCE model with scales far outside
    [1e-4, 10] and input scale ratios up to 2**24 (multipliers flushed to
    zero, left shifts up to 30), within what TFLM accepts."""
    a, b, o = gen_binary.shapes(rng, rng.randint(1, 4))
    s1 = _f32(2.0 ** rng.uniform(-40, 20))
    s2 = _f32(s1 * rng.choice([2.0 ** -24, 2.0 ** -12, 1.0, 1 + 2.0 ** -23,
                               0.5, 2.0 ** 12, 2.0 ** 24]))
    mx = max(s1, s2)
    u = 2.0 ** rng.uniform(0.01, 29)
    if op == "SUB":  # output multiplier 2 * max / (2**20 * so) < 1
        so = _f32(2 * mx * 2.0 ** -20 * u)
    elif op == "MUL":  # multiplier below 2**30
        so = _f32(s1 * s2 / u)
    else:
        so = _f32(4 * mx * mx / 2.0 ** 14 / u)
    zp = [gen_binary.rand.zero_point(rng) for _ in range(3)]
    ins = [T(sh, "int8", scale=sc, zero_point=z)
           for sh, sc, z in zip((a, b), (s1, s2), zp)]
    opts = None if op == "SQUARED_DIFFERENCE" else {
        "activation": gen_binary.rand.activation(rng)}
    raw = opgen.single_op(op, ins, [T(o, "int8", scale=so,
                                      zero_point=zp[2])], opts)
    return raw, _inputs_for(raw)


def test_extreme_scales(tmp_path):
    rng = random.Random(7)
    cases = [extreme_case(("SUB", "MUL", "SQUARED_DIFFERENCE")[k % 3], rng)
             for k in range(60)]
    errs = run_cases(cases, tmp_path, sets=3)
    # run_cases checks that tflm rejects exactly the models TFLM rejects:
    # here, RELU6 / RELU_N1_TO_1 bounds beyond int32 for tiny out scales.
    rejected = [e for e in errs if e is not None]
    assert 1 <= len(rejected) <= 10
    assert all("overflows int32" in e for e in rejected), rejected


def test_sub_double_multipliers(tmp_path):
    """SUB's multipliers are ADD's double quotients in the TFLM we test
    against (the sub_common.cc we read divides in float32): over all input
    pairs, float32 input multipliers would change 69, 69 and 54 outputs
    of the first three models, a float32 output multiplier 2 of each of
    the last three."""
    cases = [_grid_case("SUB", s1, s2, so, (5, -3, 1)) for s1, s2, so in (
        (2.0354461669921875, 1.356964111328125, 1.0401050531072542e-05),
        (0.5335359573364258, 0.8003039360046387, 2.4267735625471687e-06),
        (0.004717669449746609, 0.0031451100949198008, 1.501307700380039e-08),
        (2.8913819789886475, 0.6478670835494995, 0.8432901501655579),
        (2.27042555809021, 1.0457422733306885, 0.5573130249977112),
        (0.2046607881784439, 1.180999755859375, 0.08922433108091354))]
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)


def test_mul_double_product(tmp_path):
    """MUL's multiplier is (double)s1 * (double)s2 / (double)so
    (mul_common.cc); with a float32 product s1 * s2 the input pairs whose
    product is -348 (first model) or -5032 (second) give other outputs."""
    cases = [_grid_case("MUL", s1, s2, so, (0, 0, 127)) for s1, s2, so in (
        (1.83283269405365, 2.873565196990967, 8.388256072998047),
        (0.7347676753997803, 0.8247071504592896, 19.121187210083008))]
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)


def test_mul_zero_point_sum_wraps_as_int32(tmp_path):
    """MBQM(product) + output zero point is an int32 sum in TFLM, which
    wraps: with s1 * s2 / so = 2**17 * (1 - 2.3e-9) (multiplier 2**31 - 5,
    shift 17), the product 128 * 128 shifts to -2**31 and its MBQM plus
    zero point -128 wraps to a large positive value, clamped to 127 (an
    unwrapped sum on a 64-bit port gives -128)."""
    s1, s2 = 1.391228199005127, 0.7187893390655518
    cases = [_grid_case("MUL", s1, s2, 2.0 ** -17, (0, 0, -128))]
    errs = run_cases(cases, tmp_path)
    assert errs == [None] * len(cases)


# --- hand-checked cases (after TFLM's *_test.cc) ---------------------------

def _f32_sqdiff(a, b):
    """(a - b)**2 with a float32 rounding after each operation."""
    d = np.array(a, np.float32) - np.array(b, np.float32)
    return list(d * d)


def _hand(op, shapes, qs, ins, golden, dtype="int8", act=None):
    """(model, inputs, golden): shapes = (s1, s2, so), qs = per-tensor
    (scale, zero point) or None, ins = the two input value lists."""
    ts = [T(s, dtype, **({} if q is None else
                         {"scale": q[0], "zero_point": q[1]}))
          for s, q in zip(shapes, qs)]
    opts = None if act is None else {"activation": act}
    raw = opgen.single_op(op, ts[:2], ts[2:], opts)
    arrays = [np.array(v, NP[dtype]).reshape(s) for v, s in zip(ins, shapes)]
    return raw, arrays, np.array(golden, NP[dtype])


HAND = [
    # mul_test.cc SimpleInt8: all scales 0.01, products / 100.
    _hand("MUL", ([1, 2, 2, 1],) * 3, [(0.01, 0)] * 3,
          ([-80, 20, 90, 70], [60, 40, 90, 80]), [-48, 8, 81, 56]),
    _hand("MUL", ([1, 2, 2, 1],) * 3, [(0.01, 0)] * 3,
          ([-80, 20, 90, 70], [60, 40, 90, 80]), [0, 8, 81, 56],
          act="RELU"),
    # mul_test.cc BroadcastInt8: 0.05 * 0.05 / 0.01 = 0.25 times x * 2.
    _hand("MUL", ([1, 3, 1, 2], [1], [1, 3, 1, 2]),
          [(0.05, 0), (0.05, 0), (0.01, 0)],
          ([-40, 4, 14, 16, 22, 40], [2]), [-20, 2, 7, 8, 11, 20]),
    # sub_test.cc QuantizedSubNoActivationInt8 / ActivationRelu1Int8:
    # -1, 1, 3, 5 (clamped to [-1, 1]) at scale 1, zero point 13.
    _hand("SUB", ([1, 2, 2, 1],) * 3, [(0.25, -10), (0.5, 4), (1.0, 13)],
          ([-18, -14, -10, -6], [2, 0, -2, -4]), [12, 14, 16, 18]),
    _hand("SUB", ([1, 2, 2, 1],) * 3, [(0.25, -10), (0.5, 4), (1.0, 13)],
          ([-18, -14, -10, -6], [2, 0, -2, -4]), [12, 14, 14, 14],
          act="RELU_N1_TO_1"),
    # sub_test.cc broadcast shapes [2, 3, 1, 2] - [1, 3, 2] at scale 0.1
    # (row 0 of broadcast_goldens).
    _hand("SUB", ([2, 3, 1, 2], [1, 3, 2], [2, 3, 3, 2]), [(0.1, 0)] * 3,
          ([-3, 23, 9, 5, 8, -11, 12, 28, -16, 0, 7, -22],
           [-2, -3, 4, -5, -10, -9]),
          [-1, 26, -7, 28, 7, 32, 11, 8, 5, 10, 19, 14, 10, -8, 4, -6, 18,
           -2, 14, 31, 8, 33, 22, 37, -14, 3, -20, 5, -6, 9, 9, -19, 3, -17,
           17, -13]),
    # squared_difference_test.cc VariousShapes values at input scale 0.1,
    # output scale 9 / 255, zero point -128: round((q1 - q2)**2 * 0.01 /
    # (9 / 255)) - 128 = 255, 0, 2.55, 4.53, 124.95, 113.33 rounded - 128.
    _hand("SQUARED_DIFFERENCE", ([1, 2, 3],) * 3,
          [(0.1, 0), (0.1, 0), (9 / 255, -128)],
          ([-20, 2, 3, 8, 11, -20], [10, 2, 6, 4, -10, 0]),
          [127, -128, -125, -123, -3, -15]),
    # squared_difference_test.cc FloatSquaredDifferenceSameShape: 0.49,
    # 0, 0.09, 0.09 within 1e-5; bit-exact, each step rounded to float32.
    _hand("SQUARED_DIFFERENCE", ([1, 2, 2, 1],) * 3, [None] * 3,
          ([-0.2, 0.2, -1.2, 0.8], [0.5, 0.2, -1.5, 0.5]),
          _f32_sqdiff([-0.2, 0.2, -1.2, 0.8], [0.5, 0.2, -1.5, 0.5]),
          "float32"),
    # mul_test.cc SimpleInt16 / BroadcastInt16 (zero points 0, as TFLM
    # requires for int16), and the int16 extremes: 2**30 / 2**15 = 32768
    # clamps to 32767, -32768 * 32767 / 2**15 = -32767, with RELU6 at
    # scale 2**15 the range is [0, round(6 / 2**15) = 0].
    _hand("MUL", ([1, 2, 2, 1],) * 3, [(0.01, 0)] * 3,
          ([-80, 20, 90, 70], [60, 40, 90, 80]), [-48, 8, 81, 56], "int16"),
    _hand("MUL", ([1, 2, 2, 1],) * 3, [(0.01, 0)] * 3,
          ([-80, 20, 90, 70], [60, 40, 90, 80]), [0, 8, 81, 56], "int16",
          "RELU"),
    _hand("MUL", ([1, 3, 1, 2], [1], [1, 3, 1, 2]),
          [(0.05, 0), (0.05, 0), (0.01, 0)],
          ([-40, 4, 14, 16, 22, 40], [2]), [-20, 2, 7, 8, 11, 20], "int16"),
    _hand("MUL", ([4],) * 3, [(1.0, 0), (1.0, 0), (32768.0, 0)],
          ([-32768, -32768, 32767, 300], [-32768, 32767, 32767, -300]),
          [32767, -32767, 32766, -3], "int16"),
    _hand("MUL", ([2],) * 3, [(1.0, 0), (1.0, 0), (32768.0, 0)],
          ([-32768, 32767], [-32768, -32768]), [0, 0], "int16", "RELU6"),
    # scalars (rank 0) and a scalar broadcast
    _hand("MUL", ([], [], []), [(0.5, 1)] * 3, ([9], [-3]), [-15]),
    _hand("SUB", ([], [2, 2], [2, 2]), [(1.0, 0)] * 3, ([5], [1, 2, 3, 4]),
          [4, 3, 2, 1]),
    # mul_test.cc SimpleInt32 (quantization ignored), sub_test.cc
    # Int32SubNoActivation, and int32 wrap-around (x86's two's complement)
    _hand("MUL", ([1, 2, 2, 1],) * 3, [(0.01, 0), (0.01, 0), (0.0001, 0)],
          ([-80, 20, 90, 70], [60, 40, 90, 80]), [-4800, 800, 8100, 5600],
          "int32"),
    _hand("SUB", ([1, 2, 2, 1],) * 3, [None] * 3,
          ([-2, 2147483646, -1, 1146622854], [3, 1, -2147483647, -726978367]),
          [-5, 2147483645, 2147483646, 1873601221], "int32"),
    _hand("MUL", ([3],) * 3, [None] * 3,
          ([65536, -65536, 123456789], [65536, 3, 1000]),
          [0, -196608, 123456789000 % 2 ** 32 - 2 ** 32], "int32"),
    _hand("MUL", ([3],) * 3, [None] * 3, ([5, -3, 2], [1, 1, 4]), [5, 0, 6],
          "int32", "RELU6"),
    _hand("SQUARED_DIFFERENCE", ([3],) * 3, [None] * 3,
          ([3, 65536, 46341], [-4, 0, 0]), [49, 0, 46341 ** 2 - 2 ** 32],
          "int32"),
    # maximum_minimum_test.cc Int8Test (scales ignored), Int32WithBroadcast
    # and FloatWithBroadcast.
    _hand("MAXIMUM", ([3, 1, 2],) * 3, [(1.0, 0)] * 3,
          ([1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 127, 1]),
          [1, 0, 2, 12, 127, 23]),
    _hand("MINIMUM", ([3, 1, 2],) * 3, [(1.0, 0)] * 3,
          ([1, 0, 2, 11, 2, 23], [0, 0, 1, 12, 127, 1]),
          [0, 0, 1, 11, 2, 1]),
    _hand("MAXIMUM", ([3, 1, 2], [1], [3, 1, 2]), [None] * 3,
          ([1, 0, -1, -2, 3, 11], [2]), [2, 2, 2, 2, 3, 11], "int32"),
    _hand("MINIMUM", ([3, 1, 2], [1], [3, 1, 2]), [None] * 3,
          ([1, 0, -1, -2, 3, 11], [2]), [1, 0, -1, -2, 2, 2], "int32"),
    _hand("MAXIMUM", ([3, 1, 2], [2], [3, 1, 2]), [None] * 3,
          ([1.0, 0.0, -1.0, -2.0, -1.44, 11.0], [0.5, 2.0]),
          [1.0, 2.0, 0.5, 2.0, 0.5, 11.0], "float32"),
    _hand("MINIMUM", ([3, 1, 2], [2], [3, 1, 2]), [None] * 3,
          ([1.0, 0.0, -1.0, -2.0, -1.44, 11.0], [0.5, 2.0]),
          [0.5, 0.0, -1.0, -2.0, -1.44, 2.0], "float32"),
    # NaN and signed zeros: x1 > x2 / x1 < x2 is false, so x2 is taken.
    _hand("MAXIMUM", ([4],) * 3, [None] * 3,
          ([np.nan, 1.0, -0.0, 0.0], [1.0, np.nan, 0.0, -0.0]),
          [1.0, np.nan, 0.0, -0.0], "float32"),
    _hand("MINIMUM", ([4],) * 3, [None] * 3,
          ([np.nan, 1.0, -0.0, 0.0], [1.0, np.nan, 0.0, -0.0]),
          [1.0, np.nan, 0.0, -0.0], "float32"),
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
    """Models tflm must refuse at prepare with a PrepareError naming the
    op and tensor (TFLM would misbehave or abort: not run there)."""
    q = {"scale": 0.1, "zero_point": 0}
    bad = [
        ("MUL", T([2, 3], **q), T([3, 2], **q), T([2, 3], **q)),  # shapes
        ("SUB", T([2, 3], **q), T([3], **q), T([3, 3], **q)),  # output
        ("MAXIMUM", T([4], "int8", **q), T([4], "int32"), T([4], "int8", **q)),
        ("MINIMUM", T([4], "int16"), T([4], "int16"), T([4], "int16")),
        ("SQUARED_DIFFERENCE", T([4], "int16", scale=0.1),
         T([4], "int16", scale=0.1), T([4], "int16", scale=0.1)),
        # sub.cc: int32 SUB must not be quantized
        ("SUB", T([4], "int32", **q), T([4], "int32"), T([4], "int32")),
        ("MUL", T([4], **q), T([4], **q), T([4], "int8")),  # no quant
        # rank 7: beyond TFLM's RuntimeShape (wrong results there)
        ("SUB", T([1, 2, 1, 2, 1, 2, 2], **q), T([2], **q),
         T([1, 2, 1, 2, 1, 2, 2], **q)),
    ]
    cases = [(opgen.single_op(op, [a, b], [y]), None) for op, a, b, y in bad]
    errs = run_cases(cases, tmp_path)
    for e in errs:
        assert e and e.startswith("PrepareError"), e


def test_int16_mul_rejections(tmp_path):
    """TFLM's int16 MUL needs every zero point 0 (checked on the oracle
    too) and inputs of one type; PrepareError here."""
    def m(z1, z2, zo, t2="int16"):
        return opgen.single_op("MUL", [
            T([4], "int16", scale=0.1, zero_point=z1),
            T([4], t2, scale=0.1, zero_point=z2)],
            [T([4], "int16", scale=0.1, zero_point=zo)])
    bad = [m(1, 0, 0), m(0, -3, 0), m(0, 0, 7), m(0, 0, 0, "int8")]
    x = np.zeros(4, np.int16)
    errs = run_cases([(raw, lambda rng, j, raw=raw: [
        x, np.zeros(4, NP[Model(raw).tensors[1].dtype])]) for raw in bad],
        tmp_path)
    for e in errs:
        assert e and e.startswith("PrepareError"), e


def test_high_rank(tmp_path):
    """Ranks 5 and 6 (TFLM's RuntimeShape limit), size-1 dimensions
    broadcast in either input, for every op."""
    rng = random.Random(11)
    cases = []
    for k in range(24):
        op = ("SUB", "MUL", "SQUARED_DIFFERENCE", "MAXIMUM", "MINIMUM",
              "ADD")[k % 6]
        out = [rng.choice((1, 2, 3)) for _ in range(rng.randint(5, 6))]
        a = [d if rng.random() < 0.6 else 1 for d in out]
        b = [d if rng.random() < 0.6 else 1 for d in out]
        b = b[rng.randint(0, 3):]
        o = list(np.broadcast_shapes(tuple(a), tuple(b)))
        ins = [T(s, scale=gen_binary.rand.scale(rng),
                 zero_point=gen_binary.rand.zero_point(rng)) for s in (a, b)]
        raw = opgen.single_op(op, ins, [T(o, scale=gen_binary.rand.scale(
            rng), zero_point=gen_binary.rand.zero_point(rng))])
        cases.append((raw, _inputs_for(raw)))
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_activation_bound_at_int32_limit(tmp_path):
    """RELU6 bound round(6 / scale) == 2**31 passes TFLM's overflow check
    ((float)INT32_MAX is 2**31) but its cast to int32_t is undefined (x86
    gives INT32_MIN and garbage outputs, Arm saturates); so does a
    zero_point + bound beyond INT32_MAX: PrepareError here. The largest
    defined bound (2147483520, + zero point 127 == INT32_MAX) runs and
    matches TFLM."""
    at = float(np.float32(6 / 2 ** 31))    # 6 / at rounds to 2**31
    below = float(np.float32(6 / 2147483520.0))
    bad, good = [], []
    for op in ("ADD", "SUB", "MUL"):
        for scale, zp, out in ((at, 0, bad), (below, 127, good),
                               (below, -7, good)):
            x1 = T([4], scale=1e-9, zero_point=0)
            x2 = T([4], scale=1e-9, zero_point=0)
            y = T([4], scale=scale, zero_point=zp)
            out.append(opgen.single_op(op, [x1, x2], [y],
                                       {"activation": "RELU6"}))
    (tmp_path / "bad").mkdir()
    errs = run_cases([(raw, None) for raw in bad], tmp_path / "bad")
    assert all(e and "overflows int32" in e for e in errs), errs
    vals = [np.array([1, -2, 3, 100], np.int8),
            np.array([5, 6, -7, 8], np.int8)]
    assert run_cases([(raw, lambda g, j: vals) for raw in good],
                     tmp_path) == [None] * len(good)


# --- ADD / SUB writing over an input that dies there (planner.in_place) ---

def _in_place_model(op, full, small, swap, reread):
    """in1, in2 (shape full) -> t = ADD(in1, in2) -> y = op(t, s) (or
    op(s, t) if swap), s an input of shape small; reread: a third op
    reads t after y (so t must not be overwritten)."""
    m = opgen.Model()
    in1 = m.add_tensor(T(full, scale=0.05, zero_point=3))
    in2 = m.add_tensor(T(full, scale=0.07, zero_point=-5))
    s = m.add_tensor(T(small, scale=0.09, zero_point=7))
    t = m.add_tensor(T(full, scale=0.11, zero_point=-2))
    y = m.add_tensor(T(full, scale=0.13, zero_point=1))
    m.add_op("ADD", [in1, in2], [t])
    m.add_op(op, [s, t] if swap else [t, s], [y])
    outs = [y]
    if reread:
        z = m.add_tensor(T(full, scale=0.17, zero_point=0))
        m.add_op("ADD", [t, in1], [z])
        outs.append(z)
    m.inputs, m.outputs = [in1, in2, s], outs
    return m.build(), t, y


@pytest.mark.parametrize("full,small", [
    ([1, 4, 4, 16], [1, 4, 4, 16]),  # lookup tables, one loop
    ([1, 4, 4, 16], [1, 1, 1, 16]),  # lookup tables, broadcast chunks
    ([1, 4, 4, 16], [1]),            # lookup tables, a scalar
    ([1, 2, 2, 8], [1, 2, 1, 8]),    # no tables (under LUT_MIN)
])
def test_add_sub_in_place(full, small, tmp_path):
    """The output of an int8 ADD / SUB takes the bytes of its same-shape
    input t when nothing reads t later (planner.in_place): the arena is
    smaller, and the outputs stay bit-exact with TFLM on every eval path
    (also with a 6-word scratch: chunked walks). Inputs of the graph and
    tensors read later are never overwritten."""
    from tflm import planner
    cases = []
    for op in ("ADD", "SUB"):
        for swap in (False, True):
            for reread in (False, True):
                raw, t, y = _in_place_model(op, full, small, swap, reread)
                _, bufs, root = planner.plan_model(Model(raw))
                assert (root[y] == root[t]) == (not reread)
                assert root[y] not in (0, 1, 2)  # graph inputs kept
                cases.append((raw, _inputs_for(raw)))
    assert run_cases(cases, tmp_path, sets=2) == [None] * len(cases)
    assert run_cases(cases, tmp_path, sets=1, scratch=6) == \
        [None] * len(cases)


def test_in_place_saves_the_output_at_a_residual_peak():
    """ResNet-8's three residual ADDs write over the block's input: the
    activations still plan to TFLM's head (the peak is at the second
    conv of a block), and the ADD's 2 KB lookup tables no longer raise
    it (checked by the interpreter's head in test_board_heap)."""
    import os
    from conftest import SHARED
    from tflm import planner
    path = os.path.join(SHARED, "tiny_ic_resnet_int8",
                        "pretrainedResnet_quant.tflite")
    if not os.path.exists(path):
        pytest.skip("missing " + path)
    with open(path, "rb") as f:
        m = Model(f.read())
    _, _, root = planner.plan_model(m)
    adds = [op for op in m.operators if op.name == "ADD"]
    assert len(adds) == 3
    for op in adds:
        assert root[op.outputs[0]] in [root[i] for i in op.inputs]


@pytest.mark.parametrize("last", ["ADD", "SUB"])
@pytest.mark.parametrize("reshape", [False, True])
def test_in_place_never_overwrites_a_graph_output(last, reshape, tmp_path):
    """A graph output made in place (y1 over a) is then read by the last
    op, an ADD / SUB (directly or through a RESHAPE): that op must not
    write over y1, whose group now lives to the end (found by review:
    y1 held y2's values)."""
    from tflm import planner
    m = opgen.Model()
    sh = [1, 4, 4, 16]
    in1 = m.add_tensor(T(sh, scale=0.05, zero_point=3))
    in2 = m.add_tensor(T(sh, scale=0.07, zero_point=-5))
    a = m.add_tensor(T(sh, scale=0.11, zero_point=-2))
    y1 = m.add_tensor(T(sh, scale=0.13, zero_point=1))
    y2 = m.add_tensor(T(sh, scale=0.17, zero_point=0))
    m.add_op("ADD", [in1, in2], [a])
    m.add_op("ADD", [a, in2], [y1])
    src = y1
    if reshape:
        src = m.add_tensor(T(sh, scale=0.13, zero_point=1))
        shape = T([4], "int32", data=np.array(sh, np.int32))
        m.add_op("RESHAPE", [y1, shape], [src])
    m.add_op(last, [src, in2], [y2])
    m.inputs, m.outputs = [in1, in2], [y1, y2]
    raw = m.build()
    _, _, root = planner.plan_model(Model(raw))
    assert root[y1] == root[a]  # in place, as a dies there
    assert root[y2] != root[y1]
    assert run_cases([(raw, _inputs_for(raw))], tmp_path, sets=2) == [None]
