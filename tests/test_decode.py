"""TFLM_DECODE (TFLM's DECODE custom operator: LUT, Prune, Huffman) vs
TFLM.

Models from host_tools/conformance/gen_decode.py's encoders run in the
TFLM reference interpreter (the oracle) and, all in one MicroPython
process, in tflm (invoked twice under micropython.heap_lock(), each model
placed 0-3 bytes into a buffer so that the encoded bytes and tables sit
at every alignment); outputs must be byte-identical. Cases cover every
LUT index width with every output type, per-tensor and per-channel along
the first and the last dimension, sizes that are and are not multiples
of TFLM's 16- and 32-element int8 fast paths; Prune with every type and
per-channel int8 zero points; Huffman with 16- and 32-bit tables (TFLM's
own test vector, hand-checked, and random codes); several pairs in one
DECODE feeding a FULLY_CONNECTED as TFLM's compressor lays them out.
Models TFLM refuses, or would decode out of bounds, must raise
PrepareError naming the operator, the tensor and the reason.
"""

import random

import numpy as np
import pytest

from mp_batch import run_on_device
from host_tools import opgen
from host_tools.conformance import gen_decode as gd
from host_tools.oracle import Reference

T = opgen.Tensor


def check(models, tmp_path, expected=None):
    """Run models in TFLM and tflm; byte-identical outputs. expected:
    {case index: [output arrays]} hand-checked values as well."""
    want = []
    for raw in models:
        ref = Reference(raw)
        want.append([np.ascontiguousarray(o).tobytes() for o in ref.run([])])
    got = run_on_device([(raw, [[]]) for raw in models], tmp_path)
    for k, ((st, out), w) in enumerate(zip(got, want)):
        assert st == "OK", "case %d: %s" % (k, out)
        assert out[0] == w, "case %d differs from TFLM" % k
    for k, arrays in (expected or {}).items():
        for o, a in zip(want[k], arrays):
            assert o == np.ascontiguousarray(a).tobytes(), k


def _rng(seed):
    return random.Random(seed), np.random.default_rng(seed)


def test_lut_hand(tmp_path):
    """3-bit indices 0..7, 7, 1 over an int8 table; 2-bit per-channel
    along dimension 0 and along the last one (stride 4)."""
    tab = [5, -3, 7, 100, -128, 0, 1, 2]

    def lut(table, idx, bits, stride, shape, scale=None, qd=0,
            dtype="int8"):
        enc = gd.pack_bits(idx, bits)
        anc = gd.header(0, bytes((bits, stride))) + np.asarray(
            table, dtype).tobytes()
        return gd.decode_model([gd._pair(enc, anc, shape, dtype, scale,
                                          0, qd)])

    models = [
        lut(tab, [0, 1, 2, 3, 4, 5, 6, 7, 7, 1], 3, 8, [10]),
        lut(tab, [0, 1, 2, 3, 0, 1], 2, 4, [2, 3], [1.0, 1.0]),
        lut(tab + [9, 9, 9, 9], [0, 1, 2, 3, 0, 1], 2, 4, [2, 3],
            [1.0] * 3, 1),
        lut([1.5, -2.5], [0, 1, 1, 0, 1], 1, 2, [5], dtype="float32"),
        lut([1, 1 << 40], [1, 0, 1], 1, 2, [3], dtype="int64"),
    ]
    check(models, tmp_path, {
        0: [np.array([5, -3, 7, 100, -128, 0, 1, 2, 2, -3], np.int8)],
        1: [np.array([[5, -3, 7], [2, -128, 0]], np.int8)],
        2: [np.array([[5, 0, 9], [100, -128, 9]], np.int8)],
        3: [np.array([1.5, -2.5, -2.5, 1.5, -2.5], np.float32)],
        4: [np.array([1 << 40, 1, 1 << 40], np.int64)],
    })


