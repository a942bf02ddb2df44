"""RESIZE_NEAREST_NEIGHBOR, RESIZE_BILINEAR, TRANSPOSE_CONV vs TFLM.

Seeded random single-op models from the conformance generators
(host_tools/conformance/gen_spatial.py) run on the TFLM oracle and on
tflm in one MicroPython process (invoke under micropython.heap_lock());
outputs must be bit-identical. Hand-checked cases follow TFLM's
resize_nearest_neighbor_test.cc, resize_bilinear_test.cc and
transpose_conv_test.cc. The prepare-time float32 math (nearest neighbor
indices, float32 bilinear weights) is checked against numpy float32.
"""

import random

import numpy as np
import pytest

from conftest import run_bytes
from host_tools import opgen
from host_tools.conformance import gen_spatial
from host_tools.oracle import Reference
from test_kernels_misc import run_cases
from tflm.kernels import resize
from tflm.model import Model

T = opgen.Tensor
NP = {0: np.float32, 7: np.int16, 9: np.int8}


def random_inputs(raw):
    """make_inputs for run_cases: random values of each model input."""
    m = Model(raw)
    specs = [(tuple(m.tensors[i].shape), m.tensors[i].type)
             for i in m.inputs]

    def make(rng, j):
        out = []
        for shape, code in specs:
            if code == 0:
                out.append(rng.standard_normal(shape).astype(np.float32)
                           * np.float32(10))
            else:
                info = np.iinfo(NP[code])
                out.append(rng.integers(info.min, info.max + 1, size=shape)
                           .astype(NP[code]))
        return out
    return make


def generated(op, n, seed):
    cases = []
    gen = gen_spatial.GENERATORS[op]
    for k in range(n):
        rng = random.Random(seed * 1000 + k)
        raw = gen(rng, 1 + k % 4)
        if isinstance(raw, tuple):
            raw = raw[0]
        cases.append((raw, random_inputs(raw)))
    return cases


@pytest.mark.parametrize("op,n", [("RESIZE_NEAREST_NEIGHBOR", 60),
                                  ("RESIZE_BILINEAR", 60),
                                  ("TRANSPOSE_CONV", 60)])
def test_random_vs_tflm(tmp_path, op, n):
    errors = run_cases(generated(op, n, 7), tmp_path, sets=2)
    assert errors == [None] * n, errors


def test_transpose_conv_small_scratch(tmp_path):
    """A scratch array of 9 words: one or a few output pixels per
    requantization batch (the generator makes at most 9 channels)."""
    cases = generated("TRANSPOSE_CONV", 16, 11)
    errors = run_cases(cases, tmp_path, scratch=9)
    assert errors == [None] * len(cases), errors


# --- hand-checked cases from TFLM's kernel tests ------------------------

def run_one(raw, tmp_path, data, dtype=np.int8):
    got, info = run_bytes(raw, tmp_path, [[np.asarray(data, dtype)
                                           .tobytes()]])
    assert got is not None, info
    want = Reference(raw).run([np.asarray(data, dtype)])[0]
    got = np.frombuffer(got[0][0], dtype)
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()
    return got


def resize_model(op, in_shape, size, dtype="int8", **opts):
    q = {} if dtype == "float32" else dict(scale=0.5, zero_point=0)
    x = T(in_shape, dtype, **q)
    sz = T([2], "int32", data=np.array(size, np.int32))
    y = T([in_shape[0], size[0], size[1], in_shape[3]], dtype, **q)
    return opgen.single_op(op, [x, sz], [y], opts)


def test_nearest_two_dimensional_int8(tmp_path):
    # TwoDimensionalResizeInt8
    raw = resize_model("RESIZE_NEAREST_NEIGHBOR", [1, 2, 2, 1], [3, 3])
    got = run_one(raw, tmp_path, [3, -6, 9, 12])
    assert got.tolist() == [3, 3, -6, 3, 3, -6, 9, 9, 12]


