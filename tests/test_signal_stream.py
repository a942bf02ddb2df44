"""TFLM's streaming Signal operators (SignalDelay, SignalFramer,
SignalStacker, SignalOverlapAdd), SignalIrfft (int16, int32, float32) and the
CIRCULAR_BUFFER custom op vs TFLM (PyPI tflite-micro).

* generated models (host_tools/conformance/gen_signal_stream.py), each
  run through a sequence of invokes with a reset() in the middle, in
  TFLM and, all of them in one MicroPython process, in ours (invoke
  under heap_lock, model bytes at odd addresses): every invoke's outputs
  byte for byte. Framer and Stacker leave unfinished frames unwritten
  (their bytes hold whatever the arena held, in TFLM as here): the
  frames that the stream has filled are computed by hand (fill counts)
  and only those are compared, with the output_valid flag;
* the state: TFLM's outputs must depend on the invokes before (the
  second input alone gives other outputs) and reset() must bring back
  the first outputs;
* SignalIrfft at every fft_length up to 1,024 that TFLM takes (int16,
  int32, float32), and its round trip with numpy's irfft;
* hand-computed cases (a delay line, a prefilled framer, a stacker's
  first frame replicated, an overlap-add, the circular buffer's slots);
* CIRCULAR_BUFFER's abort: models with operators after it, invoke()'s
  return (TFLM's kTfLiteAbort, 15) and every output on every invoke,
  the aborted ones included, with reset() between;
* rejections: what TFLM's Prepare refuses and what it would run out of
  bounds on.
"""

import random

import numpy as np
import pytest

from host_tools import opgen
from host_tools.conformance import gen_signal_stream as gs
from host_tools.conformance.gen_signal import int16_values, options
from host_tools.oracle import Reference
from sequences import (RESET, check_rejections, run_ours, run_tflm,
                       run_tflm_status)

T = opgen.Tensor
CASES = 20


def _opts(raw):
    m = opgen.parse(raw)
    from flatbuffers import flexbuffers
    root = flexbuffers.GetRoot(bytes(bytearray(
        m.subgraphs[0].operators[0].customOptions))).AsMap
    return {k.AsKey: v.Value for k, v in zip(root.Keys, root.Values)}


def _shape(raw, k):
    m = opgen.parse(raw)
    return list(m.subgraphs[0].tensors[k].shape)


def _next(rng, ins):
    x = np.asarray(ins[0])
    if x.dtype == np.int16:
        return [int16_values(rng, x.size).reshape(x.shape)]
    if x.dtype == np.int8:
        return [np.array([rng.randint(-128, 127) for _ in range(x.size)],
                         np.int8).reshape(x.shape)]
    g = np.random.default_rng(rng.getrandbits(32))
    return [(g.standard_normal(x.size) * 100).astype(x.dtype).reshape(
        x.shape)]


def _steps(rng, ins, n=5):
    s = [ins]
    for _ in range(n - 1):
        s.append(_next(rng, ins))
    return s + [RESET, ins, s[1]]


def _written(op, raw, steps):
    """For Framer and Stacker: per step, the byte ranges of output 0 that
    the kernel writes (None: all of it)."""
    o = _opts(raw)
    out = []
    if op == "SignalFramer":
        fs, step, pre = o["frame_size"], o["frame_step"], o["prefill"]
        ish = _shape(raw, 0)
        nf, rows = ish[-1] // step, int(np.prod(ish[:-1]))
        base = fs - step if pre else 0
        held = base
        for st in steps:
            if st is RESET:
                held = base
                out.append(None)
                continue
            frames = []
            for f in range(nf):
                held += step
                if held >= fs:
                    frames.append(f)
                    held -= step
            out.append([(2 * (r * nf + f) * fs, 2 * (r * nf + f + 1) * fs)
                        for r in range(rows) for f in frames])
    else:  # SignalStacker
        nc = o["num_channels"]
        win = nc * (o["stacker_left_context"] +
                    o["stacker_right_context"] + 1)
        held, first = 0, False
        for st in steps:
            if st is RESET:
                held, first = 0, False
                out.append(None)
                continue
            held += nc
            if not first:
                held += nc * o["stacker_left_context"]
                first = True
            if held >= win:
                out.append([(0, 2 * win)])
                held -= nc * o["stacker_step"]
            else:
                out.append([])
    return out