@pytest.mark.parametrize("dtype", gd.TYPES)
def test_lut_every_width(tmp_path, dtype):
    """Widths 1-7, per-tensor, per-channel first and last dimension;
    int8 channels of 16, 32 and 33+ elements (TFLM's fast paths for
    widths 2, 3, 4 and their ends), odd sizes."""
    rng, g = _rng(11)
    models = []
    for bits in range(1, 8):
        for shape, quant in (
                ([37], None),
                ([3, 33], ([.5] * 3, 0, 0, 3, False)),
                ([2, 16], ([.5] * 2, 0, 0, 2, False)),
                ([1, 64], ([.5], 0, 0, 1, False)),
                ([5, 7], ([.5] * 7, 0, 1, 7, True)),
                ([2, 3, 5], ([.5] * 5, 0, 2, 5, True)),
                ([6], ([.5] * 6, 0, 0, 6, True))):
            if dtype not in gd.QUANTIZED and quant is not None:
                quant = (None, 0, 0, 1, False)
            pairs = [gd.lut_pair(rng, g, shape, dtype, bits, quant)]
            models.append(gd.decode_model(pairs))
    check(models, tmp_path)


@pytest.mark.parametrize("dtype", gd.TYPES)
def test_prune(tmp_path, dtype):
    """Masks of density 0, 0.3, 1; per-tensor and per-channel (int8:
    non-zero zero points along the first and the last dimension)."""
    rng, g = _rng(12)
    models = []
    for d in (0.0, 0.3, 1.0):
        for shape, quant in (
                ([13], None),
                ([4, 9], ([.5] * 4, [3, -128, 0, 127], 0, 4, False)),
                ([3, 2, 5], ([.5] * 5, [-1, 2, -3, 4, 0], 2, 5, True)),
                ([7], ([.5], [-9], 0, 1, False))):
            if quant is not None and dtype != "int8":
                quant = (quant[0], 0, quant[2], quant[3], quant[4])
            if dtype not in gd.QUANTIZED:
                quant = (None, 0, 0, 1, False)
            models.append(gd.decode_model(
                [gd.prune_pair(rng, g, shape, dtype, quant, d)]))
    check(models, tmp_path)


# TFLM's decode_state_huffman_test.cc: 64 letters coded with a first
# lookup of 3 bits, its tables as 16-bit and as 32-bit entries
_HUFF_STREAM = bytes((
    0xF0, 0x0D, 0x79, 0xFC, 0x9C, 0x1A, 0x6E, 0x4C, 0x32, 0xAF, 0x29,
    0xB3, 0x5D, 0xF6, 0x36, 0x02, 0x50, 0x15, 0x8C, 0xA7, 0x95, 0xDB,
    0x29, 0x68, 0x3F, 0xBA, 0xB7, 0xED, 0xB1, 0x19, 0xE2, 0xE0))
_HUFF_16 = (0x986D, 0x9861, 0x986A, 0x0005, 0x0806, 0x0809, 0x000E, 0x000F,
            0x886F, 0x8868, 0x8864, 0x8864, 0x9069, 0x9066, 0x8863, 0x8863,
            0x0002, 0x906B, 0x8867, 0x886C, 0x8865, 0x8862, 0x8870, 0x886E)
_HUFF_TEXT = (b"nmmacnanefdacopjomeckifookhbdbdmjjdmjg"
              b"ojfecpbiibmanbbjbnlgjafejp")


def _huff32(e):
    """The 16-bit entry as TFLM's test writes it in 32 bits."""
    return ((e & 0x8000) << 16) | ((e & 0x7800) << 16) | (e & 0x7FF)


def huff_model(stream, entries, wide, first, dtype, shape):
    es = 4 if wide else 2
    anc = gd.header(1, bytes(((first - 1) << 4 | wide,))) + b"".join(
        e.to_bytes(es, "little") for e in entries)
    return gd.decode_model([(T([len(stream)], "uint8", data=stream),
                             T([len(anc)], "uint8", data=anc),
                             T(shape, dtype))])


def test_huffman_tflm_vector(tmp_path):
    """TFLM's own test: int8 from 16- and 32-bit tables, int16 from
    32-bit ones, the letters its test expects."""
    t32 = [_huff32(e) for e in _HUFF_16]
    models = [huff_model(_HUFF_STREAM, _HUFF_16, 0, 3, "int8", [64]),
              huff_model(_HUFF_STREAM, t32, 1, 3, "int8", [64]),
              huff_model(_HUFF_STREAM, t32, 1, 3, "int16", [8, 8])]
    text = np.frombuffer(_HUFF_TEXT, np.uint8)
    check(models, tmp_path, {0: [text.astype(np.int8)],
                             1: [text.astype(np.int8)],
                             2: [text.astype(np.int16).reshape(8, 8)]})


