"""kernels/thumb_dsp.py: the ARMv7E-M (Cortex-M4/M7/M33) DSP variants of
thumb.dots and thumb.pixels, on an emulated Cortex-M4.

The bytes mpy-cross writes for armv7emsp run in unicorn's Cortex-M4
(tests/thumb_emu.py) and must meet the contract of thumb.py's functions
(the viper loops of mac.py): the same int32 accumulators as the armv6m
machine code on the same inputs, at every window length (the 8- and
4-value blocks and their tails), with the filter bytes at any address
and any stride, and no unaligned or stray access. A mutated DSP
instruction must fail these checks.
"""

import random
import struct

import pytest

pytest.importorskip("unicorn")

from test_thumb import (DOTS, _dots_ref, _px_case,  # noqa: E402
                        _run_dots)
from thumb_emu import Emulator, ThumbError, asm_functions  # noqa: E402


@pytest.fixture(scope="module")
def dsp():
    """{name: machine code} of thumb_dsp.py, as an armv7emsp board
    loads it."""
    return asm_functions("tflm/kernels/thumb_dsp.py", "armv7emsp")


@pytest.fixture(scope="module")
def m0():
    """thumb.py's armv6m machine code: the path the DSP code replaces."""
    return asm_functions("tflm/kernels/thumb.py")


def _values(rng, n, wide=False):
    """A window: x - input_zero_point values (-255..255), mostly; with
    wide, the int16 range's edges too (the DSP contract's bound)."""
    edges = [-255, 255, 0, -1]
    if wide:
        edges += [32767, -32768, 32766, -32767]
    return [rng.choice(edges) if rng.random() < 0.2
            else rng.randint(-255, 255) for _ in range(n)]


def test_dots_every_length_and_alignment(dsp, m0):
    """Every window length 1..40 (and longer ones) with the filter bytes
    at each address mod 4 and strides that move it between filters: the
    same accumulators as thumb.dots on a Cortex-M0 and as the contract
    (modulo 2**32), the block used up as documented."""
    rng = random.Random(21)
    for n in list(range(1, 41)) + [63, 64, 65, 200]:
        for trial in range(4):
            nf = rng.randint(1, 5)
            ws = n + rng.randint(0, 5)
            v = _values(rng, n, wide=trial == 3)
            w = bytes(rng.randrange(256) for _ in range(ws * nf))
            bias = [rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(nf)]
            base = rng.randint(-2 ** 31, 2 ** 31 - 1)
            got = _run_dots(dsp, v, w, ws, bias, base, nf,
                            w_offset=(n + trial) % 4, m4=True)
            r0, out, after, (wa, ba, oa), _ = got
            assert r0 == 0
            assert out == _dots_ref(v, w, ws, bias, base, nf), (n, trial)
            assert out == _run_dots(m0, v, w, ws, bias, base, nf,
                                    w_offset=(n + trial) % 4)[1]
            assert after[DOTS.index("WP")] == wa + nf * ws
            assert after[DOTS.index("BP")] == ba + 4 * nf
            assert after[DOTS.index("OUT")] == oa + 4 * nf
            assert after[DOTS.index("NF")] == 0


def test_dots_extreme_sums_wrap(dsp):
    """Filters of -128 and 127 against the int16 edges, and biases at the
    int32 edges: sums far beyond int32 wrap exactly as the armv6m
    code's (SMLAD's overflow flag changes nothing in the result)."""
    n = 70
    for wb, vv in ((0x00, -32768), (0xFF, 32767), (0x00, 32767),
                   (0xFF, -32768)):
        v = [vv] * n
        w = bytes([wb]) * (2 * n)
        bias = [2 ** 31 - 1, -2 ** 31]
        for off in range(4):
            out = _run_dots(dsp, v, w, n, bias, 2 ** 31 - 7, 2,
                            w_offset=off, m4=True)[1]
            assert out == _dots_ref(v, w, n, bias, 2 ** 31 - 7, 2)


def test_dots_instructions_per_mac(dsp):
    """The point of the DSP code: under 2.75 instructions per
    multiply-accumulate on a long window, 8 filters, everything counted
    (thumb.dots: 5.6), aligned filters or not."""
    n, nf = 256, 8
    rng = random.Random(2)
    v = _values(rng, n)
    for off, ws in ((0, n), (1, n), (0, n + 1), (3, n + 3)):
        w = bytes(rng.randrange(256) for _ in range(ws * nf))
        count = _run_dots(dsp, v, w, ws, [0] * nf, 0, nf, w_offset=off,
                          m4=True)[4]
        assert count / (n * nf) <= 2.75, (off, ws, count / (n * nf))


def test_pixels_matches_tflm_requantization(dsp):
    """thumb_dsp.pixels: gather, sums and requantized bytes are TFLM's
    (as thumb.pixels', the same checks), for window lengths 1..40 and
    longer, filters at any address."""
    rng = random.Random(22)
    for _ in range(160):
        _px_case(dsp, rng, m4=True, sizes=list(range(1, 41)) + [64, 75])
    for _ in range(30):
        _px_case(dsp, rng, lim=2000, m4=True)


