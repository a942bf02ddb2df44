"""expf and tanhf on float32 words, in integer viper code (no allocation).

TFLM's float SOFTMAX and LOGISTIC call std::exp(float) and TANH calls
std::tanh(float): the C library's expf / tanhf, which differ between
libraries (glibc's expf is within 0.502 ulp, its tanhf within 2 ulp).
These versions are deterministic (the same bits on every port and word
size) and within 1 ulp of the exact value; tests/test_float_ops.py
measures them against the exact value and against glibc.

exp(x): |x| < 2**-26 gives 1.0; otherwise k = round(x / ln 2) and
r = x - k ln 2 are formed from x * 2**46 in two 23-bit limbs (ln 2 to
2**-47), and exp(r) = 1 + r + r**2 T(r), where T(r) = sum r**(i-2) / i!
(i = 2..10, |r| < 0.37, truncation < 2**-38) is evaluated in Q31 and
r**2 T(r) in Q34, so that 1 + r + r**2 T(r) carries about 33 correct
bits into the single rounding of P * 2**k to float32 (subnormals and
overflow included): about 0.3% of results differ from the correctly
rounded value, by 1 ulp.

tanh(x): |x| < 2**-12 gives x; |x| >= 9 gives +-1 (as rounded);
|x| < 0.55 uses x * T(x**2) with T the 12-term series of tanh(x) / x in
Q30; otherwise 1 - 2 / (exp(2|x|) + 1) with exp(2|x|) from the exp core
above and the quotient by long division.

Every product is split into limbs of at most 16 bits so no intermediate
exceeds 31 bits (viper ints are 32 bits on boards).

The float32 bit helpers below (unpack_m / unpack_e, nbits, put,
round_put, sqrt_word, mulhi30, horner30) are shared by elementwise_f32
(SQRT, LOG), floor_div (FLOOR_DIV, FLOOR_MOD), l2_pool (L2_POOL_2D),
trig (SIN, COS) and elu_f32 (ELU), whose float32
operations are no hot paths: a call per element. A float32 bit pattern
never crosses a call (above 2**30 it would be a heap int on a 32-bit
port): the helpers read and write it in a buffer, and their int
arguments and results stay below 2**30.
"""

from array import array

import micropython

# 1 / i! in Q31, i = 2..10: exp(r) = 1 + r + r**2 * sum r**(i-2) / i!.
EXP_Q31 = array("i", [1073741824, 357913941, 89478485, 17895697, 2982616,
                      426088, 53261, 5918, 592])
# tanh(x) / x = sum c_n u**n, u = x**2: 2**(2n+2) (2**(2n+2) - 1)
# B_(2n+2) / (2n+2)! in Q30, n = 0..11.
TANH_Q30 = array("i", [1073741824, -357913941, 143165577, -57947971,
                       23482185, -9516827, 3857018, -1563190, 633537,
                       -256763, 104062, -42175])

# vexp / vtanh parameter slots (array('i') p): 0 x offset, 1 x stride,
# 2 output offset, 3 count. st: array('i', 3) scratch for _expk.
SLOTS = 4


