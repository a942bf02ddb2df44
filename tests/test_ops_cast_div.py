"""CAST and DIV vs TFLM, bit-exact; their undefined cases; rejections.

Seeded random single-op models from host_tools/conformance/gen_cast_div.py
(every CAST type pair with edge values; DIV in float32, int32 and int8
with broadcasting, constants, extreme scales and activations) run in the
TFLM reference interpreter (the oracle) and, all in one MicroPython
process, in tflm (invoke under micropython.heap_lock(), each model placed
0-3 bytes into a buffer); outputs must be byte-identical. int8 DIV is
also checked over all 256 x 256 input pairs for scales that reach every
branch of its RoundingDivideByPOT (x86's shifts by 32 or more, a
multiplier flushed to 0, shifts far beyond 31). Hand-checked cases
follow TFLM's cast_test.cc and div_test.cc. The cases TFLM does not
define (kernels/div.py: int32 x / 0 fails its eval, INT32_MIN / -1
traps, an int8 divisor equal to its zero point gives garbage) are
checked against what tflm documents instead, and the models tflm
refuses must raise PrepareError naming the operator and the reason.
"""

import random

import numpy as np
import pytest

import conftest  # noqa: F401  (puts micropython/ on sys.path)
from conftest import run_mp
from mp_batch import run_on_device
from host_tools import opgen
from host_tools.conformance import gen_cast_div
from host_tools.oracle import Reference
from tflm import quant

T = opgen.Tensor
SEEDS = 40  # random models per op and test
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
ACT = {"NONE": 0, "RELU": 1, "RELU_N1_TO_1": 2, "RELU6": 3}


def run(cases, tmp_path, scratch=None):
    """cases: [(model bytes, [input set, ...])] (no sets: a model that
    must not load). Returns [(status, payload)]: ('OK', [[output bytes]
    per set]), ('ERR', message) at load, ('IERR', message) at invoke."""
    return run_on_device(cases, tmp_path, scratch)


def tflm_outputs(raw, ins):
    """TFLM's output bytes for one input set."""
    return [np.ascontiguousarray(o).tobytes() for o in Reference(raw).run(ins)]


def generated(op, n, seed):
    """n (name, model, inputs) of op's generator, as the conformance
    runner makes them (size budget 1 + i % 4)."""
    gen = gen_cast_div.GENERATORS[op]
    out = []
    for i in range(n):
        raw, ins = gen(random.Random("castdiv:%s:%d:%d" % (op, seed, i)),
                       1 + i % 4)
        out.append(("%s #%d" % (op, i), raw, ins))
    return out


def check_vs_tflm(cases, tmp_path, scratch=None):
    """cases: [(name, raw, inputs)]; every model runs and matches TFLM."""
    want = [tflm_outputs(raw, ins) for _, raw, ins in cases]
    got = run([(raw, [ins]) for _, raw, ins in cases], tmp_path, scratch)
    for (name, _, _), w, (st, out) in zip(cases, want, got):
        assert st == "OK", "%s: %s" % (name, out)
        assert out[0] == w, name


@pytest.mark.parametrize("op,seed", [("CAST", 1), ("DIV", 2), ("DIV", 3)])
def test_random_models_match_tflm(op, seed, tmp_path):
    check_vs_tflm(generated(op, SEEDS, seed), tmp_path)


def test_random_div_chunked(tmp_path):
    """A 6-word scratch: every DIV walk continues across chunks of 3."""
    check_vs_tflm(generated("DIV", 24, 4), tmp_path, scratch=6)


def test_cast_every_type_pair(tmp_path):
    """All 36 (input, output) pairs, edge values included."""
    cases = []
    for ti in gen_cast_div.CAST_IN:
        for to in gen_cast_div.CAST_OUT:
            x = gen_cast_div.cast_values(random.Random(ti + to), ti, [97])
            raw = opgen.single_op("CAST", [T([97], ti)], [T([97], to)])
            cases.append(("%s->%s" % (ti, to), raw, [x]))
    check_vs_tflm(cases, tmp_path)


# --- int8 DIV over all input pairs ---------------------------------------

def _grid():
    v = np.arange(-128, 128, dtype=np.int8)
    return [np.repeat(v, 256), np.tile(v, 256)]


