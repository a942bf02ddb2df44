"""TFLM's Signal custom operators (the audio front end) vs TFLM.

SignalWindow, SignalFftAutoScale, SignalRfft, SignalEnergy,
SignalFilterBank, SignalFilterBankSquareRoot,
SignalFilterBankSpectralSubtraction, SignalPCAN, SignalFilterBankLog,
and the whole audio_preprocessor_int8.tflite (30 ms of int16 audio ->
40 int8 features) that chains them.

* generated models (host_tools/conformance/gen_signal.py), CASES per op,
  each invoked on several input sets in a row on one interpreter, run in
  TFLM (the oracle, PyPI tflite-micro) and, all of an op's models in one
  MicroPython process, in tflm (invoke under micropython.heap_lock(),
  each model placed 0-3 bytes into a buffer); every invoke's outputs
  must be byte-identical. SignalFilterBankSpectralSubtraction keeps its
  noise estimate across invokes: its sequences are longer and include
  a reset() (TFLM's Reset zeroes the estimate), after which the first
  input gives the first output again. SignalPCAN keeps no state (its
  noise estimate is an input);
* SignalEnergy writes only output[start_index:end_index]; the bytes
  outside keep whatever the arena held, in TFLM as in ours, so models
  with a partial range are compared on the written part only;
* hand cases: the vectors of TFLM's signal/micro/kernels/*_test.cc
  (with TFLM's own FlexBuffers option blobs, whose layouts differ from
  flatbuffers' Dumps: UINT-typed values, an int 'clamping'), and
  SignalFftAutoScale around -32768, where TFLM's MaxAbs16 goes negative;
* rejections: wrong types, ranks, tensor counts (TFLM's Prepare rejects
  them too), and models TFLM would run out of bounds or crash on, which
  ours must refuse at prepare (PrepareError);
* the real model: yes / no 30 ms wavs (TFLM's micro_speech_test.cc
  goldens), 20 random frames, 10 consecutive frames of yes_1000ms.wav
  (20 ms hop) on one interpreter, and reset(): after it a frame gives
  what a freshly built interpreter gives.

The TFLM side of every case is checked on its own too (models load,
outputs are deterministic, option names and types are the real
model's), so a generator bug shows up even while our kernels are
missing.
"""

import os
import random
import wave

import numpy as np
import pytest
from flatbuffers import flexbuffers

from conftest import SHARED, shared
from host_tools import opgen
from host_tools.conformance import gen_signal as gs
from host_tools.oracle import Reference
from sequences import RESET, check, run_ours, run_tflm

T = opgen.Tensor
CASES = 24            # generated models per op
STATEFUL = "SignalFilterBankSpectralSubtraction"
PREPROC = ("audio_preprocessor_int8", "audio_preprocessor_int8.tflite")


def more_inputs(rng, ins):
    """Another input set for the same model: new values of each input's
    dtype and size (int32 scalars: scale bits 0-31)."""
    out = []
    for x in ins:
        x = np.asarray(x)
        n = x.size
        if x.dtype == np.int16:
            y = gs.int16_values(rng, n)
        elif x.dtype == np.uint32:
            y = gs.uint32_values(rng, n)
        elif x.dtype == np.uint64:
            y = gs.uint64_values(rng, n)
        else:
            y = np.array([rng.randint(0, 31)] * n, x.dtype)
        out.append(y.reshape(x.shape))
    return out


def sequence(op, rng, ins):
    """The steps a generated model runs: 2 input sets for a stateless op;
    for the stateful one 6 in a row (the same input repeated, slowly
    changing or random), a reset, the first input again and one more."""
    if op != STATEFUL:
        return [ins, more_inputs(rng, ins)]
    x0 = np.asarray(ins[0])
    mode = rng.choice(("same", "drift", "random"))
    steps = [[x0]]
    for _ in range(5):
        if mode == "same":
            steps.append([x0])
        elif mode == "drift":
            f = rng.uniform(0.5, 1.5)
            steps.append([np.clip(x0.astype(np.float64) * f, 0,
                                  2 ** 32 - 1).astype(np.uint32)])
        else:
            steps.append(more_inputs(rng, [x0]))
    return steps + [RESET, [x0], more_inputs(rng, [x0])]


def generated(op, n=CASES):
    """[(name, model, steps, TFLM outputs)] of op's seeded models."""
    out = []
    gen = gs.GENERATORS[op]
    for i in range(n):
        rng = random.Random("signal:%s:%d" % (op, i))
        raw, ins = gen(rng, 1 + i % 4)
        steps = sequence(op, rng, ins)
        out.append(("%s #%d" % (op, i), raw, steps, run_tflm(raw, steps)))
    return out


# --- generated models --------------------------------------------------------

@pytest.mark.parametrize("op", sorted(gs.GENERATORS))
def test_generated_models_match_tflm(op, tmp_path):
    """CASES seeded models of op (sizes 1-4), every invoke of each
    sequence bit-exact with TFLM."""
    cases = generated(op)
    got = run_ours([(raw, steps) for _, raw, steps, _ in cases], tmp_path)
    for (name, _, _, want), res in zip(cases, got):
        check(name, want, res)


@pytest.mark.parametrize("op", sorted(gs.GENERATORS))
def test_generated_models_run_in_tflm(op):
    """The TFLM side alone: every generated model loads, its outputs do
    not depend on the interpreter (two fresh ones agree) nor, for a
    stateless op, on the invokes before (the same input twice); the
    stateful op gives its first outputs again after reset()."""
    for name, raw, steps, want in generated(op, 8):
        assert run_tflm(raw, steps) == want, name
        if op == STATEFUL:
            k = steps.index(RESET)
            assert want[k + 1] == want[0], name
            assert any(w != want[0] for w in want[1:k]) or \
                all(s[0] is steps[0][0] for s in steps[1:k]), name
        else:
            again = run_tflm(raw, [steps[0], steps[1], steps[0]])
            assert again[2] == want[0], name


def test_rfft_lengths():
    """The fft_length table: powers of two 8..1024 and the other even
    lengths whose half has only factors 2, 3, 5; each runs in TFLM and
    is close to numpy's rfft / fft_length (so its butterflies work)."""
    assert set(gs.POW2_LENGTHS) <= set(gs.RFFT_LENGTHS)
    for n in (12, 40, 48, 120, 480):
        assert n in gs.RFFT_LENGTHS
    assert not {14, 22, 26, 28, 42, 56, 98, 1022} & set(gs.RFFT_LENGTHS)
    g = np.random.default_rng(5)
    for n in gs.RFFT_LENGTHS:
        raw = rfft_model(n, n)
        x = g.integers(-8000, 8000, n).astype(np.int16)
        y = Reference(raw).run([x])[0].astype(np.float64)
        err = np.abs(y[0::2] + 1j * y[1::2] - np.fft.rfft(x) / n).max()
        assert err < 4, (n, err)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_rfft_wide_types_every_length(dtype, tmp_path):
    """SignalRfft int32 (KISS FFT FIXED_POINT 32) and float32: every
    fft_length up to 1,024 that TFLM takes, full-length and shorter
    (zero-padded) rows of full-range, extreme, mixed-scale or huge
    values (int32 wrap-arounds, float infinities and NaNs), bit-exact
    with TFLM; one model of two rows."""
    rng = random.Random("rfft-wide:" + dtype)
    values = gs.int32_values if dtype == "int32" else gs.float32_values
    modes = (("full", "extremes", "amp", "mixed") if dtype == "int32"
             else ("scale", "mixed", "huge", "scale"))
    cases = []
    for j, n in enumerate(gs.RFFT_LENGTHS):
        L = n if j % 3 else rng.randint(1, n)
        raw = rfft_model(n, L, dtype=dtype)
        steps = [[values(rng, L, modes[j % 4])]]
        cases.append(("%s n=%d L=%d" % (dtype, n, L), raw, steps,
                      run_tflm(raw, steps)))
    raw = rfft_model(60, 50, (2,), dtype=dtype)
    steps = [[values(rng, 100, modes[0])]]
    cases.append(("%s two rows" % dtype, raw, steps, run_tflm(raw, steps)))
    got = run_ours([(raw, steps) for _, raw, steps, _ in cases], tmp_path)
    for (name, _, _, want), res in zip(cases, got):
        check(name, want, res)