def test_nearest_two_batches_int16(tmp_path):
    # TwoDimensionalResizeWithTwoBatchesInt16
    raw = resize_model("RESIZE_NEAREST_NEIGHBOR", [2, 2, 2, 1], [3, 3],
                       "int16")
    got = run_one(raw, tmp_path, [3, 6, 9, 12, 4, 10, 12, 16], np.int16)
    assert got.tolist() == [3, 3, 6, 3, 3, 6, 9, 9, 12,
                            4, 4, 10, 4, 4, 10, 12, 12, 16]


def test_nearest_float32_three_dimensional(tmp_path):
    # ThreeDimensionalResize (float32 is a word copy)
    raw = resize_model("RESIZE_NEAREST_NEIGHBOR", [1, 2, 2, 2], [3, 3],
                       "float32")
    got = run_one(raw, tmp_path, [3, 4, 6, 10, 10, 12, 14, 16], np.float32)
    assert got.tolist() == [3, 4, 3, 4, 6, 10, 3, 4, 3, 4, 6, 10,
                            10, 12, 10, 12, 14, 16]


def test_nearest_float32_index_rounding(tmp_path):
    """Width 2 -> 41 with half_pixel_centers: (20 + 0.5) * 2 / 41 is 1
    exactly, but TFLM's float32 scale 2 / 41 is rounded down and the
    float32 product stays below 1: output column 20 copies column 0."""
    raw = resize_model("RESIZE_NEAREST_NEIGHBOR", [1, 1, 2, 1], [1, 41],
                       half_pixel_centers=True)
    got = run_one(raw, tmp_path, [5, 7]).tolist()
    assert got[20] == 5 and got[21] == 7
    assert resize.nearest_index(20, 2, 41, False, True) == 0


def test_bilinear_two_dimensional_int8(tmp_path):
    # TwoDimensionalResizeInt8
    raw = resize_model("RESIZE_BILINEAR", [1, 2, 2, 1], [3, 3])
    got = run_one(raw, tmp_path, [3, 6, 9, 12])
    assert got.tolist() == [3, 5, 6, 7, 9, 10, 9, 11, 12]


def test_bilinear_three_dimensional_int8(tmp_path):
    # ThreeDimensionalResizeInt8. TFLM's test compares with the float
    # golden values at tolerance 1; the int8 kernel's exact values differ
    # from them in 4 places. By hand, scale_10 = (2048 + 1) / 3 = 683:
    # out[1, 0, 0] = (3 * 341 + 10 * 683) * 1024 / 2**20 = 7.67 -> 8
    # (golden 7); out[1, 2, 1]: x = 1366 clamps to column 1, so
    # (10 * 341 + 16 * 683) / 1024 = 14.002 -> 14 (golden 13).
    raw = resize_model("RESIZE_BILINEAR", [1, 2, 2, 2], [3, 3])
    got = run_one(raw, tmp_path, [3, 4, 6, 10, 10, 12, 14, 16])
    golden = [3, 4, 5, 8, 6, 10, 7, 9, 10, 12, 11, 13,
              10, 12, 12, 14, 14, 16]
    assert max(abs(int(a) - b) for a, b in zip(got, golden)) == 1
    assert got[6] == 8 and got[11] == 14


def test_bilinear_two_dimensional_float32(tmp_path):
    # TwoDimensionalResize (float32): golden values within 1e-5; the bits
    # are TFLM's (run_one compares with the oracle byte for byte).
    raw = resize_model("RESIZE_BILINEAR", [1, 2, 2, 1], [3, 3], "float32")
    got = run_one(raw, tmp_path, [3, 6, 9, 12], np.float32)
    golden = [3, 5, 6, 7, 9, 10, 9, 11, 12]
    assert np.allclose(got, golden, atol=1e-5, rtol=0)