def test_pixels_instructions_per_mac(dsp, m0):
    """pixels on a 1x1 convolution of 64 channels into 32: the same
    bytes and sums as thumb.pixels in 1.7 times fewer instructions,
    counted whole (gather and requantization included)."""
    counts = []
    for code, m4 in ((dsp, True), (m0, False)):
        rng = random.Random(3)
        n, nf = 64, 32
        emu = Emulator(m4)
        va = emu.alloc(b"\0" * 4 * n, writable=True)
        xa = emu.alloc(bytes(rng.randrange(256) for _ in range(n)))
        wa = emu.alloc(bytes(rng.randrange(256) for _ in range(n * nf)))
        ba = emu.alloc(b"\0" * 4 * nf)
        ma = emu.alloc(struct.pack("<i", 1 << 30) * nf)
        sa = emu.alloc(bytes([0xF6]) * nf)  # shift -10
        aa = emu.alloc(b"\0" * 4 * nf, writable=True)
        qa = emu.alloc(b"\0" * nf, writable=True)
        from test_thumb import PX
        blk = dict(V=va, V8=va + 4 * (n & ~7), VE=va + 4 * n, WP=0, WS=n,
                   BP=0, BASE=0, OUT=0, NF=0, X=xa, XS=n, OFF=-128,
                   NPIX=1, MP0=ma, MSTEP=4, SP0=sa, SSTEP=1, ZO=0, LO=-128,
                   HI=127, QOUT=qa, QSTEP=nf, PEND=0, LIM=1 << 20,
                   LIM2=2 << 20, WP0=wa, BP0=ba, ACC=aa, NF0=nf, MP=0,
                   SP=0, Q=0, REL=0)
        pa = emu.alloc(struct.pack("<%di" % len(PX), *[blk[k] for k in PX]),
                       writable=True)
        assert emu.call(code["pixels"], pa, 0) == 0
        counts.append((emu.count, emu.read(qa, nf), emu.words(aa, nf)))
    (dsp_count, dsp_q, dsp_acc), (m0_count, m0_q, m0_acc) = counts
    assert (dsp_q, dsp_acc) == (m0_q, m0_acc)
    assert dsp_count * 1.7 < m0_count, (dsp_count, m0_count)


def _px_run(code, m4, n, nf, npix, seed=3):
    """pixels over npix pixels of a 1x1 convolution of n channels into
    nf (random input and filters, multiplier 2**30, shift -10): the
    instruction count, the output bytes and the return value."""
    rng = random.Random(seed)
    emu = Emulator(m4)
    va = emu.alloc(b"\0" * 4 * n, writable=True)
    xa = emu.alloc(bytes(rng.randrange(256) for _ in range(n * npix)))
    wa = emu.alloc(bytes(rng.randrange(256) for _ in range(n * nf)))
    ba = emu.alloc(struct.pack("<%di" % nf, *[rng.randint(-5000, 5000)
                                              for _ in range(nf)]))
    ma = emu.alloc(struct.pack("<i", 1 << 30) * nf)
    sa = emu.alloc(bytes([0xF6]) * nf)  # shift -10
    aa = emu.alloc(b"\0" * 4 * nf, writable=True)
    qa = emu.alloc(b"\0" * nf * npix, writable=True)
    from test_thumb import PX
    blk = dict(V=va, V8=va + 4 * (n & ~7), VE=va + 4 * n, WP=0, WS=n,
               BP=0, BASE=0, OUT=0, NF=0, X=xa, XS=n, OFF=-128 + 7,
               NPIX=npix, MP0=ma, MSTEP=4, SP0=sa, SSTEP=1, ZO=3, LO=-128,
               HI=127, QOUT=qa, QSTEP=nf, PEND=0, LIM=1 << 20,
               LIM2=2 << 20, WP0=wa, BP0=ba, ACC=aa, NF0=nf, MP=0,
               SP=0, Q=0, REL=0)
    pa = emu.alloc(struct.pack("<%di" % len(PX), *[blk[k] for k in PX]),
                   writable=True)
    r = emu.call(code["pixels"], pa, 0, limit=10 ** 8)
    return emu.count, emu.read(qa, nf * npix), r


@pytest.mark.parametrize("n,nf,npix,most", [
    (16, 32, 24, 6.0), (64, 32, 8, 2.3), (128, 128, 6, 1.7),
    (256, 64, 3, 2.0)])
def test_pixels_pairs_instructions_per_mac(dsp, m0, n, nf, npix, most):
    """A row of pixels goes through pixels two at a time (two filters x
    two pixels per inner loop: each widened filter word serves both
    pixels, each window word both filters): the armv6m code's bytes, in
    at most `most` instructions per multiply-accumulate, everything
    counted (gather, requantization, an odd last pixel alone)."""
    count, q, r = _px_run(dsp, True, n, nf, npix)
    m0_count, m0_q, m0_r = _px_run(m0, False, n, nf, npix)
    assert (q, r) == (m0_q, m0_r) and r == 0
    assert count / (n * nf * npix) <= most, count / (n * nf * npix)
    assert count * 1.8 < m0_count


def test_pixels_pairs_pending_and_odd_counts(dsp):
    """Pairs of pixels with values beyond the fast path (the pair is
    summed again, its first pixel alone, then the second with the next
    one), odd filter counts and every window length up to 20: the
    contract's bytes and pending pixels (test_thumb._px_case)."""
    rng = random.Random(36)
    for _ in range(120):
        _px_case(dsp, rng, lim=rng.choice([300, 3000, 1 << 20]), m4=True,
                 sizes=list(range(1, 21)))


def test_dsp_code_loads_aligned_words_only(dsp):
    """The window is read in words: one that is not word-aligned is an
    unaligned access, which the harness reports (so the filter words the
    code reads are aligned: the tests above run it at every offset)."""
    emu = Emulator(True)
    va = emu.alloc(b"\x00" * 40, offset=2)
    wa = emu.alloc(b"\x00" * 10)
    ba = emu.alloc(b"\x00" * 4)
    oa = emu.alloc(b"\x00" * 4, writable=True)
    pa = emu.alloc(struct.pack("<9I", va, va + 32, va + 40, wa, 10, ba, 0,
                               oa, 1), writable=True)
    with pytest.raises(ThumbError, match="unaligned"):
        emu.call(dsp["dots"], pa, 0)


