"""kernels/thumb_dw_dsp.py: the ARMv7E-M (Cortex-M4/M7/M33) DSP variants
of thumb_dw.dw, dw3 and plane, and dwm (one input channel), on an
emulated Cortex-M4.

The bytes mpy-cross writes for armv7emsp run in unicorn's Cortex-M4
(tests/thumb_emu.py) and must meet the contract of thumb_dw.py's
functions (DW_BLOCK, PL_BLOCK): every output byte TFLM's, the same
pending values (int32 sums) handed back one call each, for every filter
size, dilation and step, with the plane at any address (its words read
unaligned, as ARMv7-M's LDR does; nothing else unaligned) and nothing
read or written outside the call's buffers. A mutated DSP instruction
must fail these checks.
"""

import random
import struct

import pytest

pytest.importorskip("unicorn")

from test_thumb import DW, _dw_case, _plane_cases  # noqa: E402
from thumb_emu import Emulator, ThumbError, asm_functions  # noqa: E402

DSP_DW = "tflm/kernels/thumb_dw_dsp.py"


@pytest.fixture(scope="module")
def dsp():
    """{name: machine code} of thumb_dw_dsp.py, as an armv7emsp board
    loads it."""
    return asm_functions(DSP_DW, "armv7emsp")


@pytest.fixture(scope="module")
def m0():
    """thumb_dw.py's armv6m machine code: the path the DSP code
    replaces."""
    return asm_functions("tflm/kernels/thumb_dw.py")


@pytest.mark.parametrize("fn", ["dw", "dw3"])
def test_dw_matches_tflm_requantization(dsp, fn):
    """dw (every filter size 1..10 x 1..9, dilations 1..3: the 4-tap
    groups, their tails and the one-at-a-time rows) and dw3: outputs
    TFLM's, pending values the exact sums, with the plane at each
    address mod 4."""
    rng = random.Random(31)
    for _ in range(300):
        _dw_case(dsp, rng, fn=fn, m4=True)


@pytest.mark.parametrize("fn", ["dw", "dw3"])
def test_dw_pending_values(dsp, fn):
    """LIM 0 (every nonzero sum handed back, the call going on after
    each, in a row or at its end) and LIM 3000."""
    rng = random.Random(32)
    for _ in range(40):
        _dw_case(dsp, rng, lim=0, fn=fn, m4=True)
    rng = random.Random(33)
    for _ in range(40):
        _dw_case(dsp, rng, lim=3000, fn=fn, m4=True)


@pytest.mark.parametrize("fn", ["dw", "dw3"])
def test_dw_int16_weights(dsp, fn):
    """Weights at the int16 edges (the DSP contract's bound) against
    plane bytes 0..255: the pending sums (LIM 0: all of them) are the
    exact int32 sums, as thumb_dw's."""
    rng = random.Random(34)
    for _ in range(40):
        _dw_case(dsp, rng, lim=0, fn=fn, m4=True, wide=True)


def test_dw3_exact_requantization(dsp):
    """dw3 with EE >= 1 (right shifts 2..31): every int32 sum (biases up
    to the int32 edges, sums that wrap) requantized as TFLM's
    MultiplyByQuantizedMultiplier, multipliers 0..2**31 - 1 included,
    nothing pending; with the plane at each address mod 4."""
    rng = random.Random(37)
    for _ in range(400):
        _dw_case(dsp, rng, fn="dw3", m4=True, ex=True,
                 wide=rng.random() < 0.4)


