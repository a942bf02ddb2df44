"""kernels/thumb_fpu.py: f32.dot in VFP instructions for Cortex-M4F, M7
and M33 (kernels.FPU), on an emulated Cortex-M4 with its FPU.

The bytes mpy-cross writes for armv7emsp run in unicorn's Cortex-M4
(tests/thumb_emu.py) against f32.dot's contract computed here in numpy
float32 (x86 SSE on the host, as TFLM's oracle: one rounding per
operation, subnormals kept, no fused multiply-add): every output that is
not NaN has the same bits, the NaN ones are NaN and counted (dot() has
f32.dot redo those: their bits are x86's, checked on the emulated board
by the doc's run). Shapes cover f32.dot's three loops, strides of 0 and
more, empty windows, the bias and the clamps; values the edges of
binary32 (subnormals, infinities, NaNs, signed zeros). The FPSCR a port
leaves (flush-to-zero, default NaN, another rounding mode) must change
nothing, and come back unchanged.
"""

import random
import re
import struct

import pytest

pytest.importorskip("unicorn")
np = pytest.importorskip("numpy")

import unicorn.arm_const as A  # noqa: E402

from thumb_emu import Emulator, asm_functions, block_layout  # noqa: E402

REL = "tflm/kernels/thumb_fpu.py"
BLOCK = block_layout(REL, "FDOT_BLOCK")
VBLOCK = block_layout(REL, "FVEC_BLOCK")
SPECIAL = [0, 0x80000000, 1, 0x80000001, 0x007FFFFF, 0x00800000,
           0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000,
           0xFFC00000, 0x7F800001, 0xFFA00000, 0x3F800000, 0x00400000]
LOWEST, FLT_MAX = 0xFF7FFFFF, 0x7F7FFFFF


@pytest.fixture(scope="module")
def fpu():
    return asm_functions(REL, "armv7emsp")


def _f(bits):
    return np.array([bits], np.uint32).view(np.float32)[0]


def _bits(v):
    return int(np.array([v], np.float32).view(np.uint32)[0])


def _ref(x, w, b, s, q):
    """f32.dot's outputs (bit patterns) for slots s (dict), in float32:
    acc = fl(acc + fl(x * w)) in loop order, + bias, clamp."""
    out = []
    xo, wo, xc = s["x0"], s["w0"], 0
    with np.errstate(all="ignore"):
        for t in range(s["nout"]):
            acc = _f(q[0])
            for i2 in range(s["n2"]):
                for i1 in range(s["n1"]):
                    for i0 in range(s["n0"]):
                        k = xo + i2 * s["xs2"] + i1 * s["xs1"] + i0 * s["xs0"]
                        j = wo + i2 * s["ws2"] + i1 * s["ws1"] + i0 * s["ws0"]
                        acc = np.float32(acc + np.float32(_f(x[k]) * _f(w[j])))
            if s["bias"] >= 0:
                acc = np.float32(acc + _f(b[s["bias"] + t]))
            lo, hi = _f(q[1]), _f(q[2])
            if acc < lo:
                acc = lo
            if hi < acc:
                acc = hi
            out.append(_bits(acc))
            wo += s["wstep"]
            xc += 1
            if xc == s["xevery"]:
                xc, xo = 0, xo + s["xstep"]
    return out