@pytest.mark.parametrize("old,new", [
    ((0xFB25, 0x990C), (0xFB25, 0x991C)),  # smlad r9 -> smladx
    ((0xFA2F, 0xF594), (0xFA2F, 0xF584)),  # sxtb16 ror #8 -> no rotation
    ((0xFA98, 0xF805), (0xFAD8, 0xF805)),  # sadd16 -> ssub16 (gather)
    ((0xFB14, 0x9916), (0xFB14, 0x9906)),  # smlabt -> smlabb (value left)
    ((0xEAC4, 0x4406), (0xEAC4, 0x4486)),  # pkhbt lsl #16 -> lsl #18
])
def test_a_mutated_pair_instruction_fails(dsp, old, new):
    """The pair path's own DSP instructions are checked too: each mutant
    of pixels (first occurrence changed) fails the contract."""
    pat = struct.pack("<2H", *old)
    code = dsp["pixels"]
    assert pat in code
    mutant = {"pixels": code.replace(pat, struct.pack("<2H", *new), 1)}
    rng = random.Random(24)
    with pytest.raises(AssertionError):
        for _ in range(40):
            _px_case(mutant, rng, m4=True, sizes=(5, 7, 9, 13))


@pytest.mark.parametrize("old,new", [
    ((0xFA2F, 0xF494), (0xFA2F, 0xF484)),  # sxtb16 ror #8 -> no rotation
    ((0xFB24, 0x3309), (0xFB24, 0x3319)),  # smlad -> smladx (swapped)
    ((0xEAC9, 0x490B), (0xEAC9, 0x290B)),  # pkhbt lsl #16 -> lsl #8
])
def test_a_mutated_instruction_fails(dsp, old, new):
    """The checks see the DSP instructions: each mutant of dots (its
    first occurrence of the instruction changed) gives other sums."""
    pat = struct.pack("<2H", *old)
    code = dsp["dots"]
    assert pat in code
    mutant = {"dots": code.replace(pat, struct.pack("<2H", *new), 1)}
    rng = random.Random(23)
    n, nf = 24, 3
    v = _values(rng, n)
    w = bytes(rng.randrange(256) for _ in range(n * nf))
    bias = [0] * nf
    assert _run_dots(dsp, v, w, n, bias, 0, nf, m4=True)[1] == \
        _dots_ref(v, w, n, bias, 0, nf)
    assert _run_dots(mutant, v, w, n, bias, 0, nf, m4=True)[1] != \
        _dots_ref(v, w, n, bias, 0, nf)


def test_dsp_module_compiles_for_armv6m():
    """A port that freezes every thumb*.py (micropython/manifest.py with
    thumb=True, e.g. an RP2040 build) compiles it too: only Thumb-1
    mnemonics, the ARMv7E-M instructions as data; the bytes are the
    same as for armv7emsp."""
    assert asm_functions("tflm/kernels/thumb_dsp.py") == \
        asm_functions("tflm/kernels/thumb_dsp.py", "armv7emsp")


def test_builds_take_the_module_of_their_arch():
    """romfs.for_arch: only a DSP arch's build has thumb_dsp.py (with
    thumb.py, which compiled models name); an armv6m or armv7m build has
    thumb.py alone, a non-Thumb build neither; the package compiled for
    armv7emsp holds thumb_dsp.mpy, armv6m's not."""
    from host_tools import romfs
    dsp, plain = "tflm/kernels/thumb_dsp.py", "tflm/kernels/thumb.py"
    for arch in ("armv7em", "armv7emsp", "armv7emdp"):
        assert romfs.for_arch(dsp, arch) and romfs.for_arch(plain, arch)
    for arch in ("armv6m", "armv7m"):
        assert romfs.for_arch(plain, arch) and not romfs.for_arch(dsp, arch)
    for arch in ("x64", "xtensawin", "rv32imc"):
        assert not romfs.for_arch(plain, arch)
        assert not romfs.for_arch(dsp, arch)
    for arch, has in (("armv7emsp", True), ("armv6m", False)):
        names = [rel for rel, _ in romfs.compile_package(arch)]
        assert ("tflm/kernels/thumb_dsp.mpy" in names) == has
        assert "tflm/kernels/thumb.mpy" in names


def test_dots_pairs_instructions_per_mac(dsp):
    """Two filters per loop (issue 36): each packed pair of window values
    feeds two SMLAD, 16 multiply-accumulates in 28 instructions; whole
    calls counted (block, the window's sum, the stores), under 1.85 per
    multiply-accumulate for FULLY_CONNECTED's 640 x 128 and 2.1 for a
    3x3x16 window against 16 filters, at any filter alignment."""
    rng = random.Random(25)
    for n, nf, most in ((640, 128, 1.85), (144, 16, 2.1)):
        v = _values(rng, n)
        for off, ws in ((0, n), (1, n + 1), (3, n + 2)):
            w = bytes(rng.randrange(256) for _ in range(ws * nf))
            count = _run_dots(dsp, v, w, ws, [0] * nf, 0, nf, w_offset=off,
                              m4=True)[4]
            assert count / (n * nf) <= most, (n, nf, off, count / (n * nf))


@pytest.mark.parametrize("old,new", [
    ((0xFB2C, 0x9905), (0xFB2C, 0x9915)),  # smlad A -> smladx
    ((0xFA2F, 0xFC94), (0xFA2F, 0xFC84)),  # sxtb16 B ror #8 -> no rotation
    ((0xEAC6, 0x460E), (0xEAC6, 0x260E)),  # pkhbt lsl #16 -> lsl #8
    ((0xFA2F, 0xFC97), (0xFA2F, 0xFC87)),  # sxtb16 A ror #8 -> no rotation
    ((0xFB04, 0xAA05), (0xFB04, 0xAA15)),  # mla B (value left) -> mls
])
def test_a_mutated_dots_pair_instruction_fails(dsp, old, new):
    """The pair path of dots (its first occurrence of the instruction
    changed) gives other sums, on pairs with values left over."""
    pat = struct.pack("<2H", *old)
    code = dsp["dots"]
    assert pat in code
    mutant = {"dots": code.replace(pat, struct.pack("<2H", *new), 1)}
    rng = random.Random(26)
    n, nf = 27, 2
    v = _values(rng, n)
    w = bytes(rng.randrange(256) for _ in range(n * nf))
    bias = [0] * nf
    assert _run_dots(dsp, v, w, n, bias, 0, nf, m4=True)[1] == \
        _dots_ref(v, w, n, bias, 0, nf)
    assert _run_dots(mutant, v, w, n, bias, 0, nf, m4=True)[1] != \
        _dots_ref(v, w, n, bias, 0, nf)


