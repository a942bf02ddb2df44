"""Conformance generators: TFLM's Signal library custom operators
(signal/micro/kernels in tflite-micro), as the audio front end
(audio_preprocessor_int8.tflite) uses them: SignalWindow,
SignalFftAutoScale, SignalRfft, SignalEnergy, SignalFilterBank,
SignalFilterBankSquareRoot, SignalFilterBankSpectralSubtraction,
SignalPCAN, SignalFilterBankLog (see the package docstring for the
interface).

Every model is one CUSTOM operator whose options are a FlexBuffers map
(flatbuffers.flexbuffers.Dumps) with the names and types of the real
model's options; TFLM reads the values by position in sorted key order
(the kernels' k*Index constants), so the key sets are exactly TFLM's:

    SignalWindow                   shift (int)
    SignalFftAutoScale             {} (none read)
    SignalRfft                     T (int, TensorType: 7 int16, 2
                                   int32, 0 float32), fft_length (int)
    SignalEnergy                   end_index, start_index (int)
    SignalFilterBank               num_channels (int)
    SignalFilterBankSquareRoot     {} (none read)
    SignalFilterBankSpectralSubtraction
                                   alternate_one_minus_smoothing,
                                   alternate_smoothing (int), clamping
                                   (bool), min_signal_remaining,
                                   num_channels, one_minus_smoothing,
                                   smoothing, smoothing_bits,
                                   spectral_subtraction_bits (int)
    SignalPCAN                     snr_shift (int)
    SignalFilterBankLog            input_correction_bits, output_scale
                                   (int)

Weights, filter bank tables and the PCAN gain LUT are constant tensors,
as in the real model (mel-style tables made the way TFLM's
filter_bank_ops.py makes them, or random consistent ones; LUTs made the
way wide_dynamic_func_lut_wrapper.cc makes them, or random int16).
Inputs cover the extremes: int16 -32768 / 32767, all zeros, uint32 near
2**32, uint64 with high bits set.

What TFLM does not check, and so the generators never make:
* SignalWindow: an input whose size is not a multiple of the weights'
  (TFLM reads and writes past the end);
* SignalRfft: fft_length is even with fft_length / 2 a product of 2, 3
  and 5 (kiss_fft's radix-2/3/4/5 butterflies; its generic radix
  allocates and does not work in TFLM),
  input length <= fft_length, output last dim exactly
  2 * (fft_length / 2 + 1) (TFLM writes that many values per row);
* SignalEnergy: TFLM writes only output[start_index:end_index] (the
  rest keeps whatever the arena held), so these models have
  start_index 0 and end_index = output size; gen_energy(full=False)
  makes partial ranges for tests that compare the written part only;
* SignalFilterBank: channels reading outside the input or the weights;
  an output larger than num_channels;
* shift counts TFLM's C would make undefined (>= the type's width).

Stateful: SignalFilterBankSpectralSubtraction keeps its noise estimate
across invokes (zeroed at prepare and by Reset); the runner makes one
invoke per model, tests/test_signal_ops.py runs sequences.
SignalPCAN takes its noise estimate as an input and keeps nothing.
"""

import math

import numpy as np
from flatbuffers import flexbuffers

from host_tools import opgen

T = opgen.Tensor


def options(d):
    """FlexBuffers map bytes of an options dict (keys sorted, as TFLM's
    positional reads expect)."""
    return bytes(flexbuffers.Dumps(d))


def _np(rng):
    return np.random.default_rng(rng.getrandbits(64))


def _pick(rng, table):
    """A key of {key: weight}."""
    r = rng.random() * sum(table.values())
    for k, w in table.items():
        r -= w
        if r < 0:
            return k
    return k


# --- random inputs ----------------------------------------------------------

