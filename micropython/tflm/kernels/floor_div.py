"""FLOOR_DIV and FLOOR_MOD: float32, NumPy-style broadcasting (rank up
to 6, broadcast_prep.py / broadcast.py), in integer viper code.

Follows tensorflow/lite/micro/kernels/floor_div.cc and floor_mod.cc
(Prepare: two inputs and the output of one type; Eval: float32 only) with
reference/floor_div.h, floor_mod.h and binary_function.h, bit for bit as
TFLM's x86-64 build computes them:

    FLOOR_DIV  out = (float)floor((double)x1 / (double)x2): the quotient
               rounded to double (53 bits), its floor, rounded to float32
               (so 2**24 + 1.5 gives 2**24 + 1 rounded: 2**24). Before any
               output is written, an x2 element equal to 0 (or -0) fails
               the invoke (InvokeError "Division by 0", as TFLM). NaNs:
               x1's, else x2's, quieted; inf / inf gives x86's default
               NaN (0xFFC00000).
    FLOOR_MOD  m = fmodf(x1, x2) (exact), then m + x2 (one float32
               rounding) when m != 0 and its sign differs from x2's: the
               remainder takes x2's sign. fmodf(inf, y) and fmodf(x, 0)
               give 0xFFC00000; with two NaNs the one of larger payload
               wins, quieted (glibc's fmodf runs x87's fprem on x86-64).

int32 and the other types are refused (PrepareError: TFLM's Eval has
float32 only). Eval gathers chunks of both operands into the two halves
of the scratch array (broadcast.gather, bytewise: constants at any
address), computes in place and stores the words; nothing is allocated
and no Python float is used.
"""

import micropython
from micropython import const

from ..errors import PrepareError, raise_made
from . import broadcast
from .f32_math import put, round_put, unpack_e, unpack_m

_FLOAT32 = const(0)
_FLOOR_DIV = const(90)

_S_D1 = const(0)
_S_D2 = const(1)
_S_OUT = const(2)
_S_TOTAL = const(3)
_S_SA = const(4)
_S_SB = const(5)
_S_HALF = const(6)
_S_WALK = const(7)
_S_DIV = const(8)
_S_N2 = const(9)
_S_ERR = const(10)


def prepare(op, ins, outs, ctx):
    """Check a FLOOR_DIV / FLOOR_MOD op and bind its eval.

    ins: two float32 tensors whose shapes broadcast (rank <= 6) to the
    float32 output's. Raises PrepareError for other types (TFLM's Eval
    has float32 only), mixed types or shapes that do not broadcast.
    FLOOR_DIV's invoke raises InvokeError when x2 holds a zero.
    """
    from . import broadcast_prep as bp
    from .conv_util import keep, scratch_halves
    from ..errors import InvokeError
    x1, x2, y = bp.binary_io(op, ins, outs)
    if x1.type != _FLOAT32:
        raise PrepareError("%s: %s is %s; supported: float32"
                           % (op.label(), x1.label(), x1.dtype))
    bc = bp.check(op, x1, x2, y)
    st = bp.walker(x1, x2, y, bc, width=4)
    sa, sb, half = scratch_halves(ctx)
    div = op.code == _FLOOR_DIV
    err = InvokeError("%s: Division by 0 (input %s has a zero)"
                      % (op.label(), x2.label())) if div else None
    return _eval, (x1.data, x2.data, y.data, y.size, sa, sb, half,
                   keep(ctx, st), div, x2.size, err)


def _eval(st):
    d1 = st[_S_D1]
    d2 = st[_S_D2]
    yd = st[_S_OUT]
    total = st[_S_TOTAL]
    sa = st[_S_SA]
    sb = st[_S_SB]
    half = st[_S_HALF]
    walk = st[_S_WALK]
    div = st[_S_DIV]
    if div and has_zero(d2, st[_S_N2]):
        raise_made(st[_S_ERR])
    broadcast.reset(walk)
    off = 0
    while off < total:
        n = total - off
        if n > half:
            n = half
        broadcast.gather(sa, sb, n, d1, d2, walk)
        if div:
            floor_div(sa, sb, n)
        else:
            floor_mod(sa, sb, n)
        broadcast.store_w32(sa, n, yd, off)
        off += n


@micropython.viper
def has_zero(x, n: int) -> int:
    """1 if one of the n float32 elements of x (bytes, any alignment) is
    +0.0 or -0.0, else 0."""
    p = ptr8(x)
    i: int = 0
    while i < n:
        j: int = 4 * i
        if p[j] == 0 and p[j + 1] == 0 and p[j + 2] == 0 and \
                (p[j + 3] & 0x7F) == 0:
            return 1
        i += 1
    return 0