def _run(code, x, w, b, s, q, fpscr=0, x_off=0):
    """fdot on the emulated Cortex-M4: (outputs, NaN count, FPSCR after,
    instructions)."""
    emu = Emulator(True)
    xa = emu.alloc(struct.pack("<%dI" % len(x), *x), offset=x_off)
    wa = emu.alloc(struct.pack("<%dI" % len(w), *w))
    ba = emu.alloc(struct.pack("<%dI" % len(b), *b))
    qa = emu.alloc(struct.pack("<4I", *q))
    oa = emu.alloc(b"\xa5" * 4 * s["nout"], writable=True)
    blk = dict(X0=xa + 4 * s["x0"], W0=wa + 4 * s["w0"], N2=s["n2"],
               XS2=4 * s["xs2"], WS2=4 * s["ws2"], N1=s["n1"],
               XS1=4 * s["xs1"], WS1=4 * s["ws1"], N0=s["n0"],
               XS0=4 * s["xs0"], WS0=4 * s["ws0"],
               BP=ba + 4 * s["bias"] if s["bias"] >= 0 else 0, OP=oa,
               NOUT=s["nout"], XSTEP=4 * s["xstep"], XEVERY=s["xevery"],
               WSTEP=4 * s["wstep"], Q=qa, FPSCR=0, XCOUNT=0, NANS=0, CNT=0)
    pa = emu.alloc(struct.pack("<%dI" % len(BLOCK),
                               *[blk[k] for k in BLOCK]), writable=True)
    # the port's FPSCR: set by a VMSR run just before fdot's code (a
    # value written from outside would give way to FPDSCR's default at
    # the thread's first FP instruction, which unicorn's SCS can't set)
    nans = emu.call(struct.pack("<2H", 0xEEE1, 0x1A10) + code["fdot"],
                    pa, fpscr)
    out = list(struct.unpack("<%dI" % s["nout"],
                             emu.read(oa, 4 * s["nout"])))
    return out, nans, emu.uc.reg_read(A.UC_ARM_REG_FPSCR), emu.count


def _value(rng, rare):
    if not rare:  # moderate magnitudes: long sums without overflow
        return (rng.getrandbits(1) << 31 | (118 + rng.randrange(12)) << 23
                | rng.getrandbits(23))
    k = rng.randrange(8)
    if k == 0:
        return rng.choice(SPECIAL)
    if k == 1:  # subnormal
        return rng.getrandbits(1) << 31 | rng.getrandbits(23)
    if k == 2:
        return rng.getrandbits(32)
    if k == 3:  # tiny normals: products and sums fall into subnormals
        return (rng.getrandbits(1) << 31 | (1 + rng.randrange(20)) << 23
                | rng.getrandbits(23))
    return (rng.getrandbits(1) << 31 | (120 + rng.randrange(16)) << 23
            | rng.getrandbits(23))


def _case(rng, rare, contiguous=False):
    n0 = rng.randrange(0, 11)
    n1, n2 = rng.randrange(1, 3), rng.randrange(1, 3)
    xs0, ws0 = (1, 1) if contiguous else (rng.choice((0, 1, 2)),
                                          rng.choice((0, 1, 3)))
    s = dict(x0=rng.randrange(3), w0=rng.randrange(3), n0=n0, n1=n1, n2=n2,
             xs0=xs0, ws0=ws0)
    s["xs1"] = n0 * max(xs0, 1) + rng.randrange(3)
    s["ws1"] = n0 * max(ws0, 1) + rng.randrange(3)
    s["xs2"] = s["xs1"] * n1 + rng.randrange(2)
    s["ws2"] = s["ws1"] * n1 + rng.randrange(2)
    s["nout"] = rng.randrange(1, 5)
    s["xevery"] = rng.choice((0, 1, 2))
    s["xstep"] = rng.randrange(1, 4)
    s["wstep"] = s["ws2"] * n2 + rng.randrange(2)
    s["bias"] = rng.choice((-1, 0, 2))
    nx = s["x0"] + s["xs2"] * n2 + s["xstep"] * s["nout"] + 4
    nw = s["w0"] + s["wstep"] * s["nout"] + s["ws2"] * n2 + 4
    x = [_value(rng, rare) for _ in range(nx)]
    w = [_value(rng, rare) for _ in range(nw)]
    b = [_value(rng, rare) for _ in range(s["nout"] + 3)]
    lo, hi = rng.choice(((LOWEST, FLT_MAX), (0, FLT_MAX), (0, 0x40C00000),
                         (0xBF800000, 0x3F800000)))
    q = [rng.choice((0, 0x80000000, _value(rng, rare))), lo, hi, 0x3F800000]
    return x, w, b, s, q