def test_options_match_the_real_model():
    """Each generator's options have the real model's keys and value
    types (TFLM reads them by position in sorted key order)."""
    m = opgen.parse(_read(shared(*PREPROC)))
    real = {}
    for op in m.subgraphs[0].operators:
        code = m.operatorCodes[op.opcodeIndex]
        if code.customCode is not None:
            real[bytes(code.customCode).decode()] = _option_types(
                op.customOptions)
    assert sorted(real) == sorted(gs.GENERATORS)
    for name, gen in gs.GENERATORS.items():
        raw, _ = gen(random.Random(name), 2)
        op = opgen.parse(raw).subgraphs[0].operators[0]
        assert _option_types(op.customOptions) == real[name], name


def _option_types(raw):
    root = flexbuffers.GetRoot(bytes(bytearray(raw))).AsMap
    return [(k.AsKey, flexbuffers.Type(v._type).name)
            for k, v in zip(root.Keys, root.Values)]


# --- SignalEnergy: partial ranges --------------------------------------------

def test_energy_partial_range(tmp_path):
    """start_index / end_index inside the output: compared on
    output[start_index:end_index], the only part TFLM writes."""
    cases, want, ranges = [], [], []
    for i in range(CASES):
        rng = random.Random("energy-range:%d" % i)
        raw, ins = gs.gen_energy(rng, 1 + i % 4, full=False)
        steps = [ins, more_inputs(rng, ins)]
        cases.append((raw, steps))
        want.append(run_tflm(raw, steps))
        lo, hi = gs.energy_range(raw)
        ranges.append({0: (4 * lo, 4 * hi)})
    assert sum(r[0][0] > 0 for r in ranges) >= CASES // 2
    got = run_ours(cases, tmp_path)
    for i, (w, r, res) in enumerate(zip(want, ranges, got)):
        check("energy range #%d %s" % (i, r[0]), w, res, r)


def test_options_are_read_by_stored_position(tmp_path):
    """TFLM reads option k as the k-th value of the map as stored, not by
    key: a key that is not UTF-8 (a fuzzer found one: 'start_index' with
    one byte flipped, decoded as '???...', which sorts first) or a
    renamed key must not reorder the values."""
    cases, want = [], []
    for key in (b"start_index", b"start_in\xe4ex", b"aaaaaaaaaaa"):
        opts = bytearray(flexbuffers.Dumps({"end_index": 7,
                                            "start_index": 2}))
        at = bytes(opts).index(b"start_index")
        opts[at:at + 11] = key  # same length: offsets stay valid
        x = T([16], "int16")
        raw = opgen.single_op("CUSTOM:SignalEnergy", [x],
                              [T([8], "uint32")],
                              custom_options=bytes(opts))
        ins = [np.arange(-8, 8, dtype=np.int16) * 1000]
        cases.append((raw, [ins]))
        want.append(run_tflm(raw, [ins]))
    got = run_ours(cases, tmp_path)
    for i, (w, res) in enumerate(zip(want, got)):
        check("energy keys #%d" % i, w, res, {0: (8, 28)})


def _fb(items):
    """FlexBuffers map of (key, kind, value), kind u / i / f / b."""
    b = flexbuffers.Builder()
    with b.Map():
        for k, kind, v in items:
            b.Key(k)
            {"u": b.UInt, "i": b.Int, "f": b.Float, "b": b.Bool}[kind](v)
    return bytes(b.Finish())