def _compare(name, want, got, written=None):
    st, got = got
    assert st == "OK", (name, st, got)
    assert len(got) == len(want), name
    for j, (w, g) in enumerate(zip(want, got)):
        if w is None:
            continue
        for i, (a, b) in enumerate(zip(w, g)):
            if written is not None and i == 0:
                for lo, hi in written[j]:
                    assert a[lo:hi] == b[lo:hi], (name, j, lo, hi)
                continue
            assert a == b, "%s step %d output %d:\n ours %s\n TFLM %s" % (
                name, j, i, b.hex()[:120], a.hex()[:120])


def _cases(op, n=CASES):
    out = []
    for i in range(n):
        rng = random.Random("stream:%s:%d" % (op, i))
        kw = {"first_valid": i % 2 == 0} if op in (
            "SignalFramer", "SignalStacker") else {}
        raw, ins = gs.GENERATORS[op](rng, 1 + i % 4, **kw)
        steps = _steps(rng, ins)
        out.append(("%s #%d" % (op, i), raw, steps, run_tflm(raw, steps)))
    return out


@pytest.mark.parametrize("op", sorted(gs.GENERATORS))
def test_generated_sequences_match_tflm(op, tmp_path):
    """CASES seeded models of op (sizes 1-4): 5 invokes, reset, 2 more,
    every output as TFLM writes it."""
    cases = _cases(op)
    got = run_ours([(raw, steps) for _, raw, steps, _ in cases], tmp_path)
    for (name, raw, steps, want), res in zip(cases, got):
        wr = _written(op, raw, steps) if op in (
            "SignalFramer", "SignalStacker") else None
        _compare(name, want, res, wr)


@pytest.mark.parametrize("op", ["SignalDelay", "SignalFramer",
                                "SignalStacker", "SignalOverlapAdd",
                                "CIRCULAR_BUFFER"])
def test_tflm_keeps_state_and_resets(op):
    """The TFLM side: the state matters (in most models the second input
    after the first gives other outputs than on a fresh interpreter) and
    reset() gives the first outputs again."""
    changed = 0
    for name, raw, steps, want in _cases(op, 8):
        k = steps.index(RESET)
        if op not in ("SignalFramer", "SignalStacker"):
            assert want[k + 1] == want[0], name
        assert want[k + 1][-1] == want[0][-1], name  # the valid flag too
        changed += want[1] != run_tflm(raw, [steps[1]])[0]
    assert changed >= 3, op  # some models: delay 0, all-zero inputs


def test_irfft_every_length(tmp_path):
    """SignalIrfft int16 at every fft_length up to 1,024 TFLM takes, one
    or two rows, bit-exact; and TFLM's result is numpy's irfft scaled by
    the 1 / 2**stages of kiss_fft's fixed point (the twiddles work)."""
    rng = random.Random("irfft-lengths")
    cases = []
    for j, n in enumerate(gs.RFFT_LENGTHS):
        rows = 1 + j % 2
        raw = gs.irfft_model(n, [rows] if rows > 1 else [])
        x = int16_values(rng, rows * (n + 2), "amp" if j % 3 else "full")
        cases.append(("n=%d" % n, raw, [[x]], run_tflm(raw, [[x]])))
    got = run_ours([(raw, steps) for _, raw, steps, _ in cases], tmp_path)
    for (name, _, _, want), res in zip(cases, got):
        _compare(name, want, res)
    g = np.random.default_rng(3)
    for n in (8, 12, 64, 120, 256, 480):
        spec = g.integers(-4000, 4000, n + 2).astype(np.int16)
        y = Reference(gs.irfft_model(n)).run([spec])[0].astype(np.float64)
        ref = np.fft.irfft(spec[0::2] + 1j * spec[1::2], n)
        assert np.abs(y - ref).max() < 4, (n, np.abs(y - ref).max())


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_irfft_wide_types_every_length(dtype, tmp_path):
    """SignalIrfft int32 (KISS FFT FIXED_POINT 32) and float32 (KISS FFT
    float, then / fft_length): every fft_length up to 1,024 that TFLM
    takes, full-range, extreme, mixed-scale or huge values (int32
    wrap-arounds, float32 subnormals and signed zeros), rows with unread
    bins after N/2 + 1, two invokes each, bit-exact with TFLM; and
    TFLM's result is numpy's irfft."""
    from host_tools.conformance.gen_signal import (float32_values,
                                                   int32_values)
    rng = random.Random("irfft-wide:" + dtype)
    values = int32_values if dtype == "int32" else float32_values
    modes = (("full", "extremes", "amp", "mixed") if dtype == "int32"
             else ("scale", "mixed", "huge", "scale"))
    cases = []
    for j, n in enumerate(gs.RFFT_LENGTHS):
        rows, extra = 1 + (j % 5 == 0), j % 3 == 1
        raw = gs.irfft_model(n, [rows] if rows > 1 else [], dtype, extra)
        count = rows * (n + 2 + 2 * extra)
        steps = [[values(rng, count, modes[j % 4])],
                 [values(rng, count, modes[(j + 1) % 4])]]
        cases.append(("%s n=%d" % (dtype, n), raw, steps,
                      run_tflm(raw, steps)))
    got = run_ours([(raw, steps) for _, raw, steps, _ in cases], tmp_path)
    for (name, _, _, want), res in zip(cases, got):
        _compare(name, want, res)
    g = np.random.default_rng(5)
    for n in (8, 12, 64, 120, 256, 480):
        if dtype == "int32":
            spec = g.integers(-1 << 28, 1 << 28, n + 2).astype(np.int32)
        else:
            spec = g.standard_normal(n + 2).astype(np.float32)
        y = Reference(gs.irfft_model(n, (), dtype)).run([spec])[0]
        ref = np.fft.irfft(spec[0::2] + 1j * spec[1::2], n)
        # int32: kiss_fftri's C_FIXDIV by 2 and each stage's by its
        # radix make the 1 / N; float32: TFLM's / fft_length
        err = np.abs(y - ref).max()
        assert err < (16 if dtype == "int32" else 1e-5), (n, err)