@micropython.viper
def _expk(h: int, lw: int, c, st):
    """exp(X / 2**46) ~= E * 2**(k - 46) for X = h * 2**23 + lw (0 <= lw <
    2**23, |X| < 2**53), E = st[1] * 2**23 + st[2] (0 <= st[2] < 2**23)
    in [0.69, 1.45] * 2**46; st[0] = k. c: EXP_Q31."""
    pc = ptr32(c)
    s = ptr32(st)
    M23: int = 0x7FFFFF
    # k ~ round(x / ln2) from x * 64 = floor(X / 2**40); off by one at
    # most near ties, which only widens |r| to < 0.37.
    k: int = ((h >> 17) * 1477 + 0x8000) >> 16
    # r = X - k * round(ln2 * 2**46), ln2 * 2**46 = 5814539 * 2**23 +
    # 8254580; every product < 2**31 for |k| <= 185.
    lo: int = lw - k * 8254580
    hi: int = h - k * 5814539 + (lo >> 23)
    lo = lo & M23
    # T = sum r**(i-2) / i! by Horner in Q31 (T in [0.44, 0.57]).
    r: int = (hi << 8) + ((lo + 0x4000) >> 15)  # r in Q31, rounded
    neg: int = 0
    if r < 0:
        neg = 1
        r = 0 - r
    rh: int = r >> 15
    rl: int = r & 0x7FFF
    p: int = pc[8]
    i: int = 7
    while i >= 0:
        # p = c[i] + round(p * r / 2**31); p * rl + pl * rh < 2**31
        ph: int = p >> 15
        pl: int = p & 0x7FFF
        hh: int = ph * rh
        t: int = ph * rl + pl * rh + ((pl * rl) >> 15)
        m: int = (hh >> 1) + ((((hh & 1) << 15) + t + 0x8000) >> 16)
        if neg:
            m = 0 - m
        p = pc[i] + m
        i -= 1
    # q = r * r in Q33 from r in Q32 (r2 = r * 2**32, |r2| < 2**30.6)
    r2: int = (hi << 9) + ((lo + 0x2000) >> 14)
    if r2 < 0:
        r2 = 0 - r2
    h16: int = r2 >> 16
    l16: int = r2 & 0xFFFF
    l15: int = l16 >> 1  # l16 * l16 could reach 2**32
    q: int = 2 * h16 * h16 + ((h16 * l16 + ((l15 * l15) >> 15) + 0x2000)
                              >> 14)
    # tail = q * T in Q34 (< 0.08 * 2**34); the middle products are
    # halved so their sum stays below 2**31.
    qh: int = q >> 15
    ql: int = q & 0x7FFF
    ph = p >> 15
    pl = p & 0x7FFF
    tail: int = qh * ph + ((((qh * pl) >> 1) + ((ql * ph) >> 1)
                            + ((ql * pl) >> 16) + 0x2000) >> 14)
    # E = 1 + r + tail at scale 2**-46, in 23-bit limbs
    el: int = lo + ((tail & 0x7FF) << 12)
    s[0] = k
    s[1] = hi + (1 << 23) + (tail >> 11) + (el >> 23)
    s[2] = el & M23


@micropython.viper
def vexp(p, c, st, x, out):
    """out[p[2] + i] = expf(x[p[0] + i * p[1]]) for i < p[3] (float32
    words; the output may be the input). c: EXP_Q31; st: array('i', 3)."""
    pp = ptr32(p)
    ps = ptr32(st)
    one: int = 1
    H23: int = one << 23
    M23: int = H23 - 1
    S31: int = one << 31
    INF: int = 0xFF * (one << 23)  # no folding: > small int
    xa: int = int(ptr32(x)) + pp[0] * 4
    xs: int = pp[1] * 4
    po: int = int(ptr32(out)) + pp[2] * 4
    n: int = pp[3]
    while n > 0:
        n -= 1
        a: int = ptr32(xa)[0]
        xa += xs
        E: int = (a >> 23) & 0xFF
        m: int = a & M23
        sg: int = (a >> 31) & 1
        res: int = 0
        if E == 0xFF:
            if m:
                res = a | (one << 22)  # NaN
            elif sg == 0:
                res = INF  # exp(+inf)
        elif E >= 134:  # |x| >= 128: overflow or underflow
            if sg == 0:
                res = INF
        elif E < 101:  # |x| < 2**-26 (and 0, subnormals)
            res = 0x3F800000
        else:
            m |= H23
            h: int = 0
            lo: int = 0
            if E >= 104:  # X = m * 2**(E - 104)
                sh: int = E - 104
                if sh <= 23:
                    h = m >> (23 - sh)
                    lo = (m << sh) & M23
                else:
                    h = m << (sh - 23)
            else:
                lo = m >> (104 - E)
            if sg:
                h = 0 - h
                lo = 0 - lo
                if lo < 0:
                    lo += H23
                    h -= 1
            _expk(h, lo, c, st)
            k: int = (ps[0] ^ S31) - S31
            eh: int = ps[1]
            el: int = ps[2]
            e: int = k + 127
            if eh < H23:  # E < 1: one more bit from the low limb
                eh = (eh << 1) | (el >> 22)
                el = (el << 1) & M23
                e -= 1
            # 24-bit mantissa, 6 guard bits and a sticky bit
            S: int = (eh << 6) | (el >> 17)
            if el & 0x1FFFF:
                S |= 1
            # round S * 2**(e - 156) to float32 (fl() in f32.py's doc)
            # >>> round res
            if e >= 0xFF:
                res = INF
            else:
                if e <= 0:
                    sh = 1 - e
                    if sh > 30:
                        S = 1
                    else:
                        t: int = S & ((one << sh) - 1)
                        S = S >> sh
                        if t:
                            S |= 1
                    e = 1
                res = ((e - 1) << 23) + (S >> 6)
                g: int = S & 63
                if g > 32 or (g == 32 and (res & 1)):
                    res += 1
            # <<< round
        ptr32(po)[0] = res
        po += 4