def test_options_are_read_as_raw_slots(tmp_path):
    """FlexbufferWrapper reads a slot's bytes as a signed integer whatever
    the value's type: a float's bits, an unsigned value wrapped at its
    width, past the last slot the bytes that follow; clamping is 'any of
    the 64 bits set'. Each case as TFLM computes it (a reviewer found
    all four read differently)."""
    x = np.array([0, 1, 2, 3, 100, 1000, 65535, 2 ** 20, 2 ** 31,
                  2 ** 32 - 1], np.uint32)
    cases, want = [], []

    def add(raw, steps):
        cases.append((raw, steps))
        want.append(run_tflm(raw, steps))
    for o in (_fb([("input_correction_bits", "i", 3),
                   ("output_scale", "u", 40000)]),
              _fb([("input_correction_bits", "u", 130),
                   ("output_scale", "u", 130)]),
              _fb([("input_correction_bits", "i", 3),
                   ("output_scale", "f", 64.0)])):
        add(opgen.single_op("CUSTOM:SignalFilterBankLog",
                            [T([10], "uint32")], [T([10], "int16")],
                            custom_options=o), [[x]])
    xs = np.array([5000, 3, 4000, 7], np.uint32)
    for clamp in ((1 << 32), (1 << 40)):
        o = _fb([("alternate_one_minus_smoothing", "i", 15401),
                 ("alternate_smoothing", "i", 983),
                 ("clamping", "i", clamp),
                 ("min_signal_remaining", "i", 819),
                 ("num_channels", "i", 4),
                 ("one_minus_smoothing", "i", 15975),
                 ("smoothing", "i", 409), ("smoothing_bits", "i", 10),
                 ("spectral_subtraction_bits", "i", 14)])
        add(opgen.single_op("CUSTOM:SignalFilterBankSpectralSubtraction",
                            [T([4], "uint32")],
                            [T([4], "uint32"), T([4], "uint32")],
                            custom_options=o), [[xs], [xs // 2]])
    w = np.arange(-8, 8, dtype=np.int16) * 1000
    add(opgen.single_op("CUSTOM:SignalEnergy", [T([16], "int16")],
                        [T([8], "uint32")],
                        custom_options=_fb([("end_index", "i", 6)])), [[w]])
    got = run_ours(cases, tmp_path)
    for i, (wt, res) in enumerate(zip(want, got)):
        # the last model's start_index is the byte after its only slot
        check("raw option slots #%d" % i, wt, res,
              {0: (16, 24)} if i == len(cases) - 1 else None)


def test_edges_tflm_runs_and_names_it_does_not(tmp_path):
    """SignalEnergy with start >= end far past the spectrum writes
    nothing, as in TFLM (it must load); a custom name that merely
    contains a Signal op's name (separators of the op table) is not that
    op: UnsupportedOpError, as TFLM's resolver finds no registration;
    fft_length above 131072 is refused (the permutation table holds
    uint16)."""
    w = np.arange(-8, 8, dtype=np.int16) * 1000
    big = (1 << 31) - 1
    raw = opgen.single_op("CUSTOM:SignalEnergy", [T([16], "int16")],
                          [T([8], "uint32")],
                          custom_options=_fb([("end_index", "i", big),
                                              ("start_index", "i", big)]))
    run_tflm(raw, [[w]])  # TFLM runs it
    got = run_ours([(raw, [[w]])], tmp_path)[0]
    assert got[0] == "OK", got
    for name, opts, x, y, words in (
            ("SignalWindow:signal_basic SignalEnergy",
             _fb([("end_index", "i", 4), ("start_index", "i", 0)]),
             T([16], "int16"), T([8], "uint32"), "no kernel"),
            ("SignalRfft", _fb([("T", "i", 7),
                                ("fft_length", "i", 262144)]),
             T([8], "int16"), T([2 * 131073], "int16"), "at most 131072")):
        raw = opgen.single_op("CUSTOM:" + name, [x], [y],
                              custom_options=opts)
        got = run_ours([(raw, [[np.zeros(x.shape, np.int16)]])],
                       tmp_path)[0]
        assert got[0] == "ERR" and words in got[1], (name, got)


# --- hand cases (TFLM's kernel tests) ----------------------------------------

# TFLM's FlexBuffers blobs (signal/micro/kernels/*_flexbuffers_generated_
# data.cc at tflite-micro 90b983c): keys stored in another order,
# UINT-typed values, 'clamping' an int.
BLOBS = {
    "window_shift_12": "73686966740001070101010c04022401",
    "window_shift_8": "73686966740001070101010804022401",
    "energy_2_4": "73746172745f696e64657800656e645f696e64657800020b180201"
                  "0204020404042401",
    "energy_0_4": "73746172745f696e64657800656e645f696e64657800020b180201"
                  "0204000404042401",
    "energy_4_8": "73746172745f696e64657800656e645f696e64657800020b180201"
                  "0208040404042401",
    "fft_length_64_int16": "6666745f6c656e67746800540002030f020102074004040"
                           "42401",
    "filter_bank_32": "6e756d5f6368616e6e656c7300010e0101012004022401",
    "filter_bank_16": "6e756d5f6368616e6e656c7300010e0101011004022401",
    "spectral_subtraction_32": (
        "6e756d5f6368616e6e656c7300736d6f6f7468696e67006f6e655f6d696e7573"
        "5f736d6f6f7468696e6700616c7465726e6174655f736d6f6f7468696e670061"
        "6c7465726e6174655f6f6e655f6d696e75735f736d6f6f7468696e6700736d6f"
        "6f7468696e675f62697473006d696e5f7369676e616c5f72656d61696e696e67"
        "00636c616d70696e6700737065637472616c5f7375627472616374696f6e5f62"
        "6974730009667b263ca9939e4f23090001000900713d8f02000033032000713d"
        "8f0200000e000505050505050505051b2501"),
    "snr_shift_6": "736e725f736869667400010b0101010604022401",
    "log_1600_3": "6f75747075745f7363616c6500696e7075745f636f727265637469"
                  "6f6e5f6269747300021725020001000200030040060505062501",
    "log_32768_5": "6f75747075745f7363616c6500696e7075745f636f72726563746"
                   "96f6e5f62697473000217250000040000000100000002000000050"
                   "000000080000006060a2601",
}


def blob(name):
    return bytes.fromhex(BLOBS[name])


def spectral_subtraction_16_blob():
    b = bytearray(blob("spectral_subtraction_32"))
    k = b.index(bytes.fromhex("33032000"))  # min_signal 819, channels 32
    b[k + 2] = 16
    return bytes(b)


def rfft_model(n, length, outer=(), blob_=None, dtype="int16"):
    return opgen.single_op(
        "CUSTOM:SignalRfft", [T(list(outer) + [length], dtype)],
        [T(list(outer) + [2 * (n // 2 + 1)], dtype)],
        custom_options=blob_ or gs.options({"T": opgen.DTYPES[dtype],
                                            "fft_length": n}))


def auto_scale_model(n):
    return opgen.single_op("CUSTOM:SignalFftAutoScale", [T([n], "int16")],
                           [T([n], "int16"), T([], "int32")],
                           custom_options=gs.options({}))


def _a(vals, dt):
    return np.array(vals, dt)


def hand_cases():
    """(name, model, steps, expected outputs per step (arrays), ranges
    for check())."""
    H = TFLM_TESTS
    c = []

    def win(name, shape, blob_name):
        h = H[name]
        w = _a(h["input2"], np.int16)
        raw = opgen.single_op(
            "CUSTOM:SignalWindow",
            [T(shape, "int16"), T([len(w)], "int16", data=w)],
            [T(shape, "int16")], custom_options=blob(blob_name))
        reps = int(np.prod(shape)) // len(w)
        x = np.tile(_a(h["input1"], np.int16), reps)
        g = np.tile(_a(h["golden"], np.int16), reps)
        c.append((name + str(shape), raw, [[x]], [[g]], None))
    win("WindowTestLength16Shift12", [16], "window_shift_12")
    win("WindowTestLength32Shift8", [32], "window_shift_8")
    # ...OuterDims4: the 16-value vectors repeated over [2, 2, 16]
    win("WindowTestLength16Shift12", [2, 2, 16], "window_shift_12")

    # energy_test.cc: input 1..16 as 8 complex values, output [8]
    x = np.arange(1, 17, dtype=np.int16)
    for b, lo, hi, gold in (("energy_2_4", 2, 4, [0, 0, 61, 113, 0, 0, 0,
                                                  0]),
                            ("energy_0_4", 0, 4, [5, 25, 61, 113, 0, 0, 0,
                                                  0]),
                            ("energy_4_8", 4, 8, [0, 0, 0, 0, 181, 265, 365,
                                                  481])):
        raw = opgen.single_op("CUSTOM:SignalEnergy", [T([16], "int16")],
                              [T([8], "uint32")], custom_options=blob(b))
        c.append(("Energy " + b, raw, [[x]], [[_a(gold, np.uint32)]],
                  {0: (4 * lo, 4 * hi)}))

    # fft_test.cc: FftAutoScaleTestSmall / ScaleBit, RfftTestSize64Int16
    for name, sb in (("FftAutoScaleTestSmall", 1),
                     ("FftAutoScaleTestScaleBit", 7)):
        h = H[name]
        c.append((name, auto_scale_model(8), [[_a(h["input"], np.int16)]],
                  [[_a(h["golden"], np.int16), _a(sb, np.int32)]], None))
    imp = np.zeros(64, np.int16)
    imp[0] = 16384
    c.append(("RfftTestSize64Int16",
              rfft_model(64, 64, blob_=blob("fft_length_64_int16")),
              [[imp]], [[np.tile(_a([256, 0], np.int16), 33)]], None))

    # SignalFftAutoScale around -32768: TFLM's MaxAbs16 negates an
    # int16, so -32768 stays -32768 and becomes the "max"; the next value
    # above it replaces it. Scale = 15 - msb(max) (0 for a negative max,
    # where msb(uint32) is 32), and -32768 << scale wraps.
    for vals, out, sb in (([-32768, 5, 3, -2], [0, 20480, 12288, -8192],
                           12),
                          ([5, -32768], [5, -32768], 0),
                          ([-32768, -3, 100], [0, -768, 25600], 8),
                          ([-32768], [-32768], 0),
                          ([0, 0, 0], [0, 0, 0], 0),
                          ([1, -1], [16384, -16384], 14),
                          ([32767, -32767], [32767, -32767], 0),
                          ([-16384, 100], [-16384, 100], 0)):
        c.append(("FftAutoScale %s" % vals, auto_scale_model(len(vals)),
                  [[_a(vals, np.int16)]],
                  [[_a(out, np.int16), _a(sb, np.int32)]], None))

    # filter_bank_test.cc (the 32-channel input has values near 2**32,
    # the 16-channel weights a negative one)
    for name, blob_name in (("FilterBankTest32Channel", "filter_bank_32"),
                            ("FilterBankTest16Channel", "filter_bank_16")):
        h = H[name]
        tables = [_a(h["input%d" % k], np.int16) for k in range(2, 7)]
        nc = len(h["golden"])
        raw = gs.filter_bank_model(len(h["input1"]), tables, nc)
        raw = _with_options(raw, blob(blob_name))
        c.append((name, raw, [[_a(h["input1"], np.uint32)]],
                  [[_a(h["golden"], np.uint64)]], None))

    for name in ("FilterBankSquareRoot32Channel",
                 "FilterBankSquareRoot16Channel"):
        h = H[name]
        n = len(h["input1"])
        raw = opgen.single_op("CUSTOM:SignalFilterBankSquareRoot",
                              [T([n], "uint64"), T([], "int32")],
                              [T([n], "uint32")],
                              custom_options=gs.options({}))
        c.append((name, raw, [[_a(h["input1"], np.uint64),
                               _a(h["input2"][0], np.int32)]],
                  [[_a(h["golden"], np.uint32)]], None))

    # filter_bank_spectral_subtraction_test.cc, and its Reset variants:
    # invoke, reset, invoke give the goldens twice
    for name, nc, b in (("FilterBankSpectralSubtractionTest32Channel", 32,
                         blob("spectral_subtraction_32")),
                        ("FilterBankSpectralSubtractionTest16Channel", 16,
                         spectral_subtraction_16_blob())):
        h = H[name]
        x = _a(h["input"], np.uint32)
        gold = [_a(h["golden1"], np.uint32), _a(h["golden2"], np.uint32)]
        raw = gs.spectral_subtraction_model(nc, b)
        c.append((name + "Reset", raw, [[x], RESET, [x]],
                  [gold, None, gold], None))

    h = H["Mix1Ref1Case"]
    raw = gs.pcan_model(40, _a(h["gain_lut"], np.int16), 6)
    raw = _with_options(raw, blob("snr_shift_6"))
    c.append(("PcanMix1Ref1Case", raw,
              [[_a(h["input"], np.uint32), _a(h["noise_estimate"],
                                               np.uint32)]],
              [[_a(h["golden"], np.uint32)]], None))

    for name, b in (("FilterBankLogTest32Channel", "log_1600_3"),
                    ("FilterBankLogTest16Channel", "log_32768_5")):
        h = H[name]
        n = len(h["input"])
        raw = opgen.single_op("CUSTOM:SignalFilterBankLog",
                              [T([n], "uint32")], [T([n], "int16")],
                              custom_options=blob(b))
        c.append((name, raw, [[_a(h["input"], np.uint32)]],
                  [[_a(h["golden"], np.int16)]], None))
    return c


def _with_options(raw, custom_options):
    """raw with op 0's custom options replaced."""
    import flatbuffers
    from tflite_micro.tensorflow.lite.micro.python import \
        schema_py_generated as s
    m = s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
    m.subgraphs[0].operators[0].customOptions = list(custom_options)
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def test_hand_cases(tmp_path):
    """TFLM's kernel-test vectors: TFLM reproduces them, and so must
    ours (bit for bit, on the part TFLM writes)."""
    hc = hand_cases()
    want = []
    for name, raw, steps, gold, ranges in hc:
        w = run_tflm(raw, steps)
        exp = [None if g is None else [np.ascontiguousarray(a).tobytes()
                                       for a in g] for g in gold]
        check(name + " (TFLM vs golden)", exp, ("OK", w), ranges)
        want.append(w)
    got = run_ours([(raw, steps) for _, raw, steps, _, _ in hc], tmp_path)
    for (name, _, _, _, ranges), w, res in zip(hc, want, got):
        check(name, w, res, ranges)


# --- rejections --------------------------------------------------------------

def _o(**kw):
    return gs.options(kw)


def reject_cases():
    """(name, model, TFLM): TFLM False when TFLM's Prepare rejects the
    model too (checked), None when TFLM would read or write out of
    bounds or crash (not run), True when TFLM runs it but ours supports
    only part of what TFLM does."""
    c = []

    def add(name, op, ins, outs, opts, tflm=False):
        c.append((name, opgen.single_op("CUSTOM:" + op, ins, outs,
                                        custom_options=opts), tflm))

    w16 = T([16], "int16", data=np.ones(16, np.int16))
    win = _o(shift=12)
    add("window int8 input", "SignalWindow", [T([16], "int8"), w16],
        [T([16], "int16")], win)
    add("window int32 weights", "SignalWindow",
        [T([16], "int16"), T([16], "int32", data=np.ones(16, np.int32))],
        [T([16], "int16")], win)
    add("window int32 output", "SignalWindow", [T([16], "int16"), w16],
        [T([16], "int32")], win)
    add("window rank-2 weights", "SignalWindow",
        [T([16], "int16"), T([1, 16], "int16",
                             data=np.ones(16, np.int16))],
        [T([16], "int16")], win)
    add("window output rank", "SignalWindow", [T([1, 16], "int16"), w16],
        [T([16], "int16")], win)
    add("window scalar input", "SignalWindow",
        [T([], "int16"), T([1], "int16", data=[1])], [T([], "int16")], win)
    add("window one input", "SignalWindow", [T([16], "int16")],
        [T([16], "int16")], win)
    add("window input not a multiple of the weights", "SignalWindow",
        [T([20], "int16"), w16], [T([20], "int16")], win, None)

    sc = _o()
    add("auto scale rank-2 input", "SignalFftAutoScale",
        [T([1, 8], "int16")], [T([1, 8], "int16"), T([], "int32")], sc)
    add("auto scale rank-1 scale", "SignalFftAutoScale", [T([8], "int16")],
        [T([8], "int16"), T([1], "int32")], sc)
    add("auto scale int32 input", "SignalFftAutoScale", [T([8], "int32")],
        [T([8], "int32"), T([], "int32")], sc)
    add("auto scale int16 scale", "SignalFftAutoScale", [T([8], "int16")],
        [T([8], "int16"), T([], "int16")], sc)
    add("auto scale one output", "SignalFftAutoScale", [T([8], "int16")],
        [T([8], "int16")], sc)

    ff = _o(T=7, fft_length=16)
    add("rfft int32 input (T=7)", "SignalRfft", [T([16], "int32")],
        [T([18], "int16")], ff)
    add("rfft int32 output (T=7)", "SignalRfft", [T([16], "int16")],
        [T([18], "int32")], ff)
    add("rfft rank mismatch", "SignalRfft", [T([1, 16], "int16")],
        [T([18], "int16")], ff)
    add("rfft float32 input (T=2)", "SignalRfft", [T([16], "float32")],
        [T([18], "int32")], _o(T=2, fft_length=16))
    add("rfft int8 (T=9: TFLM's Init returns null, its Prepare crashes)",
        "SignalRfft", [T([16], "int8")], [T([18], "int8")],
        _o(T=9, fft_length=16), None)
    add("rfft fft_length 14 (factor 7: TFLM crashes)", "SignalRfft",
        [T([14], "int16")], [T([16], "int16")], _o(T=7, fft_length=14),
        None)
    add("rfft odd fft_length", "SignalRfft", [T([15], "int16")],
        [T([16], "int16")], _o(T=7, fft_length=15), None)
    add("rfft input longer than fft_length", "SignalRfft",
        [T([20], "int16")], [T([18], "int16")], ff)  # PyPI build checks
    add("rfft output too small", "SignalRfft", [T([16], "int16")],
        [T([16], "int16")], ff, None)

    en = _o(end_index=4, start_index=0)
    add("energy rank-2 input", "SignalEnergy", [T([1, 16], "int16")],
        [T([8], "uint32")], en)
    add("energy int32 output", "SignalEnergy", [T([16], "int16")],
        [T([8], "int32")], en)
    add("energy int32 input", "SignalEnergy", [T([16], "int32")],
        [T([8], "uint32")], en)
    add("energy rank-2 output", "SignalEnergy", [T([16], "int16")],
        [T([1, 8], "uint32")], en)
    add("energy end_index past the output", "SignalEnergy",
        [T([32], "int16")], [T([8], "uint32")],
        _o(end_index=12, start_index=0), None)
    add("energy end_index past the input", "SignalEnergy",
        [T([8], "int16")], [T([8], "uint32")],
        _o(end_index=8, start_index=0), None)

    tabs = [np.ones(4, np.int16), np.ones(4, np.int16),
            _a([0, 1, 2], np.int16), _a([0, 1, 2], np.int16),
            _a([1, 1, 1], np.int16)]

    def fb(name, in_type="uint32", out_type="uint64", tables=tabs,
           in_shape=(8,), n_tables=5, tflm=False, nc=None, out_n=None):
        ins = [T(list(in_shape), in_type)] + [
            T([len(t)], "int16", data=t) for t in tables][:n_tables]
        nc = len(tables[2]) - 1 if nc is None else nc
        add(name, "SignalFilterBank", ins,
            [T([nc if out_n is None else out_n], out_type)],
            _o(num_channels=nc), tflm)
    fb("filter bank int32 input", in_type="int32")
    fb("filter bank uint32 output", out_type="uint32")
    fb("filter bank rank-2 input", in_shape=(1, 8))
    fb("filter bank five inputs", n_tables=4)
    add("filter bank int32 weights", "SignalFilterBank",
        [T([8], "uint32"), T([4], "int32", data=np.ones(4, np.int32)),
         T([4], "int16", data=tabs[1])] + [
            T([3], "int16", data=t) for t in tabs[2:]],
        [T([2], "uint64")], _o(num_channels=2))
    fb("filter bank channel past the input", tables=tabs[:2] + [
        _a([0, 1, 7], np.int16), tabs[3], _a([1, 1, 3], np.int16)],
        tflm=None)
    fb("filter bank weights past the end", tables=tabs[:3] + [
        _a([0, 1, 3], np.int16), _a([1, 1, 2], np.int16)], tflm=None)
    fb("filter bank num_channels past the tables", nc=5, tflm=None)
    fb("filter bank output larger than num_channels", out_n=4, tflm=None)

    sq = _o()
    add("square root rank-1 scale bits", "SignalFilterBankSquareRoot",
        [T([4], "uint64"), T([1], "int32")], [T([4], "uint32")], sq)
    add("square root uint32 input", "SignalFilterBankSquareRoot",
        [T([4], "uint32"), T([], "int32")], [T([4], "uint32")], sq)
    add("square root uint64 output", "SignalFilterBankSquareRoot",
        [T([4], "uint64"), T([], "int32")], [T([4], "uint64")], sq)
    add("square root int16 scale bits", "SignalFilterBankSquareRoot",
        [T([4], "uint64"), T([], "int16")], [T([4], "uint32")], sq)
    add("square root rank-2 input", "SignalFilterBankSquareRoot",
        [T([1, 4], "uint64"), T([], "int32")], [T([1, 4], "uint32")], sq)

    ss = gs.options(gs.spectral_subtraction_options(random.Random(1), 4))
    add("spectral subtraction one output",
        "SignalFilterBankSpectralSubtraction", [T([4], "uint32")],
        [T([4], "uint32")], ss)
    add("spectral subtraction int32 input",
        "SignalFilterBankSpectralSubtraction", [T([4], "int32")],
        [T([4], "uint32"), T([4], "uint32")], ss)
    add("spectral subtraction uint64 noise estimate",
        "SignalFilterBankSpectralSubtraction", [T([4], "uint32")],
        [T([4], "uint32"), T([4], "uint64")], ss)
    add("spectral subtraction rank-2 input",
        "SignalFilterBankSpectralSubtraction", [T([1, 4], "uint32")],
        [T([4], "uint32"), T([4], "uint32")], ss)
    add("spectral subtraction num_channels past the tensors",
        "SignalFilterBankSpectralSubtraction", [T([2], "uint32")],
        [T([2], "uint32"), T([2], "uint32")], ss, None)

    lut = T([125], "int16", data=gs.pcan_lut(0.95, 80.0, 7, 21))
    pc = _o(snr_shift=6)
    add("pcan two inputs", "SignalPCAN", [T([4], "uint32"),
                                          T([4], "uint32")],
        [T([4], "uint32")], pc)
    add("pcan int32 lut", "SignalPCAN",
        [T([4], "uint32"), T([4], "uint32"),
         T([125], "int32", data=np.ones(125, np.int32))],
        [T([4], "uint32")], pc)
    add("pcan int32 noise estimate", "SignalPCAN",
        [T([4], "uint32"), T([4], "int32"), lut], [T([4], "uint32")], pc)
    add("pcan int16 output", "SignalPCAN",
        [T([4], "uint32"), T([4], "uint32"), lut], [T([4], "int16")], pc)
    add("pcan rank-2 input", "SignalPCAN",
        [T([1, 4], "uint32"), T([4], "uint32"), lut],
        [T([1, 4], "uint32")], pc)

    lg = _o(input_correction_bits=3, output_scale=64)
    add("log int32 output", "SignalFilterBankLog", [T([4], "uint32")],
        [T([4], "int32")], lg)
    add("log int32 input", "SignalFilterBankLog", [T([4], "int32")],
        [T([4], "int16")], lg)
    add("log rank-2 input", "SignalFilterBankLog", [T([1, 4], "uint32")],
        [T([1, 4], "int16")], lg)
    add("log two outputs", "SignalFilterBankLog", [T([4], "uint32")],
        [T([4], "int16"), T([4], "int16")], lg)
    return c


def test_rejections(tmp_path):
    """Every case raises PrepareError (naming op 0) in ours; TFLM's
    Prepare rejects those marked so."""
    rc = reject_cases()
    for name, raw, tflm in rc:
        if tflm is False:
            with pytest.raises(RuntimeError):
                Reference(raw)
        elif tflm:
            Reference(raw)  # TFLM accepts it
    got = run_ours([(raw, []) for _, raw, _ in rc], tmp_path)
    for (name, _, _), (st, msg) in zip(rc, got):
        assert st == "ERR", "%s: accepted (%s)" % (name, st)
        assert msg.startswith("PrepareError"), (name, msg)
        assert "op 0" in msg, (name, msg)


# --- the whole audio preprocessor --------------------------------------------

def _read(path):
    with open(path, "rb") as f:
        return f.read()


def read_wav(path):
    """int16 mono samples of a 16-bit PCM wav."""
    with wave.open(path) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, path
        return np.frombuffer(w.readframes(w.getnframes()), "<i2")


# micro_speech_test.cc: features of the first 30 ms of yes / no
YES_FEATURES = [124, 105, 126, 103, 125, 101, 123, 100, 116, 98, 115, 97,
                113, 90, 91, 82, 104, 96, 117, 97, 121, 103, 126, 101, 125,
                104, 126, 104, 125, 101, 116, 90, 81, 74, 80, 71, 83, 76,
                82, 71]
NO_FEATURES = [126, 103, 124, 102, 124, 102, 123, 100, 118, 97, 118, 100,
               118, 98, 121, 100, 121, 98, 117, 91, 96, 74, 54, 87, 100, 87,
               109, 92, 91, 80, 64, 55, 83, 74, 74, 78, 114, 95, 101, 81]


def random_frames(n):
    rng = random.Random("preproc-frames")
    out = []
    for i in range(n):
        mode = ("amp", "full", "mixed", "extremes", "zeros")[i % 5] \
            if i < 10 else None
        out.append(gs.int16_values(rng, 480, mode))
    return out


def speech_frames(n):
    """n consecutive 30 ms frames of yes_1000ms.wav, 20 ms apart (as
    micro_speech slides its window), or of a synthetic tone if absent."""
    p = os.path.join(SHARED, "micro_speech_quantized", "yes_1000ms.wav")
    if os.path.exists(p):
        x = read_wav(p)
    else:
        t = np.arange(16000) / 16000.0
        x = (8000 * np.sin(2 * np.pi * 440 * t)).astype(np.int16)
    return [x[k * 320:k * 320 + 480] for k in range(n)]


@pytest.fixture(scope="module")
def preproc(tmp_path_factory):
    """All preprocessor runs, TFLM's and ours (one process): {name:
    (steps, TFLM outputs, our result)}."""
    path = shared(*PREPROC)
    raw = _read(path)
    d = os.path.dirname(path)
    yes = read_wav(os.path.join(d, "yes_30ms.wav"))
    no = read_wav(os.path.join(d, "no_30ms.wav"))
    seq = speech_frames(10)
    runs = {"yes": [[yes]], "no": [[no]], "sequence": [[f] for f in seq],
            "reset": [[f] for f in seq[:5]] + [RESET, [seq[5]]],
            "fresh5": [[seq[5]]]}
    for i, f in enumerate(random_frames(20)):
        runs["random%d" % i] = [[f]]
    names = sorted(runs)
    want = {k: run_tflm(raw, runs[k]) for k in names}
    got = run_ours([(raw, runs[k]) for k in names],
                   tmp_path_factory.mktemp("preproc"))
    return _Runs((k, (runs[k], want[k], g)) for k, g in zip(names, got))


class _Runs(dict):
    """A dict whose repr stays short in pytest's tracebacks."""

    def __repr__(self):
        return "<preprocessor runs: %s>" % ", ".join(sorted(self))


def test_preprocessor_yes_no(preproc):
    """The shared 30 ms wavs: TFLM gives micro_speech_test.cc's
    features, ours TFLM's."""
    for name, gold in (("yes", YES_FEATURES), ("no", NO_FEATURES)):
        steps, want, res = preproc[name]
        assert want[0][0] == _a(gold, np.int8).tobytes(), name
        check("preprocessor " + name, want, res)


def test_preprocessor_random_frames(preproc):
    """20 random frames (random amplitude, full scale, extremes, zeros),
    each on a fresh interpreter."""
    for i in range(20):
        _, want, res = preproc["random%d" % i]
        check("preprocessor random frame %d" % i, want, res)


def test_preprocessor_sequence(preproc):
    """10 consecutive frames on one interpreter: the noise estimate
    carries over (TFLM's outputs differ from fresh interpreters')."""
    steps, want, res = preproc["sequence"]
    fresh = [run_tflm(_read(shared(*PREPROC)), [s])[0]
             for s in steps[1:4]]
    assert any(f != w for f, w in zip(fresh, want[1:4]))
    check("preprocessor sequence", want, res)


def test_preprocessor_reset(preproc):
    """reset() after 5 frames: the next frame gives what a freshly built
    interpreter gives (in TFLM, and in ours)."""
    steps, want, res = preproc["reset"]
    _, fresh, fres = preproc["fresh5"]
    assert want[-1] == fresh[0]
    _, seq_want, _ = preproc["sequence"]
    assert seq_want[5] != fresh[0]  # without the reset it would differ
    check("preprocessor reset", want, res)
    check("preprocessor fresh", fresh, fres)
    assert res[1][-1] == fres[1][0]


# --- TFLM's kernel-test vectors ---------------------------------------------
# signal/micro/kernels/*_test.cc at tflite-micro 90b983c (Apache-2.0)

TFLM_TESTS = {
    "WindowTestLength16Shift12": {
        "input1": [
            0, 256, 512, 768, 1024, 1280, 1536, 1792, 2048, 2304, 2560, 2816,
            3072, 3328, 3584, 3840
        ],
        "input2": [
            3840, 3584, 3328, 3072, 2816, 2560, 2304, 2048, 1792, 1536, 1280,
            1024, 768, 512, 256, 0
        ],
        "golden": [
            0, 224, 416, 576, 704, 800, 864, 896, 896, 864, 800, 704, 576, 416,
            224, 0
        ],
    },
    "WindowTestLength32Shift8": {
        "input1": [
            1221, 1920, 9531, 2795, 1826, 371, 8446, 850, 3129, 8218, 4199,
            8358, 205, 5268, 3263, 2849, 8398, 1381, 6305, 668, 8867, 4651,
            9121, 6141, 1961, 3750, 8418, 8085, 3308, 1788, 1608, 4761
        ],
        "input2": [
            1323, 764, 9100, 4220, 1745, 9311, 178, 9442, 5676, 1817, 5433,
            5837, 7635, 4539, 6548, 9690, 6097, 4275, 1523, 3694, 7506, 2797,
            5153, 172, 2172, 4540, 6643, 7845, 1719, 7564, 1700, 5227
        ],
        "golden": [
            6310, 5730, 32767, 32767, 12446, 13493, 5872, 31350, 32767, 32767,
            32767, 32767, 6113, 32767, 32767, 32767, 32767, 23061, 32767, 9639,
            32767, 32767, 32767, 4125, 16637, 32767, 32767, 32767, 22212,
            32767, 10678, 32767
        ],
    },
    "FftAutoScaleTestSmall": {
        "input": [
            0, 4369, 8738, 13107, 13107, 8738, 4369, 0
        ],
        "golden": [
            0, 8738, 17476, 26214, 26214, 17476, 8738, 0
        ],
    },
    "FftAutoScaleTestScaleBit": {
        "input": [
            238, 113, -88, -243, -5, -130, 159, -70
        ],
        "golden": [
            30464, 14464, -11264, -31104, -640, -16640, 20352, -8960
        ],
    },
    "FilterBankTest32Channel": {
        "input1": [
            65451, 11468838, 4280615122, 4283105055, 30080683, 969970, 1168164,
            192770, 344209, 1811809, 1740724, 586130, 305045, 17981, 169273,
            103321, 85277, 529901, 524660, 116609, 29653, 64345, 13121, 273956,
            593748, 463432, 348169, 77545, 2117, 19277, 13837, 85, 16322, 1325,
            69584, 233930, 253273, 94180, 8642, 104245, 151937, 231970, 90405,
            95849, 106285, 81938, 76226, 103337, 303250, 337705, 75140, 43874,
            33730, 44761, 117608, 57322, 9945, 19816, 48674, 19465, 15696,
            52229, 103738, 102541, 126421, 133157, 33680, 7738, 45029, 57122,
            61605, 60138, 26170, 41444, 210994, 238338, 74324, 21460, 33125,
            3940, 15481, 7709, 24929, 17714, 170993, 91978, 45965, 214133,
            96832, 1800, 16717, 42341, 87421, 114341, 65161, 26260, 135077,
            245000, 122117, 81188, 107753, 74125, 86432, 91460, 29648, 2069,
            3161, 5002, 784, 1152, 1424, 277, 452, 2696, 3610, 2120, 2617, 562,
            1153, 4610, 2906, 65, 786450, 4293722107, 0, 393208, 2, 196608,
            65539, 65537, 4294967295, 65537, 4294901762, 65535, 4294770689,
            65533, 131073, 4294901761, 131071, 131071, 65535, 4294901764,
            4294967295, 0, 4294901758, 4294901761, 196607, 4294836224, 131070,
            4294901762, 4294901759, 196608, 4294901761, 131071, 131070, 65538,
            0, 4294901761, 65536, 4294836225, 65536, 4294836225, 4294901757,
            65535, 4294901760, 196607, 4294967295, 0, 131071, 4294901762,
            4294836221, 196608, 65536, 1, 131074, 4294770690, 4294967291,
            196611, 4294770687, 262143, 4294901759, 131071, 1, 4294901759,
            196607, 4294705153, 196607, 4294967294, 65536, 1, 4294901759,
            65536, 0, 65536, 65537, 4294901759, 65536, 3, 4294836222, 65534,
            65536, 65538, 4294836225, 4294901760, 4294901761, 4294967293, 0,
            65534, 131070, 65537, 4294901762, 65536, 2, 4294836224, 1,
            4294901760, 0, 4294967294, 131073, 4294901760, 65535, 131073,
            4294836224, 65536, 4294901760, 4294901760, 4294967295, 4294901761,
            131071, 4294901760, 131071, 4294836224, 2, 4294901758, 4294967292,
            131073, 0, 65535, 0, 4294901760, 4294967295, 131073, 4294901764,
            4294836223, 4294967295, 65535, 65537, 65533, 3, 131072, 4294836224,
            65537, 1, 4294967293, 196611, 4294901759, 1
        ],
        "input2": [
            1133, 2373, 3712, 1047, 2564, 66, 1740, 3486, 1202, 3079, 919,
            2913, 865, 2964, 1015, 3210, 1352, 3633, 1859, 123, 2520, 856,
            3323, 1726, 161, 2722, 1215, 3833, 2382, 956, 3652, 2276, 923,
            3689, 2380, 1093, 3922, 2676, 1448, 239, 3144, 1970, 814, 3770,
            2646, 1538, 445, 3463, 2399, 1349, 313, 3386, 2376, 1379, 394,
            3517, 2556, 1607, 668, 3837, 2920, 2013, 1117, 231, 3450, 2583,
            1725, 877, 37, 3302, 2480, 1666, 861, 63, 3369, 2588, 1813, 1046,
            287, 3630, 2885, 2147, 1415, 690, 4067, 3355, 2650, 1950, 1257,
            569, 3984, 3308, 2638, 1973, 1314, 661, 12, 3465, 2827, 2194, 1566,
            943, 325, 3808, 3199, 2595, 1996, 1401, 810, 224, 3738, 3160, 2586,
            2017, 1451, 890, 332
        ],
        "input3": [
            2962, 1722, 383, 3048, 1531, 4029, 2355, 609, 2893, 1016, 3176,
            1182, 3230, 1131, 3080, 885, 2743, 462, 2236, 3972, 1575, 3239,
            772, 2369, 3934, 1373, 2880, 262, 1713, 3139, 443, 1819, 3172, 406,
            1715, 3002, 173, 1419, 2647, 3856, 951, 2125, 3281, 325, 1449,
            2557, 3650, 632, 1696, 2746, 3782, 709, 1719, 2716, 3701, 578,
            1539, 2488, 3427, 258, 1175, 2082, 2978, 3864, 645, 1512, 2370,
            3218, 4058, 793, 1615, 2429, 3234, 4032, 726, 1507, 2282, 3049,
            3808, 465, 1210, 1948, 2680, 3405, 28, 740, 1445, 2145, 2838, 3526,
            111, 787, 1457, 2122, 2781, 3434, 4083, 630, 1268, 1901, 2529,
            3152, 3770, 287, 896, 1500, 2099, 2694, 3285, 3871, 357, 935, 1509,
            2078, 2644, 3205, 3763
        ],
        "input4": [
            5, 6, 7, 9, 11, 12, 14, 16, 18, 20, 22, 25, 27, 30, 32, 35, 38, 41,
            45, 48, 52, 56, 60, 64, 69, 74, 79, 84, 89, 95, 102, 108, 115
        ],
        "input5": [
            0, 1, 2, 4, 6, 7, 9, 11, 13, 15, 17, 20, 22, 25, 27, 30, 33, 36,
            40, 43, 47, 51, 55, 59, 64, 69, 74, 79, 84, 90, 97, 103, 110
        ],
        "input6": [
            1, 1, 2, 2, 1, 2, 2, 2, 2, 2, 3, 2, 3, 2, 3, 3, 3, 4, 3, 4, 4, 4,
            4, 5, 5, 5, 5, 5, 6, 7, 6, 7, 7
        ],
        "golden": [
            5645104312, 3087527471, 5883346002, 10807122775, 2465336182,
            853935004, 1206905130, 3485828019, 1134726750, 832725041,
            4442875878, 2122064365, 178483220, 151483681, 1742660113,
            1309124116, 1954305288, 1323857378, 2750861165, 1340947482,
            792522630, 669257768, 1659699572, 940652856, 1957080469,
            1034203505, 1541805928, 1710818326, 2432875876, 2254716277,
            275382345, 57293224
        ],
    },
    "FilterBankTest16Channel": {
        "input1": [
            645050, 4644, 3653, 24262, 56660, 43260, 50584, 57902, 31702, 5401,
            45555, 34852, 8518, 43556, 13358, 19350, 40221, 18017, 27284,
            64491, 60099, 17863, 11001, 29076, 32666, 65268, 50947, 28694,
            32377, 30014, 25607, 22547, 45086, 10654, 46797, 8622, 47348,
            43085, 5747, 51544, 50364, 6208, 20696, 59782, 14429, 60125, 37079,
            32673, 63457, 60142, 34042, 11280, 1874, 33734, 62118, 13766,
            54398, 47818, 50976, 46930, 25906, 59441, 25958, 59136, 1756,
            18652, 29213, 13379, 51845, 1207, 55626, 27108, 43771, 35236, 3374,
            40959, 47707, 41540, 34282, 27094, 36329, 13593, 65257, 47006,
            46857, 1114, 37106, 18738, 25969, 15461, 2842, 36470, 32489, 61622,
            23613, 29624, 32820, 30438, 9543, 6767, 23037, 52896, 12059, 32264,
            11575, 42400, 43344, 27511, 16712, 6877, 4910, 50047, 61569, 57237,
            48558, 2310, 22192, 7874, 46141, 64056, 61997, 7298, 31372, 25316,
            683, 58940, 18755, 17898, 19196
        ],
        "input2": [
            -2210, 1711, 3237, 1247, 2507, 61, 1019, 899, 206, 146, 2849, 2756,
            1260, 1280, 1951, 213, 617, 2047, 211, 347, 2821, 3747, 150, 1924,
            3962, 942, 1430, 2678, 993, 308, 3364, 2491, 954, 1308, 879, 3950,
            1, 3556, 3628, 2104, 78, 1298, 1080, 342, 1337, 1639, 2352, 829,
            1358, 2498, 1647, 2507, 3816, 3767, 3735, 1155, 2221, 2196, 1160
        ],
        "input3": [
            408, 3574, 1880, 2561, 2011, 3394, 1019, 445, 3901, 343, 1874,
            3846, 3566, 1830, 327, 111, 623, 1037, 2803, 1947, 1518, 661, 3239,
            2351, 1257, 269, 1574, 3431, 3972, 2487, 2181, 1458, 552, 717, 679,
            1031, 1738, 1782, 128, 2242, 353, 1460, 3305, 1424, 3813, 2895,
            164, 272, 3886, 3135, 141, 747, 3233, 1478, 2612, 3837, 3271, 73,
            1746
        ],
        "input4": [
            5, 6, 7, 9, 11, 12, 14, 16, 18, 20, 22, 25, 27, 30, 32, 35, 33
        ],
        "input5": [
            0, 1, 2, 4, 6, 7, 9, 11, 13, 15, 17, 20, 22, 25, 27, 30, 33
        ],
        "input6": [
            1, 1, 2, 2, 1, 2, 2, 2, 2, 2, 3, 2, 3, 2, 3, 3, 3
        ],
        "golden": [
            104199304, 407748384, 206363744, 200989269, 52144406, 230780884,
            174394190, 379684049, 94840835, 57788823, 531528204, 318265707,
            263149795, 188110467, 501443259, 200747781
        ],
    },
    "FilterBankSquareRoot32Channel": {
        "input1": [
            10528000193, 28362909357, 47577133750, 8466055850, 5842710800,
            2350911449, 2989811430, 2646718839, 515262774, 276394561,
            469831522, 55815334, 28232446, 11591835, 40329249, 67658028,
            183446654, 323189165, 117473797, 41339272, 25846050, 12428673,
            18670978, 22521722, 78477733, 54207503, 25150296, 43098592,
            28211625, 15736687, 20990296, 17907031
        ],
        "input2": [
            7
        ],
        "golden": [
            801, 1315, 1704, 718, 597, 378, 427, 401, 177, 129, 169, 58, 41,
            26, 49, 64, 105, 140, 84, 50, 39, 27, 33, 37, 69, 57, 39, 51, 41,
            30, 35, 33
        ],
    },
    "FilterBankSquareRoot16Channel": {
        "input1": [
            13051415151, 14932650877, 18954728418, 8730126017, 6529665275,
            12952546517, 10314975609, 8919697835, 8053663348, 17231208421,
            7366899760, 1372112200, 19953434807, 17012385332, 4710443222,
            17765594053
        ],
        "input2": [
            5
        ],
        "golden": [
            3570, 3818, 4302, 2919, 2525, 3556, 3173, 2951, 2804, 4102, 2682,
            1157, 4414, 4076, 2144, 4165
        ],
    },
    "FilterBankSpectralSubtractionTest32Channel": {
        "input": [
            322, 308, 210, 212, 181, 251, 403, 259, 65, 48, 76, 48, 50, 46, 53,
            52, 112, 191, 136, 59, 70, 51, 39, 64, 33, 44, 41, 49, 74, 107,
            262, 479
        ],
        "golden1": [
            310, 296, 202, 204, 174, 241, 387, 249, 63, 47, 73, 47, 49, 45, 51,
            50, 108, 184, 131, 57, 68, 49, 38, 62, 32, 43, 40, 48, 72, 103,
            252, 460
        ],
        "golden2": [
            12, 12, 8, 8, 7, 10, 16, 10, 2, 1, 3, 1, 1, 1, 2, 2, 4, 7, 5, 2, 2,
            2, 1, 2, 1, 1, 1, 1, 2, 4, 10, 19
        ],
    },
    "FilterBankSpectralSubtractionTest16Channel": {
        "input": [
            393, 213, 408, 1, 361, 385, 386, 326, 170, 368, 368, 305, 152, 322,
            213, 319
        ],
        "golden1": [
            378, 205, 392, 1, 347, 370, 371, 313, 164, 354, 354, 293, 146, 310,
            205, 307
        ],
        "golden2": [
            15, 8, 16, 0, 14, 15, 15, 13, 6, 14, 14, 12, 6, 12, 8, 12
        ],
    },
    "Mix1Ref1Case": {
        "input": [
            286, 298, 305, 291, 290, 279, 273, 257, 250, 240, 240, 233, 234,
            230, 221, 205, 183, 159, 156, 188, 239, 298, 345, 374, 380, 369,
            359, 364, 372, 354, 302, 243, 194, 135, 64, 72, 171, 245, 277, 304
        ],
        "noise_estimate": [
            7310, 18308, 7796, 17878, 7413, 17141, 6978, 15789, 6390, 14745,
            6135, 14314, 5981, 14130, 5649, 12594, 4677, 9768, 3987, 11550,
            6109, 18308, 8819, 22977, 9713, 22670, 9176, 22363, 9509, 21748,
            7719, 14929, 4959, 8294, 1636, 4423, 4371, 15052, 7080, 18677
        ],
        "gain_lut": [
            32636, 32633, 32630, -6, 0, -21589, 32624, -12, 0, -21589, 32612,
            -23, -2, -21589, 32587, -48, 0, -21589, 32539, -96, 0, -21589,
            32443, -190, 0, -21589, 32253, -378, 4, -21589, 31879, -739, 18,
            -21589, 31158, -1409, 62, -21589, 29811, -2567, 202, -21589, 27446,
            -4301, 562, -21589, 23707, -6265, 1230, -21589, 18672, -7458, 1952,
            -21589, 13166, -7030, 2212, -21589, 8348, -5342, 1868, -21589,
            4874, -3459, 1282, -21589, 2697, -2025, 774, -21589, 1446, -1120,
            436, -21589, 762, -596, 232, -21589, 398, -313, 122, -21589, 207,
            -164, 64, -21589, 107, -85, 34, -21589, 56, -45, 18, -21589, 29,
            -22, 8, -21589, 15, -13, 6, -21589, 8, -8, 4, -21589, 4, -2, 0,
            -21589, 2, -3, 2, -21589, 1, 0, 0, -21589, 1, -3, 2, -21589, 0, 0,
            0
        ],
        "golden": [
            1301, 836, 1354, 827, 1312, 811, 1263, 779, 1192, 753, 1160, 743,
            1140, 738, 1096, 698, 956, 607, 845, 667, 1157, 836, 1461, 912,
            1546, 908, 1496, 904, 1527, 895, 1346, 758, 999, 548, 378, 344,
            908, 761, 1274, 843
        ],
    },
    "FilterBankLogTest32Channel": {
        "input": [
            29, 21, 29, 40, 19, 11, 13, 23, 13, 11, 25, 17, 5, 4, 46, 14, 17,
            14, 20, 14, 10, 10, 15, 11, 17, 12, 15, 16, 19, 18, 6, 2
        ],
        "golden": [
            8715, 8198, 8715, 9229, 8038, 7164, 7431, 8344, 7431, 7164, 8477,
            7860, 5902, 5545, 9453, 7550, 7860, 7550, 8120, 7550, 7011, 7011,
            7660, 7164, 7860, 7303, 7660, 7763, 8038, 7952, 6194, 4436
        ],
    },
    "FilterBankLogTest16Channel": {
        "input": [
            48, 20, 19, 24, 35, 47, 23, 30, 31, 10, 48, 21, 46, 14, 18, 27
        ],
        "golden": [
            32767, 15121, 13440, 21095, 32767, 32767, 19701, 28407, 29482,
            32767, 32767, 16720, 32767, 3434, 11669, 24955
        ],
    },
}