def cb_chain_model(slots, h, w, cycles, out_y=False):
    """x -> CIRCULAR_BUFFER (cycles_max cycles; None: no options) -> y
    (variable) -> ADD(y, y) -> z; outputs ([y], z, x): x is an output
    too, so that no planner lays z over the input's bytes (which an
    aborted invoke has written)."""
    m = opgen.Model()
    x = T([1, 1, h, w], "int8", 0.5, 3)
    y = T([1, slots, h, w], "int8", 0.5, 3, is_variable=True)
    z = T([1, slots, h, w], "int8", 0.25, -5)
    opts = None if cycles is None else _fb({"cycles_max": cycles})
    m.add_op("CUSTOM:CIRCULAR_BUFFER", [x], [y], custom_options=opts)
    m.add_op("ADD", [y, y], [z])
    m.outputs = ([m.add_tensor(y)] if out_y else []) + [m.add_tensor(z),
                                                         m.add_tensor(x)]
    return m.build()


def test_circular_buffer_abort(tmp_path):
    """TFLM's CIRCULAR_BUFFER returns kTfLiteAbort until cycles_max
    invokes have passed: the operators after it do not run (their
    outputs keep the last run's values) and TFLM's invoke() returns 15.
    Ours: the same status from invoke() (0 for None), the same outputs on
    every invoke (under heap_lock), reset() restarting the count; outputs
    that no invoke has written yet (TFLM's arena holds leftovers there)
    are not compared. cycles_max 0 / absent: 1 for 5, 13, 25 slots, else
    2 (TFLM's Prepare)."""
    rng = np.random.default_rng(11)
    cases = []
    for cyc, slots, h, w, out_y in ((2, 3, 1, 2, False), (3, 2, 2, 1, True),
                                    (1, 3, 1, 2, False), (None, 4, 1, 3,
                                                          True),
                                    (0, 5, 2, 2, False), (0, 13, 1, 1, True),
                                    (4, 1, 3, 2, True)):
        raw = cb_chain_model(slots, h, w, cyc, out_y)
        steps = [[rng.integers(-128, 128, h * w).astype(np.int8)]
                 for _ in range(7)]
        steps = steps + [RESET] + steps[:4]
        cases.append(("cb cycles %s slots %d" % (cyc, slots), raw, steps,
                      run_tflm_status(raw, steps)))
    expect = {2: [15, 0, 15, 0, 15, 0, 15], 3: [15, 15, 0, 15, 15, 0, 15],
              1: [0] * 7, 4: [15, 15, 15, 0, 15, 15, 15]}
    got = run_ours([(raw, steps) for _, raw, steps, _ in cases], tmp_path,
                   status=True)
    aborted = 0
    for (name, raw, steps, want), (st, res) in zip(cases, got):
        assert st == "OK", (name, res)
        k = steps.index(RESET)
        codes = [None if v is None else v[1] for v in want]
        cyc = int(name.split()[2]) if name.split()[2] != "None" else 0
        slots = int(name.split()[-1])
        cyc = cyc if cyc > 0 else 1 if slots in (5, 13, 25) else 2
        assert codes[:k] == expect[cyc], (name, codes)  # TFLM's side
        assert codes[k + 1:] == expect[cyc][:4], (name, codes)
        assert [None if v is None else v[1] for v in res] == codes, name
        aborted += codes.count(15)
        ran = False
        n_out = len(want[0][0])
        for j, (w, g) in enumerate(zip(want, res)):
            if w is None:
                continue
            ran = ran or w[1] == 0
            for i in range(n_out):
                if i == n_out - 2 and not ran:
                    continue  # z: never written yet
                assert w[0][i] == g[0][i], (name, j, i, w[0][i].hex(),
                                            g[0][i].hex())
    assert aborted >= 15