def _gather(code, x, gx, run, nrun, rstep, nrow, xrow, zp, xoff=0,
            vrow=0, lead=0, total=None):
    """thumb_dsp.gather on the M4: (return value, the window, BASE,
    instructions), x at any address (words read with LDR). vrow > 0:
    rows vrow words apart from word lead of a zeroed window of total
    words (GVROW, GV)."""
    emu = Emulator(True)
    n = run * nrun * nrow if total is None else total
    xa = emu.alloc(bytes(x), offset=xoff, unaligned=True)
    va = emu.alloc(b"\xee" * 4 * n, writable=True)
    blk = [0xdeadbeef] * 21
    blk[0] = va
    blk[2] = va + 4 * n
    blk[6] = 12345
    blk[10:17] = [xa + gx, run, nrun, rstep, nrow, xrow, -zp & 0xFFFFFFFF]
    blk[19:21] = [4 * vrow, va + 4 * lead]
    pa = emu.alloc(struct.pack("<21I", *blk), writable=True)
    r = emu.call(code["gather"], pa - 8, 8)
    base = struct.unpack("<i", emu.read(pa + 24, 4))[0]
    return r, emu.words(va, n), base, emu.count


def _gather_ref(x, gx, run, nrun, rstep, nrow, xrow, zp):
    """conv.py's viper gather: v = x - input_zero_point, row by row."""
    return [((x[gx + r * xrow + k * rstep + i] ^ 0x80) - 128) - zp
            for r in range(nrow) for k in range(nrun) for i in range(run)]


def test_gather_pads_cut_rows_with_zeros(dsp):
    """GVROW != 0: the window zeroed, then each row's values at their
    place in whole filter rows (conv_dsp.py's partial windows); BASE
    sums the values only (the zeros add nothing)."""
    rng = random.Random(28)
    for _ in range(200):
        run, nrun = rng.randint(1, 9), rng.randint(1, 3)
        rstep = run + rng.randint(0, 3)
        nrow = rng.randint(1, 3)
        xrow = nrun * rstep + rng.randint(0, 5)
        x = [rng.randrange(256) for _ in range(nrow * xrow + 20)]
        zp = rng.choice([-128, 127, 0, rng.randint(-128, 127)])
        lead = rng.randint(0, 5)
        vrow = run * nrun + lead + rng.randint(0, 5)
        total = lead + nrow * vrow + rng.randint(0, 9)
        args = (x, 0, run, nrun, rstep, nrow, xrow, zp)
        r, got, base, _ = _gather(dsp, *args, vrow=vrow, lead=lead,
                                  total=total)
        vals = _gather_ref(*args)
        want = [0] * total
        for row in range(nrow):
            k = row * run * nrun
            want[lead + row * vrow:lead + row * vrow + run * nrun] = \
                vals[k:k + run * nrun]
        assert r == 0
        assert got == want, (args, lead, vrow, total)
        assert base == -128 * sum(vals)


def test_gather_is_conv_viper_gather(dsp):
    """thumb_dsp.gather writes the window conv.py's viper loop writes
    (runs of 1..13 bytes, 4 at a time and the rest one by one, any
    input address) and BASE = -128 * sum(v), as that loop leaves it."""
    rng = random.Random(27)
    for _ in range(300):
        run, nrun = rng.randint(1, 13), rng.randint(1, 3)
        rstep = run + rng.randint(0, 3)
        nrow = rng.randint(1, 3)
        xrow = nrun * rstep + rng.randint(0, 5)
        x = [rng.randrange(256) for _ in range(nrow * xrow + 20)]
        zp = rng.choice([-128, 127, 0, rng.randint(-128, 127)])
        gx = rng.randint(0, 3)
        args = (x, gx, run, nrun, rstep, nrow, xrow, zp)
        r, got, base, _ = _gather(dsp, *args, xoff=rng.randint(0, 3))
        want = _gather_ref(*args)
        assert r == 0
        assert got == want, args
        assert base == (-128 * sum(want) + 2 ** 31) % 2 ** 32 - 2 ** 31


def test_gather_instructions_per_value(dsp):
    """The point: a 3x3x16 window (3 runs of 48 bytes) in under 4
    instructions a value (conv.py's viper loop: about 35 on an M4)."""
    x = list(range(256)) * 2
    count = _gather(dsp, x, 1, 48, 1, 48, 3, 160, -5)[3]
    assert count / 144 <= 4.0, count / 144


@pytest.mark.parametrize("old,new", [
    ((0xFA43, 0xFAA4), (0xFA43, 0xFA94)),  # sxtab ror #16 -> ror #8
    ((0xFA43, 0xF884), (0xFA4F, 0xF884)),  # sxtab -> sxtb (no zero point)
])
def test_a_mutated_gather_instruction_fails(dsp, old, new):
    """The gather's own DSP instructions are checked too."""
    pat = struct.pack("<2H", *old)
    code = dsp["gather"]
    assert pat in code
    mutant = {"gather": code.replace(pat, struct.pack("<2H", *new), 1)}
    x = [(7 * i + 3) % 256 for i in range(64)]
    args = (x, 0, 8, 1, 8, 2, 16, 17)
    assert _gather(dsp, *args)[1] == _gather_ref(*args)
    assert _gather(mutant, *args)[1] != _gather_ref(*args)


