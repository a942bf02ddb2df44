"""DECODE's prepare (construction only: interpreter.CONSTRUCTION; the
kernel and what it refuses: decode.py).

Follows decode.cc's Prepare and the three DecodeState::Setup functions;
the checks of what TFLM would read outside the model's bytes are this
module's own: each decoder runs once over the constant inputs here
(_reach, _ones, decode._huff dry).
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from ..heap import keep
from .decode import _eval, _huff, _lut, _prune

_BOOL = const(6)
_FLOAT32 = const(0)
_INT8 = const(9)
_INT16 = const(7)
_INT32 = const(2)
_INT64 = const(4)

_DCM_BYTES = const(16)  # kDcmSizeInBytes
_DCM_LUT = const(0)  # kDcmTypeLUT
_DCM_HUFFMAN = const(1)  # kDcmTypeHuffman
_DCM_PRUNE = const(2)  # kDcmTypePrune
_DCM_CUSTOM = const(127)  # kDcmTypeCustom

# decode.py's parameter words (const names do not import)
_PL_BITS = const(0)
_PL_OUTER = const(1)
_PL_INNER = const(2)
_PL_OSTEP = const(3)
_PL_ISTEP = const(4)
_PL_SIZE = const(5)
_PH_DRY = const(7)

# output types of LUT and Prune (decode_state_lut.cc's Decode switch)
_TYPES = (_BOOL, _FLOAT32, _INT8, _INT16, _INT32, _INT64)
_TYPE_NAMES = "bool, float32, int8, int16, int32, int64"


def prepare(op, ins, outs, ctx):
    """Check a TFLM_DECODE operator and bind its eval.

    ins: pairs (encoded, ancillary) of constant tensors, outs: one
    output per pair (see decode.py for the formats and types). Raises
    PrepareError naming the op and tensor for what decode.py lists.
    """
    label = op.label()
    n = len(outs)
    if n < 1 or len(ins) != 2 * n:
        raise PrepareError("%s: %d inputs and %d outputs; DECODE takes an "
                           "(encoded, ancillary) pair of inputs per output"
                           % (label, len(ins), n))
    states = []
    for i in range(n):
        src, anc, y = ins[2 * i], ins[2 * i + 1], outs[i]
        if src is None or anc is None or y is None:
            raise PrepareError("%s: pair %d has an omitted tensor"
                               % (label, i))
        for t in (src, anc):
            if not t.is_const:
                raise PrepareError("%s: %s must be constant (TFLM: "
                                   "IsConstantTensor)" % (label, t.label()))
        a = anc.data
        if len(a) < _DCM_BYTES:
            raise PrepareError("%s: %s has %d bytes; its header alone has "
                               "16" % (label, anc.label(), len(a)))
        kind, version = a[0], a[1]
        if version != 1:
            raise PrepareError("%s: %s: decode version %d, supported: 1"
                               % (label, anc.label(), version))
        if kind not in (_DCM_LUT, _DCM_PRUNE, _DCM_HUFFMAN):
            raise PrepareError("%s: %s: decode type %s is not supported "
                               "(0 LUT, 1 Huffman, 2 Prune; TFLM has no "
                               "custom decoders either)"
                               % (label, anc.label(), _name(kind)))
        if a[4] != 1:
            raise PrepareError("%s: %s: %s version %d, supported: 1"
                               % (label, anc.label(), _name(kind), a[4]))
        if kind == _DCM_LUT:
            st = _prepare_lut(label, src, anc, y)
        elif kind == _DCM_PRUNE:
            st = _prepare_prune(label, src, anc, y)
        else:
            st = _prepare_huffman(label, src, anc, y)
        fn, table, par = st
        states.append((fn, y.data, src.data, table, keep(ctx, par)))
    return _eval, tuple(states)


def _name(kind):
    return ("LUT" if kind == _DCM_LUT else "Huffman" if kind == _DCM_HUFFMAN
            else "Prune" if kind == _DCM_PRUNE else "127 (custom)"
            if kind == _DCM_CUSTOM else "%d" % kind)


def _channels(label, y):
    """(channels, along the last axis) as DecodeStateLut::Setup and
    DecodeStatePrune::Setup resolve them from y's quantization."""
    c = len(y.scales)
    if not c:
        return 1, False
    qd = y.quantized_dimension
    if qd == len(y.shape) - 1 and c > 1:
        return c, True
    if qd != 0:
        raise PrepareError("%s: %s: quantized dimension %d; DECODE takes "
                           "the first or the last" % (label, y.label(), qd))
    return c, False


def _check_type(label, y, types, names):
    if y.type not in types:
        raise PrepareError("%s: %s is %s; supported: %s"
                           % (label, y.label(), y.dtype, names))


