"""Conformance generators: TFLM's streaming Signal operators (SignalDelay,
SignalFramer, SignalStacker, SignalOverlapAdd), its inverse real FFT
(SignalIrfft) and TFLM's CIRCULAR_BUFFER custom operator (see the
package docstring for the interface).

Options are FlexBuffers maps with the keys TFLM's kernels read by
position in sorted key order:

    SignalDelay        delay_length (int)
    SignalFramer       frame_size, frame_step (int), prefill (bool)
    SignalStacker      num_channels, stacker_left_context,
                       stacker_right_context, stacker_step (int)
    SignalOverlapAdd   T (int, TensorType: 7 int16, 0 float32),
                       frame_step (int)
    SignalIrfft        T (int: 7 int16, 2 int32, 0 float32),
                       fft_length (int)
    CIRCULAR_BUFFER    cycles_max (int)

The runner invokes each model once, on a fresh interpreter: the models
are made so that this one invoke writes every output (a Framer that
prefills or whose frames are no longer than their step, a Stacker
without right context); tests/test_signal_stream.py runs sequences of
invokes and resets, where the state and the output_valid flags matter.
CIRCULAR_BUFFER's output is a variable tensor (its state), as in the
streaming models TFLM ships it for.

What TFLM does not check, and so the generators never make: negative
or zero lengths and steps, an input whose last dimension is not a
multiple of Framer's frame_step, a Stacker step longer than its window
(TFLM's circular buffer overflows), an OverlapAdd frame_step longer
than the frame, outputs of another size than what the kernels write,
Irfft lengths kiss_fft cannot do (as SignalRfft, gen_signal.py).
"""

import numpy as np

from host_tools import opgen
from host_tools.conformance.gen_signal import (POW2_LENGTHS, RFFT_LENGTHS,
                                               float32_values, int16_values,
                                               int32_values, options)

T = opgen.Tensor


def _outer(rng, rank_max=3):
    rank = rng.choice((1, 1, 2, 3)[:rank_max + 1])
    return [rng.randint(1, 3) for _ in range(rank - 1)]


def gen_delay(rng, size):
    """SignalDelay: int16 [..., F] -> int16 [..., F], delay_length 0 ..
    a few frames."""
    F = rng.randint(1, (4, 16, 64, 256)[size - 1])
    outer = _outer(rng)
    d = rng.choice((0, rng.randint(1, F), rng.randint(1, 3 * F + 2)))
    raw = opgen.single_op(
        "CUSTOM:SignalDelay", [T(outer + [F], "int16")],
        [T(outer + [F], "int16")],
        custom_options=options({"delay_length": d}))
    return raw, [int16_values(rng, int(np.prod(outer + [F])))]


def framer_model(outer, frame_size, frame_step, n_frames, prefill):
    return opgen.single_op(
        "CUSTOM:SignalFramer", [T(outer + [n_frames * frame_step], "int16")],
        [T(outer + [n_frames, frame_size], "int16"), T([], "bool")],
        custom_options=options({"frame_size": frame_size,
                                "frame_step": frame_step,
                                "prefill": prefill}))


def gen_framer(rng, size, first_valid=True):
    """SignalFramer: int16 [..., k * step] -> int16 [..., k, frame_size]
    and bool [] output_valid. first_valid: every frame of the first
    invoke is complete (prefill, or frame_size <= frame_step)."""
    cap = (4, 16, 64, 400)[size - 1]
    step = rng.randint(1, cap)
    fs = rng.randint(1, 3 * cap)
    prefill = rng.random() < 0.6
    if prefill:  # TFLM prefills frame_size - frame_step zeros
        fs = max(fs, step)
    elif first_valid:
        fs = rng.randint(1, step)
    k = rng.randint(1, 3)
    outer = _outer(rng, 2)
    raw = framer_model(outer, fs, step, k, prefill)
    return raw, [int16_values(rng, int(np.prod(outer)) * k * step)]


def stacker_model(nc, left, right, step):
    n = nc * (left + right + 1)
    return opgen.single_op(
        "CUSTOM:SignalStacker", [T([nc], "int16")],
        [T([n], "int16"), T([], "bool")],
        custom_options=options({"num_channels": nc,
                                "stacker_left_context": left,
                                "stacker_right_context": right,
                                "stacker_step": step}))