def _check(got, nans, want, what):
    for g, r in zip(got, want):
        if (r & 0x7FFFFFFF) > 0x7F800000:
            assert (g & 0x7FFFFFFF) > 0x7F800000, (what, hex(g), hex(r))
        else:
            assert g == r, (what, hex(g), hex(r))
    assert nans == sum((r & 0x7FFFFFFF) > 0x7F800000 for r in want), what


def test_dot_contract_on_random_values(fpu):
    """Ordinary values, then binary32's edges: f32.dot's bits."""
    rng = random.Random(36)
    seen_nan = seen_sub = 0
    for i in range(300):
        x, w, b, s, q = _case(rng, rare=i % 2 == 1, contiguous=i % 5 == 0)
        want = _ref(x, w, b, s, q)
        got, nans, _, _ = _run(fpu, x, w, b, s, q)
        _check(got, nans, want, (i, s))
        seen_nan += nans > 0
        seen_sub += any(0 < (r & 0x7FFFFFFF) < 0x00800000 for r in want)
    assert seen_nan > 10 and seen_sub > 3, (seen_nan, seen_sub)


def test_port_fpscr_changes_nothing(fpu):
    """Flush-to-zero, default NaN and round-towards-zero set by the port:
    the same bits (subnormal results kept), and FPSCR as it was after."""
    rng = random.Random(7)
    tiny = 0x00A00000  # 2**-125 * 1.25: its products are subnormal
    for fpscr in (1 << 24, 1 << 25, 3 << 22, 0xF << 22):
        for i in range(20):
            x, w, b, s, q = _case(rng, rare=True)
            x = [tiny if v & 1 else v for v in x]
            want = _ref(x, w, b, s, q)
            got, nans, after, _ = _run(fpu, x, w, b, s, q, fpscr=fpscr)
            _check(got, nans, want, (fpscr, i))
            assert after & 0x07C00000 == fpscr
    # without fdot's own FPSCR (its first VMSR made two NOPs) the port's
    # FZ flushes the subnormal product: the checks above mean something
    s = dict(x0=0, w0=0, n0=1, n1=1, n2=1, xs0=1, ws0=1, xs1=1, ws1=1,
             xs2=1, ws2=1, nout=1, xevery=0, xstep=0, wstep=0, bias=-1)
    q = [0, LOWEST, FLT_MAX, 0x3F800000]
    assert _ref([tiny], [0x3F000000], [], s, q) == [0x00500000]
    assert _run(fpu, [tiny], [0x3F000000], [], s, q,
                fpscr=1 << 24)[0] == [0x00500000]
    vmsr = struct.pack("<2H", 0xEEE1, 0x1A10)
    mutant = {"fdot": fpu["fdot"].replace(vmsr, b"\x00\xbf" * 2, 1)}
    assert mutant != fpu
    assert _run(mutant, [tiny], [0x3F000000], [], s, q,
                fpscr=1 << 24)[0] == [0]


def test_two_roundings_not_fused(fpu):
    """(1 + 2**-23)**2 - (1 + 2**-22): 0 with the product rounded (TFLM),
    2**-46 with a fused multiply-add."""
    s = dict(x0=0, w0=0, n0=2, n1=1, n2=1, xs0=1, ws0=1, xs1=2, ws1=2,
             xs2=2, ws2=2, nout=1, xevery=0, xstep=0, wstep=0, bias=-1)
    x = [0xBF800002, 0x3F800001]  # acc = -(1 + 2**-22), then the
    w = [0x3F800000, 0x3F800001]  # square of 1 + 2**-23 added
    q = [0x80000000, LOWEST, FLT_MAX, 0x3F800000]
    want = _ref(x, w, [], s, q)
    assert want == [0]
    assert _run(fpu, x, w, [], s, q)[0] == want