GRID_PARAMS = [
    # (s1, s2, so, zp1, zp2, zo, activation)
    (0.1, 0.1, 0.1, 0, 0, 0, "NONE"),   # shift 4: e >= 32 for small v1
    # exact ties (multiplier 25): 125 / 50 is 68 with TFLM's double
    # s1 / (s2 * so), 67 with div.cc's float32 one (403 pairs differ)
    (0.05, 0.02, 0.1, -3, 7, 5, "RELU"),
    (2.0 / 255, 2.0 / 255, 2.0 / 255, 0, 0, 0, "NONE"),  # div_test.cc
    (1e-3, 0.5, 0.004, 100, -128, -20, "RELU6"),
    (3.0, 1e-4, 2.0, -128, 127, 127, "RELU_N1_TO_1"),
    (1e-12, 1.0, 1.0, 5, -5, 0, "NONE"),  # multiplier below 2**-31: 0
    (10.0, 1e-6, 1e-6, 0, 1, -1, "NONE"),  # shift 44: e < 0
    (1.5e-7, 3e-3, 2e-2, -60, 60, 33, "RELU"),
    (0.1, 1e-30, 1e-30, 1, 2, 3, "NONE"),  # s2 * so: 0 in float32
]


def _grid_model(s1, s2, so, z1, z2, zo, act):
    return opgen.single_op(
        "DIV", [T([65536], scale=s1, zero_point=z1),
                T([65536], scale=s2, zero_point=z2)],
        [T([65536], scale=so, zero_point=zo)], {"activation": act})


def test_int8_all_pairs_match_tflm(tmp_path):
    """Every (x1, x2) int8 pair for each parameter set: bit-exact with
    TFLM wherever x2 != zp2 (there TFLM divides by its garbage
    GetReciprocal(0); tflm saturates, checked below)."""
    a, b = _grid()
    raws = [_grid_model(*p) for p in GRID_PARAMS]
    got = run([(raw, [[a, b]]) for raw in raws], tmp_path)
    for p, raw, (st, out) in zip(GRID_PARAMS, raws, got):
        assert st == "OK", (p, out)
        ours = np.frombuffer(out[0][0], np.int8)
        ref = Reference(raw).run([a, b])[0].reshape(-1)
        ok = b != p[4]
        bad = np.nonzero((ours != ref) & ok)[0]
        assert not len(bad), (p, [(int(a[k]), int(b[k]), int(ours[k]),
                                   int(ref[k])) for k in bad[:5]])
        # x2 == zp2: v1 > 0 -> hi, v1 < 0 -> lo, 0 / 0 -> the zero point
        lo, hi = quant.activation_range(ACT[p[6]], p[2], p[5])
        v1 = a.astype(np.int64) - p[3]
        zero = ~ok
        want = np.where(v1 > 0, hi, np.where(v1 < 0, lo,
                                             min(max(p[5], lo), hi)))
        assert (ours[zero] == want[zero]).all(), p


def test_x86_rounding_quirk_is_what_tflm_gives():
    """The reason eval reproduces x86's out-of-range shifts: with all
    scales 0.1 and zero points 0, TFLM gives 0 / 100 -> 1 and 1 / 100 ->
    127 (RoundingDivideByPOT by 32: mask -1, shift by 0), 0 / 3 -> 0."""
    raw = opgen.single_op("DIV", [T([4], scale=0.1), T([4], scale=0.1)],
                          [T([4], scale=0.1)])
    out = Reference(raw).run([np.array([0, 1, 0, 7], np.int8),
                              np.array([100, 100, 3, 70], np.int8)])[0]
    assert out.tolist() == [1, 127, 0, 1]


# --- hand-checked cases ----------------------------------------------------

def _f32div(a, b, lo=-np.inf, hi=np.inf):
    with np.errstate(all="ignore"):
        q = np.float32(a) / np.float32(b)
    return np.clip(q, np.float32(lo), np.float32(hi)).astype(np.float32)


def _hand_cast(vals, ti, to, gold, shape=None):
    shape = shape or [len(vals)]
    x = np.array(vals, ti).reshape(shape) if ti != "bool_raw" else \
        np.frombuffer(bytes(vals), np.bool_)
    t = "bool" if ti == "bool_raw" else ti
    raw = opgen.single_op("CAST", [T(shape, t)], [T(shape, to)])
    return raw, [x], [np.array(gold, to)]


