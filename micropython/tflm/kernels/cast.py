"""CAST: element-wise type conversion between int8, int16, int32, uint32,
float32 and bool.

Follows tensorflow/lite/micro/kernels/cast.cc (copyToTensor /
copyCast: out[i] = static_cast<ToT>(in[i]) over the input's element
count) as the x86-64 build of the PyPI tflite-micro (the oracle)
computes it:

    integer -> integer   the low bits of the two's complement value
                         (int32 300 -> int8 44, -1 -> uint32 0xFFFFFFFF)
    bool -> any          the byte's value: 0 or 1 (a bool byte other
                         than 0 / 1 is undefined in C++; x86 takes the
                         byte as an unsigned number, so does this kernel)
    integer -> float32   rounded to nearest, ties to even (int32 and
                         uint32 values above 2**24: 16777217 -> 16777216,
                         16777219 -> 16777220)
    float32 -> float32   the bits unchanged (NaN payloads kept)
    any -> bool          x != 0 (a byte 0 / 1; float -0.0 gives 0, NaN 1)
    float32 -> integer   truncated toward zero and saturated: NaN gives
                         0, values below the type's minimum give the
                         minimum, values at or above its maximum + 1 give
                         the maximum (int8: -1e9 -> -128, 200.7 -> 127;
                         uint32: negative -> 0, >= 2**32 -> 0xFFFFFFFF)

static_cast of an out-of-range float is undefined in C++; the cast.cc
in the TFLM sources we read has no check, but the tflite-micro build we
test against compares with the target's limits first (its CastEval
loads -128.0f / 128.0f, ... 2**32 and branches on NaN), so this
saturation is what TFLM does, and it is what this kernel does on every
port. (A TFLM built from that older cast.cc gives other results there:
on x86 cvttss2si's 0x80000000 for NaN and out-of-range int32, the low
bits of the truncated value for narrower targets, e.g. 200.7 -> int8
-56; on Cortex-M the FPU's own saturation to int32.)

Prepare accepts one input and one output of int8, int16, int32, uint32,
float32 or bool with as many elements (shapes may differ, as in TFLM;
bool outputs are what the tflite-micro we test against writes, x != 0,
though the cast.cc we read has none); anything else is a PrepareError
naming the op and the tensor: other types (TFLM fails at eval) and
different element counts (TFLM would read or write past a buffer).
CastOptions (in_data_type, out_data_type) are not read: TFLM's kernel
does not read them either (the tensors' types decide) and runs a CAST
whose options table has another type, so verify._OPTION_TYPES has no CAST
entry. (TFLM's ParseCast does refuse a type code it does not know there;
not checked here.)

Eval is one viper loop over raw bytes (ptr8 loads and stores: any
alignment, constant inputs included) in integer arithmetic only: float32
values are handled as bit patterns, intermediates stay within 32 bits,
so 32- and 64-bit viper give the same bytes; nothing is allocated.
"""

import micropython
from micropython import const

from ..errors import PrepareError

_BOOL = const(6)
_FLOAT32 = const(0)
_INT16 = const(7)
_INT32 = const(2)
_INT8 = const(9)
_UINT32 = const(15)

# Kinds (eval's codes): 0 int8, 1 int16, 2 int32, 3 uint32, 4 float32,
# 5 bool.
_K_INT8 = const(0)
_K_INT16 = const(1)
_K_INT32 = const(2)
_K_UINT32 = const(3)
_K_FLOAT32 = const(4)
_K_BOOL = const(5)


def _kind(code):
    """Eval's kind of TensorType code, or -1."""
    if code == _INT8:
        return _K_INT8
    if code == _INT16:
        return _K_INT16
    if code == _INT32:
        return _K_INT32
    if code == _UINT32:
        return _K_UINT32
    if code == _FLOAT32:
        return _K_FLOAT32
    if code == _BOOL:
        return _K_BOOL
    return -1


def prepare(op, ins, outs, ctx):
    """Check a CAST operator and bind its eval.

    ins: [input int8, int16, int32, uint32, float32 or bool, any shape];
    outs: [output of one of these types with as many elements].
    Quantization and CastOptions are ignored (TFLM's cast.cc reads
    neither). Raises PrepareError naming the op and tensor for other
    counts of tensors, other types and element counts that differ.
    """
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1 or \
            outs[0] is None:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    ik, ok = _kind(x.type), _kind(y.type)
    if ik < 0:
        raise PrepareError("%s: input %s is %s; supported: int8, int16, "
                           "int32, uint32, float32, bool"
                           % (label, x.label(), x.dtype))
    if ok < 0:
        raise PrepareError("%s: output %s is %s; supported: int8, int16, "
                           "int32, uint32, float32, bool"
                           % (label, y.label(), y.dtype))
    if x.size != y.size:
        raise PrepareError("%s: input %s has %d elements but output %s has "
                           "%d" % (label, x.label(), x.size, y.label(),
                                   y.size))
    return _eval, (x.data, y.data, x.size, ik | (ok << 4))


