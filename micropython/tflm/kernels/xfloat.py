"""Exact binary floating point in integer viper code, for
DETECTION_POSTPROCESS (kernels/detection_postprocess.py).

TFLM's DecodeCenterSizeBoxes computes in double (a float32 box encoding
divided by a float32 scale, times an anchor size, plus an anchor centre,
std::exp of a double) and rounds to float32 at the end; its
ComputeIntersectionOverUnion computes in float32. MicroPython's floats
cannot reproduce either on every port (single precision on boards,
double on the unix port, and every float is a heap object), so this
module does the arithmetic on integers: a value is held exactly, as
(-1)**sign * M * 2**E with M up to 135 bits, and rnd() rounds it to a
given precision as IEEE 754 does (to nearest, ties to even, with the
format's subnormals and overflow to infinity): rnd(W, r, 53, -1074,
1024) is a rounding to double, rnd(W, r, 24, -149, 128) to float32. An
operation followed by rnd() is the correctly rounded IEEE operation, so
a chain of them gives the bits that C's double or float arithmetic
gives (x86-64 SSE: no extended precision, no fused multiply-add).

Registers: a buffer W of int32 words (a work buffer) holds registers of
RS words each; register r is W[r * RS:(r + 1) * RS]: kind (0 finite, 1
infinity, 2 NaN), sign (0 / 1), E + _EXB (biased: ptr32 loads
zero-extend on 64-bit viper), then the 9 limbs of M, 15 bits each, least
significant first. Functions take register numbers (small ints) and
return small ints only, so that nothing is allocated (a float32 bit
pattern above 2**30 would be a heap int on a 32-bit port: patterns go
through buffers, ld32 / st32). Operands of mul() have at most 67 bits
each (round first), divisors of div() at most 29 bits; add() and div()
keep the bits they drop as a sticky bit, enough for a later rnd() to
round correctly.
"""

import micropython
from micropython import const

RS = const(12)
_EXB = const(0x100000)  # exponent bias in the register
_NL = const(9)          # limbs
_FIN = const(0)
_INF = const(1)
_NAN = const(2)


@micropython.viper
def _bitlen(W, b: int) -> int:
    p = ptr32(W)
    k: int = _NL - 1
    while k >= 0:
        v: int = p[b + 3 + k]
        if v:
            n: int = k * 15
            while v:
                n += 1
                v = v >> 1
            return n
        k -= 1
    return 0