def _hand_div(a, b, gold, dtype, act="NONE", shapes=None, q=None):
    shapes = shapes or [[len(a)], [len(b)], [len(gold)]]
    q = q or [{}, {}, {}]
    ts = [T(s, dtype, **qk) for s, qk in zip(shapes, q)]
    raw = opgen.single_op("DIV", ts[:2], ts[2:], {"activation": act})
    return raw, [np.array(a, dtype).reshape(shapes[0]),
                 np.array(b, dtype).reshape(shapes[1])], \
        [np.array(gold, dtype)]


def _q(s, z=0):
    return {"scale": s, "zero_point": z}


def hand_cases():
    """(name, model, inputs, expected outputs)."""
    c = []
    # cast_test.cc
    c.append(("cast_f32_i8",) + _hand_cast(
        [100.0, 1.0, 0.0, 0.4, 1.999, 1.1], "float32", "int8",
        [100, 1, 0, 0, 1, 1], [3, 2]))
    c.append(("cast_f32_i16",) + _hand_cast(
        [100.0, 1.0, 0.0, 0.4, 1.999, 1.1], "float32", "int16",
        [100, 1, 0, 0, 1, 1]))
    c.append(("cast_i8_f32",) + _hand_cast(
        [123, 0, 1, 2, 3, 4], "int8", "float32", [123, 0, 1, 2, 3, 4]))
    c.append(("cast_i16_i32",) + _hand_cast(
        [123, 0, 1, 2, 3, 4], "int16", "int32", [123, 0, 1, 2, 3, 4]))
    c.append(("cast_u32_i32",) + _hand_cast(
        [100, 200, 300, 400, 500, 600], "uint32", "int32",
        [100, 200, 300, 400, 500, 600], [2, 3]))
    c.append(("cast_bool_f32",) + _hand_cast(
        [True, True, False, True, False, True], "bool", "float32",
        [1, 1, 0, 1, 0, 1]))
    # wrap, rounding to float32, saturation
    c.append(("cast_i32_i8_wrap",) + _hand_cast(
        [300, -129, 65535, 70000, I32_MIN], "int32", "int8",
        [44, 127, -1, 112, 0]))
    c.append(("cast_i32_u32",) + _hand_cast(
        [-1, -2, I32_MIN], "int32", "uint32", [2 ** 32 - 1, 2 ** 32 - 2,
                                                2 ** 31]))
    c.append(("cast_i32_f32_ties",) + _hand_cast(
        [16777217, 16777219, 33554435, I32_MAX, -I32_MAX, I32_MIN],
        "int32", "float32", [16777216, 16777220, 33554436, 2.0 ** 31,
                             -2.0 ** 31, -2.0 ** 31]))
    # spacing 256 in [2**31, 2**32): nearest, ties to the even mantissa
    c.append(("cast_u32_f32",) + _hand_cast(
        [2 ** 32 - 1, 2 ** 32 - 128, 2 ** 32 - 129, 2 ** 32 - 385,
         2 ** 31 + 128, 2 ** 31 + 384],
        "uint32", "float32", [2.0 ** 32, 2.0 ** 32, 2.0 ** 32 - 256,
                              2.0 ** 32 - 512, 2.0 ** 31,
                              2.0 ** 31 + 512]))
    c.append(("cast_f32_i8_sat",) + _hand_cast(
        [200.7, -1e9, np.nan, -0.0, -1.5, 127.9, -128.9, np.inf], "float32",
        "int8", [127, -128, 0, 0, -1, 127, -128, 127]))
    c.append(("cast_f32_i32_sat",) + _hand_cast(
        [2147483520.0, 2147483648.0, -2147483648.0, -3e9, -np.inf, np.nan],
        "float32", "int32", [2147483520, I32_MAX, I32_MIN, I32_MIN,
                             I32_MIN, 0]))
    c.append(("cast_f32_u32_sat",) + _hand_cast(
        [-1.0, 4.3e9, 3e9, np.inf, -0.5, 4294967040.0], "float32", "uint32",
        [0, 2 ** 32 - 1, 3000000000, 2 ** 32 - 1, 0, 4294967040]))
    # float32 -> float32 copies the bits, a signaling NaN's included
    bits = np.array([0x3FC00000, 0x80000000, 1, 0x7FA00001, 0xFFC00002],
                    np.uint32)
    raw = opgen.single_op("CAST", [T([5], "float32")], [T([5], "float32")])
    c.append(("cast_f32_f32", raw, [bits.view(np.float32)],
              [bits.view(np.float32)]))
    # a bool byte other than 0 / 1 (undefined in C++): its value on x86
    c.append(("cast_bool_bytes",) + _hand_cast(
        [2, 255, 1, 0], "bool_raw", "int32", [2, 255, 1, 0]))
    # div_test.cc FloatDivOpTestActNone / ActReluN1To1 (bit-exact here)
    a, b = [-0.2, 0.2, -1.2, 0.8], [0.5, 0.2, -1.5, 0.5]
    c.append(("div_f32",) + _hand_div(a, b, _f32div(a, b), "float32"))
    b2 = [0.1, 0.2, -1.5, 0.5]
    c.append(("div_f32_relu_n1",) + _hand_div(
        a, b2, _f32div(a, b2, -1, 1), "float32", "RELU_N1_TO_1"))
    # FloatDivOpTestBroadcast (by a scalar), and IEEE x / 0
    a = [-0.2, 0.2, 0.07, 0.08, 0.11, -0.123, -0.32, 0.54]
    c.append(("div_f32_bcast",) + _hand_div(
        a, [0.1], _f32div(a, [0.1]), "float32",
        shapes=[[1, 2, 2, 2], [1], [1, 2, 2, 2]]))
    a, b = [1.0, -1.0, 0.0, 3e38, 1e-45], [0.0, 0.0, 0.0, 1e-10, 4.0]
    c.append(("div_f32_by_zero",) + _hand_div(
        a, b, _f32div(a, b, -3.4028235e38, 3.4028235e38), "float32"))
    # div_test.cc IntegerDivOpTestNoActivation / ActivationRELU_N1_TO_1 /
    # WithBroadcast
    c.append(("div_i32",) + _hand_div(
        [-2, 2, -15, 8], [5, -2, -3, 5], [0, -1, 5, 1], "int32"))
    c.append(("div_i32_relu_n1",) + _hand_div(
        [-2, 2, -12, 8], [1, 2, -15, 5], [-1, 1, 0, 1], "int32",
        "RELU_N1_TO_1"))
    c.append(("div_i32_bcast",) + _hand_div(
        [-20, 21, 7, 8, 11, -123, -42, -48], [3],
        [-6, 7, 2, 2, 3, -41, -14, -16], "int32",
        shapes=[[1, 2, 1, 2, 2], [1], [1, 2, 1, 2, 2]]))
    a, b = [I32_MAX, I32_MIN, I32_MIN, 7, I32_MIN], [-1, 2, 3, I32_MIN,
                                                      I32_MIN]
    c.append(("div_i32_extremes",) + _hand_div(
        a, b, [-I32_MAX, -(1 << 30), -715827882, 0, 1], "int32"))
    c.append(("div_i32_relu6",) + _hand_div(
        [7, -7, 100, 5], [2, 2, 3, 3], [3, 0, 6, 1], "int32", "RELU6"))
    # int8, all scales 0.25 (multiplier 4): out = round(4 * v1 / v2)
    q = [_q(0.25)] * 3
    c.append(("div_i8",) + _hand_div(
        [6, -12, 7, 1, 100, -100, 0], [4, 3, 2, 3, 7, -7, 5],
        [6, -16, 14, 1, 57, 57, 0], "int8", q=q))
    # zero points: v1 = x1 - 10, v2 = x2 + 4; output zero point -5
    q = [_q(0.25, 10), _q(0.25, -4), _q(0.25, -5)]
    c.append(("div_i8_zp",) + _hand_div(
        [16, -2, 17], [0, -1, -2], [1, -21, 9], "int8", q=q))
    c.append(("div_i8_relu_bcast",) + _hand_div(
        [8, -8, 12, 0], [2], [16, 0, 24, 0], "int8", "RELU",
        shapes=[[2, 2], [1, 1], [2, 2]], q=[_q(0.25)] * 3))
    return c


