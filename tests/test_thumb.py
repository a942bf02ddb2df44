"""The Thumb machine code of kernels/thumb.py, thumb_dw.py,
thumb_softmax.py, thumb_pool.py, thumb_rescale.py and thumb_lstm.py, on
an emulated Cortex-M0.

CI has no Thumb MicroPython, so the unix port runs the viper loops that
these functions replace on Cortex-M boards. Here the bytes mpy-cross
writes for armv6m run in unicorn (tests/thumb_emu.py) and must meet the
contract of the viper loop they replace, on random and extreme data,
with no unaligned or stray access. (With the package on an emulated
Cortex-M0+ running MicroPython, person_detect, KWS, micro_speech,
ResNet-8, AD01 and test_conv give the unix port's output bytes: see
bench/device.md.)
"""

import random
import struct

import pytest

pytest.importorskip("unicorn")

from thumb_emu import (Emulator, ThumbError, asm_functions,  # noqa: E402
                       block_layout)

DOTS = block_layout("tflm/kernels/thumb.py", "DOTS_BLOCK")
PX = block_layout("tflm/kernels/thumb.py", "PX_BLOCK")
DW = block_layout("tflm/kernels/thumb_dw.py", "DW_BLOCK")
PL = block_layout("tflm/kernels/thumb_dw.py", "PL_BLOCK")
SM = block_layout("tflm/kernels/thumb_softmax.py", "SM_BLOCK")
POOL = block_layout("tflm/kernels/thumb_pool.py", "POOL_BLOCK")
GATE = block_layout("tflm/kernels/thumb_lstm.py", "GATE_BLOCK")


@pytest.fixture(scope="module")
def code():
    """{name: machine code} of every asm function of the package."""
    out = {}
    for rel in ("thumb.py", "thumb_dw.py", "thumb_softmax.py",
                "thumb_pool.py", "thumb_rescale.py", "thumb_lstm.py"):
        got = asm_functions("tflm/kernels/" + rel)
        assert not set(got) & set(out), rel
        out.update(got)
    return out