@micropython.viper
def floor_div(a, b, n: int):
    """a[i] = (float)floor((double)a[i] / (double)b[i]) for i < n,
    float32 words (b[i] not zero: the caller checked)."""
    pa = ptr32(a)
    pb = ptr32(b)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    H23: int = one << 23
    INF: int = 0xFF * H23
    QUIET: int = one << 22
    H25: int = one << 25
    i: int = 0
    while i < n:
        u: int = pa[i]
        v: int = pb[i]
        ua: int = u & MAG
        ub: int = v & MAG
        s: int = ((u ^ v) >> 31) & 1
        if ua > INF:
            pa[i] = u | QUIET
        elif ub > INF:
            pa[i] = v | QUIET
        elif ua == INF:
            if ub == INF:
                pa[i] = S | INF | QUIET
            else:
                pa[i] = (S if s else 0) | INF
        elif ub == INF or ua == 0:  # +-0: floor keeps the sign
            pa[i] = S if s else 0
        else:
            # a = ma * 2**ea, b = mb * 2**eb with 24-bit significands
            ma: int = int(unpack_m(a, i))
            ea: int = int(unpack_e(a, i))
            mb: int = int(unpack_m(b, i))
            eb: int = int(unpack_e(b, i))
            # q = r / mb in [1, 2) times 2**k
            r: int = ma
            k: int = ea - eb
            if ma < mb:
                r = ma << 1
                k -= 1
            # 56 quotient bits: th (28) then tl (28)
            th: int = 0
            tl: int = 0
            j: int = 0
            while j < 56:
                bit: int = 0
                if r >= mb:
                    r -= mb
                    bit = 1
                if j < 28:
                    th = (th << 1) | bit
                else:
                    tl = (tl << 1) | bit
                r = r << 1
                j += 1
            # round to 53 bits (double): V = vh * 2**25 + vl, LSB 2**(k-52)
            vh: int = th
            vl: int = tl >> 3
            if (tl >> 2) & 1 and ((tl & 3) or r or (vl & 1)):
                vl += 1
                if vl == H25:
                    vl = 0
                    vh += 1
            sh: int = k - 52
            # F: floor (s == 0) or ceil (s == 1) of |quotient|, as
            # fh * 2**25 + fl, times 2**sh when sh > 0
            fh: int = vh
            fl: int = vl
            frac: int = 0
            if sh < 0:
                e: int = 0 - sh
                if e >= 54:
                    fh = 0
                    fl = 0
                    frac = 1
                elif e < 25:
                    fh = vh >> e
                    fl = ((vh & ((one << e) - 1)) << (25 - e)) | (vl >> e)
                    frac = vl & ((one << e) - 1)
                else:
                    fh = 0
                    fl = vh >> (e - 25)
                    frac = vl | (vh & ((one << (e - 25)) - 1))
                sh = 0
            if s and frac:
                fl += 1
                if fl == H25:
                    fl = 0
                    fh += 1
            if fh == 0 and fl == 0:
                pa[i] = 0  # floor of a positive quotient below 1
            else:
                round_put(a, i, s, fh, fl, 25, sh)
        i += 1


@micropython.viper
def floor_mod(a, b, n: int):
    """a[i] = FloorMod(a[i], b[i]) for i < n, float32 words: fmodf, then
    + b[i] when the remainder is non-zero and of the other sign."""
    pa = ptr32(a)
    pb = ptr32(b)
    one: int = 1
    S: int = one << 31
    MAG: int = S - 1
    H23: int = one << 23
    INF: int = 0xFF * H23
    QUIET: int = one << 22
    i: int = 0
    while i < n:
        u: int = pa[i]
        v: int = pb[i]
        ua: int = u & MAG
        ub: int = v & MAG
        sa: int = (u >> 31) & 1
        sb: int = (v >> 31) & 1
        if ua > INF or ub > INF:  # x87: the larger payload wins
            qa: int = (u | QUIET) & MAG
            qb: int = (v | QUIET) & MAG
            if ub > INF and (ua <= INF or qb > qa):
                pa[i] = v | QUIET
            else:
                pa[i] = u | QUIET
        elif ua == INF or ub == 0:
            pa[i] = S | INF | QUIET
        elif ua == 0:
            pass  # +-0 stays
        elif ub == INF:
            if sa != sb:
                pa[i] = v  # a + (-+inf)
        else:
            ma: int = int(unpack_m(a, i))
            ea: int = int(unpack_e(a, i))
            mb: int = int(unpack_m(b, i))
            eb: int = int(unpack_e(b, i))
            if ua >= ub:
                # |a| mod |b| = rem * 2**eb, exact
                rem: int = ma
                if rem >= mb:
                    rem -= mb
                d: int = ea - eb
                while d > 0 and rem:
                    rem = rem << 1
                    if rem >= mb:
                        rem -= mb
                    d -= 1
                if rem == 0:
                    pa[i] = S if sa else 0
                elif sa == sb:
                    put(a, i, sa, rem, eb)
                else:  # rem - |b| keeps b's sign, exactly
                    put(a, i, sb, mb - rem, eb)
            elif sa != sb:
                # |a| < |b|: fl(a + b) = b's sign * (|b| - |a|), rounded
                t: int = eb - ea
                if t == 0:
                    put(a, i, sb, mb - ma, eb)
                elif t >= 27:
                    pa[i] = v
                else:
                    x: int = mb << 4
                    y: int = (ma << 4) >> t
                    stk: int = 0
                    if (ma << 4) & ((one << t) - 1):
                        stk = 1
                    # dd, and stk as a sticky bit below it (0 when
                    # nothing was shifted out: t = 1 cancels exactly)
                    round_put(a, i, sb, x - y - stk, stk, 1, eb - 5)
            # else |a| < |b|, same signs: fmod is a itself
        i += 1