def _requant(code, buf, nch, mults, shifts, qp):
    """thumb_dsp.requant on the M4: (return value, the output bytes as
    int8, instructions)."""
    emu = Emulator(True)
    n = len(buf)
    ba = emu.alloc(struct.pack("<%di" % n, *buf))
    ma = emu.alloc(struct.pack("<%di" % nch, *mults))
    sa = emu.alloc(struct.pack("<%db" % nch, *shifts), offset=1)
    qa = emu.alloc(struct.pack("<3i", *qp))
    oa = emu.alloc(b"\xee" * (n + 2), writable=True)
    blk = [ba, n, nch, ma, sa, qa, oa + 1, 0xdeadbeef]
    pa = emu.alloc(struct.pack("<8I", *blk), writable=True)
    r = emu.call(code["requant"], pa - 8, 8)
    out = struct.unpack("<%db" % (n + 2), emu.read(oa, n + 2))
    assert out[0] == out[-1] == struct.unpack("<b", b"\xee")[0]
    return r, list(out[1:-1]), emu.count


def test_requant_is_tflm_multiply_by_quantized_multiplier(dsp):
    """thumb_dsp.requant: clamp(MultiplyByQuantizedMultiplier(x, m[c],
    s[c]) + zp) per channel, TFLM's double rounding (common.cc, int64),
    for every int32 x (edges and wraps of x << shift), shifts -31..30,
    multipliers 0, 2**30 .. 2**31 - 1; nothing outside the output."""
    from test_fixedpoint import mbqm_int64, vectors
    x, m, s = vectors(3000, 5)
    rng = random.Random(29)
    k = 0
    while k < len(x):
        nch, npix = rng.randint(1, 9), rng.randint(1, 4)
        n = min(nch * npix, len(x) - k) // nch * nch
        if not n:
            break
        buf = [int(v) for v in x[k:k + n]]
        mults = [int(v) for v in m[k:k + nch]]
        shifts = [int(v) for v in s[k:k + nch]]
        zp = rng.randint(-128, 127)
        lo, hi = sorted((rng.randint(-128, 127), rng.randint(-128, 127)))
        if rng.random() < 0.5:
            lo, hi = -128, 127
        r, got, _ = _requant(dsp, buf, nch, mults, shifts, (zp, lo, hi))
        want = [min(max(int(mbqm_int64(v, mults[i % nch],
                                       shifts[i % nch])) + zp, lo), hi)
                for i, v in enumerate(buf)]
        assert r == 0
        assert got == want, (buf, mults, shifts, zp, lo, hi)
        k += n


def test_requant_leaves_negative_multipliers_to_the_caller(dsp):
    """A shift above 30 (conv_util's mark of a negative multiplier):
    returns 1 and writes nothing."""
    r, got, _ = _requant(dsp, [5, 6, 7, 8], 2, [1 << 30, 1 << 30],
                         [-3, 31 + 33], (0, -128, 127))
    assert r == 1 and got == [-18] * 4


def test_requant_instructions_per_value(dsp):
    """The point: under 22 instructions a value (requant_i8b's viper:
    about 130 on an M4), 64 channels x 10 pixels (18 a value and each
    channel's set-up)."""
    rng = random.Random(30)
    buf = [rng.randint(-20000, 20000) for _ in range(640)]
    mults = [rng.randint(1 << 30, (1 << 31) - 1) for _ in range(64)]
    shifts = [rng.randint(-12, 1) for _ in range(64)]
    count = _requant(dsp, buf, 64, mults, shifts, (3, -128, 127))[2]
    assert count / 640 <= 22, count / 640


@pytest.mark.parametrize("old,new", [
    ((0xEB10, 0x76C5), (0xEB10, 0x7685)),  # adds lsl #31 -> lsl #30
    ((0xFBC4, 0x6508), (0xFB84, 0x6508)),  # smlal -> smull
    ((0xF116, 0x4680), (0xF116, 0x4600)),  # adds 2**30 -> 2**29
])
def test_a_mutated_requant_instruction_fails(dsp, old, new):
    """requant's own DSP instructions are checked too."""
    from test_fixedpoint import mbqm_int64
    pat = struct.pack("<2H", *old)
    code = dsp["requant"]
    assert pat in code
    mutant = {"requant": code.replace(pat, struct.pack("<2H", *new), 1)}
    # multiplier 2**30 (SRDHM halves x): ties to round away from zero
    # on both sides
    buf = list(range(-200, 200))
    mults = [1 << 30] * 4 + [(1 << 30) + 12345, 1 << 30, 1 << 30,
                             (1 << 31) - 1]
    shifts = [-1, -2, -3, -1, 1, 0, -1, 0]
    want = [min(max(int(mbqm_int64(v, mults[i % 8], shifts[i % 8])),
                    -128), 127) for i, v in enumerate(buf)]
    assert _requant(dsp, buf, 8, mults, shifts, (0, -128, 127))[1] == want
    assert _requant(mutant, buf, 8, mults, shifts,
                    (0, -128, 127))[1] != want


def _add_lut(code, tab, x1, x2, m, e, zp, lo, hi):
    """thumb_dsp.add_lut on the M4: (return value, the output bytes as
    int8, instructions); inputs and output at odd addresses."""
    emu = Emulator(True)
    n = len(x1)
    ta = emu.alloc(struct.pack("<512i", *tab))
    a1 = emu.alloc(bytes(x1), offset=1)
    a2 = emu.alloc(bytes(x2), offset=3)
    oa = emu.alloc(b"\xee" * (n + 2), writable=True)
    blk = [a1 + n, a2 + n, oa + 1 + n, -n & 0xFFFFFFFF, ta, m, e,
           zp & 0xFFFFFFFF, lo & 0xFFFFFFFF, hi & 0xFFFFFFFF]
    pa = emu.alloc(struct.pack("<10I", *blk))
    r = emu.call(code["add_lut"], pa - 4, 4)
    out = struct.unpack("<%db" % (n + 2), emu.read(oa, n + 2))
    assert out[0] == out[-1] == -18
    return r, list(out[1:-1]), emu.count


def _add_ref(tab, x1, x2, m, e, zp, lo, hi):
    """add._add_lut's element: TFLM's MBQM of the tables' sum."""
    from test_fixedpoint import mbqm_int64
    return [min(max(int(mbqm_int64(tab[a] + tab[256 + b], m, -e)) + zp,
                    lo), hi) for a, b in zip(x1, x2)]