def test_huffman_random(tmp_path):
    """Random codes: first lookups of 1-6 bits, nested sub-tables, int8
    (16- and 32-bit tables, the value fields' high bits set) and int16,
    streams cut inside their last word."""
    models = []
    for seed in range(24):
        rng, g = _rng(100 + seed)
        dtype = "int16" if seed % 3 == 0 else "int8"
        shape = [rng.randint(1, 9), rng.randint(1, 60)]
        models.append(gd.decode_model([gd.huffman_pair(
            rng, g, shape, dtype, wide=None if dtype == "int8" else True,
            first=1 + seed % 6 if seed % 2 else None)]))
    check(models, tmp_path)


def test_random_models(tmp_path):
    """The conformance generator's models (1-3 pairs of any decoder)."""
    models = [gd.gen_decode(random.Random(seed), 1 + seed % 4)
              for seed in range(40)]
    check(models, tmp_path)


def test_decode_feeds_operators(tmp_path):
    """One DECODE of two pairs (LUT and Prune, int8 per-tensor) whose
    outputs two ADDs read after it, with a model input: invoked with
    other inputs each time, the decoded tensors are the same."""
    rng, g = _rng(5)
    q = (0.05, -3, 0, 1, False)
    a_enc, a_anc, a = gd.lut_pair(rng, g, [3, 20], "int8", 4, q)
    b_enc, b_anc, b = gd.prune_pair(rng, g, [3, 20], "int8", q, 0.6)
    m = opgen.Model()
    x = T([3, 20], "int8", scale=0.1, zero_point=3)
    u = T([3, 20], "int8", scale=0.2, zero_point=1)
    y = T([3, 20], "int8", scale=0.3, zero_point=-2)
    m.add_op("CUSTOM:TFLM_DECODE", [a_enc, a_anc, b_enc, b_anc], [a, b])
    m.add_op("ADD", [a, x], [u])
    m.add_op("ADD", [u, b], [y])
    raw = m.build()
    ref = Reference(raw)
    sets = [[g.integers(-128, 128, (3, 20)).astype(np.int8)]
            for _ in range(3)]
    want = [ref.run(s)[0].tobytes() for s in sets]
    (st, out), = run_on_device([(raw, sets)], tmp_path)
    assert st == "OK", out
    assert [o[0] for o in out] == want


def _conv_model(op, rng, g):
    """DECODE (filter: LUT per-channel int8) right before the CONV_2D /
    DEPTHWISE_CONV_2D that reads it, as TFLM's compressor lays them
    out (a constant bias: a decoded one is refused here)."""
    cin, cout = 3, 4
    dw = op == "DEPTHWISE_CONV_2D"
    ws = [1, 3, 3, cout] if dw else [cout, 3, 3, cin]
    qd = 3 if dw else 0
    sc = [0.01 * (k + 1) for k in range(cout)]
    e, a, w = gd.lut_pair(rng, g, ws, "int8", rng.randint(2, 5),
                          (sc, 0, qd, cout, dw))
    b = T([cout], "int32", scale=[0.001 * s for s in sc],
          data=g.integers(-5000, 5000, cout))
    m = opgen.Model()
    x = T([1, 6, 5, cout if dw else cin], "int8", scale=0.1, zero_point=2)
    m.add_op("CUSTOM:TFLM_DECODE", [e, a], [w])
    m.add_op(op, [x, w, b], [T([1, 6, 5, cout], "int8", scale=0.3,
                                zero_point=-1)], {"padding": "SAME"})
    return m.build(), x.shape


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D"])
def test_decoded_filters(tmp_path, op):
    """CONV_2D and DEPTHWISE_CONV_2D read their filter at invoke: a
    decoded one matches TFLM."""
    rng, g = _rng(7)
    jobs, want = [], []
    for _ in range(4):
        raw, shape = _conv_model(op, rng, g)
        ref = Reference(raw)
        sets = [[g.integers(-128, 128, shape).astype(np.int8)]
                for _ in range(2)]
        want.append([ref.run(s)[0].tobytes() for s in sets])
        jobs.append((raw, sets))
    for (st, out), w in zip(run_on_device(jobs, tmp_path), want):
        assert st == "OK", out
        assert [o[0] for o in out] == w