def test_hand_checked(tmp_path):
    hc = hand_cases()
    got = run([(raw, [ins]) for _, raw, ins, _ in hc], tmp_path)
    for (name, raw, ins, gold), (st, out) in zip(hc, got):
        assert st == "OK", "%s: %s" % (name, out)
        gold = [np.ascontiguousarray(g).tobytes() for g in gold]
        assert out[0] == gold, (name, [np.frombuffer(o, np.uint8)
                                       for o in out[0]])
        assert tflm_outputs(raw, ins) == gold, name + " (TFLM)"


# --- what TFLM does not define ------------------------------------------

def test_int32_zero_divisor_fails_like_tflm(tmp_path):
    """A 0 anywhere in input2: TFLM's eval fails (output not written);
    tflm's invoke raises InvokeError before it writes anything, for every
    broadcast."""
    cases = []
    for a_shape, b_shape in (([4], [4]), ([3, 4], [1]), ([2, 3], [2, 1])):
        raw = opgen.single_op("DIV", [T(a_shape, "int32"),
                                      T(b_shape, "int32")],
                              [T(list(np.broadcast_shapes(a_shape, b_shape)),
                                 "int32")])
        a = np.arange(1, 1 + int(np.prod(a_shape)), dtype=np.int32)
        b = np.arange(int(np.prod(b_shape)), dtype=np.int32)[::-1]
        with pytest.raises(RuntimeError):
            Reference(raw).run([a, b])
        cases.append((raw, [[a, b]]))
    for st, msg in run(cases, tmp_path):
        assert st == "IERR" and msg.startswith("InvokeError"), (st, msg)
        assert "zero divisor" in msg and "op 0 (DIV)" in msg, msg