def test_add_lut_is_tflm_add(dsp):
    """thumb_dsp.add_lut: clamp(MultiplyByQuantizedMultiplier(tab1[x1] +
    tab2[x2], m, -e) + zp) as TFLM (int64, double rounding), for table
    values up to 2**28 in magnitude, shifts -1 .. -31, multipliers 0 and
    2**30 .. 2**31 - 1, any activation range; nothing outside the
    output; 0 elements."""
    rng = random.Random(31)
    for trial in range(150):
        big = rng.choice([1 << 12, 1 << 20, (1 << 28) - 1])
        tab = [rng.randint(-big, big) for _ in range(512)]
        tab[rng.randrange(512)] = rng.choice([big, -big])
        n = rng.choice([0, 1, 2, 7, 64])
        x1 = [rng.randrange(256) for _ in range(n)]
        x2 = [rng.randrange(256) for _ in range(n)]
        m = rng.choice([0, 1 << 30, (1 << 31) - 1,
                        rng.randint(1 << 30, (1 << 31) - 1)])
        e = rng.choice([1, 2, 31, rng.randint(1, 24)])
        zp = rng.randint(-128, 127)
        lo, hi = -128, 127
        if trial % 3 == 0:
            lo, hi = sorted((rng.randint(-128, 127), rng.randint(-128, 127)))
        r, got, _ = _add_lut(dsp, tab, x1, x2, m, e, zp, lo, hi)
        assert r == 0
        assert got == _add_ref(tab, x1, x2, m, e, zp, lo, hi), trial


def test_add_lut_instructions_per_element(dsp):
    """The point: under 22 instructions an element (add._add_lut's viper
    loop: about 260 on an M4)."""
    rng = random.Random(32)
    tab = [rng.randint(-(1 << 26), 1 << 26) for _ in range(512)]
    x = [rng.randrange(256) for _ in range(1000)]
    count = _add_lut(dsp, tab, x, x[::-1], 1 << 30, 19, 3, -128, 127)[2]
    assert count / 1000 <= 22, count / 1000


@pytest.mark.parametrize("old,new", [
    ((0xFB54, 0xF418), (0xFB54, 0xF408)),  # smmulr -> smmul (no rounding)
    ((0xEB04, 0x74E4), (0xEB04, 0x74D4)),  # + (r asr 31) -> + (r lsr 31)
    ((0xF857, 0x5025), (0xF856, 0x5025)),  # table 2 -> table 1
])
def test_a_mutated_add_lut_instruction_fails(dsp, old, new):
    """add_lut's own instructions are checked too (ties of negative
    sums: the rounding away from zero)."""
    pat = struct.pack("<2H", *old)
    code = dsp["add_lut"]
    assert pat in code
    mutant = {"add_lut": code.replace(pat, struct.pack("<2H", *new), 1)}
    tab = [(q - 300) * 3 for q in range(512)]
    x1 = list(range(256))
    x2 = [(7 * q + 5) % 256 for q in range(256)]
    args = (tab, x1, x2, 1 << 30, 1, 0, -128, 127)
    want = _add_ref(*args)
    assert _add_lut(dsp, *args)[1] == want
    assert _add_lut(mutant, *args)[1] != want


def _pair(code, x, gx, run, nrun, rstep, nrow, xrow, xs, zp, w, ws, nf,
          bias, w_offset=0, gather="gather_pair"):
    """thumb_dsp.gather_pair (or gather), then pair_dots on the M4: (the
    two pixels' sums, the block after, instructions of both calls)."""
    emu = Emulator(True)
    n = run * nrun * nrow
    xa = emu.alloc(bytes(x), offset=1, unaligned=True)
    wa = emu.alloc(w, offset=w_offset, unaligned=True)
    ba = emu.alloc(struct.pack("<%di" % nf, *bias))
    oa = emu.alloc(b"\xee" * 4 * (2 * nf + 1), writable=True)
    blk = [0xdeadbeef] * 30 + [0] * n
    pa = emu.alloc(struct.pack("<%dI" % len(blk), *blk), writable=True)
    va = pa + 4 * 30
    words = [va, 0, va + 4 * n, 0, 0, 0, 0, 0, 0]
    emu.uc.mem_write(pa, struct.pack("<9I", *words))
    emu.uc.mem_write(pa + 40, struct.pack(
        "<7I", xa + gx, run, nrun, rstep, nrow, xrow, -zp & 0xFFFFFFFF))
    emu.uc.mem_write(pa + 116, struct.pack("<I", xs))
    assert emu.call(code[gather], pa - 8, 8) == 0
    count = emu.count
    emu.uc.mem_write(pa, struct.pack("<9I", va, 4 * (nf + 1), va + 4 * n,
                                     wa, ws, ba, 0, oa, nf))
    assert emu.call(code["pair_dots"], pa - 8, 8) == 0
    after = struct.unpack("<9I", emu.read(pa, 36))
    a = emu.words(oa, nf)
    b = emu.words(oa + 4 * (nf + 1), nf)
    return a, b, after, (wa, ba, oa), count + emu.count


def _pair_ref(x, gx, run, nrun, rstep, nrow, xrow, xs, zp, w, ws, nf, bias,
              w_offset=0):
    """The two pixels' int32 sums as TFLM adds them (bias + int8 filter x
    (x - input_zero_point)), wrapped to int32."""
    out = []
    for px in (gx, gx + xs):
        v = _gather_ref(x, px, run, nrun, rstep, nrow, xrow, zp)
        sums = []
        for k in range(nf):
            t = bias[k] + sum(((w[k * ws + i] ^ 0x80) - 128) * v[i]
                              for i in range(len(v)))
            sums.append((t + 2 ** 31) % 2 ** 32 - 2 ** 31)
        out.append(sums)
    return out