def _fb(d):
    return options(d)


def test_hand_cases(tmp_path):
    """Values computed by hand: a delay of 3 over frames of 2, a prefilled
    framer, a stacker's first frame repeated, int16 overlap-add
    saturating, the circular buffer's slots."""
    x1 = np.array([1, 2], np.int16)
    x2 = np.array([3, 4], np.int16)
    x3 = np.array([5, 6], np.int16)
    delay = opgen.single_op("CUSTOM:SignalDelay", [T([2], "int16")],
                            [T([2], "int16")],
                            custom_options=_fb({"delay_length": 3}))
    framer = gs.framer_model([], 3, 2, 1, True)
    stacker = gs.stacker_model(2, 1, 1, 1)
    ola = gs.overlap_add_model([], 2, 3, 2, "int16")
    cb = gs.circular_buffer_model(1, 3, 1, 2, 1, zp=-1)
    seq = [[x1], [x2], [x3]]
    got = run_ours([(delay, seq), (framer, seq), (stacker, seq),
                    (ola, [[np.array([30000, 1, 2, 32766, 3, 4],
                                     np.int16)]]),
                    (cb, [[np.array([[[[7, 8]]]], np.int8)],
                          [np.array([[[[9, 10]]]], np.int8)]])], tmp_path)
    h = [[np.frombuffer(o[0], np.int16).tolist() if k < 4 else
          np.frombuffer(o[0], np.int8).tolist() for o in r[1]]
         for k, r in enumerate(got)]
    assert h[0] == [[0, 0], [0, 1], [2, 3]]                 # delay 3
    assert h[1] == [[0, 1, 2], [2, 3, 4], [4, 5, 6]]        # prefill 1
    assert [o[1] for o in got[1][1]] == [b"\x01"] * 3
    assert h[2][1:] == [[1, 2, 1, 2, 3, 4], [1, 2, 3, 4, 5, 6]]
    assert [o[1] for o in got[2][1]] == [b"\x00", b"\x01", b"\x01"]
    # frame 1 [30000, 1, 2] -> out [30000, 1], buf [2, 0, 0];
    # frame 2 [32766, 3, 4] + buf -> [32768 -> 32767, 3, 4]
    assert h[3] == [[30000, 1, 32767, 3]]
    assert h[4] == [[-1, -1, -1, -1, 7, 8], [-1, -1, 7, 8, 9, 10]]
    for k, (raw, steps) in enumerate(((delay, seq), (framer, seq))):
        assert [np.frombuffer(o[0], np.int16).tolist()
                for o in run_tflm(raw, steps)] == h[k]


def _rej(name, op, ins, outs, opts, words, tflm_refuses=False):
    return (name, opgen.single_op(op, ins, outs,
                                  custom_options=None if opts is None
                                  else _fb(opts)), words, tflm_refuses)


