"""DECODE: TFLM's custom operator TFLM_DECODE (compressed constants).

Follows tensorflow/lite/micro/kernels/decode.cc, decode_state.h and
decode_state_lut.cc, decode_state_prune.cc, decode_state_huffman.cc (the
op resolver's AddDecode registers it under the custom name
'TFLM_DECODE'; TFLM's model compressor inserts one before each operator
that reads compressed tensors).

    inputs  (encoded_0, ancillary_0, encoded_1, ancillary_1, ...): pairs
            of constant tensors, any type (their bytes are read; the
            compressor writes uint8 [n])
    outputs (decoded_0, decoded_1, ...): one activation per pair, which
            eval fills at every invoke (TFLM decodes at every Eval, into
            the arena; nothing is cached)

The ancillary tensor starts with 16 bytes of Decode Common Metadata:
byte 0 the decode type (0 LUT, 1 Huffman, 2 Prune; 127, custom, and the
others are refused as TFLM refuses them), byte 1 its version (1), byte 4
the decoder's own version (1). What follows byte 16 is the decoder's:

- LUT (decode_state_lut.cc): byte 5 & 7 the index width w (1-7), byte 6
  the value table's per-channel stride s (elements). The encoded bytes
  hold one w-bit index per output element, most significant bit first,
  continuing across channels; the value tables (elements of the output's
  type, little-endian) start at byte 16. Output element e of channel c
  is table[c * s + index(e)]. Channels: with per-channel quantization on
  the output (C scales) along dimension 0, C runs of size / C elements;
  along the last dimension (C > 1), element e is of channel e % C.
  Output types: bool, float32, int8, int16, int32, int64 (the table's
  bytes are copied: a float32 NaN keeps its bits).
- Prune (decode_state_prune.cc): the encoded bytes are a bit mask, one
  bit per output element (most significant bit first): 1 takes the next
  value of the table (from byte 16, elements of the output's type), 0
  the zero point: the int8 output's zero point of the element's channel
  (channels as LUT's), 0 for the other types (all their zero points must
  be 0, as TFLM's Setup checks). Output types as LUT's.
- Huffman (decode_state_huffman.cc): byte 5 bit 0 set: 32-bit table
  entries (else 16-bit, int8 outputs only), bits 4-7: the first lookup
  reads that many plus one bits. The encoded bytes are a bit stream
  read most significant bit first (TFLM reads big-endian 32-bit words);
  the tables (little-endian entries from byte 16) give per entry
  symbol-found (the top bit), a 4-bit count and a value (11 or 27 bits):
  a symbol's count is how many of the bits just read its code used (the
  rest are read again), a sub-table's count + 1 is how many bits the
  next lookup reads, at the entry's offset + value + those bits. The
  output (int8, or int16 with 32-bit entries) takes the entry's low
  byte(s). Quantization is not read.

Refused (PrepareError naming the op and tensor), where TFLM fails its
Prepare or Eval, or would read outside the model's bytes: not pairs,
inputs that are not constant, an ancillary tensor shorter than its 16
bytes, another decode type or version, a LUT width of 0 (TFLM's
DCHECK), per-channel quantization along another dimension than the
first or last, output types TFLM does not decode, encoded bytes too few
for the output's elements, value tables or Huffman tables that the
indices, mask or codes would read past, a Huffman stream that runs past
its last 32-bit word. The inputs are constant, so prepare runs each
decoder over them once to check this (decode_prep.py, construction
only); eval then decodes without failing.

Eval: _lut, _prune and _huff, viper, byte loads from the model and byte
stores into the output (any address, any word size).
"""

import micropython
from micropython import const

_S_FN = const(0)  # of one pair's state: its decoder
_S_OUT = const(1)  # the output's bytes
_S_SRC = const(2)  # the encoded bytes
_S_TABLE = const(3)  # the ancillary bytes from byte 16
_S_PAR = const(4)  # array('i'): the decoder's parameters (_P_*)

# _lut's parameters
_PL_BITS = const(0)  # index width
_PL_OUTER = const(1)  # outer runs: channels, or rows along the last axis
_PL_INNER = const(2)  # elements per run
_PL_OSTEP = const(3)  # table bytes from one run to the next
_PL_ISTEP = const(4)  # table bytes from one element to the next
_PL_SIZE = const(5)  # bytes per element

# _prune's parameters (the zero-point bytes follow from _PP_ZP on)
_PP_OUTER = const(0)
_PP_INNER = const(1)
_PP_OZ = const(2)  # zero-point words from one run to the next
_PP_IZ = const(3)  # zero-point words from one element to the next
_PP_SIZE = const(4)
_PP_ZP = const(5)

# _huff's parameters
_PH_COUNT = const(0)  # output elements
_PH_BYTES = const(1)  # encoded bytes (bits past them read as 0)
_PH_LIMIT = const(2)  # bits in the encoded 32-bit words
_PH_ENTRIES = const(3)  # table entries
_PH_FIRST = const(4)  # bits of the first lookup
_PH_ENTRY = const(5)  # bytes per entry: 2 or 4
_PH_OUT = const(6)  # bytes per output element: 1 or 2
_PH_DRY = const(7)  # 1: decode without storing (prepare's check)