def test_pair_dots_are_tflm_sums(dsp):
    """gather_pair then pair_dots: both pixels' sums (bias + signed
    filter bytes x (x - input_zero_point)) for runs of 4 .. 48 bytes,
    any number of filters (odd: the last alone), any filter address and
    stride, extreme values (the int32 wrap); the block's counters after
    and nothing written outside the two sum arrays."""
    rng = random.Random(33)
    for trial in range(120):
        run, nrun = 4 * rng.randint(1, 12), rng.randint(1, 3)
        rstep = run + rng.randint(0, 5)
        nrow = rng.randint(1, 3)
        xrow = nrun * rstep + rng.randint(0, 9)
        xs = rng.randint(1, 60)
        x = [rng.randrange(256) for _ in range(nrow * xrow + xs + 20)]
        if trial % 5 == 0:
            x = [rng.choice([0x7F, 0x80]) for _ in x]
        zp = rng.choice([-128, 127, 0, rng.randint(-128, 127)])
        n = run * nrun * nrow
        nf = rng.randint(1, 7)
        ws = n + rng.randint(0, 3)
        w = bytes(rng.choice([0x7F, 0x80]) if trial % 5 == 0
                  else rng.randrange(256) for _ in range(ws * nf))
        bias = [rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(nf)]
        args = (x, rng.randint(0, 3), run, nrun, rstep, nrow, xrow, xs, zp,
                w, ws, nf, bias)
        off = rng.randint(0, 3)
        a, b, after, (wa, ba, oa), _ = _pair(dsp, *args, w_offset=off)
        assert [a, b] == _pair_ref(*args), trial
        assert after[3] == wa + nf * ws and after[5] == ba + 4 * nf
        assert after[7] == oa + 4 * nf and after[8] == 0


def test_pair_dots_instructions_per_mac(dsp):
    """The point: a 3x3x16 window of two pixels against 16 filters in
    under 1.35 instructions per multiply-accumulate, the gather included
    (dots: 2.04 for one pixel, gather apart)."""
    rng = random.Random(34)
    x = [rng.randrange(256) for _ in range(600)]
    w = bytes(rng.randrange(256) for _ in range(144 * 16))
    count = _pair(dsp, x, 0, 48, 1, 48, 3, 160, 16, 5, w, 144, 16,
                  [0] * 16)[4]
    assert count / (2 * 144 * 16) <= 1.35, count / (2 * 144 * 16)


@pytest.mark.parametrize("fn,old,new", [
    ("gather_pair", (0xFA2F, 0xFA8B), (0xFA2F, 0xFA9B)),  # B0|B2 ror #8
    ("gather_pair", (0xFA99, 0xF905), (0xFAD9, 0xF905)),  # sadd16 -> ssub16
    ("pair_dots", (0xFB25, 0x990E), (0xFB25, 0x991E)),  # smlad -> smladx
    ("pair_dots", (0xFA2F, 0xF594), (0xFA2F, 0xF584)),  # no ror #8
    ("pair_dots", (0xFB14, 0x9916), (0xFB14, 0x9906)),  # smlabt -> smlabb
    ("gather_pair_any", (0xF10B, 0x0B08), (0xF10B, 0x0B04)),  # B at + 4
])
def test_a_mutated_pair_dots_instruction_fails(dsp, fn, old, new):
    """gather_pair's and pair_dots' own DSP instructions are checked."""
    pat = struct.pack("<2H", *old)
    code = dsp[fn]
    assert pat in code
    mutant = dict(dsp)
    mutant[fn] = code.replace(pat, struct.pack("<2H", *new), 1)
    rng = random.Random(35)
    x = [rng.randrange(256) for _ in range(200)]
    w = bytes(rng.randrange(256) for _ in range(50 * 3))
    args = (x, 1, 16, 1, 16, 3, 40, 8, 7, w, 50, 3, [1, 2, 3])
    if fn != "gather_pair":  # (runs of 5: a tail of 3 values)
        args = (x, 1, 5, 2, 7, 5, 30, 8, 7, w, 50, 3, [1, 2, 3])
    g = "gather_pair_any" if fn != "gather_pair" else fn
    assert list(_pair(dsp, *args, gather=g)[:2]) == _pair_ref(*args)
    assert list(_pair(mutant, *args, gather=g)[:2]) != _pair_ref(*args)


def test_pair_dots_of_any_runs(dsp):
    """gather_pair_any then pair_dots: runs of any length (CONV_2D on 1
    to 7 input channels), windows of any size (n mod 4 values as one word
    each), the same sums as TFLM's."""
    rng = random.Random(36)
    for trial in range(150):
        run, nrun = rng.randint(1, 11), rng.randint(1, 3)
        rstep = run + rng.randint(0, 5)
        nrow = rng.randint(1, 3)
        xrow = nrun * rstep + rng.randint(0, 9)
        xs = rng.randint(1, 60)
        x = [rng.randrange(256) for _ in range(nrow * xrow + xs + 20)]
        zp = rng.choice([-128, 127, 0, rng.randint(-128, 127)])
        n = run * nrun * nrow
        nf = rng.randint(1, 7)
        ws = n + rng.randint(0, 3)
        w = bytes(rng.randrange(256) for _ in range(ws * nf))
        bias = [rng.randint(-2 ** 20, 2 ** 20) for _ in range(nf)]
        args = (x, rng.randint(0, 3), run, nrun, rstep, nrow, xrow, xs, zp,
                w, ws, nf, bias)
        a, b, after, (wa, ba, oa), _ = _pair(
            dsp, *args, w_offset=rng.randint(0, 3), gather="gather_pair_any")
        assert [a, b] == _pair_ref(*args), trial
        assert after[7] == oa + 4 * nf and after[8] == 0