def test_instructions_per_mac(fpu):
    """A FULLY_CONNECTED row of 256 against 8 units: under 4 instructions
    per multiply-accumulate, everything counted (f32.dot on an M4's
    viper: about 700)."""
    rng = random.Random(3)
    n, nout = 256, 8
    s = dict(x0=0, w0=0, n0=n, n1=1, n2=1, xs0=1, ws0=1, xs1=n, ws1=n,
             xs2=n, ws2=n, nout=nout, xevery=0, xstep=0, wstep=n, bias=0)
    x = [_value(rng, False) for _ in range(n)]
    w = [_value(rng, False) for _ in range(n * nout)]
    b = [_value(rng, False) for _ in range(nout)]
    q = [0, LOWEST, FLT_MAX, 0x3F800000]
    got, nans, _, count = _run(fpu, x, w, b, s, q)
    assert got == _ref(x, w, b, s, q) and nans == 0
    assert count / (n * nout) < 4, count / (n * nout)


def test_vldr_needs_aligned_operands(fpu):
    """x at an address that is not 4-byte aligned is an unaligned
    access (VLDR faults on those): dot() hands such calls to f32.dot."""
    from thumb_emu import ThumbError
    s = dict(x0=0, w0=0, n0=3, n1=1, n2=1, xs0=1, ws0=1, xs1=3, ws1=3,
             xs2=3, ws2=3, nout=1, xevery=0, xstep=0, wstep=0, bias=-1)
    q = [0, LOWEST, FLT_MAX, 0x3F800000]
    with pytest.raises(ThumbError, match="unaligned"):
        _run(fpu, [0x3F800000] * 3, [0x3F800000] * 3, [], s, q, x_off=2)


def test_encodings_are_the_assemblers(fpu, tmp_path, monkeypatch):
    """The data() halfwords are the instructions their comments name:
    where MicroPython's armv7emsp inline assembler has the mnemonic
    (vldr, vstr, vmul, vadd, vmov between core and VFP registers, vmrs)
    the module with the mnemonics in place of the data compiles to the
    same bytes; vcmp (the assembler's is VCMPE), vmov.f32 between VFP
    registers, vmsr and vldmia stay data, checked by their encodings
    here."""
    import os
    from host_tools import PKG_DIR
    src = open(os.path.join(PKG_DIR, *REL.split("/"))).read()
    own = {"vcmp.f32", "vmov.f32", "vmsr", "vldmia"}
    n = 0

    def mnemonic(m):
        nonlocal n
        ind, ins = m.group(1), m.group(4)
        op, _, args = ins.partition(" ")
        if op in own:
            return m.group(0)
        n += 1
        args = [a.strip() for a in re.split(r",\s*(?![^\[]*\])", args)]
        return "%s%s(%s)" % (ind, op.replace(".f32", ""), ", ".join(args))

    pat = re.compile(r"^( +)data\(2, (0x[0-9A-F]{4}), (0x[0-9A-F]{4})\)"
                     r" +# ([a-z.0-9]+ [^:\n]*?)(?::.*)?$", re.M)
    alt = pat.sub(mnemonic, src)
    assert n > 40
    d = tmp_path / "tflm" / "kernels"
    d.mkdir(parents=True)
    (d / "thumb_fpu.py").write_text(alt)
    import thumb_emu
    old = thumb_emu.PKG_DIR
    thumb_emu.PKG_DIR = str(tmp_path)
    try:
        assert asm_functions(REL, "armv7emsp") == fpu
    finally:
        thumb_emu.PKG_DIR = old
    # the four the assembler lacks (ARM ARM encodings T1; VLDM's T2)
    for _, hi, lo, ins in pat.findall(src):
        op = ins.split()[0]
        h, lw = int(hi, 16), int(lo, 16)
        if op == "vmsr":
            assert h == 0xEEE1 and lw & 0x0FFF == 0x0A10
        elif op == "vcmp.f32":
            assert h & 0xFFBF == 0xEEB4 and lw & 0x0FD0 == 0x0A40
        elif op == "vmov.f32":
            assert h & 0xFFBF == 0xEEB0 and lw & 0x0FD0 == 0x0A40
        elif op == "vldmia":  # VLDMIA Rn!, {Sd-Sd+k-1}: P 0, U 1, W 1
            m = re.match(r"vldmia r(\d)!, \{s(\d+)-s(\d+)\}", ins)
            rn, d, e = (int(v) for v in m.groups())
            assert h == 0xECB0 | (d & 1) << 6 | rn, ins
            assert lw == (d >> 1) << 12 | 0x0A00 | (e - d + 1), ins