def test_bilinear_f32_weights():
    """Weight tables: 2 -> 3 has scale fl(2 / 3); row 1 reads rows 0 and
    1 with weights fl(1 - fl(2 / 3)) and fl(2 / 3)."""
    t = resize.bilinear_f32_tables(2, 3, 10, False, False)
    w = np.frombuffer(bytes(t), np.uint32).view(np.float32).reshape(3, 4)
    two3 = np.float32(2) / np.float32(3)
    assert np.frombuffer(bytes(t), np.uint32)[4:6].tolist() == [0, 10]
    assert w[1, 3] == two3 and w[1, 2] == np.float32(1) - two3
    assert w[0, 2] == 1 and w[0, 3] == 0


def test_bilinear_rejects_both_flags(tmp_path):
    raw = resize_model("RESIZE_BILINEAR", [1, 2, 2, 1], [3, 3],
                       align_corners=True, half_pixel_centers=True)
    got, info = run_bytes(raw, tmp_path, [[bytes(4)]])
    assert got is None and info["error"] == "PrepareError", info
    assert "half_pixel_centers" in info["message"]
    with pytest.raises(RuntimeError):
        Reference(raw).run([np.zeros(4, np.int8)])


def test_transpose_conv_simple_per_channel(tmp_path):
    """SimpleTestQuantizedPerChannel: input 1..32 at scale 0.5, filter
    1..18 at scale 1, SAME, stride 1, output scale 30: the float golden
    values / 30, rounded (90.5 is a tie that TFLM's test tolerates)."""
    x = T([1, 4, 4, 2], scale=0.5, zero_point=0)
    f = T([1, 3, 3, 2], scale=[1.0], zero_point=[0],
          data=np.arange(1, 19, dtype=np.int8).reshape(1, 3, 3, 2))
    b = T([1], "int32", scale=[0.5], data=np.zeros(1, np.int32))
    shape = T([4], "int32", data=np.array([1, 4, 4, 1], np.int32))
    y = T([1, 4, 4, 1], scale=30.0, zero_point=0)
    raw = opgen.single_op("TRANSPOSE_CONV", [shape, f, x, b], [y],
                          {"padding": "SAME"})
    got = run_one(raw, tmp_path, np.arange(2, 66, 2))
    golden = [184, 412, 568, 528, 678, 1347, 1689, 1434, 1494, 2715, 3057,
              2442, 1968, 3352, 3652, 2760]
    for g, v in zip(golden, got.tolist()):
        assert abs(g / 30 - v) <= 0.5


def test_transpose_conv_stride2_valid(tmp_path):
    """Stride 2, VALID, 2x2 ones filter: each input value scatters into
    its own 2x2 output block (worked out by hand)."""
    x = np.array([1, 2, 3, 4], np.int8)
    w = np.array([1, 1, 1, 1], np.int8).reshape(1, 2, 2, 1)
    raw = opgen.single_op(
        "TRANSPOSE_CONV",
        [T([4], "int32", data=np.array([1, 4, 4, 1], np.int32)),
         T([1, 2, 2, 1], scale=1.0, data=w), T([1, 2, 2, 1], scale=1.0)],
        [T([1, 4, 4, 1], scale=1.0)], {"padding": "VALID", "stride_h": 2,
                                      "stride_w": 2})
    got = run_one(raw, tmp_path, x)
    assert got.tolist() == [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]


@pytest.mark.parametrize("out_shape,words", [
    ([1, 4, 4, 3], ["do not match"]),        # 3 channels, filter has 2
    ([2, 4, 4, 2], ["do not match"]),        # batch differs
])
def test_transpose_conv_rejects_shapes(tmp_path, out_shape, words):
    w = np.ones((2, 3, 3, 1), np.int8)
    raw = opgen.single_op(
        "TRANSPOSE_CONV",
        [T([4], "int32", data=np.array(out_shape, np.int32)),
         T([2, 3, 3, 1], scale=[1.0, 0.5], data=w),
         T([1, 2, 2, 1], scale=1.0)],
        [T(out_shape, scale=1.0)], {"padding": "SAME", "stride_h": 2,
                                    "stride_w": 2})
    got, info = run_bytes(raw, tmp_path, [[bytes(4)]])
    assert got is None and info["error"] == "PrepareError", info
    for word in words:
        assert word in info["message"], info["message"]