def test_pair_dots_of_any_runs_instructions_per_mac(dsp):
    """ResNet-8's first CONV_2D: 3x3x3 windows of two pixels, 16
    filters: under 2.6 instructions per multiply-accumulate, the gather
    included (dots: 3.0 for one pixel, gather apart)."""
    rng = random.Random(37)
    x = [rng.randrange(256) for _ in range(400)]
    w = bytes(rng.randrange(256) for _ in range(27 * 16))
    count = _pair(dsp, x, 0, 9, 1, 9, 3, 96, 3, 5, w, 27, 16, [0] * 16,
                  gather="gather_pair_any")[4]
    assert count / (2 * 27 * 16) <= 2.6, count / (2 * 27 * 16)


def _pixels_overlapped(dsp, H, W, C, OC, dist):
    """conv.py's 1x1 stride-1 CONV_2D loop (_conv_1x1: one row of H * W
    pixels, thumb_dsp.pixels in pairs, a value beyond the fast path
    requantized by the caller) on a [1, H, W, C] input: the output's
    bytes, the input d bytes after the output in one arena (dist an
    int), or in buffers of their own (None). Channel 0's bias is beyond
    the fast path, so that every pair is gathered again."""
    from tflm.kernels.gemmlowp import mbqm_ref
    from test_thumb import PX, _wrap
    n = H * W
    rng = random.Random(5)
    xin = bytes(rng.randrange(256) for _ in range(n * C))
    wts = bytes(rng.randrange(256) for _ in range(OC * C))
    bias = [rng.randint(-3000, 3000) for _ in range(OC)]
    bias[0] = 1 << 22
    ms, shifts, lim = [1 << 30] * OC, [-10] * OC, 1 << 20
    emu = Emulator(True)
    va = emu.alloc(b"\0" * 4 * C, writable=True)
    if dist is None:
        qa = emu.alloc(b"\0" * n * OC, writable=True)
        xa = emu.alloc(xin, writable=True, unaligned=True)
    else:
        arena = bytearray(max(dist + n * C, n * OC))
        arena[dist:dist + n * C] = xin
        qa = emu.alloc(bytes(arena), align=16, writable=True,
                       unaligned=True)
        xa = qa + dist
    wa = emu.alloc(wts, unaligned=True)
    ba = emu.alloc(struct.pack("<%di" % OC, *bias))
    ma = emu.alloc(struct.pack("<%di" % OC, *ms))
    sa = emu.alloc(bytes(s & 0xFF for s in shifts))
    aa = emu.alloc(b"\0" * 4 * OC, writable=True)
    blk = dict(V=va, V8=va + 4 * (C & ~7), VE=va + 4 * C, WP=0, WS=C,
               BP=0, BASE=0, OUT=0, NF=0, X=xa, XS=C, OFF=-3 - 128,
               NPIX=n, MP0=ma, MSTEP=4, SP0=sa, SSTEP=1, ZO=-2, LO=-128,
               HI=127, QOUT=qa, QSTEP=OC, PEND=0, LIM=lim, LIM2=2 * lim,
               WP0=wa, BP0=ba, ACC=aa, NF0=OC, MP=0, SP=0, Q=0, REL=0)
    word = {k: 4 * i for i, k in enumerate(PX)}
    pa = emu.alloc(struct.pack("<%di" % len(PX),
                               *[_wrap(blk[k]) for k in PX]),
                   writable=True)
    while emu.call(dsp["pixels"], pa, 0):
        qo = emu.words(pa + word["QOUT"], 1)[0] - OC
        acc = emu.words(aa, OC)
        for k in range(OC):
            if not (0 <= -shifts[k] <= 21 and abs(acc[k]) <= lim):
                v = mbqm_ref(acc[k], ms[k], shifts[k]) - 2
                emu.uc.mem_write(qo + k, bytes([min(max(v, -128), 127)
                                                & 0xFF]))
        emu.uc.mem_write(pa + word["PEND"], b"\0" * 4)
        if emu.words(pa + word["NPIX"], 1)[0] == 0:
            break
    return emu.read(qa, n * OC)


@pytest.mark.parametrize("H,W,C,OC", [(6, 1, 16, 16), (5, 1, 8, 16),
                                      (6, 1, 16, 8), (4, 2, 16, 16),
                                      (3, 3, 8, 24)])
def test_pixels_pairs_keep_the_planners_overlap(dsp, H, W, C, OC):
    """A 1x1 stride-1 CONV_2D whose output overlaps its input where the
    memory planner lets it (planner.overlap): thumb_dsp.pixels gathers a
    pair's first pixel again after writing both outputs, which the
    planner's distance keeps clear (with one pixel a row it is more than
    the rows ask: a review found W = 1 wrong without it); the output is
    the one with buffers apart, and the plan does overlap them."""
    import numpy as np
    from host_tools import opgen
    from tflm import planner
    from tflm.model import Model
    T = opgen.Tensor
    m = opgen.Model()
    x = m.add_tensor(T([1, H, W, C], scale=0.05, zero_point=3))
    w = m.add_tensor(T([OC, 1, 1, C], scale=[0.01] * OC, zero_point=0,
                       data=np.ones((OC, 1, 1, C), np.int8)))
    y = m.add_tensor(T([1, H, W, OC], scale=0.12, zero_point=-2))
    m.add_op("CONV_2D", [x, w, -1], [y],
             {"padding": "VALID", "stride_w": 1, "stride_h": 1})
    m.inputs, m.outputs = [x], [y]
    _, bufs, root = planner.plan_model(Model(m.build()))
    d = bufs[root[x]].offset - bufs[root[y]].offset
    assert bufs[root[x]].link[1] <= d < H * W * OC  # overlapped
    assert _pixels_overlapped(dsp, H, W, C, OC, d) == \
        _pixels_overlapped(dsp, H, W, C, OC, None)
    # (and the rows' distance alone would not do where W is 1)
    if W == 1 and OC >= C:
        rows = planner.gap(1, H, H, 1, 0, W * C, W * OC)
        assert _pixels_overlapped(dsp, H, W, C, OC, rows) != \
            _pixels_overlapped(dsp, H, W, C, OC, None)