# ---- fvec: f32.vec's loop (ADD, SUB, MUL, RELU, RELU6 of float_ops) ----

def _vref(a, b, c, lo, hi):
    """f32.vec's element: clamp(fl(c + fl(a * b))), NaN passing."""
    with np.errstate(all="ignore"):
        acc = np.float32(_f(c) + np.float32(_f(a) * _f(b)))
    if acc < _f(lo):
        acc = _f(lo)
    if _f(hi) < acc:
        acc = _f(hi)
    return _bits(acc)


def _vrun(code, a, b, c, s, lo, hi, fpscr=0, alias=None):
    """vec() on the emulated M4, fvec and its NaN hand-over as
    thumb_fpu.vec does them (the NaN element computed here in its
    place, from what memory then holds). s: offsets (in elements) ao,
    bo, co, oo, strides as, bs, cs, os and n. alias "c": out is c's
    buffer. Returns (out buffer's words, NaN hand-overs, instructions,
    FPSCR after)."""
    emu = Emulator(True)
    addr = {}
    for k, v in (("a", a), ("b", b), ("c", c)):
        addr[k] = emu.alloc(struct.pack("<%dI" % len(v), *v),
                            writable=k == alias)
    nout = s["oo"] + s["os"] * s["n"] + 1 if alias is None else len(c)
    addr["o"] = addr[alias] if alias else emu.alloc(
        b"\xa5" * 4 * nout, writable=True)
    blk = dict(A=addr["a"] + 4 * s["ao"], AS=4 * s["as"],
               B=addr["b"] + 4 * s["bo"], BS=4 * s["bs"],
               C=addr["c"] + 4 * s["co"], CS=4 * s["cs"],
               O=addr["o"] + 4 * s["oo"], OS=4 * s["os"], N=s["n"],
               LO=lo, HI=hi, FPSCR=0)
    pa = emu.alloc(struct.pack("<%dI" % len(VBLOCK),
                               *[blk[k] & 0xFFFFFFFF for k in VBLOCK]),
                   writable=True)
    vmsr = struct.pack("<2H", 0xEEE1, 0x1A10)
    nans = count = 0
    while True:
        r = emu.call(vmsr + code["fvec"], pa, fpscr)
        count += emu.count
        after = emu.uc.reg_read(A.UC_ARM_REG_FPSCR)
        v = dict(zip(VBLOCK, emu.words(pa, len(VBLOCK))))
        if r == 0:
            assert v["N"] == 0
            break
        assert r == 1 and v["N"] > 0
        nans += 1
        word = [struct.unpack("<I", emu.read(v[k] & 0xFFFFFFFF, 4))[0]
                for k in "ABC"]
        want = _vref(*word, lo, hi)
        assert (want & 0x7FFFFFFF) > 0x7F800000, "fvec stopped on a number"
        emu.uc.mem_write(v["O"] & 0xFFFFFFFF, struct.pack("<I", want))
        for k in "ABCO":
            v[k] += v[k + "S"]
        v["N"] -= 1
        emu.uc.mem_write(pa, struct.pack("<%di" % len(VBLOCK),
                                         *[v[k] for k in VBLOCK]))
    words = list(struct.unpack("<%dI" % nout, emu.read(addr["o"],
                                                       4 * nout)))
    return words, nans, count, after


def _vwant(a, b, c, s, lo, hi, alias=None):
    """The out buffer after f32.vec, element by element in order."""
    nout = s["oo"] + s["os"] * s["n"] + 1 if alias is None else len(c)
    out = list(c) if alias else [0xA5A5A5A5] * nout
    src = {"a": a, "b": b, "c": out if alias else c}
    for i in range(s["n"]):
        w = [src[k][s[k + "o"] + i * s[k + "s"]] for k in "abc"]
        out[s["oo"] + i * s["os"]] = _vref(*w, lo, hi)
    return out