@micropython.viper
def vtanh(p, c, tc, st, x, out):
    """out[p[2] + i] = tanhf(x[p[0] + i * p[1]]) for i < p[3] (float32
    words). c: EXP_Q31, tc: TANH_Q30, st: array('i', 3)."""
    pp = ptr32(p)
    ps = ptr32(st)
    pt = ptr32(tc)
    one: int = 1
    H23: int = one << 23
    H29: int = one << 29
    H30: int = one << 30
    M23: int = H23 - 1
    MAG: int = (one << 31) - 1
    S31: int = one << 31
    xa: int = int(ptr32(x)) + pp[0] * 4
    xs: int = pp[1] * 4
    po: int = int(ptr32(out)) + pp[2] * 4
    n: int = pp[3]
    while n > 0:
        n -= 1
        a: int = ptr32(xa)[0]
        xa += xs
        E: int = (a >> 23) & 0xFF
        m: int = (a & M23) | H23
        sg: int = (a >> 31) & 1
        mag: int = a & MAG
        res: int = 0
        S: int = 0
        e: int = 0
        if E == 0xFF and (a & M23):
            res = a | (one << 22)  # NaN
        elif E < 115:  # |x| < 2**-12: tanh(x) rounds to x
            res = a
        elif mag >= 0x4110 * (one << 16):  # |x| >= 9.0f: rounds to +-1
            res = 0x3F800000 | (sg << 31)
        elif mag < 0x3F0CCCCD:  # |x| < 0.55: x * T(x * x)
            xq: int = m >> (120 - E) if E < 120 else m << (E - 120)
            xh: int = xq >> 15
            xl: int = xq & 0x7FFF
            u: int = xh * xh + ((2 * xh * xl + ((xl * xl) >> 15)
                                  + 0x4000) >> 15)  # x*x in Q30
            uh: int = u >> 15
            ul: int = u & 0x7FFF
            q: int = (pt[11] ^ S31) - S31  # coefficients are signed
            i: int = 10
            while i >= 0:
                neg: int = 0
                aq: int = q
                if q < 0:
                    neg = 1
                    aq = 0 - q
                ah: int = aq >> 15
                al: int = aq & 0x7FFF
                mm: int = ah * uh + ((ah * ul + al * uh + ((al * ul) >> 15)
                                      + 0x4000) >> 15)
                if neg:
                    mm = 0 - mm
                q = ((pt[i] ^ S31) - S31) + mm
                i -= 1
            # x * T: 24-bit mantissa times Q30 T, top 30 bits + sticky
            mh: int = m >> 12
            ml: int = m & 0xFFF
            th: int = q >> 15
            tl: int = q & 0x7FFF
            B: int = mh * tl
            C: int = ml * th
            low: int = ((B & 0xFFF) << 12) + ((C & 0x1FF) << 15) + ml * tl
            S = mh * th * 8 + (B >> 12) + (C >> 9) + (low >> 24)
            low = low & 0xFFFFFF
            e = E
            if S < H29:
                S = (S << 1) | (low >> 23)
                low = low & 0x7FFFFF
                e -= 1
            if low:
                S |= 1
        else:  # 1 - 2 / (exp(2|x|) + 1), exp(2|x|) = P * 2**(k - 29)
            _expk(m << (E - 126), 0, c, st)
            k: int = ps[0]
            den: int = (ps[1] << 6) + (ps[2] >> 17) + (one << (29 - k))
            # q = floor(2**(61 - k) / den): D in Q31, <= 0.5
            nb: int = 61 - k
            rem: int = 0
            q = 0
            while nb >= 0:
                rem = rem << 1
                if nb == 61 - k:
                    rem = 1
                q = q << 1
                if rem >= den:
                    rem -= den
                    q |= 1
                nb -= 1
            S = H30 - ((q + 1) >> 1)  # (1 - D) in Q30
            if rem or (q & 1):
                S |= 1
            e = 126
        if S:
            # round S * 2**(e - 156) to float32 (no overflow / subnormal)
            res = ((e - 1) << 23) + (S >> 6)
            g: int = S & 63
            if g > 32 or (g == 32 and (res & 1)):
                res += 1
            res |= sg << 31
        ptr32(po)[0] = res
        po += 4