def test_int32_zero_divisor_under_heap_lock(tmp_path):
    """The InvokeError is made at prepare: raised under heap_lock, the
    output left as it was, and the interpreter runs valid inputs next."""
    raw = opgen.single_op("DIV", [T([4], "int32"), T([4], "int32")],
                          [T([4], "int32")])
    path = tmp_path / "m.tflite"
    path.write_bytes(raw)
    out = run_mp(
        "import micropython, tflm\n"
        "def main():\n"
        "    it = tflm.Interpreter(open(%r, 'rb').read())\n"
        "    it.inputs[0].set([7, -8, 9, 10])\n"
        "    for b in ([2, 0, 3, 4], [2, 3, -4, 5], [0, 0, 0, 0]):\n"
        "        it.inputs[1].set(b)\n"
        "        micropython.heap_lock()\n"
        "        try:\n"
        "            it.invoke()\n"
        "            r = 'ok'\n"
        "        except tflm.InvokeError:\n"
        "            r = 'bad'\n"
        "        micropython.heap_unlock()\n"
        "        print(r, list(it.outputs[0].get()))\n"
        "main()\n" % str(path), tmp_path)
    lines = out.strip().split("\n")
    assert lines[0] == "bad [0, 0, 0, 0]", out
    assert lines[1] == "ok [3, -2, -2, 2]", out
    assert lines[2] == "bad [3, -2, -2, 2]", out


def test_undefined_int32_min_over_minus_one(tmp_path):
    """INT32_MIN / -1 traps in TFLM (SIGFPE): tflm gives INT32_MIN (the
    wrapped 2**31), then the activation clamp. Not run on TFLM."""
    a = np.array([[I32_MIN, I32_MIN, 6], [I32_MIN, 5, I32_MAX]], np.int32)
    b = np.array([-1, 1, -1], np.int32)
    quotients = np.array([[I32_MIN, I32_MIN, -6], [I32_MIN, 5, -I32_MAX]],
                         np.int64)
    ranges = {"NONE": (I32_MIN, I32_MAX), "RELU": (0, I32_MAX),
              "RELU6": (0, 6), "RELU_N1_TO_1": (-1, 1)}
    cases = [(opgen.single_op("DIV", [T([2, 3], "int32"), T([3], "int32")],
                              [T([2, 3], "int32")], {"activation": act}),
              [[a, b]]) for act in ranges]
    for act, (st, out) in zip(ranges, run(cases, tmp_path)):
        assert st == "OK", out
        want = np.clip(quotients, *ranges[act]).astype(np.int32)
        assert out[0][0] == want.tobytes(), (act, np.frombuffer(
            out[0][0], np.int32))


