"""Conformance generators: TFLM's DECODE (custom operator TFLM_DECODE,
compressed constant tensors; see the package docstring for the
interface and micropython/tflm/kernels/decode.py for the formats).

One DECODE of one to three (encoded, ancillary) pairs, each decoded by
LUT (half of them), Prune or Huffman, into outputs of every type each
decoder takes: LUT and Prune bool, float32, int8, int16, int32, int64,
per-tensor or per-channel (along the first or the last dimension,
quantized types), Huffman int8 (16- or 32-bit tables) and int16 (32-bit
tables). The models have no input: the outputs are the decoded tensors.

The encoders here are this module's own (lut_pair, prune_pair,
huffman_pair, also used by tests/test_decode.py): LUT indices of every
width 1-7, tables padded to a stride that may exceed what the indices
use; Prune masks of any density; Huffman codes of random symbol
frequencies, laid out as TFLM's multi-level tables (a first lookup of 1
to 6 bits, sub-tables of 1 to 4 bits), the stream padded with random
bits up to a whole 32-bit word past the longest lookup (TFLM reads
32-bit words; what the last code leaves unread never changes the
result).

What TFLM would read out of bounds on, and so the generators never make:
indices past a table, masks that keep more values than the table has,
Huffman codes that lead past their tables or a stream that ends before
its codes do (tests/test_decode.py checks that tflm refuses those).
"""

import heapq

import numpy as np

from host_tools import opgen

T = opgen.Tensor

TYPES = ("bool", "float32", "int8", "int16", "int32", "int64")
QUANTIZED = ("int8", "int16", "int32", "int64")


def header(kind, params=b"", version=1, sub_version=1):
    """The 16-byte Decode Common Metadata: type, version, 2 reserved
    bytes, the decoder's version, then its parameters (up to 11 bytes)."""
    h = bytearray(16)
    h[0], h[1], h[4] = kind, version, sub_version
    h[5:5 + len(params)] = params
    return bytes(h)