def _vcase(rng, rare, alias=None):
    n = rng.randrange(0, 12)
    s = {"n": n, "os": 1 if alias else rng.choice((1, 1, 2))}
    for k in "abc":
        s[k + "s"] = 1 if alias == "c" and k == "c" else rng.choice(
            (0, 1, 1, 2, -1))
        s[k + "o"] = rng.randrange(3) + (n * 2 if s[k + "s"] < 0 else 0)
    if alias:
        s["oo"] = s["co"]
    else:
        s["oo"] = rng.randrange(3)
    vals = {k: [_value(rng, rare) for _ in range(n * 3 + 8)] for k in "abc"}
    lo, hi = rng.choice(((LOWEST, FLT_MAX), (0, FLT_MAX), (0, 0x40C00000),
                         (0xFF800000, 0x7F800000), (0xBF800000, 0x3F800000)))
    return vals["a"], vals["b"], vals["c"], s, lo, hi


def _vcheck(got, want, what):
    for g, r in zip(got, want):
        if (r & 0x7FFFFFFF) > 0x7F800000:  # NaN bits: from f32.vec, here
            assert g == r, (what, hex(g), hex(r))
        else:
            assert g == r, (what, hex(g), hex(r))


def test_vec_contract_on_random_values(fpu):
    """fvec + vec()'s hand-over of NaN elements: f32.vec's outputs, bit
    for bit, with strides of 0, 1, 2 and -1, the clamps of every
    activation, binary32's edges, and out in place of c (ADD y = y + x:
    a NaN element's operands still there when f32.vec redoes it)."""
    rng = random.Random(3636)
    seen_nan = seen_sub = 0
    for i in range(400):
        alias = "c" if i % 4 == 3 else None
        a, b, c, s, lo, hi = _vcase(rng, rare=i % 2 == 1, alias=alias)
        want = _vwant(a, b, c, s, lo, hi, alias)
        got, nans, _, _ = _vrun(fpu, a, b, c, s, lo, hi, alias=alias)
        assert got == want, (i, s, [(hex(g), hex(w)) for g, w in
                                    zip(got, want) if g != w][:3])
        seen_nan += nans > 0
        seen_sub += any(0 < (r & 0x7FFFFFFF) < 0x00800000 for r in want)
    assert seen_nan > 20 and seen_sub > 5, (seen_nan, seen_sub)