def _dw3_row(code, x0, m, e, zo=0, lo=-128, hi=127):
    """dw3's exact path (EE = e - 1) on one row of 256 pixels whose sums
    are x0 + 0..255 (weight 1 on the first tap, 0 on the others): the
    output bytes, signed, and the instructions of the call."""
    emu = Emulator(True)
    nc, rs = 256, 264
    pa = emu.alloc(bytes(range(256)) + bytes(2 * rs + 4), unaligned=True)
    wa = emu.alloc(bytes([1, 0, 0, 0, 0, 0, 0, 0, 0]))
    oa = emu.alloc(b"\xee" * nc, writable=True)
    blk = dict(XA=0, W=wa, BI=x0, M0=m, M1=0, M2=0, KC=0, SM=0, SE=0,
               ZO=zo, LO=lo, HI=hi, OUT=0,
               OS=1, XS=1, NC=nc, CL=0, NR=1, XR=0, OR=0, XA0=pa, OUT0=oa,
               KH=3, KW=3, RS=rs, LIM=0, LIM2=0, PACC=0, PEND=0,
               DX=(1 << (e - 2)) + (zo << (e - 1)), KWX=e - 1, REL=0)
    ba = emu.alloc(struct.pack("<%di" % len(DW), *[
        (blk[k] + 2 ** 31) % 2 ** 32 - 2 ** 31 for k in DW]), writable=True)
    assert emu.call(code["dw3"], ba, 0) == 0
    return [b - 256 * (b > 127) for b in emu.read(oa, nc)], emu.count


def _ties(rng):
    """(x0, m, e, zo): rows of sums around the rounding ties of
    SaturatingRoundingDoublingHighMul (m = 2**30: odd x * m is 2**30 mod
    2**31; m = 2**30 + 1) and of RoundingDivideByPOT (x * m / 2**31 at
    k * 2**e +- 2**(e - 1), positive and negative), with the zero point
    that brings them into the int8 range; the int32 edges; m 0 and 1."""
    from tflm.kernels.gemmlowp import srdhm
    cases = []
    for e in list(range(2, 24)):
        for m in (1 << 30, (1 << 30) + 1, (1 << 31) - 1,
                  rng.randint(1 << 30, (1 << 31) - 1)):
            for sign in (1, -1):
                k = rng.randint(0, 100)
                v = sign * (k * (1 << e) + (1 << (e - 1)))
                x = (v << 31) // m
                x = max(-(1 << 31) + 128, min(x, (1 << 31) - 129))
                zo = -max(-100, min(100, sign * k))
                cases.append((x - 128, m, e, zo))
                assert any(srdhm(x + d, m) == v for d in range(-3, 4)) or \
                    abs(x) >= (1 << 31) - 129
    for e in (2, 3, 11, 23):
        for m in (0, 1, (1 << 31) - 1):
            cases += [(-(1 << 31), m, e, 0), ((1 << 31) - 256, m, e, 0),
                      (-128, m, e, 0)]
    return cases


def test_dw3_exact_rounding_edges(dsp):
    """dw3's exact path at the ties of both roundings (the sums x such
    that x * m lands on 2**30 mod 2**31, or the doubled high product on
    a half of 2**e, both signs), at the int32 edges and for m = 0, 1,
    2**31 - 1: every byte TFLM's. The saturating case of
    SaturatingRoundingDoublingHighMul (x = m = -2**31) needs a negative
    multiplier, which never takes this path (depthwise_conv's NEG_MARK)."""
    from tflm.kernels.gemmlowp import mbqm_ref
    rng = random.Random(38)
    for x0, m, e, zo in _ties(rng):
        got, _ = _dw3_row(dsp, x0, m, e, zo)
        want = [min(max(mbqm_ref(x0 + i, m, -e) + zo, -128), 127)
                for i in range(256)]
        assert got == want, (x0, m, e, zo)


def test_dw3_exact_path_instructions(dsp):
    """The exact path's cost per pixel of a long row: the 9 taps and the
    requantization in at most 36 instructions (the fast path with its
    pending check: about 43)."""
    from tflm.kernels.gemmlowp import mbqm_ref
    got, count = _dw3_row(dsp, -1000, 1518500250, 9, 3)
    assert got == [min(max(mbqm_ref(-1000 + i, 1518500250, -9) + 3, -128),
                       127) for i in range(256)]
    assert count / 256 <= 36, count / 256