def test_decoded_weights_and_biases(tmp_path):
    """FULLY_CONNECTED, CONV_2D and DEPTHWISE_CONV_2D read weights and
    biases at eval, where they are: decoded ones (what TFLM's compressor
    emits for compressed weights and biases) match TFLM."""
    rng, g = _rng(6)
    jobs, want = [], []
    for units, per_channel in ((6, True), (5, False), (9, True)):
        sc = [0.01 * (k + 1) for k in range(units)] if per_channel \
            else [0.02]
        c = units if per_channel else 1  # value tables
        w_enc, w_anc, w = gd.lut_pair(
            rng, g, [units, 20], "int8", rng.randint(2, 5),
            (sc if per_channel else sc[0], 0, 0, c, False))
        # the bias: 2-bit indices into small values (whose effect shows
        # in the outputs: full-range ones would only clamp them)
        bsc = [0.1 * s for s in sc] if per_channel else 0.1 * sc[0]
        table = g.integers(-3000, 3000, 4 * c).astype("<i4")
        b_anc = T([16 + 16 * c], "uint8", data=np.frombuffer(
            gd.header(0, bytes((2, 4))) + table.tobytes(), np.uint8))
        b_enc = T([(2 * units + 7) // 8], "uint8", data=np.frombuffer(
            gd.pack_bits([int(v) for v in g.integers(0, 4, units)], 2),
            np.uint8))
        b = T([units], "int32", scale=bsc, zero_point=0)
        m = opgen.Model()
        x = T([2, 20], "int8", scale=0.1, zero_point=3)
        m.add_op("CUSTOM:TFLM_DECODE", [w_enc, w_anc, b_enc, b_anc], [w, b])
        m.add_op("FULLY_CONNECTED", [x, w, b],
                 [T([2, units], "int8", scale=0.5, zero_point=-2)])
        raw = m.build()
        ref = Reference(raw)
        sets = [[g.integers(-128, 128, (2, 20)).astype(np.int8)]
                for _ in range(2)]
        want.append([ref.run(s)[0].tobytes() for s in sets])
        jobs.append((raw, sets))
        # the bias shows: outputs within the range, not only clamped
        y = np.frombuffer(b"".join(want[-1]), np.int8)
        assert ((y > -128) & (y < 127)).sum() >= units, y
    for (st, out), w in zip(run_on_device(jobs, tmp_path), want):
        assert st == "OK", out
        assert [o[0] for o in out] == w


# --- refusals ----------------------------------------------------------------

def _lut_raw(anc=None, enc=None, shape=(4,), dtype="int8", scale=None,
             qd=0, zp=0):
    enc = gd.pack_bits([0, 1, 2, 3], 2) if enc is None else enc
    if anc is None:
        anc = gd.header(0, bytes((2, 4))) + bytes(4 * np.dtype(
            "int8" if dtype in ("uint8", "bool") else dtype).itemsize)
    return gd.decode_model([gd._pair(enc, anc, list(shape), dtype, scale,
                                      zp, qd)])