@micropython.viper
def nbits(x: int) -> int:
    """The bit length of 0 <= x < 2**30 (0 for 0)."""
    n: int = 0
    while x:
        n += 1
        x = x >> 1
    return n


@micropython.viper
def unpack_m(y, i: int) -> int:
    """The significand m of the finite non-zero float32 word y[i] (ptr32:
    y 4-byte aligned), normalized to 2**23 <= m < 2**24, subnormals
    included: |y[i]| = m * 2**unpack_e(y, i)."""
    a: int = ptr32(y)[i]
    one: int = 1
    H23: int = one << 23
    m: int = a & (H23 - 1)
    if (a >> 23) & 0xFF:
        return m | H23
    return m << (24 - int(nbits(m)))


@micropython.viper
def unpack_e(y, i: int) -> int:
    """The exponent e of the finite non-zero float32 word y[i] (ptr32)
    with |y[i]| = unpack_m(y, i) * 2**e: from -172 (the least subnormal)
    to 104."""
    a: int = ptr32(y)[i]
    E: int = (a >> 23) & 0xFF
    if E:
        return E - 150
    return int(nbits(a & 0x7FFFFF)) - 173


@micropython.viper
def put(y, i: int, neg: int, m: int, e: int):
    """y[i] = the float32 bits of (-1)**neg * m * 2**e (ptr32), for
    0 < m < 2**24 given exactly (a subnormal result must be exact too:
    the bits shifted out are zero); infinity above the float32 range."""
    one: int = 1
    H23: int = one << 23
    L: int = int(nbits(m))
    top: int = e + L - 1  # exponent of the leading bit
    r: int = 0
    if top > 127:
        r = 0xFF * H23
    elif top >= -126:
        r = ((top + 127) << 23) | ((m << (24 - L)) & (H23 - 1))
    else:
        k: int = e + 149
        if k >= 0:
            r = m << k
        else:
            r = m >> (0 - k)
    if neg:
        r = r | (one << 31)
    ptr32(y)[i] = r