def prepare(op, ins, outs, ctx):
    """See decode_prep.prepare (construction only: dropped once an
    interpreter is built, interpreter.CONSTRUCTION)."""
    from .decode_prep import prepare
    return prepare(op, ins, outs, ctx)


def _eval(st):
    for p in st:
        p[_S_FN](p[_S_OUT], p[_S_SRC], p[_S_TABLE], p[_S_PAR])


@micropython.viper
def _lut(out, src, table, par):
    """Index-width-bit indices of src (most significant bit first) ->
    table elements into out (decode_state_lut.cc's DecompressToBuffer*)."""
    s = ptr8(src)
    o = ptr8(out)
    t = ptr8(table)
    p = ptr32(par)
    bits: int = p[_PL_BITS]
    mask: int = (1 << bits) - 1
    inner: int = p[_PL_INNER]
    ostep: int = p[_PL_OSTEP]
    istep: int = p[_PL_ISTEP]
    size: int = p[_PL_SIZE]
    acc: int = 0  # the bits read and not yet used, in its low `have`
    have: int = 0
    at: int = 0  # next byte of src
    k: int = 0  # next byte of out
    base: int = 0
    n: int = p[_PL_OUTER]
    while n > 0:
        b: int = base
        m: int = inner
        while m > 0:
            if have < bits:
                acc = ((acc << 8) | s[at]) & 0x7FFF
                at += 1
                have += 8
            have -= bits
            v: int = b + ((acc >> have) & mask) * size
            if size == 1:
                o[k] = t[v]
                k += 1
            else:
                e: int = v + size
                while v < e:
                    o[k] = t[v]
                    k += 1
                    v += 1
            b += istep
            m -= 1
        base += ostep
        n -= 1


@micropython.viper
def _prune(out, src, table, par):
    """Bit mask src (most significant bit first): 1 -> the next table
    element, 0 -> the element's zero-point byte, into out
    (decode_state_prune.cc's DecompressToBuffer*)."""
    s = ptr8(src)
    o = ptr8(out)
    t = ptr8(table)
    p = ptr32(par)
    inner: int = p[_PP_INNER]
    oz: int = p[_PP_OZ]
    iz: int = p[_PP_IZ]
    size: int = p[_PP_SIZE]
    bit: int = 0
    v: int = 0  # next byte of the table
    k: int = 0
    zb: int = _PP_ZP
    n: int = p[_PP_OUTER]
    while n > 0:
        z: int = zb
        m: int = inner
        while m > 0:
            e: int = k + size
            if (s[bit >> 3] >> (7 - (bit & 7))) & 1:
                while k < e:
                    o[k] = t[v]
                    k += 1
                    v += 1
            else:
                zp: int = p[z]
                while k < e:
                    o[k] = zp
                    k += 1
            bit += 1
            z += iz
            m -= 1
        zb += oz
        n -= 1


@micropython.viper
def _huff(out, src, table, par) -> int:
    """Huffman codes of src -> symbols into out
    (decode_state_huffman.cc's DecompressToBufferWith16BitTable / 32):
    0, or -1 where TFLM would read past the stream's last word, -2 past
    the table (prepare refuses those models; eval's result is unread)."""
    s = ptr8(src)
    o = ptr8(out)
    t = ptr8(table)
    p = ptr32(par)
    nbytes: int = p[_PH_BYTES]
    limit: int = p[_PH_LIMIT]
    entries: int = p[_PH_ENTRIES]
    es: int = p[_PH_ENTRY]
    osz: int = p[_PH_OUT]
    dry: int = p[_PH_DRY]
    pos: int = 0  # bit position in the stream
    k: int = 0
    n: int = p[_PH_COUNT]
    while n > 0:
        used: int = p[_PH_FIRST]
        off: int = 0
        while True:
            if pos + used > limit:
                return -1
            # 24 bits from byte pos >> 3 (0 past the stream's bytes)
            j: int = pos >> 3
            w: int = 0
            if j < nbytes:
                w = s[j] << 16
            if j + 1 < nbytes:
                w |= s[j + 1] << 8
            if j + 2 < nbytes:
                w |= s[j + 2]
            off += (w >> (24 - (pos & 7) - used)) & ((1 << used) - 1)
            pos += used
            if off >= entries:
                return -2
            e: int = off * es
            top: int = t[e + es - 1]
            if top & 0x80:
                break
            used = ((top >> 3) & 0xF) + 1
            if es == 2:
                off += t[e] | ((top & 7) << 8)
            else:
                off += t[e] | (t[e + 1] << 8) | (t[e + 2] << 16) | \
                    ((top & 7) << 24)
        rest: int = (top >> 3) & 0xF
        if used > rest:
            pos -= used - rest
        if not dry:
            o[k] = t[e]
            if osz == 2:
                o[k + 1] = t[e + 1]
        k += osz
        n -= 1
    return 0