def pack_bits(values, width):
    """values (ints < 2**width) as a most-significant-bit-first stream,
    zero-padded to whole bytes."""
    out = bytearray((len(values) * width + 7) // 8)
    pos = 0
    for v in values:
        for b in range(width - 1, -1, -1):
            if (v >> b) & 1:
                out[pos >> 3] |= 0x80 >> (pos & 7)
            pos += 1
    return bytes(out)


def _values(g, dtype, n):
    """n random values of dtype (numpy Generator g): every bit pattern
    but NaNs for float32, 0 / 1 for bool."""
    if dtype == "bool":
        return g.integers(0, 2, n).astype(np.bool_)
    if dtype == "float32":
        v = g.standard_normal(n).astype(np.float32) * np.float32(
            10.0 ** g.integers(-3, 4))
        special = g.random(n) < 0.1
        v[special] = g.choice(np.array([0.0, -0.0, np.inf, -np.inf, 1e-40],
                                       np.float32), int(special.sum()))
        return v
    info = np.iinfo(dtype)
    return g.integers(info.min, info.max, n, endpoint=True, dtype=dtype)


def _quant(rng, dtype, shape):
    """(scale, zero_point, quantized_dimension, channels, along last)
    for an output: none, per-tensor, or per-channel along the first or
    the last dimension."""
    r = rng.random()
    if dtype not in QUANTIZED or r < 0.25:
        return None, 0, 0, 1, False
    lim = {"int8": 127, "int16": 32767}.get(dtype, 1000)
    if r < 0.5 or not shape:
        return 0.5, rng.randint(-lim, lim) if dtype == "int8" else 0, 0, \
            1, False
    last = len(shape) > 1 and rng.random() < 0.5
    if len(shape) == 1:
        last = rng.random() < 0.5  # dimension 0 is the last one too
    qd = len(shape) - 1 if last else 0
    c = shape[qd]
    zps = [rng.randint(-128, 127) if dtype == "int8" and rng.random() < 0.7
           else 0 for _ in range(c)]
    if c == 1:
        return [0.5], zps, qd if qd == 0 else 0, 1, False
    return [0.25 + 0.01 * k for k in range(c)], zps, qd, c, last


def _channel_of(n, c, last):
    """The channel of each of n elements."""
    k = np.arange(n)
    return k % c if last else k // (n // c)


def lut_pair(rng, g, shape, dtype, bits=None, quant=None, extra=0):
    """(encoded, ancillary, output) Tensors of a LUT-compressed tensor."""
    q = quant or _quant(rng, dtype, shape)
    scale, zps, qd, c, last = q
    n = int(np.prod(shape, dtype=np.int64))
    if bits is None:
        bits = rng.randint(1, 7)
    lens = [rng.randint(1, 1 << bits) for _ in range(c)]
    stride = rng.choice((max(lens), min(1 << bits, max(lens) + 3)))
    stride = max(stride, max(lens))
    ch = _channel_of(n, c, last) if n else np.zeros(0, np.int64)
    idx = [int(g.integers(0, lens[k])) for k in ch]
    table = _values(g, dtype, c * stride)
    anc = header(0, bytes((bits | (rng.randint(0, 31) << 3), stride))) + \
        table.tobytes() + bytes(extra)
    enc = pack_bits(idx, bits) + bytes(rng.choice((0, 0, 3)))
    return _pair(enc, anc, shape, dtype, scale, zps, qd)


def prune_pair(rng, g, shape, dtype, quant=None, density=None):
    """(encoded, ancillary, output) Tensors of a pruned tensor."""
    q = quant or _quant(rng, dtype, shape)
    scale, zps, qd, c, last = q
    if dtype != "int8" and scale is not None:
        zps = 0 if np.isscalar(zps) else [0] * len(zps)
    n = int(np.prod(shape, dtype=np.int64))
    d = rng.choice((0.0, 0.3, 0.7, 1.0)) if density is None else density
    mask = [int(v) for v in g.random(n) < d]
    kept = _values(g, dtype, sum(mask))
    enc = pack_bits(mask, 1) + bytes(rng.choice((0, 0, 2)))
    anc = header(2) + kept.tobytes() + bytes(rng.choice((0, 0, 5)))
    return _pair(enc, anc, shape, dtype, scale, zps, qd)


def _pair(enc, anc, shape, dtype, scale, zps, qd):
    return (T([len(enc)], "uint8", data=enc),
            T([len(anc)], "uint8", data=anc),
            T(shape, dtype, scale=scale, zero_point=zps,
              quantized_dimension=qd))


def huffman_code(weights):
    """Code lengths of a Huffman code for the weights (> 0), and the
    canonical codes: [(symbol index, length, code)]."""
    if len(weights) == 1:
        return [(0, 1, 0)]
    heap = [(w, k, (k,)) for k, w in enumerate(weights)]
    heapq.heapify(heap)
    depth = [0] * len(weights)
    tie = len(weights)
    while len(heap) > 1:
        w1, _, s1 = heapq.heappop(heap)
        w2, _, s2 = heapq.heappop(heap)
        for s in s1 + s2:
            depth[s] += 1
        heapq.heappush(heap, (w1 + w2, tie, s1 + s2))
        tie += 1
    order = sorted(range(len(weights)), key=lambda k: (depth[k], k))
    code, prev, out = 0, depth[order[0]], []
    for k in order:
        code <<= depth[k] - prev
        prev = depth[k]
        out.append((k, depth[k], code))
        code += 1
    return out


def huffman_tables(codes, symbols, first, wide, rng):
    """TFLM's Huffman tables (list of entry ints) for codes
    [(symbol index, length, code)]: a first table of 2**first entries,
    sub-tables of 1 to 4 bits where a code is longer than its lookup.
    symbols[k] is the value stored for symbol k (the entry's low bits);
    wide: 32-bit entries."""
    found = 0x80000000 if wide else 0x8000
    cshift = 27 if wide else 11
    vmask = (1 << cshift) - 1
    entries = []

    def build(prefix, plen, bits):
        start = len(entries)
        entries.extend([None] * (1 << bits))
        pending = []
        for i in range(1 << bits):
            p = (prefix << bits) | i
            sym = None
            longer = []
            for k, n, c in codes:
                if n <= plen + bits:
                    if c == p >> (plen + bits - n):
                        sym = (k, n)
                elif c >> (n - plen - bits) == p:
                    longer.append(n)
            if sym is not None:
                k, n = sym
                entries[start + i] = found | ((n - plen) << cshift) | \
                    (symbols[k] & vmask)
            elif longer:
                sub = min(max(longer) - plen - bits, rng.randint(1, 4))
                pending.append((i, p, sub))
            else:  # no code starts so (an incomplete code): unused
                entries[start + i] = found
        for i, p, sub in pending:
            at = build(p, plen + bits, sub)
            entries[start + i] = ((sub - 1) << cshift) | \
                (at - (start + i))
        return start

    build(0, 0, first)
    return entries


def huffman_pair(rng, g, shape, dtype, wide=None, first=None):
    """(encoded, ancillary, output) Tensors of a Huffman-coded int8 or
    int16 tensor."""
    n = int(np.prod(shape, dtype=np.int64))
    if wide is None:
        wide = dtype == "int16" or rng.random() < 0.5
    nsym = rng.randint(1, 40)
    weights = [int(w) for w in g.integers(1, 1000, nsym)]
    if rng.random() < 0.3:
        weights = [int(w) for w in 2 ** g.integers(0, 14, nsym)]
    codes = huffman_code(weights)
    maxlen = max(c[1] for c in codes)
    if first is None:
        first = rng.randint(1, min(6, maxlen))
    # the value field's bits above the output's are kept in the table
    bits = 16 if dtype == "int16" else 8
    hi = (1 << (27 if wide else 11)) - 1
    symbols = [int(v) | (rng.randint(0, hi >> bits) << bits)
               for v in g.integers(0, 1 << bits, nsym)]
    entries = huffman_tables(codes, symbols, first, wide, rng)
    if not wide and len(entries) > 2047:
        wide = True  # (the 11-bit offsets of 16-bit tables)
        entries = huffman_tables(codes, symbols, first, True, rng)
    by = {k: (ln, c) for k, ln, c in codes}
    p = np.array(weights, np.float64)
    seq = g.choice(nsym, n, p=p / p.sum()) if n else []
    bits_out = []
    for k in seq:
        ln, c = by[int(k)]
        bits_out.extend((c >> (ln - 1 - b)) & 1 for b in range(ln))
    # padding: at least the longest lookup past the last code, to a
    # whole 32-bit word, random bits
    total = len(bits_out) + 16
    total += -total % 32
    if rng.random() < 0.3:  # the last word's bytes cut (not the codes)
        total -= 8 * rng.randint(0, min(3, (total - len(bits_out)) // 8))
    bits_out.extend(int(b) for b in g.integers(0, 2,
                                                total - len(bits_out)))
    enc = pack_bits(bits_out, 1)[:total // 8]
    es = 4 if wide else 2
    tab = b"".join(int(e).to_bytes(es, "little") for e in entries)
    anc = header(1, bytes(((first - 1) << 4 | int(wide),))) + tab
    out = T(shape, dtype, scale=0.5 if rng.random() < 0.5 else None)
    return (T([len(enc)], "uint8", data=enc),
            T([len(anc)], "uint8", data=anc), out)


def _shape(rng, size):
    """Rank 0-4, at most 16, 128, 1024, 2048 elements by size."""
    cap, most = (3, 6, 12, 40)[size - 1], (16, 128, 1024, 2048)[size - 1]
    rank = rng.randint(0 if rng.random() < 0.05 else 1, 4)
    out = []
    for _ in range(rank):
        d = rng.randint(1, cap) if rng.random() < 0.8 else 1
        d = max(1, min(d, most // max(1, int(np.prod(out, dtype=np.int64)))))
        out.append(d)
    return out


def decode_model(pairs):
    """A model of one TFLM_DECODE over pairs [(encoded, ancillary,
    output)], its outputs the model's."""
    ins = [t for p in pairs for t in p[:2]]
    return opgen.single_op("CUSTOM:TFLM_DECODE", ins, [p[2] for p in pairs])


def gen_decode(rng, size):
    """TFLM_DECODE: 1-3 pairs, LUT, Prune or Huffman, any output type."""
    g = np.random.default_rng(rng.getrandbits(32))
    pairs = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        r = rng.random()
        shape = _shape(rng, size)
        if r < 0.5:
            pairs.append(lut_pair(rng, g, shape, rng.choice(TYPES)))
        elif r < 0.75:
            pairs.append(prune_pair(rng, g, shape, rng.choice(TYPES)))
        else:
            pairs.append(huffman_pair(rng, g, shape,
                                      rng.choice(("int8", "int16"))))
    return decode_model(pairs)


GENERATORS = {"TFLM_DECODE": gen_decode}

# every generated model must run here (a rejection is a failure)
STRICT = tuple(GENERATORS)