# eval's state (x, y, count, kinds): the views only cast to pointers by
# _cast; a compiled model stores there the address of its view of the
# arena or the model, an int, no object (compiled.py T_ADDR).
ADDRESSES = (0, 1)


def _eval(st):
    _cast(st[0], st[1], st[2], st[3])


@micropython.viper
def _cast(x, y, n: int, kinds: int):
    """y[i] = static_cast<out>(x[i]) for i < n, as the module doc says.

    x, y: the tensors' bytes (little-endian, any alignment); kinds: input
    kind | output kind << 4 (_K_*). Every value is formed within 32 bits:
    a uint32 or float32 pattern above 2**31 is negative on a 32-bit port
    and positive on a 64-bit one, so only its low 32 bits are ever used
    (stores, masks, shifts right of at most 16 after masking).
    """
    px = ptr8(x)
    py = ptr8(y)
    one: int = 1
    S: int = one << 31
    ik: int = kinds & 15
    ok: int = kinds >> 4
    isz: int = 1
    if ik == 1:
        isz = 2
    elif ik >= 2 and ik <= 4:
        isz = 4
    osz: int = 1
    if ok == 1:
        osz = 2
    elif ok >= 2 and ok <= 4:
        osz = 4
    # float32 -> signed integer: exponents from which |x| >= 2**(bits-1)
    # saturate; the limits themselves
    sat_e: int = 134
    smax: int = 127
    if ok == 1:
        sat_e = 142
        smax = 32767
    elif ok == 2:
        sat_e = 158
        smax = S - 1
    i: int = 0
    j: int = 0
    k: int = 0
    while i < n:
        # ---- load: v is the value (signed kinds sign-extended), or the
        # 32-bit pattern of a uint32 / float32 ----
        v: int = 0
        if isz == 1:
            v = px[j]
            if ik == 0:
                v = (v ^ 0x80) - 0x80
        elif isz == 2:
            v = ((((px[j + 1] ^ 0x80) - 0x80) << 8) | px[j])
        else:
            v = ((((px[j + 3] ^ 0x80) - 0x80) << 24) | (px[j + 2] << 16)
                 | (px[j + 1] << 8) | px[j])
        w: int = v
        if ok == 5:
            # ---- to bool: x != 0 (float: any bit but the sign) ----
            w = 0
            if ik == 4:
                if v & (S - 1):
                    w = 1
            elif v:
                w = 1
        elif ik == 4:
            if ok != 4:
                # ---- float32 -> integer: truncate, saturate, NaN -> 0 --
                e: int = (v >> 23) & 0xFF
                neg: int = (v >> 31) & 1
                mm: int = (v & 0x7FFFFF) | 0x800000
                t: int = 0
                if e < 127 or (e == 0xFF and (v & 0x7FFFFF)):
                    w = 0  # |x| < 1 (zeros, subnormals) or NaN
                elif ok == 3:
                    if neg:
                        w = 0
                    elif e >= 159:
                        w = 0 - 1  # x >= 2**32, +inf: 0xFFFFFFFF
                    elif e >= 150:
                        w = mm << (e - 150)
                    else:
                        w = mm >> (150 - e)
                elif e >= sat_e:
                    w = smax  # |x| >= 2**(bits-1), inf
                    if neg:
                        w = 0 - smax - 1
                else:
                    if e >= 150:
                        t = mm << (e - 150)
                    else:
                        t = mm >> (150 - e)
                    w = t
                    if neg:
                        w = 0 - t
        elif ok == 4:
            # ---- integer -> float32, round to nearest even ----
            neg = 0
            mag: int = v
            if ik != 3 and v < 0:
                neg = 1
                mag = 0 - v  # INT32_MIN: 0x80000000, read as unsigned
            hi: int = (mag >> 16) & 0xFFFF
            lo: int = mag & 0xFFFF
            if hi == 0 and lo == 0:
                w = 0
            else:
                bl: int = 0
                t = lo
                if hi:
                    bl = 16
                    t = hi
                while t:
                    bl += 1
                    t = t >> 1
                if bl <= 24:
                    mm = ((hi << 16) | lo) << (24 - bl)
                else:
                    d: int = bl - 24
                    mm = (hi << (16 - d)) | (lo >> d)
                    rem: int = lo & ((one << d) - 1)
                    half: int = one << (d - 1)
                    if rem > half or (rem == half and (mm & 1)):
                        mm += 1
                        if mm == 0x1000000:
                            mm = 0x800000
                            bl += 1
                w = ((126 + bl) << 23) | (mm & 0x7FFFFF)
                if neg:
                    w = w | S
        # ---- store the low osz bytes ----
        py[k] = w
        if osz > 1:
            py[k + 1] = w >> 8
            if osz == 4:
                py[k + 2] = w >> 16
                py[k + 3] = w >> 24
        i += 1
        j += isz
        k += osz