def gen_stacker(rng, size, first_valid=True):
    """SignalStacker: int16 [nc] -> int16 [nc * (left + right + 1)] and
    bool [] output_valid; 1 <= step <= left + right + 1. first_valid:
    right context 0 (the first invoke fills the window)."""
    nc = rng.randint(1, (4, 16, 40, 128)[size - 1])
    left = rng.randint(0, 4)
    right = 0 if first_valid else rng.randint(0, 4)
    step = rng.randint(1, left + right + 1)
    return stacker_model(nc, left, right, step), [int16_values(rng, nc)]


def overlap_add_model(outer, n_frames, fs, step, dtype):
    return opgen.single_op(
        "CUSTOM:SignalOverlapAdd", [T(outer + [n_frames, fs], dtype)],
        [T(outer + [n_frames * step], dtype)],
        custom_options=options({"T": opgen.DTYPES[dtype],
                                "frame_step": step}))


def gen_overlap_add(rng, size):
    """SignalOverlapAdd, int16 (T=7) or float32 (T=0): [..., k, F] ->
    [..., k * step], 1 <= step <= F."""
    dtype = rng.choice(("int16", "int16", "float32"))
    fs = rng.randint(1, (4, 16, 64, 512)[size - 1])
    step = rng.randint(1, fs)
    k = rng.randint(1, 3)
    outer = _outer(rng, 2)
    n = int(np.prod(outer)) * k * fs
    x = int16_values(rng, n) if dtype == "int16" else float32_values(rng, n)
    return overlap_add_model(outer, k, fs, step, dtype), [x]


def irfft_model(n, outer=(), dtype="int16", extra=0):
    """SignalIrfft of fft_length n: input [..., n + 2 + 2 * extra]
    (n / 2 + 1 complex bins, then extra ignored ones), output [..., n]."""
    outer = list(outer)
    return opgen.single_op(
        "CUSTOM:SignalIrfft", [T(outer + [n + 2 + 2 * extra], dtype)],
        [T(outer + [n], dtype)],
        custom_options=options({"T": opgen.DTYPES[dtype],
                                "fft_length": n}))


def gen_irfft(rng, size):
    """SignalIrfft, int16 (T=7; 3 in 5 models), int32 (T=2) or float32
    (T=0): fft_length an even length whose half has only factors 2, 3, 5
    (half the time a power of two), input [..., 2 * (N/2 + 1)]
    (sometimes longer rows), output [..., N]."""
    dtype = rng.choice(("int16", "int16", "int16", "int32", "float32"))
    cap = (16, 64, 256, 1024)[size - 1]
    if rng.random() < 0.5:
        n = rng.choice([x for x in POW2_LENGTHS if x <= cap])
    else:
        n = rng.choice([x for x in RFFT_LENGTHS if x <= cap])
    outer = _outer(rng)
    extra = rng.choice((0, 0, 0, rng.randint(1, 3)))
    count = int(np.prod(outer)) * (n + 2 + 2 * extra)
    values = {"int16": int16_values, "int32": int32_values,
              "float32": float32_values}[dtype]
    return irfft_model(n, outer, dtype, extra), [values(rng, count)]


def circular_buffer_model(batch, slots, d2, d3, cycles_max, zp=0,
                          variable=True):
    opts = None if cycles_max is None else options(
        {"cycles_max": cycles_max})
    return opgen.single_op(
        "CUSTOM:CIRCULAR_BUFFER", [T([batch, 1, d2, d3], "int8", 0.5, zp)],
        [T([batch, slots, d2, d3], "int8", 0.5, zp, is_variable=variable)],
        custom_options=opts)


def gen_circular_buffer(rng, size):
    """CIRCULAR_BUFFER: int8 [b, 1, h, w] -> int8 [b, slots, h, w], a
    variable tensor (zero point fill, then shifted one slot per invoke);
    cycles_max 1-3."""
    cap = (2, 4, 8, 16)[size - 1]
    slots = rng.randint(1, 2 * cap)
    d2, d3 = rng.randint(1, cap), rng.randint(1, cap)
    b = rng.choice((1, 1, 1, 2))
    zp = rng.randint(-128, 127)
    raw = circular_buffer_model(b, slots, d2, d3, rng.randint(1, 3), zp)
    g = np.random.default_rng(rng.getrandbits(64))
    return raw, [g.integers(-128, 128, b * d2 * d3).astype(np.int8)]


GENERATORS = {
    "SignalDelay": gen_delay,
    "SignalFramer": gen_framer,
    "SignalStacker": gen_stacker,
    "SignalOverlapAdd": gen_overlap_add,
    "SignalIrfft": gen_irfft,
    "CIRCULAR_BUFFER": gen_circular_buffer,
}

# every generated model must run here (a rejection is a failure)
STRICT = tuple(GENERATORS)