def _runs(label, y, c, last):
    """(outer, inner) runs of y's elements: channels of size / c, or
    size / c rows of c channels."""
    if y.size % c:
        raise PrepareError("%s: %s: %d elements in %d channels"
                           % (label, y.label(), y.size, c))
    return (y.size // c, c) if last else (c, y.size // c)


def _short(label, t, need, what):
    raise PrepareError("%s: %s has %d bytes; %s needs %d"
                       % (label, t.label(), len(t.data), what, need))


def _prepare_lut(label, src, anc, y):
    _check_type(label, y, _TYPES, _TYPE_NAMES)
    a = anc.data
    bits = a[5] & 7
    if not bits:
        raise PrepareError("%s: %s: LUT index width 0 (1 to 7)"
                           % (label, anc.label()))
    c, last = _channels(label, y)
    outer, inner = _runs(label, y, c, last)
    size = y.itemsize
    step = a[6] * size
    par = array("i", (bits, outer, inner, 0 if last else step,
                      step if last else 0, size))
    need = (y.size * bits + 7) >> 3
    if len(src.data) < need:
        _short(label, src, need, "%d %d-bit indices" % (y.size, bits))
    table = a[_DCM_BYTES:]
    reach = _reach(src.data, par) if y.size else 0
    if reach > len(table):
        _short(label, anc, reach + _DCM_BYTES, "its largest index")
    return _lut, table, par


def _prepare_prune(label, src, anc, y):
    _check_type(label, y, _TYPES, _TYPE_NAMES)
    c, last = _channels(label, y)
    zps = y.zero_points if len(y.scales) else (0,)
    nonzero = False
    for z in zps:
        if z:
            nonzero = True
    if nonzero and y.type != _INT8:
        raise PrepareError("%s: %s: all zero points must be 0 (TFLM's "
                           "Prune for %s)" % (label, y.label(), y.dtype))
    outer, inner = _runs(label, y, c, last)
    if c > 1 and nonzero:  # DecompressToBufferPerChannelInt8
        par = array("i", (outer, inner, 0 if last else 1, 1 if last else 0,
                          1) + tuple(z & 0xFF for z in zps))
    else:  # DecompressToBuffer: single_zero_point_
        par = array("i", (1, y.size, 0, 0, y.itemsize, zps[0] & 0xFF))
    need = (y.size + 7) >> 3
    if len(src.data) < need:
        _short(label, src, need, "a %d-bit mask" % y.size)
    table = anc.data[_DCM_BYTES:]
    need = _ones(src.data, y.size) * y.itemsize
    if need > len(table):
        _short(label, anc, need + _DCM_BYTES,
               "the values its mask keeps")
    return _prune, table, par


def _prepare_huffman(label, src, anc, y):
    a = anc.data
    wide = a[5] & 1
    if wide:
        _check_type(label, y, (_INT8, _INT16), "int8, int16")
    else:
        _check_type(label, y, (_INT8,), "int8 (16-bit Huffman tables)")
    es = 4 if wide else 2
    table = a[_DCM_BYTES:]
    nb = len(src.data)
    par = array("i", (y.size, nb, ((nb + 3) >> 2) * 32, len(table) // es,
                      (a[5] >> 4) + 1, es, y.itemsize, 1))
    r = _huff(src.data, src.data, table, par)  # dry: stores nothing
    if r == -1:
        raise PrepareError("%s: %s: the Huffman codes of %d elements run "
                           "past its %d bytes" % (label, src.label(), y.size,
                                                  nb))
    if r:
        raise PrepareError("%s: %s: a Huffman code leads past the table's "
                           "%d entries" % (label, anc.label(),
                                           len(table) // es))
    par[_PH_DRY] = 0
    return _huff, table, par


@micropython.viper
def _reach(src, par) -> int:
    """The table bytes that _lut reads (one past the furthest byte)."""
    s = ptr8(src)
    p = ptr32(par)
    bits: int = p[_PL_BITS]
    mask: int = (1 << bits) - 1
    inner: int = p[_PL_INNER]
    ostep: int = p[_PL_OSTEP]
    istep: int = p[_PL_ISTEP]
    size: int = p[_PL_SIZE]
    acc: int = 0
    have: int = 0
    at: int = 0
    far: int = 0
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
            v: int = b + ((acc >> have) & mask) * size + size
            if v > far:
                far = v
            b += istep
            m -= 1
        base += ostep
        n -= 1
    return far


@micropython.viper
def _ones(src, n: int) -> int:
    """Bits set among the first n of src (most significant bit first)."""
    s = ptr8(src)
    c: int = 0
    k: int = 0
    while k < n:
        c += (s[k >> 3] >> (7 - (k & 7))) & 1
        k += 1
    return c