def int16_values(rng, n, mode=None):
    """n int16 values: full range, a random amplitude, zeros, only the
    extremes, or full range with extremes sprinkled in."""
    g = _np(rng)
    mode = mode or _pick(rng, {"full": 3, "amp": 4, "zeros": 1,
                               "extremes": 1, "mixed": 2})
    if mode == "zeros":
        return np.zeros(n, np.int16)
    if mode == "extremes":
        return g.choice(np.array([-32768, 32767, -32767, 0, 1, -1],
                                 np.int16), n)
    if mode == "amp":
        amp = 1 << rng.randint(0, 15)
        return g.integers(-amp, amp, n, endpoint=True).clip(
            -32768, 32767).astype(np.int16)
    x = g.integers(-32768, 32767, n, endpoint=True).astype(np.int16)
    if mode == "mixed" and n:
        k = g.integers(0, n, max(1, n // 8))
        x[k] = g.choice(np.array([-32768, 32767], np.int16), len(k))
    return x


def uint32_values(rng, n, mode=None, small=16):
    """n uint32 values: full range, random bit lengths, small (below
    2**small), near 2**32, zeros, or full range with extremes."""
    g = _np(rng)
    mode = mode or _pick(rng, {"full": 2, "bits": 3, "small": 3,
                               "top": 1, "zeros": 1, "mixed": 2})
    top = (1 << 32) - 1
    if mode == "zeros":
        return np.zeros(n, np.uint32)
    if mode == "small":
        return g.integers(0, 1 << small, n).astype(np.uint32)
    if mode == "top":
        return (top - g.integers(0, 1 << 12, n)).astype(np.uint32)
    if mode == "bits":
        bits = g.integers(0, 33, n)
        return np.array([int(g.integers(0, 1 << int(b))) if b else 0
                         for b in bits], np.uint64).astype(np.uint32)
    x = g.integers(0, top, n, endpoint=True, dtype=np.uint64).astype(
        np.uint32)
    if mode == "mixed" and n:
        k = g.integers(0, n, max(1, n // 6))
        x[k] = g.choice(np.array([0, 1, top, top - 1, 1 << 31, 65535,
                                  65536], np.uint32), len(k))
    return x


def uint64_values(rng, n, mode=None):
    """n uint64 values: random bit lengths 0..64, around 2**32 (Sqrt64's
    32-bit shortcut), near 2**64, zeros, or a mix."""
    mode = mode or _pick(rng, {"bits": 4, "edge32": 2, "top": 1,
                               "zeros": 1, "mixed": 2})
    top = (1 << 64) - 1
    if mode == "zeros":
        return np.zeros(n, np.uint64)
    edges = [0, 1, 2, 3, 4, (1 << 32) - 1, 1 << 32, (1 << 32) + 1,
             (1 << 32) - (1 << 16), ((1 << 16) - 1) ** 2, (1 << 32) * 3,
             top, top - 1, 1 << 63, (1 << 63) - 1, ((1 << 32) - 1) ** 2,
             ((1 << 32) - 1) ** 2 - 1, ((1 << 32) - 1) ** 2 + 1]
    if mode == "edge32":
        return np.array([rng.choice(edges[4:11]) + rng.randint(-3, 3)
                         for _ in range(n)], np.uint64)
    if mode == "top":
        return np.array([top - rng.randint(0, 1 << 40) for _ in range(n)],
                        np.uint64)
    vals = [rng.getrandbits(rng.randint(0, 64)) for _ in range(n)]
    if mode == "mixed":
        for k in range(n):
            if rng.random() < 0.3:
                vals[k] = rng.choice(edges)
    return np.array(vals, np.uint64)


# --- SignalWindow ------------------------------------------------------------

def hann_weights(n, shift):
    """Hann window weights in Q(shift), as TFLM's window_op.py
    hann_window_weights (the real model's: n 480, shift 12)."""
    k = np.arange(n)
    w = 0.5 - 0.5 * np.cos(np.pi * 2 / n * (k + 0.5))
    return np.round(w * (1 << shift)).clip(-32768, 32767).astype(np.int16)


def gen_window(rng, size):
    """SignalWindow: weights [W] (a Hann window, random non-negative or
    full-range int16), input / output of rank 1-4 whose size is a
    multiple of W (the last dim W, or a flat multiple), shift 0-20
    (12 most often, as the real model)."""
    g = _np(rng)
    W = rng.randint(1, (4, 16, 64, 512)[size - 1])
    shift = rng.choice((12, 12, 8, 0, 1, 15, 16, rng.randint(0, 20)))
    wmode = rng.choice(("hann", "hann", "pos", "full"))
    if wmode == "hann":
        w = hann_weights(W, min(shift, 14))
    elif wmode == "pos":
        w = g.integers(0, 1 << min(shift, 15), W, endpoint=True).clip(
            0, 32767).astype(np.int16)
    else:
        w = int16_values(rng, W, "mixed")
    rank = rng.choice((1, 1, 2, 2, 3, 4))
    outer = [rng.randint(1, 3) for _ in range(rank - 1)]
    shape = outer + [W]
    if rank >= 2 and rng.random() < 0.2:
        # a last dim that is a multiple of W: TFLM windows the flat
        # input in chunks of W
        k = rng.randint(2, 3)
        shape = outer[:-1] + [outer[-1], W * k]
    n = int(np.prod(shape))
    raw = opgen.single_op("CUSTOM:SignalWindow",
                          [T(shape, "int16"), T([W], "int16", data=w)],
                          [T(shape, "int16")],
                          custom_options=options({"shift": shift}))
    return raw, [int16_values(rng, n)]


# --- SignalFftAutoScale ------------------------------------------------------

def gen_fft_auto_scale(rng, size):
    """SignalFftAutoScale: input / output [n] int16, scale bits [] int32;
    inputs of every amplitude (each scale 0-15), zeros, and -32768
    (TFLM's MaxAbs16 turns it negative: see the test file)."""
    n = rng.randint(1, (8, 32, 128, 512)[size - 1])
    raw = opgen.single_op("CUSTOM:SignalFftAutoScale", [T([n], "int16")],
                          [T([n], "int16"), T([], "int32")],
                          custom_options=options({}))
    x = int16_values(rng, n)
    if rng.random() < 0.15 and n > 1:  # -32768 somewhere
        x[rng.randrange(n)] = -32768
    return raw, [x]


# --- SignalRfft --------------------------------------------------------------

def _smooth235(m):
    for p in (2, 3, 5):
        while m % p == 0:
            m //= p
    return m == 1


# fft_length values TFLM's int16 kiss_fftr computes: even, with
# fft_length / 2 a product of 2, 3, 5 (powers of two 8..1024 and others).
RFFT_LENGTHS = tuple(n for n in range(8, 1025, 2) if _smooth235(n // 2))
POW2_LENGTHS = tuple(1 << k for k in range(3, 11))


def gen_rfft(rng, size):
    """SignalRfft, int16 (T=7; 3 in 5 models), int32 (T=2) or float32
    (T=0): fft_length a power of two 8..1024 or another length whose
    half has only factors 2, 3, 5 (12, 40, 48, 120, 480, ...); input
    [..., L] with L <= fft_length (zero padded), rank 1-3; output [...,
    2 * (fft_length / 2 + 1)]."""
    dtype = rng.choice(("int16", "int16", "int16", "int32", "float32"))
    cap = (16, 64, 256, 1024)[size - 1]
    if rng.random() < 0.5:
        n = rng.choice([x for x in POW2_LENGTHS if x <= cap])
    else:
        n = rng.choice([x for x in RFFT_LENGTHS if x <= cap])
    L = n if rng.random() < 0.6 else rng.randint(1, n)
    rank = rng.choice((1, 1, 2, 3))
    outer = [rng.randint(1, 3) for _ in range(rank - 1)]
    raw = opgen.single_op(
        "CUSTOM:SignalRfft", [T(outer + [L], dtype)],
        [T(outer + [2 * (n // 2 + 1)], dtype)],
        custom_options=options({"T": opgen.DTYPES[dtype], "fft_length": n}))
    count = int(np.prod(outer + [L]))
    values = {"int16": int16_values, "int32": int32_values,
              "float32": float32_values}[dtype]
    return raw, [values(rng, count)]


def int32_values(rng, n, mode=None):
    """n int32 values: full range, a random amplitude, zeros, only the
    extremes, or full range with extremes sprinkled in."""
    g = _np(rng)
    mode = mode or _pick(rng, {"full": 3, "amp": 4, "zeros": 1,
                               "extremes": 1, "mixed": 2})
    lo, hi = -(1 << 31), (1 << 31) - 1
    if mode == "zeros":
        return np.zeros(n, np.int32)
    if mode == "extremes":
        return g.choice(np.array([lo, hi, -hi, 0, 1, -1], np.int32), n)
    if mode == "amp":
        amp = 1 << rng.randint(0, 31)
        return g.integers(-amp, amp, n, endpoint=True).clip(lo, hi).astype(
            np.int32)
    x = g.integers(lo, hi, n, endpoint=True).astype(np.int32)
    if mode == "mixed" and n:
        k = g.integers(0, n, max(1, n // 8))
        x[k] = g.choice(np.array([lo, hi], np.int32), len(k))
    return x


def float32_values(rng, n, mode=None):
    """n finite float32 values: a random scale (1e-3 .. 1e4), mixed
    scales with zeros of both signs and subnormals, or huge ones (up to
    1e35: an FFT of 1,024 of them stays finite). Not infinities: once an
    FFT's sums overflow, NaNs of both signs meet in commutative + and *,
    and which one x86 propagates depends on the operand order TFLM's
    compiler chose."""
    g = _np(rng)
    mode = mode or _pick(rng, {"scale": 5, "mixed": 3, "huge": 1,
                               "zeros": 1})
    if mode == "zeros":
        return np.zeros(n, np.float32)
    if mode == "scale":
        return (g.standard_normal(n) * 10.0 ** rng.uniform(-3, 4)).astype(
            np.float32)
    if mode == "huge":
        return (g.uniform(-1e35, 1e35, n)).astype(np.float32)
    x = (g.standard_normal(n) * 10.0 ** g.uniform(-30, 30, n)).astype(
        np.float32)
    if n:
        k = g.integers(0, n, max(1, n // 8))
        x[k] = g.choice(np.array([0.0, -0.0, 1e-45, -3e-39, 1.0, -1.0],
                                 np.float32), len(k))
    return x


# --- SignalEnergy ------------------------------------------------------------

def gen_energy(rng, size, full=True):
    """SignalEnergy: input [2K] int16 (K complex values), output [M]
    uint32, M <= K. full: start_index 0, end_index M (TFLM writes only
    [start_index, end_index)); else a random range inside [0, M]
    (tests compare its part only: energy_range)."""
    K = rng.randint(1, (8, 33, 129, 513)[size - 1])
    M = K if rng.random() < 0.6 else rng.randint(1, K)
    if full:
        start, end = 0, M
    else:
        start = rng.randint(0, M)
        end = rng.randint(start, M)
    raw = opgen.single_op(
        "CUSTOM:SignalEnergy", [T([2 * K], "int16")], [T([M], "uint32")],
        custom_options=options({"end_index": end, "start_index": start}))
    return raw, [int16_values(rng, 2 * K)]


def energy_range(raw):
    """(start_index, end_index) of a SignalEnergy model."""
    m = opgen.parse(raw)
    d = flexbuffers.Loads(bytes(m.subgraphs[0].operators[0].customOptions))
    return d["start_index"], d["end_index"]


# --- SignalFilterBank --------------------------------------------------------

def freq_to_mel(f):
    return 1127.0 * math.log1p(f / 700.0)


def mel_filter_bank(spectrum_size, sample_rate, num_channels, lower, upper,
                    alignment=1, block=1, bits=12):
    """(weights, unweights, channel_frequency_starts,
    channel_weight_starts, channel_widths), each int16, as TFLM's
    filter_bank_ops.py _init_filter_bank_weights makes them (alignment
    in bytes, channel block size). Raises ValueError when the band
    does not fit the spectrum."""
    index_alignment = max(1, alignment // 2)
    nc1 = num_channels + 1
    mel_lo = np.float32(freq_to_mel(lower))
    mel_hi = np.float32(freq_to_mel(upper))
    spacing = (mel_hi - mel_lo) / np.float32(nc1)
    centers = mel_lo + spacing * np.arange(1, nc1 + 1, dtype=np.float32)
    hz_per_sbin = (sample_rate / 2) / (spectrum_size - 1)
    start_index = round(1 + lower / hz_per_sbin)
    f_starts = np.zeros(nc1, np.int64)
    w_starts = np.zeros(nc1, np.int64)
    widths = np.zeros(nc1, np.int64)
    act_starts = np.zeros(nc1, np.int64)
    act_widths = np.zeros(nc1, np.int64)
    freq_start, weight_start, needs_zeros = start_index, 0, False
    for ch in range(nc1):
        fi = freq_start
        while freq_to_mel(fi * hz_per_sbin) <= centers[ch]:
            fi += 1
            if fi > spectrum_size + 1:
                raise ValueError("band past the spectrum")
        width = fi - freq_start
        act_starts[ch], act_widths[ch] = freq_start, width
        if width == 0:
            f_starts[ch] = w_starts[ch] = 0
            widths[ch] = block
            if not needs_zeros:
                needs_zeros = True
                w_starts[:ch] += block
                weight_start += block
        else:
            aligned = (freq_start // index_alignment) * index_alignment
            aligned_w = freq_start - aligned + width
            padded = ((aligned_w - 1) // block + 1) * block
            f_starts[ch], w_starts[ch], widths[ch] = aligned, weight_start, \
                padded
            weight_start += padded
        freq_start = fi
    weights = np.zeros(weight_start, np.int64)
    unweights = np.zeros(weight_start, np.int64)
    end_index = 0
    for ch in range(nc1):
        freq = act_starts[ch]
        off = freq - f_starts[ch]
        den_val = mel_lo if ch == 0 else centers[ch - 1]
        for j in range(act_widths[ch]):
            num = np.float32(centers[ch] - freq_to_mel(freq * hz_per_sbin))
            den = np.float32(centers[ch] - den_val)
            w = float(num / den)
            k = w_starts[ch] + off + j
            weights[k] = int(w * (1 << bits))
            unweights[k] = int((1 - w) * (1 << bits))
            freq += 1
        end_index = max(end_index, freq)
    if end_index >= spectrum_size or \
            (f_starts + widths).max() > spectrum_size:
        raise ValueError("band past the spectrum")
    if not len(weights):
        raise ValueError("no weights")
    return tuple(np.asarray(a).clip(-32768, 32767).astype(np.int16)
                 for a in (weights, unweights, f_starts, w_starts, widths))


def random_filter_bank(rng, spectrum_size, num_channels):
    """Random consistent tables: each of the num_channels + 1 channels
    reads widths[i] values from freq_starts[i] (inside the spectrum) and
    weights from weight_starts[i] (inside the weights)."""
    g = _np(rng)
    nc1 = num_channels + 1
    maxw = max(1, min(spectrum_size, rng.randint(1, 12)))
    widths = [rng.randint(0, maxw) for _ in range(nc1)]
    n_w = max(1, sum(widths) if rng.random() < 0.5 else max(widths) +
              rng.randint(0, 8))
    f_starts = [rng.randint(0, spectrum_size - w) for w in widths]
    w_starts = [rng.randint(0, n_w - w) for w in widths]
    wmode = rng.choice(("q12", "q12", "q12", "full", "neg"))
    if wmode == "q12":
        w = g.integers(0, 4096, n_w, endpoint=True)
        u = 4096 - w
    elif wmode == "neg":  # TFLM's 16-channel test has a negative weight
        w = g.integers(-4096, 4096, n_w, endpoint=True)
        u = g.integers(-4096, 4096, n_w, endpoint=True)
    else:
        w = int16_values(rng, n_w, "mixed")
        u = int16_values(rng, n_w, "mixed")
    return tuple(np.asarray(a).astype(np.int16)
                 for a in (w, u, f_starts, w_starts, widths))


def filter_bank_model(spectrum_size, tables, num_channels=None,
                      out_type="uint64", n_out=None):
    """Bytes of a SignalFilterBank model over constant tables; n_out:
    the output size (default num_channels; TFLM copies that many of its
    num_channels sums)."""
    w, u, fs, ws, wd = tables
    nc = len(fs) - 1 if num_channels is None else num_channels
    ins = [T([spectrum_size], "uint32"), T([len(w)], "int16", data=w),
           T([len(u)], "int16", data=u), T([len(fs)], "int16", data=fs),
           T([len(ws)], "int16", data=ws), T([len(wd)], "int16", data=wd)]
    return opgen.single_op("CUSTOM:SignalFilterBank", ins,
                           [T([n_out or nc], out_type)],
                           custom_options=options({"num_channels": nc}))


def gen_filter_bank(rng, size):
    """SignalFilterBank: a mel filter bank (TFLM's construction, random
    sample rate, band and channel count, byte alignment 1-8, channel
    block 1-4) or random consistent tables (q12 weights with
    unweight = 4096 - weight, or negative / full-range int16 weights,
    which TFLM multiplies as uint64); input [S] uint32 of every range,
    output [num_channels] uint64 (one in 8 shorter: TFLM copies the
    first channels)."""
    S = rng.randint(2, (9, 33, 129, 513)[size - 1])
    nc = rng.randint(1, (4, 12, 24, 48)[size - 1])
    tables = None
    if rng.random() < 0.5 and S >= 9:
        sr = rng.choice((8000, 16000, 22050, 44100))
        for _ in range(20):
            lo = rng.uniform(0, sr / 8)
            hi = rng.uniform(lo + sr / 16, sr / 2 * 0.98)
            try:
                tables = mel_filter_bank(
                    S, sr, nc, lo, hi, rng.choice((1, 2, 4, 8)),
                    rng.choice((1, 1, 2, 4)))
                break
            except ValueError:
                nc = max(1, nc // 2)
    if tables is None:
        tables = random_filter_bank(rng, S, nc)
    nc = len(tables[2]) - 1
    n_out = rng.randint(1, nc) if rng.random() < 0.125 else nc
    return filter_bank_model(S, tables, n_out=n_out), [
        uint32_values(rng, S)]


# --- SignalFilterBankSquareRoot ----------------------------------------------

def gen_filter_bank_square_root(rng, size):
    """SignalFilterBankSquareRoot: input [n] uint64 (every bit length,
    around 2**32 where TFLM's Sqrt64 switches to its 32-bit path, near
    2**64), scale bits [] int32 0-31 (a model input, as the real
    model's comes from SignalFftAutoScale; sometimes a constant)."""
    n = rng.randint(1, (4, 16, 40, 128)[size - 1])
    bits = rng.choice((0, 0, 1, 2, 3, 5, 7, rng.randint(0, 15),
                       rng.randint(0, 31)))
    const = rng.random() < 0.25
    sb = T([], "int32", data=np.array([bits], np.int32) if const else None)
    raw = opgen.single_op("CUSTOM:SignalFilterBankSquareRoot",
                          [T([n], "uint64"), sb], [T([n], "uint32")],
                          custom_options=options({}))
    x = uint64_values(rng, n)
    return raw, ([x] if const else [x, np.array(bits, np.int32)])


# --- SignalFilterBankSpectralSubtraction ----------------------------------

def spectral_subtraction_options(rng, nc):
    """Random options in TFLM's ranges (spectral_subtraction_bits 8-16,
    smoothing + one_minus_smoothing = 2**bits mostly)."""
    bits = rng.choice((14, 14, rng.randint(8, 16)))
    one = 1 << bits

    def pair():
        s = rng.randint(0, one)
        if rng.random() < 0.15:
            return s, rng.randint(0, one)
        return s, one - s
    s, oms = pair()
    if rng.random() < 0.5:
        a, aoms = pair()
    else:
        a, aoms = s, oms
    return {"alternate_one_minus_smoothing": aoms,
            "alternate_smoothing": a,
            "clamping": rng.random() < 0.5,
            "min_signal_remaining": rng.randint(0, one),
            "num_channels": nc,
            "one_minus_smoothing": oms,
            "smoothing": s,
            "smoothing_bits": rng.choice((0, 10, 10, rng.randint(0, 16))),
            "spectral_subtraction_bits": bits}


def spectral_subtraction_model(nc, opts, n_in=None, n_noise=None):
    """n_in: input size (default nc; TFLM reads the first nc), n_noise:
    noise estimate output size (default nc; TFLM copies that many of its
    nc estimates)."""
    raw_opts = opts if isinstance(opts, (bytes, bytearray)) else \
        options(opts)
    return opgen.single_op(
        "CUSTOM:SignalFilterBankSpectralSubtraction",
        [T([n_in or nc], "uint32")],
        [T([nc], "uint32"), T([n_noise or nc], "uint32")],
        custom_options=raw_opts)


def gen_spectral_subtraction(rng, size):
    """SignalFilterBankSpectralSubtraction: input [nc] uint32, outputs
    [nc] uint32 (signal, noise estimate); random options; one invoke
    from the zeroed noise estimate (sequences: the test file). One model
    in 8 has a longer input or a shorter noise estimate output, which
    TFLM allows (it reads num_channels inputs, copies as many estimates
    as the output holds)."""
    nc = rng.randint(1, (4, 16, 40, 64)[size - 1])
    opts = spectral_subtraction_options(rng, nc)
    n_in = n_noise = nc
    if rng.random() < 0.125:
        n_in = nc + rng.randint(0, 3)
        n_noise = rng.randint(1, nc)
    return spectral_subtraction_model(nc, opts, n_in, n_noise), [
        uint32_values(rng, n_in, small=rng.choice((12, 16, 20)))]


# --- SignalPCAN --------------------------------------------------------------

def _s16(v):
    """v wrapped to int16, as C's static_cast<int16_t>."""
    return ((int(v) + 32768) & 0xFFFF) - 32768


def pcan_lut(strength, offset, input_bits, gain_bits):
    """The 125-entry gain LUT of wide_dynamic_func_lut_wrapper.cc (float32
    math, as there)."""
    f32 = np.float32

    def gain(x):
        xf = f32(x) / f32(1 << input_bits)
        g = f32(1 << gain_bits) * np.power(f32(xf + f32(offset)),
                                           f32(-strength), dtype=np.float32)
        if g > 32767:
            return 32767
        return _s16(int(np.floor(f32(g + f32(0.5)))))

    lut = [0] * 129
    lut[0], lut[1] = gain(0), gain(1)
    for interval in range(2, 33):
        x0 = 1 << (interval - 1)
        x1 = x0 + (x0 >> 1)
        x2 = x0 + (x0 - 1) if interval == 32 else 2 * x0
        y0, y1, y2 = gain(x0), gain(x1), gain(x2)
        d1, d2 = y1 - y0, y2 - y0
        a1 = 4 * d1 - d2
        a2 = d2 - a1
        b = 4 * interval - 6
        lut[b], lut[b + 1] = y0, _s16(a1)
        lut[b + 2], lut[b + 3] = _s16(a2), 0
    return np.array(lut[:125], np.int16)


def pcan_model(nc, lut, snr_shift, n_noise=None):
    """n_noise: noise estimate size (default nc; TFLM reads nc)."""
    return opgen.single_op(
        "CUSTOM:SignalPCAN",
        [T([nc], "uint32"), T([n_noise or nc], "uint32"),
         T([len(lut)], "int16", data=lut)], [T([nc], "uint32")],
        custom_options=options({"snr_shift": snr_shift}))


def gen_pcan(rng, size):
    """SignalPCAN: input and noise estimate [nc] uint32 (model inputs;
    one noise estimate in 8 longer, TFLM reads nc),
    gain LUT [125] int16 constant (TFLM's construction with random
    strength / offset / bits, or random int16: no int32 overflow either
    way), snr_shift 0-31 (6 in the real model)."""
    nc = rng.randint(1, (4, 16, 40, 64)[size - 1])
    if rng.random() < 0.8:
        lut = pcan_lut(rng.uniform(0.3, 1.0), rng.uniform(0.5, 100.0),
                       rng.randint(0, 10), rng.randint(12, 22))
    else:
        lut = int16_values(rng, 125, rng.choice(("full", "mixed")))
    if rng.random() < 0.1:  # longer than needed: TFLM reads 125
        lut = np.concatenate([lut, int16_values(rng, 3)])
    snr_shift = rng.choice((6, 6, 6, 0, 12, rng.randint(0, 31)))
    n_noise = nc + (rng.randint(1, 3) if rng.random() < 0.125 else 0)
    x = uint32_values(rng, nc, small=rng.choice((10, 16, 24)))
    noise = uint32_values(rng, n_noise, small=rng.choice((8, 16, 24)))
    return pcan_model(nc, lut, snr_shift, n_noise), [x, noise]


# --- SignalFilterBankLog -----------------------------------------------------

def gen_filter_bank_log(rng, size):
    """SignalFilterBankLog: input [nc] uint32, output [nc] int16;
    input_correction_bits 0-12 (TFLM shifts the input left, wrapping),
    output_scale 1..2**17 (large ones wrap TFLM's uint32 product)."""
    nc = rng.randint(1, (4, 16, 40, 64)[size - 1])
    corr = rng.choice((3, 3, 0, 5, rng.randint(0, 12)))
    scale = rng.choice((64, 64, 1600, 32768, 1, rng.randint(1, 1 << 17)))
    raw = opgen.single_op(
        "CUSTOM:SignalFilterBankLog", [T([nc], "uint32")],
        [T([nc], "int16")],
        custom_options=options({"input_correction_bits": corr,
                                "output_scale": scale}))
    return raw, [uint32_values(rng, nc)]


GENERATORS = {
    "SignalWindow": gen_window,
    "SignalFftAutoScale": gen_fft_auto_scale,
    "SignalRfft": gen_rfft,
    "SignalEnergy": gen_energy,
    "SignalFilterBank": gen_filter_bank,
    "SignalFilterBankSquareRoot": gen_filter_bank_square_root,
    "SignalFilterBankSpectralSubtraction": gen_spectral_subtraction,
    "SignalPCAN": gen_pcan,
    "SignalFilterBankLog": gen_filter_bank_log,
}

# every generated model must run here (a rejection is a failure)
STRICT = tuple(GENERATORS)