@micropython.viper
def round_put(y, i: int, neg: int, hi: int, lo: int, w: int, e: int):
    """y[i] = the float32 bits of (-1)**neg * F * 2**e with F = hi * 2**w
    + lo (0 <= hi, lo < 2**30, lo < 2**w, w <= 29, F > 0) rounded to 24
    significant bits, to nearest, ties to even (IEEE 754's rounding to
    float32 of a value in the normal range: no subnormal result, put()
    gives infinity above the range)."""
    one: int = 1
    L: int = int(nbits(lo))
    if hi:
        L = int(nbits(hi)) + w
    m: int = (hi << w) | lo
    if L > 24:
        d: int = L - 24
        g: int = 0
        st: int = 0
        if d <= w:
            m = (hi << (w - d)) | (lo >> d)
            g = (lo >> (d - 1)) & 1
            st = lo & ((one << (d - 1)) - 1)
        else:
            m = hi >> (d - w)
            g = (hi >> (d - w - 1)) & 1
            st = lo | (hi & ((one << (d - w - 1)) - 1))
        if g and (st or (m & 1)):
            m += 1
            if m == one << 24:
                m = m >> 1
                d += 1
        e += d
    put(y, i, neg, m, e)


@micropython.viper
def sqrt_word(y, i: int):
    """y[i] = sqrtf(y[i]) for a positive, finite, non-zero float32 word
    (ptr32: y 4-byte aligned), correctly rounded as IEEE 754 asks (x86's
    sqrtss, which std::sqrt(float) compiles to in TFLM's elementwise.cc
    SqrtEval and reference/pooling.h L2Pool). Zeros, infinities, NaNs and
    negative numbers are the caller's (their results differ by kernel).

    The root of m * 2**26 (m the 24-bit significand, its exponent made
    even) is formed digit by digit to 25 or 26 bits plus a remainder, and
    rounded once."""
    one: int = 1
    H23: int = one << 23
    m: int = int(unpack_m(y, i))
    ex: int = int(unpack_e(y, i))
    if ex & 1:  # make the exponent even
        m = m << 1
        ex -= 1
    # q = floor(sqrt(m * 2**26)), rem the remainder: 26 bit pairs, the
    # top 13 from m
    q: int = 0
    rem: int = 0
    k: int = 25
    while k >= 0:
        pair: int = 0
        if k >= 13:
            pair = (m >> (2 * (k - 13))) & 3
        rem = (rem << 2) | pair
        t: int = (q << 2) | 1
        if rem >= t:
            rem -= t
            q = (q << 1) | 1
        else:
            q = q << 1
        k -= 1
    drop: int = 1
    if q >= one << 25:
        drop = 2
    rb: int = (q >> (drop - 1)) & 1
    sticky: int = rem | (q & ((one << (drop - 1)) - 1))
    mant: int = q >> drop
    he: int = ((ex + 400) >> 1) - 200  # ex / 2
    r: int = ((he + drop + 137) << 23) + (mant - H23)
    if rb and (sticky or (mant & 1)):
        r += 1
    ptr32(y)[i] = r


@micropython.viper
def mulhi30(a: int, b: int) -> int:
    """floor(a * b / 2**30), or one less (the low limbs' product is
    truncated), for 0 <= a, b <= 2**30, from 15-bit limbs."""
    ah: int = a >> 15
    al: int = a & 0x7FFF
    bh: int = b >> 15
    bl: int = b & 0x7FFF
    return ah * bh + ((ah * bl + al * bh + ((al * bl) >> 15)) >> 15)


@micropython.viper
def horner30(c, u: int) -> int:
    """2**30 + sum c[k] u**(k+1) by Horner in Q30 (u in Q30, 0 <= u <
    2**30; c ends with a 0 entry), clamped below 2**30."""
    pc = ptr32(c)
    one: int = 1
    S: int = one << 31
    k: int = 0
    while pc[k + 1]:
        k += 1
    p: int = (pc[k] ^ S) - S
    while k >= 0:
        neg: int = 0
        if p < 0:
            neg = 1
            p = 0 - p
        t: int = int(mulhi30(p, u))
        if neg:
            t = 0 - t
        k -= 1
        if k >= 0:
            p = ((pc[k] ^ S) - S) + t
        else:
            p = (one << 30) + t
    if p >= one << 30:
        p = (one << 30) - 1
    return p