@pytest.mark.parametrize("old,new", [
    ((0xF001, 0x4200), (0xF001, 0x4280)),  # and #2**31 -> #2**30
    ((0xF082, 0x4280), (0xF082, 0x4200)),  # eor #2**30 -> #2**31
    ((0xEB03, 0x73E1), (0xEB03, 0x73D1)),  # + acc asr #31 -> lsr #31
    ((0xFBC1, 0x230E), (0xFBE1, 0x230E)),  # smlal -> umlal
    ((0xE9D0, 0x341D), (0xE9D0, 0x431D)),  # ldrd EK, EE swapped
    ((0x4123,), (0x40E3,)),                # asrs r3, r4 -> lsrs
    ((0x570A,), (0x5D0A,)),                # ldrsb W0 -> ldrb
    ((0xEAC3, 0x4B05), (0xEAC5, 0x4B03)),  # pkhbt r11: W1, W4 swapped
    ((0xFB03, 0x2216), (0xFB03, 0x2206)),  # mls -> mla: BI
])
def test_a_mutated_exact_path_fails(dsp, old, new):
    """The exact path's checks (random tiles, the rounding edges) see
    each of its instructions: a mutant (the first occurrence changed)
    fails them."""
    fmt = "<%dH" % len(old)
    code = dsp["dw3"]
    assert struct.pack(fmt, *old) in code
    mutant = {"dw3": code.replace(struct.pack(fmt, *old),
                                  struct.pack(fmt, *new), 1)}
    from tflm.kernels.gemmlowp import mbqm_ref
    rng = random.Random(39)
    with pytest.raises((AssertionError, ThumbError)):
        for x0, m, e, zo in _ties(rng):
            got, _ = _dw3_row(mutant, x0, m, e, zo)
            assert got == [min(max(mbqm_ref(x0 + i, m, -e) + zo, -128), 127)
                           for i in range(256)]
        for _ in range(100):
            _dw_case(mutant, rng, fn="dw3", m4=True, ex=True)


def test_dw3_instructions_per_mac(dsp, m0):
    """The point: dw3 on a tile of 3x3 pixels takes under 6.5
    instructions per multiply-accumulate, everything counted (thumb_dw's
    dw3: about 10), and at most 0.6 times thumb_dw's instructions on the
    same tile; dw on micro_speech's 10x8 filter under 4.5 (thumb_dw:
    about 6)."""
    for fn, kh, kw, limit in (("dw3", 3, 3, 6.5), ("dw", 10, 8, 4.5)):
        counts = []
        for code, m4 in ((dsp, True), (m0, False)):
            rng = random.Random(5)
            counts.append(_dw_case(code, rng, fn=fn, m4=m4, shape=(
                kh, kw, 1, 8, 4, 1)))
        macs = kh * kw * 8 * 4
        assert counts[0] / macs <= limit, (fn, counts[0] / macs)
        assert counts[0] <= 0.6 * counts[1], (fn, counts)


def test_plane_matches_thumb_dw(dsp):
    """plane: thumb_dw.plane's checks (the image's bytes, the padding,
    nothing else written), on more planes: rows of 0..40 bytes, so the
    4-byte copy and its tail."""
    _plane_cases(dsp, m4=True, n=600, cmax=40)