def test_rejections(tmp_path):
    """Models TFLM's Prepare refuses (wrong types, ranks: checked in
    TFLM too) and models TFLM would run out of bounds on or that this
    runtime does not support: PrepareError naming the problem."""
    i16, b = "int16", "bool"
    cases = [
        _rej("delay int8", "CUSTOM:SignalDelay", [T([4], "int8", 1.0)],
             [T([4], "int8", 1.0)], {"delay_length": 1}, ["expected int16"],
             True),
        _rej("delay negative", "CUSTOM:SignalDelay", [T([4], i16)],
             [T([4], i16)], {"delay_length": -2}, ["negative"]),
        _rej("framer rank", "CUSTOM:SignalFramer", [T([4], i16)],
             [T([8], i16), T([], b)],
             {"frame_size": 2, "frame_step": 2, "prefill": False},
             ["dimension"], True),
        _rej("framer not multiple", "CUSTOM:SignalFramer", [T([5], i16)],
             [T([2, 4], i16), T([], b)],
             {"frame_size": 4, "frame_step": 2, "prefill": False},
             ["multiple of frame_step"], True),
        _rej("framer prefill short", "CUSTOM:SignalFramer", [T([4], i16)],
             [T([1, 2], i16), T([], b)],
             {"frame_size": 2, "frame_step": 4, "prefill": True},
             ["prefill"]),
        _rej("framer output size", "CUSTOM:SignalFramer", [T([4], i16)],
             [T([2, 3], i16), T([], b)],
             {"frame_size": 4, "frame_step": 2, "prefill": False},
             ["writes 8"]),
        _rej("stacker step", "CUSTOM:SignalStacker", [T([2], i16)],
             [T([6], i16), T([], b)],
             {"num_channels": 2, "stacker_left_context": 1,
              "stacker_right_context": 1, "stacker_step": 4},
             ["overflow"]),
        _rej("stacker short input", "CUSTOM:SignalStacker", [T([1], i16)],
             [T([6], i16), T([], b)],
             {"num_channels": 2, "stacker_left_context": 1,
              "stacker_right_context": 1, "stacker_step": 1},
             ["reads num_channels"]),
        _rej("stacker valid type", "CUSTOM:SignalStacker", [T([2], i16)],
             [T([6], i16), T([], "int8", 1.0)],
             {"num_channels": 2, "stacker_left_context": 1,
              "stacker_right_context": 1, "stacker_step": 1},
             ["expected bool"], True),
        _rej("ola step", "CUSTOM:SignalOverlapAdd", [T([2, 3], i16)],
             [T([8], i16)], {"T": 7, "frame_step": 4}, ["frame_step 4"]),
        _rej("ola T int32", "CUSTOM:SignalOverlapAdd",
             [T([2, 3], "int32")], [T([4], "int32")],
             {"T": 2, "frame_step": 2}, ["T = 2"]),
        _rej("irfft short rows", "CUSTOM:SignalIrfft", [T([16], i16)],
             [T([16], i16)], {"T": 7, "fft_length": 16}, ["bins"]),
        _rej("irfft radix 7", "CUSTOM:SignalIrfft", [T([16], i16)],
             [T([14], i16)], {"T": 7, "fft_length": 14}, ["radix-7"]),
        _rej("irfft T int32, int16 tensors", "CUSTOM:SignalIrfft",
             [T([18], i16)], [T([16], i16)], {"T": 2, "fft_length": 16},
             ["expected int32"], True),
        _rej("irfft T float32, int32 output", "CUSTOM:SignalIrfft",
             [T([18], "float32")], [T([16], "int32")],
             {"T": 0, "fft_length": 16}, ["expected float32"], True),
        _rej("irfft T int8", "CUSTOM:SignalIrfft", [T([18], "int8", 1.0)],
             [T([16], "int8", 1.0)], {"T": 9, "fft_length": 16}, ["T = 9"]),
        _rej("irfft float32 radix 7", "CUSTOM:SignalIrfft",
             [T([16], "float32")], [T([14], "float32")],
             {"T": 0, "fft_length": 14}, ["radix-7"]),
        _rej("cb int16", "CUSTOM:CIRCULAR_BUFFER", [T([1, 1, 1, 2], i16)],
             [T([1, 3, 1, 2], i16, is_variable=True)], {"cycles_max": 1},
             ["int8"], True),
        _rej("cb slots input", "CUSTOM:CIRCULAR_BUFFER",
             [T([1, 2, 1, 2], "int8", 1.0)],
             [T([1, 3, 1, 2], "int8", 1.0, is_variable=True)],
             {"cycles_max": 1}, ["[B, 1, H, W]"], True),
        _rej("cb not variable", "CUSTOM:CIRCULAR_BUFFER",
             [T([1, 1, 1, 2], "int8", 1.0)], [T([1, 3, 1, 2], "int8", 1.0)],
             {"cycles_max": 1}, ["variable"]),
    ]
    for name, raw, words, tflm_refuses in cases:
        if tflm_refuses:  # the others would crash TFLM, not run here
            with pytest.raises(RuntimeError):
                Reference(raw)
    check_rejections([(n, r, w) for n, r, w, _ in cases], None, tmp_path)