def test_transpose_conv_rejects_float(tmp_path):
    raw = opgen.single_op(
        "TRANSPOSE_CONV",
        [T([4], "int32", data=np.array([1, 2, 2, 1], np.int32)),
         T([1, 1, 1, 1], "float32", data=np.ones((1, 1, 1, 1))),
         T([1, 2, 2, 1], "float32")], [T([1, 2, 2, 1], "float32")])
    got, info = run_bytes(raw, tmp_path, [[bytes(16)]])
    assert got is None and info["error"] == "PrepareError", info


# --- TRANSPOSE_CONV 16x8 (tconv16.py) -----------------------------------

def test_transpose_conv_16x8_vs_tflm(tmp_path):
    """The generator's 16x8 models (int16 activations, int64 / int16 /
    no bias, per-channel or per-tensor filters) over full-range int16
    inputs, bit-exact with TFLM."""
    cases = []
    k = 0
    while len(cases) < 40:
        rng = random.Random(16000 + k)
        raw = gen_spatial.gen_transpose_conv(rng, 1 + k % 4)
        k += 1
        m = Model(raw)
        if m.tensors[m.inputs[0]].type == 7:
            cases.append((raw, random_inputs(raw)))
    errors = run_cases(cases, tmp_path, sets=2)
    assert errors == [None] * len(cases), errors


def _tconv16_model(bias=None, out_scale=1.0, in_zp=0, out_type="int16",
                   w_scale=1.0):
    """Stride 2, VALID, a 2x2 ones filter over a [1, 2, 2, 1] int16
    input: each value scatters into its own 2x2 output block."""
    w = np.ones((1, 2, 2, 1), np.int8)
    ins = [T([4], "int32", data=np.array([1, 4, 4, 1], np.int32)),
           T([1, 2, 2, 1], scale=w_scale, data=w),
           T([1, 2, 2, 1], "int16", scale=1.0, zero_point=in_zp)]
    if bias is not None:
        ins.append(bias)
    return opgen.single_op(
        "TRANSPOSE_CONV", ins,
        [T([1, 4, 4, 1], out_type, scale=out_scale, zero_point=0)],
        {"padding": "VALID", "stride_h": 2, "stride_w": 2})


def test_transpose_conv_16x8_hand(tmp_path):
    """Worked by hand: scale 1 everywhere, int64 bias 5 (the 2x2 blocks of
    x + 5, saturating at 32767); int16 bias -7 at output scale 2 (TFLM's
    int64 rounding: (v - 7) / 2 rounded half up); no bias."""
    x = np.array([1000, -2000, 32767, -32768], np.int16)

    def blocks(v):
        a, b, c, d = v
        return [a, a, b, b, a, a, b, b, c, c, d, d, c, c, d, d]
    b64 = T([1], "int64", scale=1.0, data=np.array([5], np.int64))
    got = run_one(_tconv16_model(b64), tmp_path, x, np.int16)
    assert got.tolist() == blocks([1005, -1995, 32767, -32763])
    b16 = T([1], "int16", scale=1.0, data=np.array([-7], np.int16))
    got = run_one(_tconv16_model(b16, 2.0), tmp_path, x, np.int16)
    assert got.tolist() == blocks([497, -1003, 16380, -16387])
    got = run_one(_tconv16_model(), tmp_path, x, np.int16)
    assert got.tolist() == blocks(x.tolist())