def reject_cases():
    """(model, words in the PrepareError message, TFLM's Prepare refuses
    it too: otherwise it would decode out of bounds or fail at Eval)."""
    c = []
    lut = gd.header(0, bytes((2, 4))) + bytes(4)
    c.append((_lut_raw(b"\0" * 15), ["t1", "15 bytes", "16"], False))
    c.append((_lut_raw(gd.header(0, bytes((2, 4)), version=2) + bytes(4)),
              ["t1", "decode version 2"], True))
    c.append((_lut_raw(gd.header(127) + bytes(4)), ["t1", "127 (custom)"],
              True))
    c.append((_lut_raw(gd.header(9) + bytes(4)), ["t1", "decode type 9"],
              True))
    c.append((_lut_raw(gd.header(0, bytes((2, 4)), sub_version=0)
                       + bytes(4)), ["t1", "LUT version 0"], True))
    c.append((_lut_raw(gd.header(2, sub_version=3)), ["Prune version 3"],
              True))
    c.append((_lut_raw(gd.header(1, b"\x21", sub_version=2) + bytes(64)),
              ["Huffman version 2"], True))
    c.append((_lut_raw(gd.header(0, bytes((0, 4))) + bytes(4)),
              ["index width 0"], False))
    c.append((_lut_raw(lut, b"\xff", shape=(5,)),
              ["t0", "1 bytes", "5 2-bit"], False))
    c.append((_lut_raw(gd.header(0, bytes((2, 4))) + bytes(3)),
              ["t1", "largest index", "20"], False))
    c.append((_lut_raw(lut, shape=(2, 3, 2), scale=[1.0] * 3, qd=1),
              ["t2", "quantized dimension 1"], True))
    c.append((_lut_raw(lut, dtype="uint8"), ["t2", "uint8", "supported"],
              False))
    # Prune: a mask keeping more values than the table holds; non-zero
    # zero points for int16
    c.append((_lut_raw(gd.header(2) + bytes(3), b"\xf0"),
              ["t1", "keeps", "20"], False))
    c.append((_lut_raw(gd.header(2) + bytes(2), b"\x80", dtype="int16",
                       scale=0.5, zp=3), ["t2", "zero points must be 0"],
              True))
    c.append((_lut_raw(gd.header(2), b"\0", shape=(9,)),
              ["t0", "1 bytes", "9-bit mask"], False))
    # Huffman: 16-bit tables for int16 (TFLM: int8 only), int32 output,
    # a code past the table, a stream too short
    t16 = gd.header(1, b"\x00") + b"".join(
        e.to_bytes(2, "little") for e in (0x8801, 0x8802))
    c.append((_lut_raw(t16, b"\x55", shape=(8,), dtype="int16"),
              ["t2", "int16", "int8 (16-bit"], True))
    c.append((_lut_raw(gd.header(1, b"\x01") + bytes(8), b"\0",
                       dtype="int32"), ["t2", "int32", "int8, int16"],
              False))
    c.append((_lut_raw(gd.header(1, b"\x00") + (0x0005).to_bytes(2, "little")
                       + (0x8801).to_bytes(2, "little"), b"\0\0\0\0"),
              ["t1", "past the table", "2 entries"], False))
    c.append((_lut_raw(t16, b"\x55", shape=(40,)),
              ["t0", "run past its 1 bytes"], False))
    # pairs, constants
    c.append((opgen.single_op("CUSTOM:TFLM_DECODE",
                              [T([1], "uint8", data=b"\0")], [T([4])]),
              ["1 inputs and 1 outputs"], True))
    c.append((opgen.single_op("CUSTOM:TFLM_DECODE",
                              [T([1], "uint8"), T([20], "uint8", data=lut)],
                              [T([4])]),
              ["t0", "must be constant"], True))
    return c


def test_rejections(tmp_path):
    rc = reject_cases()
    for k, (raw, _, tflm_rejects) in enumerate(rc):
        if tflm_rejects:
            with pytest.raises(RuntimeError):
                Reference(raw)
    got = run_on_device([(raw, []) for raw, _, _ in rc], tmp_path)
    for k, ((raw, words, _), (st, msg)) in enumerate(zip(rc, got)):
        assert st == "ERR", "case %d accepted" % k
        assert msg.startswith("PrepareError"), msg
        assert "op 0 (" in msg, msg
        for w in words:
            assert w in msg, (k, w, msg)


def test_compiled_models(tmp_path):
    """Models with DECODE compiled on the host (host_tools compile): the
    decoded filters of CONV_2D / DEPTHWISE_CONV_2D (read through their
    addresses in the arena, compiled.py T_ADDR) and a DECODE of several
    pairs match TFLM, which runs the compiled file unchanged."""
    from conftest import unix_arch
    from host_tools import compile as comp
    rng, g = _rng(11)
    jobs, want = [], []
    raws = [_conv_model(op, rng, g) for op in ("CONV_2D",
                                                 "DEPTHWISE_CONV_2D")]
    raws += [(gd.gen_decode(random.Random(s), 2), None) for s in (3, 8)]
    for raw, shape in raws:
        if isinstance(raw, tuple):  # the generator's (model, inputs)
            raw = raw[0]
        out, _ = comp.compile_model(raw, unix_arch())
        ref = Reference(out)
        sets = [[g.integers(-128, 128, ref.input_details(0)["shape"])
                 .astype(ref.input_details(0)["dtype"])]
                for _ in range(2)] if ref.n_in else [[], []]
        want.append([[o.tobytes() for o in ref.run(s)] for s in sets])
        jobs.append((out, sets))
    for (st, out), w in zip(run_on_device(jobs, tmp_path), want):
        assert st == "OK", out
        assert [list(o) for o in out] == w