def test_undefined_int8_zero_divisor_saturates(tmp_path):
    """x2 == zp2: TFLM divides by GetReciprocal(0) (a shift by 32: 7 / 0
    gives -99 at scales 0.1); tflm saturates: v1 > 0 -> the activation's
    max, v1 < 0 -> its min, 0 / 0 -> the output zero point."""
    raw = opgen.single_op("DIV", [T([5], scale=0.1, zero_point=2),
                                  T([5], scale=0.1, zero_point=-3)],
                          [T([5], scale=0.1, zero_point=4)],
                          {"activation": "RELU6"})
    a = np.array([9, -5, 2, 127, -128], np.int8)
    b = np.full(5, -3, np.int8)
    st, out = run([(raw, [[a, b]])], tmp_path)[0]
    assert st == "OK"
    # RELU6 at scale 0.1, zero point 4: [4, 64]
    assert np.frombuffer(out[0][0], np.int8).tolist() == [64, 4, 4, 64, 4]
    raw = opgen.single_op("DIV", [T([3], scale=0.1), T([3], scale=0.1)],
                          [T([3], scale=0.1)])
    a = np.array([7, -7, 0], np.int8)
    b = np.zeros(3, np.int8)
    st, out = run([(raw, [[a, b]])], tmp_path)[0]
    assert np.frombuffer(out[0][0], np.int8).tolist() == [127, -128, 0]
    assert Reference(raw).run([a, b])[0].tolist() == [-99, 99, 0]


# --- rejections --------------------------------------------------------

def reject_cases():
    """(model, words in the PrepareError message, TFLM rejects too: at
    prepare or at eval)."""
    q = _q(0.1)
    c = []

    def cast(ti, to, si=(4,), so=(4,)):
        return opgen.single_op("CAST", [T(list(si), ti)], [T(list(so), to)])
    c.append((cast("uint8", "int32"), ["input", "uint8", "supported"], True))
    c.append((cast("int64", "int32"), ["input", "int64"], True))
    c.append((cast("int32", "uint8"), ["output", "uint8"], True))
    c.append((cast("float32", "float16"), ["output", "float16"], True))
    # TFLM runs these reading / writing past a buffer
    c.append((cast("int32", "int8", (4,), (2,)), ["4 elements", "has 2"],
              False))
    c.append((cast("int32", "int8", (2, 2), (6,)), ["4 elements", "has 6"],
              False))
    c.append((opgen.single_op("CAST", [T([4], "int8", **q),
                                       T([4], "int8", **q)],
                              [T([4], "int32")]),
              ["one input and one output"], True))

    def div(ts, act="NONE"):
        return opgen.single_op("DIV", ts[:2], ts[2:], {"activation": act})
    c.append((div([T([4], "int16"), T([4], "int16"), T([4], "int16")]),
              ["int16", "supported"], True))
    c.append((div([T([4], "int32", **q), T([4], "int32"),
                   T([4], "int32")]), ["int32", "must not be quantized"],
              True))
    c.append((div([T([4], "int32"), T([4], "int32", **q),
                   T([4], "int32")]), ["must not be quantized"], True))
    c.append((div([T([4], **q), T([4], "int32"), T([4], **q)]),
              ["int32", "int8"], True))
    c.append((div([T([2, 3], "float32"), T([3, 2], "float32"),
                   T([2, 3], "float32")]), ["do not broadcast"], False))
    c.append((div([T([1, 2, 1, 2, 1, 2, 2], "float32"), T([2], "float32"),
                   T([1, 2, 1, 2, 1, 2, 2], "float32")]), ["rank 7"],
              False))
    c.append((div([T([4], **q), T([4], **q), T([4], "int8")]),
              ["no quantization"], False))
    c.append((div([T([4], **q), T([4], **q), T([4], **q)], "TANH"),
              ["activation"], False))
    return c


def test_rejections(tmp_path):
    rc = reject_cases()
    for k, (raw, _, tflm_rejects) in enumerate(rc):
        if tflm_rejects:
            with pytest.raises(RuntimeError):
                ref = Reference(raw)
                ins = []
                for i in range(ref.n_in):
                    d = ref.input_details(i)
                    ins.append(np.ones(d["shape"], d["dtype"]))
                ref.run(ins)
    got = run([(raw, []) for raw, _, _ in rc], tmp_path)
    for k, ((raw, words, _), (st, msg)) in enumerate(zip(rc, got)):
        assert st == "ERR", "case %d accepted" % k
        assert msg.startswith("PrepareError"), msg
        assert "op 0 (" in msg, msg
        for w in words:
            assert w in msg, (k, w, msg)