def _wrap(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def _dots_ref(v, w, ws, bias, base, nf):
    """The viper loop of conv._conv_1x1 / conv._conv_any."""
    n = len(v)
    return [_wrap(bias[k] + base + sum((w[k * ws + i] ^ 0x80) * v[i]
                                       for i in range(n)))
            for k in range(nf)]


def _run_dots(code, v, w, ws, bias, base, nf, w_offset=0, m4=False):
    emu = Emulator(m4)
    n = len(v)
    va = emu.alloc(struct.pack("<%di" % n, *v))
    wa = emu.alloc(w, offset=w_offset, unaligned=m4)  # LDR: M4 only
    ba = emu.alloc(struct.pack("<%di" % nf, *bias))
    oa = emu.alloc(b"\xee" * 4 * nf, writable=True)
    blk = [0] * 9
    blk[DOTS.index("V")] = va
    blk[DOTS.index("V8")] = va + 4 * (n & ~7)
    blk[DOTS.index("VE")] = va + 4 * n
    blk[DOTS.index("WP")] = wa
    blk[DOTS.index("WS")] = ws
    blk[DOTS.index("BP")] = ba
    blk[DOTS.index("BASE")] = base & 0xFFFFFFFF
    blk[DOTS.index("OUT")] = oa
    blk[DOTS.index("NF")] = nf
    pa = emu.alloc(struct.pack("<9I", *blk), writable=True)
    r0 = emu.call(code["dots"], pa - 12, 12)  # a buffer, an offset
    after = struct.unpack("<9I", emu.read(pa, 36))
    return r0, emu.words(oa, nf), after, (wa, ba, oa), emu.count


@pytest.mark.parametrize("n", [1, 7, 8, 9, 16, 27, 64, 75])
def test_dots_matches_the_viper_loop(code, n):
    rng = random.Random(n)
    for trial in range(6):
        nf = rng.randint(1, 5)
        ws = n + rng.randint(0, 3)  # filters need not be contiguous
        v = [rng.randint(-255, 255) for _ in range(n)]
        w = bytes(rng.randrange(256) for _ in range(ws * nf))
        bias = [rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(nf)]
        base = rng.randint(-2 ** 31, 2 ** 31 - 1)
        r0, out, after, (wa, ba, oa), _ = _run_dots(
            code, v, w, ws, bias, base, nf, w_offset=trial % 4)
        assert r0 == 0  # a small int: the call allocates nothing
        assert out == _dots_ref(v, w, ws, bias, base, nf)
        # the block is used up as documented
        assert after[DOTS.index("WP")] == wa + nf * ws
        assert after[DOTS.index("BP")] == ba + 4 * nf
        assert after[DOTS.index("OUT")] == oa + 4 * nf
        assert after[DOTS.index("NF")] == 0


def test_dots_wraps_like_int32(code):
    """Sums wrap modulo 2**32, as the viper loop's on a 32-bit port and
    its int32 store on a 64-bit one."""
    n = 9
    v = [2 ** 31 - 1, -2 ** 31, 2 ** 30] + [255] * (n - 3)
    w = bytes([0x7F, 0xFF, 0x00] + [0x7F] * (n - 3))
    bias = [2 ** 31 - 1]
    out = _run_dots(code, v, w, n, bias, 2 ** 31 - 7, 1)[1]
    assert out == _dots_ref(v, w, n, bias, 2 ** 31 - 7, 1)


def test_dots_refuses_nothing_it_should_not_read(code):
    """The harness itself: a window that is not word-aligned is an
    unaligned 32-bit load, which a Cortex-M0 faults on."""
    emu = Emulator()
    va = emu.alloc(b"\x00" * 40, offset=2)
    wa = emu.alloc(b"\x00" * 10)
    ba = emu.alloc(b"\x00" * 4)
    oa = emu.alloc(b"\x00" * 4, writable=True)
    pa = emu.alloc(struct.pack("<9I", va, va + 32, va + 40, wa, 10, ba, 0,
                               oa, 1), writable=True)
    with pytest.raises(ThumbError, match="unaligned"):
        emu.call(code["dots"], pa, 0)


def test_dots_instructions_per_mac(code):
    """The point of the machine code: at most 6 instructions per
    multiply-accumulate on a long window (the viper loop: 11)."""
    n, nf = 256, 4
    rng = random.Random(1)
    v = [rng.randint(-255, 255) for _ in range(n)]
    w = bytes(rng.randrange(256) for _ in range(n * nf))
    count = _run_dots(code, v, w, n, [0] * nf, 0, nf)[4]
    assert count / (n * nf) <= 6.0


def _fold(m, shift):
    """depthwise_conv._dwp's requantization words for multiplier m and
    shift: (ls, M0, M1, M2, KC, SM, SE), RoundingDivideByPOT folded in."""
    ls, e = max(shift, 0), max(-shift, 0)
    m0, m1, m2 = m & 0x7FF, (m >> 11) & 0x7FF, m >> 22
    kc, sm, se = 256, 0, 9 + e
    if e > 21:
        m0 = m1 = m2 = kc = 0
    elif e:
        kc, sm = 256 + (1 << (8 + e)), -512
    return ls, m0, m1, m2, kc, sm, se


def _shift(rng):
    """A requantization shift: mostly one that maps sums of up to 2**20
    onto the int8 range without saturating, so that every bit of the
    arithmetic shows in the output; sometimes the edges of the fast path
    and beyond it."""
    if rng.random() < 0.75:
        return -rng.randint(7, 14)
    return rng.choice([-31, -22, -21, -20, -1, 0, 1, 4])


def _clamp(rng):
    """The activation range (LO, HI): mostly the whole int8 range."""
    if rng.random() < 0.7:
        return -128, 127
    return tuple(sorted(rng.sample(range(-128, 128), 2)))


def _dw_case(code, rng, lim=1 << 20, fn="dw", m4=False, wide=False,
             shape=None, strict=False, ex=False):
    """One random tile through thumb.dw, called as _dwp calls it (again
    after each pending value, until it returns 0 or NR is 0); checks every
    output byte against TFLM's MultiplyByQuantizedMultiplier
    (gemmlowp.mbqm_ref) and that exactly the values beyond LIM are
    pending, unwritten. With m4, on the Cortex-M4, the plane's words may
    be read at any address (thumb_dw_dsp.py) unless strict; wide:
    weights at the int16 edges; shape: (KH, KW, DX, NC, NR, XS). Returns
    the instructions of the calls. ex (dw3 on the Cortex-M4): the exact
    requantization (EK, EE in the words of DX, KWX; thumb_dw_dsp.py), a
    right shift of 2..23, any multiplier, bias and sum, nothing pending;
    W the int8 taps OS bytes apart at any address, BI the bias, KC the
    padding's byte zc, M0 the multiplier. A dw3 call without ex has EE
    (KWX) 0."""
    from tflm.kernels.gemmlowp import mbqm_ref
    kh = rng.choice([1, 2, 3, 3, 4, 10])
    kw = rng.choice([1, 2, 3, 3, 4, 5, 7, 8, 9])
    dx = rng.choice([1, 1, 1, 2, 3])  # horizontal dilation
    if fn == "dw3":
        kh = kw = 3
        dx = 1
    nc, nr = rng.randint(1, 5), rng.randint(1, 3)
    xs, os_ = rng.randint(1, 3), rng.randint(1, 4)
    if shape:
        kh, kw, dx, nc, nr, xs = shape
    rs = (nc - 1) * xs + (kw - 1) * dx + 1 + rng.randint(0, 3)
    xr = rs * rng.randint(1, 2)
    orr = nc * os_ + rng.randint(0, 3)
    m = rng.randint(1 << 30, (1 << 31) - 1)
    shift = _shift(rng)
    ls, m0, m1, m2, kc, sm, se = _fold(m, shift)
    zo = rng.randint(-128, 127)
    lo, hi = _clamp(rng)
    plane = bytes(rng.randrange(256) for _ in range((nr - 1) * xr
                                                   + (kh - 1) * rs + rs))
    w = [rng.randint(-128, 127) for _ in range(kh * kw)]
    if wide:
        w = [(rng.choice([-32768, 32767, -32767, 32766])
              if rng.random() < 0.5 else rng.randint(-32768, 32767)) >> ls
             for _ in range(kh * kw)]
    bias = rng.randint(-(1 << 20), 1 << 20) >> ls
    if ex:
        shift = -rng.choice([2, 2, 3, 23, 22] + list(range(2, 24)) +
                            list(range(5, 14)) * 4)
        m = rng.choice([0, 1, (1 << 31) - 1, 1 << 30,
                        rng.randint(0, (1 << 31) - 1),
                        rng.randint(1 << 30, (1 << 31) - 1)])
        ls = 0
        bias = rng.choice([rng.randint(-(1 << 31), (1 << 31) - 1),
                           rng.randint(-(1 << 20), 1 << 20),
                           rng.randint(-(1 << 12), 1 << 12),
                           -(1 << 31), (1 << 31) - 1])
    emu = Emulator(m4)
    pa = emu.alloc(plane, offset=rng.randint(0, 3),
                   unaligned=m4 and not strict)
    zc = 0
    if ex:
        w = [rng.randint(-128, 127) for _ in range(9)]
        if wide:
            w = [rng.choice([-128, 127]) for _ in range(9)]
        zc = rng.randint(0, 255)
        filt = bytearray(9 * os_)
        for t in range(9):
            filt[t * os_] = w[t] & 0xFF
        wa = emu.alloc(bytes(filt), offset=rng.randint(0, 3))
    else:
        wa = emu.alloc(struct.pack("<%di" % len(w), *[v << ls for v in w]))
    oa = emu.alloc(b"\xee" * (nr * orr), offset=rng.randint(0, 3),
                   writable=True)
    blk = dict(XA=0, W=wa, BI=bias << ls, M0=m0, M1=m1, M2=m2, KC=kc,
               SM=sm, SE=se, ZO=zo, LO=lo, HI=hi, OUT=0, OS=os_, XS=xs,
               NC=nc, CL=0, NR=nr, XR=xr, OR=orr, XA0=pa, OUT0=oa, KH=kh,
               KW=kw, RS=rs, LIM=lim, LIM2=2 * lim, PACC=0, PEND=0, DX=dx,
               KWX=kw * dx, REL=0)
    if fn == "dw3":  # EK, EE: 0 (the fast path) or the exact path's
        e = -shift
        blk.update(DX=((1 << (e - 2)) + (zo << (e - 1))) if ex else 0,
                   KWX=(e - 1) if ex else 0)
        if ex:
            blk.update(BI=bias, M0=m, M1=0, M2=0, KC=zc, LIM=0, LIM2=0)
    ba = emu.alloc(struct.pack("<%di" % len(DW),
                               *[_wrap(blk[k]) for k in DW]),
                   writable=True)
    word = {k: 4 * i for i, k in enumerate(DW)}
    pending = []
    count = 0
    while True:
        r0 = emu.call(code[fn], ba - 4, 4)
        count += emu.count
        if not r0:
            break
        pending.append((emu.words(ba + word["PACC"], 1)[0],
                        emu.words(ba + word["PEND"], 1)[0] - oa))
        if emu.words(ba + word["NR"], 1)[0] == 0:
            break
    want, out = {}, emu.read(oa, nr * orr)
    want_pending = []
    for r in range(nr):
        for c in range(nc):
            xa = r * xr + c * xs
            acc = bias + sum(w[ky * kw + kx] * plane[xa + ky * rs + kx * dx]
                             for ky in range(kh) for kx in range(kw))
            at = r * orr + c * os_
            if ex:  # TFLM's int32 sum
                acc = _wrap(acc - zc * sum(w))
            elif abs(acc << ls) > lim:
                want_pending.append((acc << ls, at))
                continue
            want[at] = min(max(mbqm_ref(acc, m, shift) + zo, lo), hi)
    assert pending == want_pending
    for at in range(nr * orr):
        got = out[at] - 256 * (out[at] > 127)
        if at in want:
            assert got == want[at], (at, kh, kw, m, shift)
        else:  # a pending value or a gap: untouched
            assert out[at] == 0xEE
    return count


@pytest.mark.parametrize("fn", ["dw", "dw3"])
def test_dw_matches_tflm_requantization(code, fn):
    """thumb_dw.dw's (and the 3x3 dw3's) outputs are TFLM's: the taps'
    sum, then MultiplyByQuantizedMultiplier + zero point, clamped; values
    beyond the fast path come back to the caller, one call each."""
    rng = random.Random(7)
    for _ in range(150):
        _dw_case(code, rng, fn=fn)


@pytest.mark.parametrize("fn", ["dw", "dw3"])
def test_dw_pending_values(code, fn):
    """LIM 0 (a channel whose left shift leaves no fast path): every
    nonzero sum is handed back, and the call goes on after each."""
    rng = random.Random(8)
    for _ in range(30):
        _dw_case(code, rng, lim=0, fn=fn)
    rng = random.Random(9)
    for _ in range(30):
        _dw_case(code, rng, lim=3000, fn=fn)


def _px_case(code, rng, lim=1 << 20, m4=False, sizes=(1, 3, 8, 9, 16, 27)):
    """One random run of thumb.pixels, called as conv._conv_1x1 calls it
    (again after each pixel with pending values); checks every output
    byte against TFLM's MultiplyByQuantizedMultiplier and the pending
    ones against the same conditions as requant_i8b's fast path (m4: on
    a Cortex-M4, for thumb_dsp.pixels; sizes: the window lengths)."""
    from tflm.kernels.gemmlowp import mbqm_ref
    n = rng.choice(sizes)
    nf, npix = rng.randint(1, 6), rng.randint(1, 4)
    ws = n + rng.randint(0, 2)
    xs = n + rng.randint(0, 3)
    zp = rng.randint(-128, 127)
    per_channel = rng.random() < 0.7
    nm = nf if per_channel else 1
    ms = [rng.randint(1 << 30, (1 << 31) - 1) for _ in range(nm)]
    shifts = [_shift(rng) for _ in range(nm)]
    zo = rng.randint(-128, 127)
    lo, hi = _clamp(rng)
    x = bytes(rng.randrange(256) for _ in range((npix - 1) * xs + n))
    w = bytes(rng.randrange(256) for _ in range(ws * nf))
    bias = [rng.randint(-lim - (1 << 16), lim + (1 << 16))
            for _ in range(nf)]
    qstep = nf + rng.randint(0, 2)
    emu = Emulator(m4)
    va = emu.alloc(b"\0" * 4 * n, writable=True)
    # (the M4 reads the input and filter words at any address: unaligned
    # LDR, never LDRD or LDM, which the harness still faults)
    xa = emu.alloc(x, offset=rng.randint(0, 3), unaligned=m4)
    wa = emu.alloc(w, offset=rng.randint(0, 3), unaligned=m4)
    ba = emu.alloc(struct.pack("<%di" % nf, *bias))
    ma = emu.alloc(struct.pack("<%di" % nm, *ms))
    sa = emu.alloc(bytes(s & 0xFF for s in shifts), offset=rng.randint(0, 3))
    aa = emu.alloc(b"\0" * 4 * nf, writable=True)
    qa = emu.alloc(b"\xee" * (npix * qstep), writable=True)
    blk = dict(V=va, V8=va + 4 * (n & ~7), VE=va + 4 * n, WP=0, WS=ws, BP=0,
               BASE=0, OUT=0, NF=0, X=xa, XS=xs, OFF=-zp - 128, NPIX=npix,
               MP0=ma, MSTEP=4 if per_channel else 0, SP0=sa,
               SSTEP=1 if per_channel else 0, ZO=zo, LO=lo, HI=hi,
               QOUT=qa, QSTEP=qstep, PEND=0, LIM=lim, LIM2=2 * lim,
               WP0=wa, BP0=ba, ACC=aa, NF0=nf, MP=0, SP=0, Q=0, REL=0)
    word = {k: 4 * i for i, k in enumerate(PX)}
    pa = emu.alloc(struct.pack("<%di" % len(PX),
                               *[_wrap(blk[k]) for k in PX]),
                   writable=True)
    pending = []
    while emu.call(code["pixels"], pa, 0):
        done = (emu.words(pa + word["QOUT"], 1)[0] - qa) // qstep - 1
        pending.append((done, emu.words(pa + word["PEND"], 1)[0],
                        emu.words(aa, nf)))
        emu.uc.mem_write(pa + word["PEND"], b"\0" * 4)
        if emu.words(pa + word["NPIX"], 1)[0] == 0:
            break
    out = emu.read(qa, npix * qstep)
    want_pending = []
    for p in range(npix):
        v = [(x[p * xs + i] ^ 0x80) - 128 - zp for i in range(n)]
        accs, slow = [], 0
        for k in range(nf):
            acc = bias[k] + sum((w[k * ws + i] ^ 0x80) * v[i]
                                for i in range(n)) - 128 * sum(v)
            accs.append(acc)
            m, s = ms[k % nm], shifts[k % nm]
            at = p * qstep + k
            if 0 <= -s <= 21 and abs(acc) <= lim:
                got = out[at] - 256 * (out[at] > 127)
                assert got == min(max(mbqm_ref(acc, m, s) + zo, lo), hi)
            else:
                slow += 1
                assert out[at] == 0xEE
        if slow:
            want_pending.append((p, slow, accs))
        assert out[p * qstep + nf:(p + 1) * qstep] == \
            b"\xee" * (qstep - nf)  # the gap: untouched
    assert pending == want_pending


def test_pixels_matches_tflm_requantization(code):
    """thumb.pixels: gather, sums and requantized bytes are TFLM's; the
    values beyond the fast path are left to the caller, a pixel at a
    time."""
    rng = random.Random(11)
    for _ in range(120):
        _px_case(code, rng)
    for _ in range(30):
        _px_case(code, rng, lim=2000)


def test_plane_copies_a_channel_with_padding(code):
    """thumb_dw.plane: the rows in the image hold x ^ 0x80 between JL and
    JH (read with a stride), everything else of the plane the padding's
    byte, and nothing outside the plane's rows is written."""
    _plane_cases(code)


def _plane_cases(code, m4=False, n=200, cmax=9):
    """test_plane_copies_a_channel_with_padding's checks, n random
    planes of 1..cmax columns (with m4 on the Cortex-M4)."""
    rng = random.Random(12)
    for _ in range(n):
        rows, cols = rng.randint(1, 6), rng.randint(1, cmax)
        pww = cols + rng.randint(0, 3)
        ra = rng.randint(0, rows)
        rb = rng.randint(ra, rows)
        jl = rng.randint(0, cols)
        jh = rng.randint(jl, cols)
        cs, zc = rng.randint(1, 5), rng.randrange(256)
        srs = (jh - jl) * cs + rng.randint(0, 7)
        src = bytes(rng.randrange(256) for _ in range(rows * srs + 1))
        emu = Emulator(m4)
        sa = emu.alloc(src, offset=rng.randint(0, 3))
        da = emu.alloc(b"\xee" * (rows * pww), offset=rng.randint(0, 3),
                       writable=True)
        blk = dict(DST=da, PWW=pww, COLS=cols, RA=ra, RB=rb, ROWS=rows,
                   JL=jl, JH=jh, SRC=sa, SRS=srs, CS=cs, ZC=zc, REL=0)
        pa = emu.alloc(struct.pack("<%dI" % len(PL),
                                   *[blk[k] for k in PL]),
                       writable=True)
        assert emu.call(code["plane"], pa - 8, 8) == 0
        want = bytearray(b"\xee" * (rows * pww))
        for r in range(rows):
            for j in range(cols):
                if ra <= r < rb and jl <= j < jh:
                    v = src[(r - ra) * srs + (j - jl) * cs] ^ 0x80
                else:
                    v = zc
                want[r * pww + j] = v
        assert emu.read(da, rows * pww) == bytes(want)


def _wrap32(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def _sm_block(emu, **words):
    blk = dict(SUM=0, MAX=0, C48=1515870810, CM32=-1010580540, EB=35,
               CAP=1 << 28, OFF=0, DEPTH=0, N=0)
    blk.update(words)
    return emu.alloc(struct.pack("<%di" % len(SM), *[blk[k] for k in SM]),
                     writable=True)


def test_softmax_row_and_gather(code):
    """thumb_softmax.row: MAX and the capped SUM of the row, as
    softmax_loops.row (the viper twin) computes them; gather: the row's
    E values. Nothing else is written, at any alignment of the row."""
    rng = random.Random(13)
    for case in range(300):
        n = rng.randint(1, 40)
        pre = rng.randint(0, 5)
        x = bytes(rng.randrange(256) for _ in range(pre + n + 3))
        hi = rng.choice([1 << 19, 1 << 26, 1 << 31])
        r_tab = [rng.randrange(hi) for _ in range(256)]
        e_tab = [rng.randrange(-2 ** 31, 2 ** 31) for _ in range(256)]
        cap = rng.choice([1 << 28, 0x7FFFFFFF, rng.randrange(1, 1 << 22)])
        emu = Emulator()
        xa = emu.alloc(x, offset=rng.randint(0, 3))
        ra = emu.alloc(struct.pack("<256i", *r_tab))
        ea = emu.alloc(struct.pack("<256i", *e_tab))
        sa = _sm_block(emu, CAP=cap, OFF=pre, DEPTH=n)
        assert emu.call(code["row"], xa, ra, sa) == 0
        got = dict(zip(SM, emu.words(sa, len(SM))))
        row = [v ^ 0x80 for v in x[pre:pre + n]]
        mx = max(row)
        total = 0
        for v in row:  # the twin's loop, on a 32-bit word
            total = _wrap32(total + r_tab[mx - v])
            if total > cap:
                total = cap
        assert (got["MAX"], got["SUM"]) == (mx, total), case
        assert (got["OFF"], got["DEPTH"], got["CAP"]) == (pre, n, cap)
        # the chunk [c, c + m) of the row
        c = rng.randint(0, n - 1)
        m = rng.randint(1, n - c)
        ba = emu.alloc(b"\xee" * 4 * (m + 1), writable=True)
        emu.uc.mem_write(sa + 4 * SM.index("OFF"),
                         struct.pack("<i", pre + c))
        emu.uc.mem_write(sa + 4 * SM.index("N"), struct.pack("<i", m))
        assert emu.call(code["gather"], ba, xa, ea, sa) == 0
        assert emu.words(ba, m) == [e_tab[mx - v] for v in row[c:c + m]]
        assert emu.read(ba + 4 * m, 4) == b"\xee" * 4


@pytest.mark.parametrize("eb", [35, 27])
def test_softmax_reciprocal_is_tflms(code, eb):
    """thumb_softmax.reciprocal: TFLM's GetReciprocal(sum, 12) (a plain
    reference written from common.h and gemmlowp) and the exponent, for
    an int8 (EB 35) and an int16 (EB 27) output, on sums from 1 to
    2**31 - 1 (a sum <= 0, which no row has, as 1: no endless loop); it
    writes m[0], s[0] and nothing else."""
    from test_kernels_misc import ref_get_reciprocal
    rng = random.Random(14 + eb)
    sums = [1, 2, 3, (1 << 19), (1 << 19) + 1, (1 << 28) - 1, 1 << 28,
            (1 << 30) - 1, 1 << 30, (1 << 31) - 1]
    sums += [rng.randrange(1 << 19, 1 << 28) for _ in range(300)]
    sums += [int(2 ** rng.uniform(0, 31)) for _ in range(300)]
    for v in sums + [0, -5, -2 ** 31]:  # (never: taken as 1)
        emu = Emulator()
        sa = _sm_block(emu, SUM=v, EB=eb)
        ma = emu.alloc(b"\xee" * 8, writable=True)
        xa = emu.alloc(b"\xee" * 8, writable=True)
        assert emu.call(code["reciprocal"], sa, ma, xa) == 0
        raw, nbou = ref_get_reciprocal(min(max(v, 1), 2 ** 31 - 1))
        exp = min(nbou + 31 - 8 - (35 - eb), 31)
        assert (emu.words(ma, 1)[0], emu.words(xa, 1)[0]) == (raw, -exp), v
        assert emu.read(ma + 4, 4) == emu.read(xa + 4, 4) == b"\xee" * 4


def _avg_pool_ref(x, g):
    """TFLM's reference_integer_ops::AveragePool (int8), written from
    pooling.h: the window clipped to the input, the int32 sum divided by
    the in-bounds tap count rounding half away from zero (C's truncating
    division), clamped; None if a window has no tap in the input."""
    out = []
    for b in range(g["N"]):
        for oy in range(g["OH"]):
            for ox in range(g["OW"]):
                iy0 = oy * g["SH"] - g["PH"]
                ix0 = ox * g["SW"] - g["PW"]
                fy0, fy1 = max(0, -iy0), min(g["FH"], g["H"] - iy0)
                fx0, fx1 = max(0, -ix0), min(g["FW"], g["W"] - ix0)
                n = (fy1 - fy0) * (fx1 - fx0)
                if fy1 <= fy0 or fx1 <= fx0:
                    return None
                for k in range(g["C"]):
                    t = sum(struct.unpack("b", x[(((b * g["H"] + iy0 + fy)
                                                  * g["W"] + ix0 + fx)
                                                 * g["C"] + k):][:1])[0]
                            for fy in range(fy0, fy1)
                            for fx in range(fx0, fx1))
                    v = (t + n // 2) // n if t > 0 else -((n // 2 - t) // n)
                    out.append(min(max(v, g["LO"]), g["HI"]))
    return out


def test_avg_pool_is_tflms(code):
    """thumb_pool.avg_pool: TFLM's int8 AveragePool on random geometry
    (padding, strides, windows beyond the input, several batches and
    channels), random and extreme inputs, any alignment of input and
    output; it writes the output and its counters in the scratch only."""
    rng = random.Random(15)
    done = 0
    while done < 150:
        g = dict(N=rng.randint(1, 2), H=rng.randint(1, 7),
                 W=rng.randint(1, 7), C=rng.randint(1, 5),
                 SH=rng.randint(1, 3), SW=rng.randint(1, 3),
                 FH=rng.randint(1, 5), FW=rng.randint(1, 5),
                 PH=rng.randint(0, 2), PW=rng.randint(0, 2))
        g["OH"] = rng.randint(1, 4)
        g["OW"] = rng.randint(1, 4)
        lo = rng.choice([-128, rng.randint(-128, 0)])
        g["LO"], g["HI"] = lo, rng.choice([127, rng.randint(lo, 127)])
        size = g["N"] * g["H"] * g["W"] * g["C"]
        kind = rng.randrange(3)
        x = bytes((rng.randrange(256), 0x80, 0x7F)[kind]
                  for _ in range(size))
        want = _avg_pool_ref(x, g)
        if want is None:
            continue
        done += 1
        emu = Emulator()
        xa = emu.alloc(x, offset=rng.randint(0, 3))
        ya = emu.alloc(b"\xee" * (len(want) + 1), offset=rng.randint(0, 3),
                       writable=True)
        acc = emu.alloc(b"\x00" * 4 * 16, writable=True)
        pa = emu.alloc(struct.pack("<%di" % len(POOL),
                                   *[g[k] for k in POOL]))
        assert emu.call(code["avg_pool"], xa, ya, acc, pa) == 0, g
        got = list(struct.unpack("%db" % len(want),
                                 emu.read(ya, len(want))))
        assert got == want, g
        assert emu.read(ya + len(want), 1) == b"\xee"


def test_fc_rows_names_the_dots_block():
    """fc_rows.py fills thumb.py's DOTS_BLOCK through named slots (its
    _D_<word> constants, in the block's order, then REL), and
    lstm_int8.py's names for fc_rows's parameter words are fc_rows's."""
    import os
    import re
    from conftest import PKG
    from tflm.kernels import fc_rows, lstm_int8
    with open(os.path.join(PKG, "tflm", "kernels", "fc_rows.py")) as f:
        src = f.read()
    got = re.findall(r"^_D_(\w+) = const\((\d+)\)$", src, re.M)
    assert [n for n, _ in got] == DOTS
    assert [int(v) for _, v in got] == list(range(len(DOTS)))
    assert fc_rows._REL == len(DOTS) and fc_rows._BLK == len(DOTS) + 1
    assert not re.search(r"\bblk\[\d", src)
    assert (lstm_int8._FC_X0, lstm_int8._FC_WO) == (fc_rows._X0,
                                                    fc_rows._WO)


def test_pool_loops_name_the_pool_block():
    """The viper pooling loops (pool_loops.py, max_pool.py, pool16.py)
    read thumb_pool.py's POOL_BLOCK through named slots: each module's
    _P_<word> constants are the block's words in its order, and their
    code indexes the block by name only (pooling_prep.py fills it)."""
    import os
    import re
    from conftest import PKG
    want = ["_P_" + w for w in POOL]
    for rel in ("pool_loops.py", "max_pool.py", "pool16.py"):
        with open(os.path.join(PKG, "tflm", "kernels", rel)) as f:
            src = f.read()
        got = re.findall(r"^(_P_\w+) = const\((\d+)\)$", src, re.M)
        assert [n for n, _ in got] == want, rel
        assert [int(v) for _, v in got] == list(range(len(POOL))), rel
        assert not re.search(r"\bq\[\d", src), rel


@pytest.mark.parametrize("per_channel", [0, 1])
def test_scale_is_tflms(code, per_channel):
    """thumb_rescale.scale: TFLM's MultiplyByQuantizedMultiplier
    (common.h, with C's int64 arithmetic: test_fixedpoint.mbqm_int64) on
    every value, per tensor (one multiplier and shift) or per channel,
    on random values of every magnitude and the int32 edges, multipliers
    from 0 to 2**31 - 1 and shifts from -31 to 30; it writes buf only
    (not a word past it), the multipliers and shifts read in place."""
    from test_fixedpoint import mbqm_int64, vectors
    x, m, shift = vectors(3000, 21 + per_channel)
    shift[5::37] = 31  # (quant.quantize_multiplier's largest is 30)
    for k in range(0, len(x), 300):
        xs = [int(v) for v in x[k:k + 300]]
        n = len(xs)
        ms = [int(v) for v in m[k:k + 300]]
        ss = [int(v) for v in shift[k:k + 300]]
        if not per_channel:
            ms, ss = ms[:1], ss[:1]
        emu = Emulator()
        ba = emu.alloc(struct.pack("<%di" % n, *xs) + b"\xee" * 4,
                       writable=True)
        ma = emu.alloc(struct.pack("<%di" % len(ms), *ms))
        sa = emu.alloc(struct.pack("<%di" % len(ss), *ss))
        assert emu.call(code["scale"], ba, 2 * n + per_channel, ma,
                        sa) == 0
        c = range(n) if per_channel else [0] * n
        want = mbqm_int64(xs, [ms[i] for i in c], [ss[i] for i in c])
        got = list(struct.unpack("<%di" % n, emu.read(ba, 4 * n)))
        assert got == [int(v) for v in want], k
        assert emu.read(ba + 4 * n, 4) == b"\xee" * 4
        assert emu.count / n <= 80  # (the viper twin: about 520)
    emu = Emulator()  # n = 0 touches nothing
    ba = emu.alloc(b"\xee" * 4, writable=True)
    ma = emu.alloc(struct.pack("<i", 1 << 30))
    assert emu.call(code["scale"], ba, per_channel, ma, ma) == 0
    assert emu.read(ba, 4) == b"\xee" * 4


def _ref_gate(g, t, table, n, add, kind, mult, shift):
    """The LSTM's gate loop, written from TFLM: lstm_eval.cc's clamped
    FC outputs and saturating AddElementWise, then
    reference_integer_ops::Logistic (int16, input_multiplier 0: x * 3)
    or Tanh (int16; input_multiplier MULT, input_left_shift SHIFT
    applied as (x * MULT + round) >> SHIFT: lstm_eval.cc's power-of-two
    case is folded into MULT by the kernel)."""
    def c16(v):
        return min(max(v, -32768), 32767)
    out = []
    for i in range(n):
        v = c16(c16(g[i]) + c16(t[i])) if add else g[i]
        if kind == 1:
            v *= 3
            a = abs(v)
            uh = a >> 9
            if uh >= 255:
                r = 0x7FFF << 10
            else:
                ua, ub = table[uh], table[uh + 1]
                r = (ua << 9) + (a & 0x1FF) * (ub - ua)
            r = r + (1 << 9) if v >= 0 else (1 << 25) - r + (1 << 9) - 1
            v = r >> 10
        elif kind == 2:
            rnd = 1 << (shift - 1) if shift > 0 else 0
            v = _wrap32(v * mult + rnd) >> shift
            a = abs(v)
            uh = a >> 8
            if uh >= 255:
                r = 0xFFFF << 8
            else:
                ua, ub = table[uh], table[uh + 1]
                r = (ua << 8) + (a & 0xFF) * (ub - ua)
            r = (r - (1 << 23) + (1 << 7) if v >= 0
                 else -r + (1 << 23) + (1 << 7) - 1)
            v = r >> 8
        out.append(v)
    return out


def test_lstm_gate_is_tflms(code):
    """thumb_lstm.gate: the sum of a gate's two FC outputs (each clamped
    to int16, the sum saturated) and the gate's int16 sigmoid or tanh,
    or the sum alone, or the tanh alone with the cell state's multiplier
    and shift, as TFLM computes them, on int16 values, values far
    outside int16 (the FCs' rescaled int32 outputs) and the edges, at
    any alignment of the table; it writes g only, N words."""
    from tflm.kernels.sigmoid_table import TABLE
    table = struct.unpack("<256H", TABLE)
    rng = random.Random(16)
    edges = [0, 1, -1, 32767, -32768, 32768, -32769, 2 ** 31 - 1,
             -2 ** 31, 10922, -10923, 21845, 98301]
    kinds = [(1, 1, 3, 0), (1, 2, 3, 0), (1, 0, 0, 0), (0, 2, 3, 0),
             (0, 1, 0, 0)]
    kinds += [(0, 2, 3 << s, 0) for s in range(15)]
    kinds += [(0, 2, 3, s) for s in (1, 2, 7, 15, 31)]
    for add, kind, mult, shift in kinds:
        n = 120
        g = [rng.choice(edges) if rng.random() < 0.2 else
             rng.choice([rng.randint(-32768, 32767),
                         rng.randint(-2 ** 31, 2 ** 31 - 1)])
             for _ in range(n)]
        t = [rng.choice(edges) if rng.random() < 0.2 else
             rng.choice([rng.randint(-32768, 32767),
                         rng.randint(-2 ** 20, 2 ** 20)])
             for _ in range(n)]
        if not add:  # int16 values (the cell state)
            g = [max(min(v, 32767), -32768) for v in g]
        emu = Emulator()
        ga = emu.alloc(struct.pack("<%di" % n, *g) + b"\xee" * 4,
                       writable=True)
        ta = emu.alloc(struct.pack("<%di" % n, *t))
        tab = emu.alloc(TABLE, offset=rng.randint(0, 3))
        blk = dict(N=n, ADD=add, KIND=kind, MULT=mult, SHIFT=shift)
        ba = emu.alloc(struct.pack("<%di" % len(GATE),
                                   *[blk[k] for k in GATE]))
        assert emu.call(code["gate"], ga, ta, tab, ba) == 0
        got = list(struct.unpack("<%di" % n, emu.read(ga, 4 * n)))
        want = _ref_gate(g, t, table, n, add, kind, mult, shift)
        assert got == want, (add, kind, mult, shift)
        assert emu.read(ga + 4 * n, 4) == b"\xee" * 4
        if kind and add:
            assert emu.count / n <= 75, emu.count / n


@pytest.mark.parametrize("kind,mult,shift", [(1, 3, 0), (2, 3, 2)])
def test_lstm_gate_every_int16(code, kind, mult, shift):
    """thumb_lstm.gate's activations on every int16 value (every
    interpolation point and rounding case of the table)."""
    from tflm.kernels.sigmoid_table import TABLE
    table = struct.unpack("<256H", TABLE)
    g = list(range(-32768, 32768))
    n = len(g)
    emu = Emulator()
    ga = emu.alloc(struct.pack("<%di" % n, *g), writable=True)
    tab = emu.alloc(TABLE, offset=1)
    blk = dict(N=n, ADD=0, KIND=kind, MULT=mult, SHIFT=shift)
    ba = emu.alloc(struct.pack("<%di" % len(GATE), *[blk[k] for k in GATE]))
    assert emu.call(code["gate"], ga, ga, tab, ba, limit=10 ** 8) == 0
    got = list(struct.unpack("<%di" % n, emu.read(ga, 4 * n)))
    assert got == _ref_gate(g, g, table, n, 0, kind, mult, shift)