def test_vec_ops_and_port_fpscr(fpu):
    """ADD (c + a * 1.0), SUB (c + b * -1.0), MUL (-0.0 + a * b) and RELU
    as float_ops lays them out give numpy's float32 x1 + x2, x1 - x2,
    x1 * x2 and max(x, 0) (one rounding each, -0.0 kept); a port's
    flush-to-zero, default NaN or rounding mode changes nothing and comes
    back."""
    rng = random.Random(11)
    n = 64
    x1 = [_value(rng, i % 3 == 0) for i in range(n)]
    x2 = [_value(rng, i % 3 == 1) for i in range(n)]
    tiny = [rng.getrandbits(1) << 31 | (1 + rng.randrange(3)) << 23
            | rng.getrandbits(23) for _ in range(n)]  # sums and products
    one, mone, nzero = [0x3F800000], [0xBF800000], [0x80000000]
    f1 = np.array(x1, np.uint32).view(np.float32)
    f2 = np.array(x2, np.uint32).view(np.float32)
    ft = np.array(tiny, np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        cases = [  # (a, b, c, strides of a b c, numpy's result)
            (x1, one, x2, (1, 0, 1), f1 + f2),
            (x2, mone, x1, (1, 0, 1), f1 - f2),
            (x1, x2, nzero, (1, 1, 0), f1 * f2),
            (tiny, one, tiny, (1, 0, 1), ft + ft),
            (tiny, tiny, nzero, (1, 1, 0), ft * ft),
        ]
    for k, (a, b, c, st, ref) in enumerate(cases):
        s = dict(ao=0, bo=0, co=0, oo=0, os=1, n=n, **{
            "as": st[0], "bs": st[1], "cs": st[2]})
        want = _vwant(a, b, c, s, LOWEST, FLT_MAX)
        for w, r in zip(want, np.asarray(ref, np.float32).view(np.uint32)):
            r = int(r)  # f32.vec's layout of the op is the op, clamped
            if (r & 0x7FFFFFFF) <= 0x7F800000:
                assert w == {0x7F800000: FLT_MAX, 0xFF800000: LOWEST}.get(
                    r, r), (k, hex(w), hex(r))
        for fpscr in (0, 1 << 24, 1 << 25, 3 << 22, 0xF << 22):
            got, _, _, after = _vrun(fpu, a, b, c, s, LOWEST, FLT_MAX,
                                     fpscr=fpscr)
            _vcheck(got, want, (k, fpscr))
            assert after & 0x07C00000 == fpscr
    # without fvec's own FPSCR (its first VMSR made two NOPs) the port's
    # flush-to-zero changes the sums of subnormals: the checks mean something
    vmsr = struct.pack("<2H", 0xEEE1, 0x1A10)
    mutant = {"fvec": fpu["fvec"].replace(vmsr, b"\x00\xbf" * 2, 1)}
    s = dict(ao=0, bo=0, co=0, oo=0, os=1, n=1, **{"as": 1, "bs": 0,
                                                     "cs": 1})
    sub = ([0x00400000], one, [0x00200000], s, LOWEST, FLT_MAX)
    assert _vwant(*sub) == [0x00600000, 0xA5A5A5A5]
    assert _vrun(fpu, *sub, fpscr=1 << 24)[0] == [0x00600000, 0xA5A5A5A5]
    assert _vrun(mutant, *sub, fpscr=1 << 24)[0] == [0, 0xA5A5A5A5]
    # RELU: max(x, 0), -0.0 and NaN passing
    s = dict(ao=0, bo=0, co=0, oo=0, os=1, n=n, **{"as": 1, "bs": 0,
                                                     "cs": 0})
    got, _, _, _ = _vrun(fpu, x1, one, nzero, s, 0, FLT_MAX)
    for g, x in zip(got, x1):
        if (x & 0x7FFFFFFF) > 0x7F800000:
            assert (g & 0x7FFFFFFF) > 0x7F800000
        elif x == 0x80000000 or not x >> 31:
            assert g == (FLT_MAX if x == 0x7F800000 else x), hex(x)
        else:
            assert g == 0, hex(x)


def test_vec_instructions_per_element(fpu):
    """An ADD of 256 elements: under 30 instructions each, everything
    counted (f32.vec on an M4's viper: 550-800, bench/device.md)."""
    rng = random.Random(5)
    n = 256
    a = [_value(rng, False) for _ in range(n)]
    c = [_value(rng, False) for _ in range(n)]
    s = dict(ao=0, bo=0, co=0, oo=0, os=1, n=n, **{"as": 1, "bs": 0,
                                                     "cs": 1})
    got, nans, count, _ = _vrun(fpu, a, [0x3F800000], c, s, LOWEST, FLT_MAX)
    assert got == _vwant(a, [0x3F800000], c, s, LOWEST, FLT_MAX)
    assert nans == 0 and count / n < 30, count / n


def test_compiles_for_armv6m(fpu):
    """A port that freezes every thumb*.py compiles it: Thumb-1 mnemonics
    and data; the same bytes as for armv7emsp."""
    assert asm_functions(REL) == fpu


def test_builds_take_the_module_of_their_arch():
    """romfs.for_arch: thumb_fpu.py only in armv7emsp / armv7emdp builds
    (an armv7em Cortex-M4 without FPU has the DSP code, not this)."""
    from host_tools import romfs
    for arch in ("armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp",
                 "x64", "xtensawin"):
        assert romfs.for_arch(REL, arch) == (arch in ("armv7emsp",
                                                      "armv7emdp")), arch