@pytest.mark.parametrize("kw,words", [
    (dict(in_zp=3), ["tensor 2", "zero point 3"]),
    (dict(bias=T([1], "int32", scale=1.0, data=np.array([5], np.int32))),
     ["bias", "int64 or int16"]),
    (dict(out_type="int8"), ["output", "int8"]),
    (dict(w_scale=2.0 ** 15), ["too large for int64"]),
])
def test_transpose_conv_16x8_rejects(tmp_path, kw, words):
    """What TFLM's 16x8 kernel computes wrongly (a zero point it leaves
    out, an int32 bias it reads as int64, an int8 output it writes int16
    into, a multiplier its int64 rounding shifts by a negative amount)
    is refused."""
    raw = _tconv16_model(**kw)
    got, info = run_bytes(raw, tmp_path, [[bytes(8)]])
    assert got is None and info["error"] == "PrepareError", info
    for word in words:
        assert word in info["message"], info["message"]


# --- prepare-time index math ---------------------------------------------

def _np_nearest(i, n_in, n_out, align, half):
    f = np.float32
    if align and n_out > 1:
        scale = f(n_in - 1) / f(n_out - 1)
    else:
        scale = f(n_in) / f(n_out)
    v = (f(i) + (f(0.5) if half else f(0))) * scale
    v = int(np.floor(v + f(0)) if not align else
            np.floor(np.float64(v) + 0.5))  # TfLiteRound: half away
    v = min(v, n_in - 1)
    return max(v, 0) if half else v


def test_nearest_index_matches_float32():
    rng = random.Random(3)
    for _ in range(3000):
        n_in, n_out = rng.randint(1, 300), rng.randint(1, 300)
        align, half = rng.random() < 0.5, rng.random() < 0.5
        i = rng.randrange(n_out)
        assert resize.nearest_index(i, n_in, n_out, align, half) == \
            _np_nearest(i, n_in, n_out, align, half), (i, n_in, n_out,
                                                       align, half)


def test_options_of_another_type_are_not_read(tmp_path):
    """align_corners / half_pixel_centers in a table whose union type says
    another table (or NONE): TFLM's parser reads neither (both false), so
    the outputs are those of the plain resize (regression: the flags were
    read anyway); a TRANSPOSE_CONV options table of another type leaves
    TFLM's strides 0: rejected."""
    from test_ops_movement import retype_options
    x = np.array([3, -6, 9, 12, 5, -1], np.int8)
    cases = []
    for op, opts, other in (
            ("RESIZE_BILINEAR", {"align_corners": True}, 74),
            ("RESIZE_NEAREST_NEIGHBOR", {"half_pixel_centers": True}, 15),
            ("RESIZE_NEAREST_NEIGHBOR", {"align_corners": True}, 0)):
        raw = retype_options(resize_model(op, [1, 2, 3, 1], [3, 5], **opts),
                             other)
        plain = resize_model(op, [1, 2, 3, 1], [3, 5])
        want = Reference(plain).run([x])[0]
        assert Reference(raw).run([x])[0].tobytes() == want.tobytes()
        assert Reference(resize_model(op, [1, 2, 3, 1], [3, 5], **opts)) \
            .run([x])[0].tobytes() != want.tobytes()
        cases.append((raw, want))
    for raw, want in cases:
        got, info = run_bytes(raw, tmp_path, [[x.tobytes()]])
        assert got is not None, info
        assert got[0][0] == want.tobytes()
    raw = opgen.single_op(
        "TRANSPOSE_CONV",
        [T([4], "int32", data=np.array([1, 4, 4, 1], np.int32)),
         T([1, 2, 2, 1], scale=1.0, data=np.ones((1, 2, 2, 1), np.int8)),
         T([1, 2, 2, 1], scale=1.0)],
        [T([1, 4, 4, 1], scale=1.0)], {"padding": "VALID", "stride_h": 2,
                                      "stride_w": 2})
    got, info = run_bytes(retype_options(raw, 1), tmp_path, [[bytes(4)]])
    assert got is None and info["error"] == "PrepareError", info
    assert "strides (0, 0)" in info["message"]