def test_plane_instructions(dsp, m0):
    """The same bytes as thumb_dw.plane in fewer instructions: 0.85
    times its count on a 6x6 output's 8x8 plane (person_detect's 6x6x128
    layers: the rows' overhead dominates), 0.65 times on a 40x50 plane
    (its 48x48x8 layer's)."""
    from test_thumb import PL
    for rows, cols, c, limit in ((8, 8, 128, 0.85), (40, 50, 8, 0.65)):
        got = []
        for code, m4 in ((dsp, True), (m0, False)):
            emu = Emulator(m4)
            srs = (cols - 2) * c
            sa = emu.alloc(bytes(range(256)) * (srs * rows // 256 + 1))
            da = emu.alloc(b"\xee" * (rows * cols), writable=True)
            blk = dict(DST=da, PWW=cols, COLS=cols, RA=1, RB=rows - 1,
                       ROWS=rows, JL=1, JH=cols - 1, SRC=sa, SRS=srs, CS=c,
                       ZC=128, REL=0)
            pa = emu.alloc(struct.pack("<%dI" % len(PL),
                                       *[blk[k] for k in PL]),
                           writable=True)
            assert emu.call(code["plane"], pa, 0) == 0
            got.append((emu.count, emu.read(da, rows * cols)))
        assert got[0][1] == got[1][1]
        assert got[0][0] <= limit * got[1][0], (rows, got[0][0], got[1][0])


def test_the_plane_is_read_in_unaligned_words_only(dsp):
    """The taps are read in words at any address: a plane whose words
    the harness does not let the code read unaligned (as on ARMv6-M, or
    with CCR.UNALIGN_TRP set) fails at some address; the tests above
    run with only the plane allowed, so weights and block are read
    aligned."""
    rng = random.Random(35)
    for fn in ("dw", "dw3"):
        with pytest.raises(ThumbError, match="unaligned"):
            for _ in range(20):
                _dw_case(dsp, rng, fn=fn, m4=True, strict=True)


@pytest.mark.parametrize("fn,old,new", [
    ("dw3", (0xFA3F, 0xF292), (0xFA3F, 0xF282)),  # uxtb16 ror #8 -> ror 0
    ("dw3", (0xFB12, 0x111B), (0xFB12, 0x110B)),  # smlabt -> smlabb
    ("dw3", (0xFB13, 0x112C), (0xFB13, 0x111C)),  # smlatb -> smlabb
    ("dw3", (0xF854, 0x2C01), (0xF854, 0x2C00)),  # row 2 at -1 -> at 0
    ("dw3", (0xFB81, 0x230E), (0xFBA1, 0x230E)),  # smull -> umull
    ("dw3", (0xEB02, 0x5E83), (0xEB02, 0x5E43)),  # M2 << 22 -> << 21
    ("dw", (0xEAC8, 0x480A), (0xEAC8, 0x380A)),   # pkhbt lsl #16 -> #12
    ("dw", (0xFB24, 0x3309), (0xFB24, 0x3319)),   # smlad -> smladx
    ("dw", (0xFB04, 0x3305), (0xFB04, 0x3315)),   # mla -> mls
    ("dw", (0xEA47, 0x2485), (0xEA47, 0x24C5)),   # hi << 10 -> hi << 11
])
def test_a_mutated_instruction_fails(dsp, fn, old, new):
    """The checks see each DSP instruction: a mutant (the instruction's
    first occurrence changed) fails them."""
    pat = struct.pack("<2H", *old)
    code = dsp[fn]
    assert pat in code
    mutant = {fn: code.replace(pat, struct.pack("<2H", *new), 1)}
    rng = random.Random(36)
    for _ in range(20):
        _dw_case(dsp, random.Random(rng.random()), fn=fn, m4=True)
    with pytest.raises((AssertionError, ThumbError)):
        for _ in range(20):
            _dw_case(mutant, random.Random(rng.random()), fn=fn, m4=True,
                     lim=rng.choice([0, 1 << 20]))


def test_dsp_module_compiles_for_armv6m():
    """A port that freezes every thumb*.py compiles it too (only Thumb-1
    mnemonics, the ARMv7E-M instructions as data); the bytes are the same
    as for armv7emsp."""
    assert asm_functions(DSP_DW) == asm_functions(DSP_DW, "armv7emsp")


def test_blocks_are_thumb_dws():
    """depthwise_conv lays out one block for whichever module runs: the
    DSP module documents no block of its own and the offsets its code
    reads are DW_BLOCK's."""
    import os
    from host_tools import PKG_DIR
    src = open(os.path.join(PKG_DIR, "tflm", "kernels",
                            "thumb_dw_dsp.py")).read()
    assert "DW_BLOCK" in src and "# DW_BLOCK:" not in src
    assert DW.index("LIM") * 4 == 100 and DW.index("OS") * 4 == 52
    assert DW.index("KC") * 4 == 24 and DW.index("SE") * 4 == 32
    assert DW.index("LO") * 4 == 40 and DW.index("DX") * 4 == 116


def test_builds_take_the_module_of_their_arch():
    """romfs.for_arch: only a DSP arch's build has thumb_dw_dsp.py (with
    thumb_dw.py, which compiled models name); armv6m and armv7m builds
    thumb_dw.py alone."""
    from host_tools import romfs
    dsp, plain = DSP_DW, "tflm/kernels/thumb_dw.py"
    for arch in ("armv7em", "armv7emsp", "armv7emdp"):
        assert romfs.for_arch(dsp, arch) and romfs.for_arch(plain, arch)
    for arch in ("armv6m", "armv7m"):
        assert romfs.for_arch(plain, arch) and not romfs.for_arch(dsp, arch)
    for arch in ("x64", "xtensawin", "rv32imc"):
        assert not romfs.for_arch(dsp, arch)


def test_emulator_reads_unaligned_words_of_a_marked_buffer_on_m4():
    """The harness's rule (thumb_emu.Emulator): unaligned word reads pass
    on the M4 in a buffer allocated with unaligned, nowhere else."""
    ldr = struct.pack("<H", 0x6800)  # ldr r0, [r0, #0]
    bx = struct.pack("<H", 0x4770)   # bx lr
    for m4, unaligned, ok in ((True, True, True), (True, False, False),
                              (False, True, False)):
        emu = Emulator(m4)
        a = emu.alloc(b"\x01\x02\x03\x04\x05\x06", unaligned=unaligned)
        if ok:
            assert emu.call(ldr + bx, a + 1) == 0x05040302
        else:
            with pytest.raises(ThumbError, match="unaligned"):
                emu.call(ldr + bx, a + 1)


def _dwc_case(code, rng, shape=None):
    """One random tile through dwc, set up as dw_dsp.dwp does (one call
    for all channels; DW_BLOCK then PL_BLOCK, the loop's words in the
    exact path's unused ones): NHWC input of C channels (1..9), 3x3
    filter at any address, stride 1 or 2, padding, a tile anywhere in
    the output; checks every output byte against TFLM's
    DepthwiseConvPerChannel (gemmlowp.mbqm_ref, per-channel multipliers
    and right shifts 2..23) and that no other byte changes. shape: (H,
    W, C, S): the whole output, padding SAME. Returns the call's
    instructions."""
    from tflm.kernels.gemmlowp import mbqm_ref
    from test_thumb import PL
    h, w_, c, s = shape or (rng.randint(1, 9), rng.randint(1, 9),
                            rng.randint(1, 9), rng.choice([1, 1, 2]))
    ph, pw = rng.randint(0, 1), rng.randint(0, 1)
    if shape:  # padding SAME
        ph = pw = 1
    oh, ow = (h + 2 * ph - 3) // s + 1, (w_ + 2 * pw - 3) // s + 1
    if oh < 1 or ow < 1:
        ph = pw = 1
        oh, ow = (h - 1) // s + 1, (w_ - 1) // s + 1
    oy0 = rng.randint(0, oh - 1)
    oy1 = rng.randint(oy0 + 1, oh)
    ox0 = rng.randint(0, ow - 1)
    ox1 = rng.randint(ox0 + 1, ow)
    if shape:
        oy0, oy1, ox0, ox1 = 0, oh, 0, ow
    rows, cols = (oy1 - oy0 - 1) * s + 3, (ox1 - ox0 - 1) * s + 3
    pww = cols + rng.randint(0, 2)
    iy0, ix0 = oy0 * s - ph, ox0 * s - pw
    jl = min(max(-ix0, 0), cols)
    jh = max(min(w_ - ix0, cols), jl)
    ra = min(max(-iy0, 0), rows)
    rb = max(min(h - iy0, rows), ra)
    zp, zo = rng.randint(-128, 127), rng.randint(-128, 127)
    lo = rng.choice([-128, -128, zo, rng.randint(-128, 0)])
    hi = rng.choice([127, 127, rng.randint(max(lo, 0), 127)])
    x = [rng.randint(-128, 127) for _ in range(h * w_ * c)]
    f = [rng.choice([-128, 127, rng.randint(-128, 127)])
         for _ in range(9 * c)]
    bias = [rng.choice([rng.randint(-5000, 5000),
                        rng.randint(-(1 << 31), (1 << 31) - 1)])
            for _ in range(c)]
    ms = [rng.randint(0, (1 << 31) - 1) for _ in range(c)]
    sh = [-rng.randint(2, 23) for _ in range(c)]
    emu = Emulator(True)
    i8 = struct.Struct("<%db" % len(x))
    xa = emu.alloc(i8.pack(*x), offset=rng.randint(0, 3))
    fa = emu.alloc(struct.pack("<%db" % len(f), *f), offset=rng.randint(0, 3))
    ba = emu.alloc(struct.pack("<%di" % c, *bias))
    ma = emu.alloc(struct.pack("<%di" % c, *ms))
    sa = emu.alloc(struct.pack("<%db" % c, *sh), offset=rng.randint(0, 3))
    out = bytes(rng.randrange(256) for _ in range(oh * ow * c))
    oa = emu.alloc(out, writable=True, offset=rng.randint(0, 3))
    nb = (rows * pww + 3) & ~3
    pa = emu.alloc(bytes(nb), writable=True, unaligned=True)
    blk = dict(XA=0, W=fa, BI=0, M0=0, M1=ba, M2=ma, KC=zp, SM=sa,
               SE=oa + ((oy0 * ow) + ox0) * c, ZO=zo, LO=lo, HI=hi,
               OUT=oy1 - oy0, OS=c, XS=s, NC=ox1 - ox0, CL=0, NR=0,
               XR=s * pww, OR=ow * c, XA0=0, OUT0=0, KH=3, KW=3, RS=pww,
               LIM=c, LIM2=0, PACC=0, PEND=0, DX=0, KWX=0, REL=0)
    pl = dict(DST=pa, PWW=pww, COLS=cols, RA=ra, RB=rb, ROWS=rows, JL=jl,
              JH=jh, SRC=xa + ((iy0 + ra) * w_ + ix0 + jl) * c,
              SRS=w_ * c, CS=c, ZC=zp & 0xFF, REL=0)
    assert len(DW) == 32
    words = [blk[k] for k in DW] + [pl[k] for k in PL]
    qa = emu.alloc(struct.pack("<%di" % len(words), *[
        (v + 2 ** 31) % 2 ** 32 - 2 ** 31 for v in words]), writable=True)
    assert emu.call(code["dwc"], qa, 0) == 0
    want = bytearray(out)
    for oy in range(oy0, oy1):
        for ox in range(ox0, ox1):
            for ch in range(c):
                acc = bias[ch]
                for ky in range(3):
                    for kx in range(3):
                        iy, ix = oy * s - ph + ky, ox * s - pw + kx
                        if 0 <= iy < h and 0 <= ix < w_:
                            acc += f[(ky * 3 + kx) * c + ch] * (
                                x[(iy * w_ + ix) * c + ch] - zp)
                acc = (acc + 2 ** 31) % 2 ** 32 - 2 ** 31
                v = min(max(mbqm_ref(acc, ms[ch], sh[ch]) + zo, lo), hi)
                want[(oy * ow + ox) * c + ch] = v & 0xFF
    assert emu.read(oa, len(out)) == bytes(want), (h, w_, c, s, ph, pw)
    return emu.count


def test_dwc_matches_tflm(dsp):
    """dwc: every output byte of random tiles TFLM's (any channel count,
    stride 1 and 2, padding on any side, the int32 sums' edges), only
    the tile's written, the input and filter at any address."""
    rng = random.Random(41)
    for _ in range(150):
        _dwc_case(dsp, rng)


def test_dwc_instructions_per_mac(dsp):
    """The point: KWS's depthwise layers (25x5 pixels, padding SAME, 64
    channels: here 8) in under 5.4 instructions per multiply-accumulate,
    the plane's copies and the channels' setup included (dw3 and plane
    called per channel by the driver: about 6.7 on the M4)."""
    count = _dwc_case(dsp, random.Random(42), shape=(25, 5, 8, 1))
    assert count / (25 * 5 * 8 * 9) <= 5.4, count / (25 * 5 * 8 * 9)


@pytest.mark.parametrize("old,new", [
    ((0xFA2F, 0xF382), (0xFA3F, 0xF382)),  # sxtb16 -> uxtb16
    ((0xFA2F, 0xF292), (0xFA2F, 0xF282)),  # sxtb16 ror #8 -> ror 0
    ((0xEA43, 0x4303), (0xEA43, 0x2303)),  # padding's word: lsl 16 -> 8
    ((0xF841, 0x3B04), (0xF841, 0x3B01)),  # padding: 4 bytes -> 1
    ((0xF1C2, 0x0200), (0xF1C2, 0x0201)),  # e = -shift -> 1 - shift
    ((0x4359,), (0x4349,)),                # RA * PWW -> RA * RA
    ((0xF8D0, 0x10A0), (0xF8D0, 0x109C)),  # SRC -> SRS
    ((0xFB03, 0x2216), (0xFB03, 0x2206)),  # mls -> mla: BI
])
def test_a_mutated_dwc_fails(dsp, old, new):
    """dwc's checks see its instructions: a mutant (the first
    occurrence changed) fails them."""
    fmt = "<%dH" % len(old)
    code = dsp["dwc"]
    assert struct.pack(fmt, *old) in code
    mutant = {"dwc": code.replace(struct.pack(fmt, *old),
                                  struct.pack(fmt, *new), 1)}
    from unicorn import UcError  # (a read beyond the emulator's memory)
    rng = random.Random(43)
    with pytest.raises((AssertionError, ThumbError, UcError)):
        for _ in range(60):
            _dwc_case(mutant, rng)


# dwm's block (thumb_dw_dsp.py DWM_WORDS): the words it reads
DWM = ("XA", "XS", "RSK", "KH", "KW4", "NPIX", "WIN", "F", "NT", "BI", "OC",
       "MP", "SP", "OUT", "ZO", "LO", "HI", "ACC", "CQ", "BIP", "ACP", "FP")


def _dwm_case(code, rng, wide=False):
    """dwm on the emulated M4 against the contract: random filter sizes
    (KH 1..10, 4..12 taps a row), 4..12 channels, 1..5 pixels, strides,
    the plane at any address, every int32 sum requantized as TFLM's
    MultiplyByQuantizedMultiplier; with wide, biases and multipliers at
    their edges (sums that wrap)."""
    from tflm.kernels.gemmlowp import mbqm_ref
    kh, kw4 = rng.randint(1, 10), rng.randint(1, 3)
    kw, oc = 4 * kw4, 4 * rng.randint(1, 3)
    npix, xs, rsk = rng.randint(1, 5), rng.randint(1, 3), rng.randint(0, 6)
    nt = kh * kw
    rs = kw + rsk
    span = (npix - 1) * xs + (kh - 1) * rs + kw
    plane = bytes(rng.choice([0, 255, rng.randrange(256)])
                  for _ in range(span))
    f = [rng.choice([-128, 127, rng.randint(-128, 127)])
         for _ in range(oc * nt)]
    lim = 2 ** 31 if wide else 2 ** 20
    bi = [rng.randint(-lim, lim - 1) for _ in range(oc)]
    mp = [rng.choice([0, 1, 2 ** 30, 2 ** 31 - 1,
                      rng.randint(2 ** 30, 2 ** 31 - 1)]) for _ in range(oc)]
    sp = [rng.choice([rng.randint(-31, 30), rng.randint(-12, 1)])
          for _ in range(oc)]
    zo = rng.randint(-128, 127)
    lo, hi = rng.choice([(-128, 127), (zo, 127), (-128, min(127, zo + 60))])
    emu = Emulator(True)
    pa = emu.alloc(plane, offset=rng.randrange(4), unaligned=True)
    fa = emu.alloc(struct.pack("<%db" % len(f), *f))
    ba_ = emu.alloc(struct.pack("<%di" % oc, *bi))
    ma = emu.alloc(struct.pack("<%di" % oc, *mp))
    sa = emu.alloc(struct.pack("<%db" % oc, *sp), offset=rng.randrange(4))
    oa = emu.alloc(b"\xee" * (npix * oc), offset=rng.randrange(4),
                   writable=True)
    wa = emu.alloc(bytes(2 * nt), writable=True)
    aa = emu.alloc(bytes(4 * oc), writable=True)
    blk = dict(XA=pa, XS=xs, RSK=rsk, KH=kh, KW4=kw4, NPIX=npix, WIN=wa,
               F=fa, NT=nt, BI=ba_, OC=oc, MP=ma, SP=sa, OUT=oa, ZO=zo,
               LO=lo, HI=hi, ACC=aa, CQ=0, BIP=0, ACP=0, FP=0)
    ba = emu.alloc(struct.pack("<%di" % len(DWM), *[
        (blk[k] + 2 ** 31) % 2 ** 32 - 2 ** 31 for k in DWM]), writable=True)
    assert emu.call(code["dwm"], ba, 0) == 0
    want = []
    for p in range(npix):
        for c in range(oc):
            acc = bi[c]
            for ky in range(kh):
                for kx in range(kw):
                    acc += f[c * nt + ky * kw + kx] * plane[
                        p * xs + ky * rs + kx]
            acc = (acc + 2 ** 31) % 2 ** 32 - 2 ** 31
            v = mbqm_ref(acc, mp[c], sp[c]) + zo
            v = (v + 2 ** 31) % 2 ** 32 - 2 ** 31
            want.append(min(max(v, lo), hi))
    got = [b - 256 * (b > 127) for b in emu.read(oa, npix * oc)]
    assert got == want
    words = emu.words(ba, len(DWM))
    assert words[0] == pa + npix * xs and words[13] == oa + npix * oc
    return emu.count


def test_dwm_matches_tflm(dsp):
    """dwm (one input channel, 4 output channels at a time): TFLM's
    bytes for every filter size, channel count, stride and plane
    address; wide biases and multipliers included."""
    rng = random.Random(51)
    for k in range(150):
        _dwm_case(dsp, rng, wide=k % 3 == 0)


@pytest.mark.parametrize("old,new", [
    ((0xFA3F, 0xF694), (0xFA3F, 0xF684)),  # uxtb16 ror #8 -> no rotation
    ((0xFA2F, 0xFC96), (0xFA2F, 0xFC86)),  # sxtb16 ror #8 -> no rotation
    ((0xFB2C, 0xAA05), (0xFB2C, 0xAA15)),  # smlad -> smladx
    ((0xF852, 0x6003), (0xF857, 0x6003)),  # channel B read from C's row
    ((0xEBB8, 0x78CE), (0xEBB8, 0x780E)),  # rounding: lsl #31 -> #0
])
def test_dwm_mutated_instruction_fails(dsp, old, new):
    """Each mutant of dwm (first occurrence changed) fails the checks."""
    pat = struct.pack("<2H", *old)
    assert pat in dsp["dwm"]
    mutant = {"dwm": dsp["dwm"].replace(pat, struct.pack("<2H", *new), 1)}
    rng = random.Random(52)
    with pytest.raises(AssertionError):
        for _ in range(30):
            _dwm_case(mutant, rng)