@micropython.viper
def _bit(W, b: int, i: int) -> int:
    """Bit i of M (0 outside it)."""
    if i < 0 or i >= _NL * 15:
        return 0
    return (int(ptr32(W)[b + 3 + i // 15]) >> (i % 15)) & 1


@micropython.viper
def _below(W, b: int, i: int) -> int:
    """1 if any bit of M below bit i is set."""
    p = ptr32(W)
    if i <= 0:
        return 0
    if i > _NL * 15:
        i = _NL * 15
    q: int = i // 15
    k: int = 0
    while k < q:
        if p[b + 3 + k]:
            return 1
        k += 1
    r: int = i % 15
    if r and (int(p[b + 3 + q]) & ((1 << r) - 1)):
        return 1
    return 0


@micropython.viper
def _shr(W, b: int, d: int):
    """M >>= d (d >= 0)."""
    p = ptr32(W)
    q: int = d // 15
    r: int = d % 15
    k: int = 0
    while k < _NL:
        v: int = 0
        j: int = k + q
        if j < _NL:
            v = int(p[b + 3 + j]) >> r
            if r and j + 1 < _NL:
                v = v | ((int(p[b + 4 + j]) << (15 - r)) & 0x7FFF)
        p[b + 3 + k] = v
        k += 1


@micropython.viper
def _shl(W, b: int, d: int):
    """M <<= d (d >= 0), bits beyond the 135 dropped."""
    p = ptr32(W)
    q: int = d // 15
    r: int = d % 15
    k: int = _NL - 1
    while k >= 0:
        v: int = 0
        j: int = k - q
        if j >= 0:
            v = (int(p[b + 3 + j]) << r) & 0x7FFF
            if r and j >= 1:
                v = v | (int(p[b + 2 + j]) >> (15 - r))
        p[b + 3 + k] = v
        k -= 1


@micropython.viper
def _inc(W, b: int):
    p = ptr32(W)
    k: int = 0
    while k < _NL:
        v: int = int(p[b + 3 + k]) + 1
        if v < 0x8000:
            p[b + 3 + k] = v
            return
        p[b + 3 + k] = 0
        k += 1


@micropython.viper
def _clear(W, b: int):
    p = ptr32(W)
    k: int = 0
    while k < _NL:
        p[b + 3 + k] = 0
        k += 1


@micropython.viper
def special(W, r: int, kind: int, sign: int):
    """Register r = infinity (kind 1), NaN (2) or zero (0) of sign."""
    b: int = r * RS
    p = ptr32(W)
    p[b] = kind
    p[b + 1] = sign
    p[b + 2] = _EXB
    _clear(W, b)


@micropython.viper
def seti(W, r: int, v: int):
    """Register r = the integer v (|v| < 2**30)."""
    b: int = r * RS
    p = ptr32(W)
    p[b] = _FIN
    p[b + 1] = 0
    if v < 0:
        p[b + 1] = 1
        v = 0 - v
    p[b + 2] = _EXB
    _clear(W, b)
    p[b + 3] = v & 0x7FFF
    p[b + 4] = (v >> 15) & 0x7FFF


@micropython.viper
def setl(W, r: int, e: int, l0: int, l1: int, l2: int, l3: int):
    """Register r = (l0 + l1 2**30 + l2 2**60 + l3 2**90) * 2**e, limbs
    of 30 bits (a constant)."""
    b: int = r * RS
    p = ptr32(W)
    p[b] = _FIN
    p[b + 1] = 0
    p[b + 2] = e + _EXB
    p[b + 3] = l0 & 0x7FFF
    p[b + 4] = l0 >> 15
    p[b + 5] = l1 & 0x7FFF
    p[b + 6] = l1 >> 15
    p[b + 7] = l2 & 0x7FFF
    p[b + 8] = l2 >> 15
    p[b + 9] = l3 & 0x7FFF
    p[b + 10] = l3 >> 15
    p[b + 11] = 0


@micropython.viper
def copy(W, a: int, c: int):
    """Register c = register a."""
    p = ptr32(W)
    k: int = 0
    while k < RS:
        p[c * RS + k] = p[a * RS + k]
        k += 1


@micropython.viper
def kind(W, r: int) -> int:
    return int(ptr32(W)[r * RS])


@micropython.viper
def neg(W, r: int):
    """Register r = -r."""
    p = ptr32(W)
    p[r * RS + 1] = 1 - int(p[r * RS + 1])


@micropython.viper
def scale2(W, r: int, k: int):
    """Register r *= 2**k (exact; rnd() after it for a format's range)."""
    p = ptr32(W)
    p[r * RS + 2] = int(p[r * RS + 2]) + k


@micropython.viper
def top(W, r: int) -> int:
    """E + bit length of a finite non-zero register (its value lies in
    [2**(top - 1), 2**top)); -0x100000 for zero."""
    b: int = r * RS
    L: int = int(_bitlen(W, b))
    if L == 0:
        return -0x100000
    return int(ptr32(W)[b + 2]) - _EXB + L


@micropython.viper
def rnd(W, r: int, nb: int, emin: int, emax: int):
    """Round register r to nb significant bits, to nearest, ties to even,
    with no bit below 2**emin (subnormals), infinity from 2**emax on."""
    b: int = r * RS
    p = ptr32(W)
    if p[b] != _FIN:
        return
    L: int = int(_bitlen(W, b))
    if L == 0:
        return
    e: int = int(p[b + 2]) - _EXB
    d: int = L - nb
    if emin - e > d:
        d = emin - e
    if d > 0:
        g: int = 0
        st: int = 0
        if d > _NL * 15 + 1:
            st = 1
            _clear(W, b)
        else:
            g = int(_bit(W, b, d - 1))
            st = int(_below(W, b, d - 1))
            _shr(W, b, d)
        e += d
        if g and (st or (int(p[b + 3]) & 1)):
            _inc(W, b)
            if int(_bitlen(W, b)) > nb:
                _shr(W, b, 1)
                e += 1
        p[b + 2] = e + _EXB
    if e + int(_bitlen(W, b)) > emax:
        p[b] = _INF
        _clear(W, b)


@micropython.viper
def ld32(W, r: int, buf, i: int):
    """Register r = the float32 word buf[i] (ptr32: buf 4-byte aligned)."""
    a: int = int(ptr32(buf)[i])
    b: int = r * RS
    p = ptr32(W)
    p[b + 1] = (a >> 31) & 1
    E: int = (a >> 23) & 0xFF
    m: int = a & 0x7FFFFF
    _clear(W, b)
    p[b] = _FIN
    p[b + 2] = _EXB - 149
    if E == 0xFF:
        p[b] = _INF
        if m:
            p[b] = _NAN
        return
    if E:
        m = m | 0x800000
        p[b + 2] = _EXB + E - 150
    p[b + 3] = m & 0x7FFF
    p[b + 4] = m >> 15


@micropython.viper
def st32(W, r: int, buf, i: int):
    """buf[i] = register r rounded to float32 (the register keeps the
    rounded value). NaN: x86's default NaN 0xFFC00000."""
    rnd(W, r, 24, -149, 128)
    b: int = r * RS
    p = ptr32(W)
    one: int = 1
    sg: int = (int(p[b + 1]) & 1) << 31
    k: int = int(p[b])
    w: int = 0
    if k == _NAN:
        w = 0x1FF * (one << 22)
    elif k == _INF:
        w = sg | (0xFF * (one << 23))
    else:
        m: int = int(p[b + 3]) | (int(p[b + 4]) << 15)
        L: int = int(_bitlen(W, b))
        w = sg
        if L:
            e: int = int(p[b + 2]) - _EXB
            t: int = e + L - 1
            if t >= -126:
                w = sg | ((t + 127) << 23) | ((m << (24 - L)) & 0x7FFFFF)
            else:
                w = sg | (m << (e + 149))
    ptr32(buf)[i] = w


@micropython.viper
def mul(W, a: int, b: int, c: int):
    """Register c = a * b exactly (c another register; operands of at
    most 67 bits)."""
    p = ptr32(W)
    ba: int = a * RS
    bb: int = b * RS
    bc: int = c * RS
    ka: int = int(p[ba])
    kb: int = int(p[bb])
    p[bc + 1] = (int(p[ba + 1]) ^ int(p[bb + 1])) & 1
    p[bc + 2] = _EXB
    _clear(W, bc)
    p[bc] = _FIN
    if ka == _NAN or kb == _NAN:
        p[bc] = _NAN
        return
    if ka == _INF or kb == _INF:
        p[bc] = _INF
        if (ka == _FIN and int(_bitlen(W, ba)) == 0) or \
                (kb == _FIN and int(_bitlen(W, bb)) == 0):
            p[bc] = _NAN
            p[bc + 1] = 1
        return
    p[bc + 2] = int(p[ba + 2]) + int(p[bb + 2]) - _EXB
    i: int = 0
    while i < _NL:
        x: int = int(p[ba + 3 + i])
        if x:
            carry: int = 0
            j: int = 0
            while i + j < _NL:
                t: int = int(p[bc + 3 + i + j]) + x * int(p[bb + 3 + j]) \
                    + carry
                p[bc + 3 + i + j] = t & 0x7FFF
                carry = t >> 15
                j += 1
        i += 1


@micropython.viper
def _align(W, b: int, sh: int):
    """M <<= sh, or for sh < 0 M >>= -sh keeping a sticky bit 0."""
    if sh >= 0:
        _shl(W, b, sh)
        return
    st: int = int(_below(W, b, 0 - sh))
    if 0 - sh > _NL * 15:
        _clear(W, b)
    else:
        _shr(W, b, 0 - sh)
    if st:
        ptr32(W)[b + 3] = int(ptr32(W)[b + 3]) | 1


@micropython.viper
def add(W, a: int, b: int, c: int, t: int, sub: int):
    """Register c = a + b (sub 0) or a - b (sub 1), t a scratch register
    (c and t other registers than a and b)."""
    p = ptr32(W)
    ba: int = a * RS
    bb: int = b * RS
    bc: int = c * RS
    bt: int = t * RS
    ka: int = int(p[ba])
    kb: int = int(p[bb])
    sa: int = int(p[ba + 1]) & 1
    sb: int = (int(p[bb + 1]) ^ sub) & 1
    if ka == _NAN or kb == _NAN or (ka == _INF and kb == _INF and
                                     sa != sb):
        special(W, c, _NAN, 1)
        return
    if ka == _INF:
        special(W, c, _INF, sa)
        return
    if kb == _INF:
        special(W, c, _INF, sb)
        return
    La: int = int(_bitlen(W, ba))
    Lb: int = int(_bitlen(W, bb))
    if La == 0 and Lb == 0:
        special(W, c, _FIN, sa & sb)
        return
    if Lb == 0:
        copy(W, a, c)
        return
    if La == 0:
        copy(W, b, c)
        p[bc + 1] = sb
        return
    ea: int = int(p[ba + 2]) - _EXB
    eb: int = int(p[bb + 2]) - _EXB
    T: int = ea + La
    if eb + Lb > T:
        T = eb + Lb
    B: int = T - 131
    copy(W, a, c)
    _align(W, bc, ea - B)
    copy(W, b, t)
    _align(W, bt, eb - B)
    p[bc + 2] = B + _EXB
    if sa == sb:
        carry: int = 0
        k: int = 0
        while k < _NL:
            v: int = int(p[bc + 3 + k]) + int(p[bt + 3 + k]) + carry
            p[bc + 3 + k] = v & 0x7FFF
            carry = v >> 15
            k += 1
        p[bc + 1] = sa
        return
    # |c| - |t|, or |t| - |c| with t's sign
    k = _NL - 1
    cmp: int = 0
    while k >= 0:
        x: int = int(p[bc + 3 + k])
        y: int = int(p[bt + 3 + k])
        if x != y:
            cmp = 1
            if y > x:
                cmp = -1
            break
        k -= 1
    if cmp == 0:
        special(W, c, _FIN, 0)
        return
    hi: int = bc
    lo: int = bt
    p[bc + 1] = sa
    if cmp < 0:
        hi = bt
        lo = bc
        p[bc + 1] = sb
    borrow: int = 0
    k = 0
    while k < _NL:
        v = int(p[hi + 3 + k]) - int(p[lo + 3 + k]) - borrow
        borrow = 0
        if v < 0:
            v += 0x8000
            borrow = 1
        p[bc + 3 + k] = v
        k += 1


@micropython.viper
def div(W, a: int, b: int, c: int):
    """Register c = a / b: at least 72 significant bits and a sticky bit
    (c another register; b's M at most 29 bits)."""
    p = ptr32(W)
    ba: int = a * RS
    bb: int = b * RS
    bc: int = c * RS
    ka: int = int(p[ba])
    kb: int = int(p[bb])
    sg: int = (int(p[ba + 1]) ^ int(p[bb + 1])) & 1
    La: int = int(_bitlen(W, ba))
    Lb: int = int(_bitlen(W, bb))
    za: int = 0
    if ka == _FIN and La == 0:
        za = 1
    zb: int = 0
    if kb == _FIN and Lb == 0:
        zb = 1
    if ka == _NAN or kb == _NAN or (ka == _INF and kb == _INF) or \
            (za and zb):
        special(W, c, _NAN, 1)
        return
    if ka == _INF or zb:
        special(W, c, _INF, sg)
        return
    if kb == _INF or za:
        special(W, c, _FIN, sg)
        return
    mb: int = int(p[bb + 3]) | (int(p[bb + 4]) << 15)
    k: int = 72 - (La - Lb)
    if k < 0:
        k = 0
    special(W, c, _FIN, sg)
    rem: int = 0
    pos: int = La - 1
    n: int = La + k
    while n > 0:
        rem = (rem << 1) | int(_bit(W, ba, pos))
        _shl(W, bc, 1)
        if rem >= mb:
            rem -= mb
            p[bc + 3] = int(p[bc + 3]) | 1
        pos -= 1
        n -= 1
    _shl(W, bc, 1)
    if rem:
        p[bc + 3] = int(p[bc + 3]) | 1
    p[bc + 2] = int(p[ba + 2]) - int(p[bb + 2]) - k - 1 + _EXB


@micropython.viper
def cmp(W, a: int, b: int) -> int:
    """-1, 0, 1 as a < b, a == b, a > b; 2 if either is NaN."""
    p = ptr32(W)
    ba: int = a * RS
    bb: int = b * RS
    ka: int = int(p[ba])
    kb: int = int(p[bb])
    if ka == _NAN or kb == _NAN:
        return 2
    # a key per operand: class (0 zero, 1 finite, 2 inf) then magnitude
    La: int = int(_bitlen(W, ba))
    Lb: int = int(_bitlen(W, bb))
    sa: int = int(p[ba + 1]) & 1
    sb: int = int(p[bb + 1]) & 1
    ca: int = 1
    if ka == _INF:
        ca = 2
    elif La == 0:
        ca = 0
        sa = 0
    cb: int = 1
    if kb == _INF:
        cb = 2
    elif Lb == 0:
        cb = 0
        sb = 0
    if ca == 0 and cb == 0:
        return 0
    if sa != sb or ca == 0 or cb == 0:
        # different signs, or one zero: the signs decide
        va: int = 0
        if ca:
            va = 1 - 2 * sa
        vb: int = 0
        if cb:
            vb = 1 - 2 * sb
        if va > vb:
            return 1
        if va < vb:
            return -1
        return 0
    m: int = 0  # magnitude order
    if ca != cb:
        m = 1
        if cb > ca:
            m = -1
    elif ca == 1:
        ta: int = int(p[ba + 2]) + La
        tb: int = int(p[bb + 2]) + Lb
        if ta != tb:
            m = 1
            if tb > ta:
                m = -1
        else:
            # same top bit: compare aligned magnitudes limb by limb
            ea: int = int(p[ba + 2])
            eb: int = int(p[bb + 2])
            i: int = ea + La - 1
            lo: int = ea
            if eb < lo:
                lo = eb
            while i >= lo and m == 0:
                x: int = int(_bit(W, ba, i - ea))
                y: int = int(_bit(W, bb, i - eb))
                if x != y:
                    m = x - y
                i -= 1
    if sa:
        return 0 - m
    return m


@micropython.viper
def sign(W, r: int) -> int:
    return int(ptr32(W)[r * RS + 1]) & 1


@micropython.viper
def ldc(W, r: int, tab, j: int):
    """Register r = register j of the buffer tab (a table of constants
    made with setl)."""
    p = ptr32(W)
    q = ptr32(tab)
    k: int = 0
    while k < RS:
        p[r * RS + k] = q[j * RS + k]
        k += 1


@micropython.viper
def toint(W, r: int) -> int:
    """The finite register r rounded to the nearest integer (halves away
    from zero), for |r| < 2**20."""
    b: int = r * RS
    p = ptr32(W)
    e: int = int(p[b + 2]) - _EXB
    L: int = int(_bitlen(W, b))
    v: int = 0
    if L == 0 or e + L < 0:
        return 0
    if e >= 0:
        v = (int(p[b + 3]) | (int(p[b + 4]) << 15)) << e
    else:
        i: int = 0 - e  # the integer part: bits i .. L-1
        k: int = L - 1
        while k >= i:
            v = (v << 1) | int(_bit(W, b, k))
            k -= 1
        v += int(_bit(W, b, i - 1))
    if int(p[b + 1]) & 1:
        return 0 - v
    return v
