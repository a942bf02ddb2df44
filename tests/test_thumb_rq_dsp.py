"""kernels/thumb_rq_dsp.py: rq, the DSP requantization of int32 sums
into int8 bytes, and gather, FULLY_CONNECTED's window, on an emulated
Cortex-M4.

The bytes mpy-cross writes for armv7emsp run in unicorn's Cortex-M4
(tests/thumb_emu.py) and must give TFLM's MultiplyByQuantizedMultiplier
(gemmlowp.mbqm_ref, common.cc's arithmetic) plus the zero point,
clamped, for every sum, multiplier and shift (the rounding ties, the
int32 edges, left shifts that wrap), per tensor and per channel, with
the shift and output bytes at any address and nothing else unaligned or
out of the call's buffers; a negative multiplier stops the call there.
A mutated instruction must fail these checks.
"""

import random
import struct

import pytest

pytest.importorskip("unicorn")

from thumb_emu import Emulator, asm_functions  # noqa: E402

from tflm.kernels.gemmlowp import mbqm_ref  # noqa: E402

RQ = "tflm/kernels/thumb_rq_dsp.py"


@pytest.fixture(scope="module")
def code():
    """{name: machine code} of thumb_rq_dsp.py, as an armv7emsp board
    loads it."""
    return asm_functions(RQ, "armv7emsp")


def _w32(v):
    return (v + 2 ** 31) % 2 ** 32 - 2 ** 31


def _ref(acc, mults, shifts, zo, lo, hi, per):
    out = []
    for k, x in enumerate(acc):
        c = k if per else 0
        v = _w32(mbqm_ref(x, mults[c], shifts[c]) + zo)
        out.append(min(max(v, lo), hi))
    return out


def _run(code, acc, mults, shifts, zo, lo, hi, per, off=0):
    """rq on the emulated M4: (output bytes as ints, return value,
    block words after the call)."""
    emu = Emulator(True)
    n = len(acc)
    aa = emu.alloc(struct.pack("<%di" % n, *acc))
    ma = emu.alloc(struct.pack("<%di" % len(mults), *mults))
    sa = emu.alloc(struct.pack("<%db" % len(shifts), *shifts), offset=off)
    oa = emu.alloc(b"\xee" * n, offset=(off + 1) % 4, writable=True)
    blk = [aa, n, ma, sa, 1 if per else 0, oa, zo, lo, hi]
    ba = emu.alloc(struct.pack("<9i", *[_w32(v) for v in blk]),
                   writable=True)
    r = emu.call(code["rq"], ba, 0)
    got = [b - 256 * (b > 127) for b in emu.read(oa, n)]
    return got, r, emu.words(ba, 9), (aa, ma, sa, oa)


def _sums(rng, n):
    edges = [0, 1, -1, 2 ** 31 - 1, -2 ** 31, 2 ** 30, -2 ** 30]
    return [rng.choice(edges) if rng.random() < 0.15
            else rng.randint(-2 ** 31, 2 ** 31 - 1) >> rng.randint(0, 31)
            for _ in range(n)]


def _mult(rng):
    return rng.choice([0, 1, 2 ** 30, 2 ** 30 + 1, 2 ** 31 - 1,
                       rng.randint(2 ** 30, 2 ** 31 - 1),
                       rng.randint(2 ** 30, 2 ** 31 - 1)])


def _case(code, rng, per):
    n = rng.randint(1, 24)
    nch = n if per else 1
    mults = [_mult(rng) for _ in range(nch)]
    shifts = [rng.choice([rng.randint(-31, 30), rng.randint(-12, 3)])
              for _ in range(nch)]
    zo = rng.randint(-128, 127)
    lo = rng.choice([-128, rng.randint(-128, 0), zo if zo < 127 else -128])
    hi = rng.choice([127, rng.randint(max(lo, 0), 127)])
    acc = _sums(rng, n)
    got, r, _, _ = _run(code, acc, mults, shifts, zo, lo, hi, per,
                        off=rng.randrange(4))
    assert r == 0
    assert got == _ref(acc, mults, shifts, zo, lo, hi, per), (
        acc, mults, shifts, zo, lo, hi)


@pytest.mark.parametrize("per", [0, 1])
def test_rq_matches_tflm(code, per):
    """Random sums (every magnitude, the int32 edges), multipliers
    (0, 1, 2**30, 2**31 - 1 among them) and shifts -31..30, per tensor
    and per channel, any zero point and clamp: TFLM's bytes."""
    rng = random.Random(41 + per)
    for _ in range(150):
        _case(code, rng, per)


def test_rq_rounding_ties(code):
    """Sums at SaturatingRoundingDoublingHighMul's and
    RoundingDivideByPOT's ties (x * m / 2**31 = k * 2**e +- 2**(e - 1),
    both signs) for every right shift, and the wrapping left shifts: a
    zero point that keeps them in range."""
    rng = random.Random(43)
    acc, mults, shifts = [], [], []
    for e in range(1, 32):
        for m in (2 ** 30, 2 ** 30 + 1, 2 ** 31 - 1):
            for sign in (1, -1):
                for d in (-1, 0, 1):
                    k = rng.randint(0, 60)
                    v = sign * (k * (1 << e) + (1 << (e - 1)))
                    acc.append(max(-2 ** 31, min(2 ** 31 - 1,
                                                 (v << 31) // m + d)))
                    mults.append(m)
                    shifts.append(-e)
    for s in range(0, 31):
        for _ in range(3):
            acc.append(rng.randint(-2 ** 31, 2 ** 31 - 1) >> rng.randint(
                0, 31))
            mults.append(_mult(rng))
            shifts.append(s)
    for zo in (0, -128, 127):
        got, r, _, _ = _run(code, acc, mults, shifts, zo, -128, 127, 1)
        assert r == 0
        assert got == _ref(acc, mults, shifts, zo, -128, 127, 1)


def test_rq_stops_at_a_negative_multiplier(code):
    """A shift above 30 (conv_util.NEG_MARK): the values before it are
    written, the call returns 1 with ACC, N, MP, SP and OUT at it."""
    acc = [1000, -2000, 3000, 4000]
    mults = [2 ** 30] * 4
    shifts = [-3, -4, 30 + 33, -5]
    got, r, blk, (aa, ma, sa, oa) = _run(code, acc, mults, shifts, 5,
                                         -128, 127, 1)
    assert r == 1
    assert got[:2] == _ref(acc[:2], mults, shifts, 5, -128, 127, 1)
    assert got[2:] == [-18, -18]  # untouched (0xee)
    assert blk[:4] == [aa + 8, 2, ma + 8, sa + 2] and blk[5] == oa + 2


@pytest.mark.parametrize("old,new", [
    ((0xFBC7, 0x890C), (0xFBE7, 0x890C)),  # smlal -> umlal
    ((0xEBB8, 0x78CE), (0xEBB8, 0x780E)),  # subs lsl #31 -> lsl #0
    ((0xF169, 0x0900), (0xF149, 0x0900)),  # sbc -> adc
    ((0xEA46, 0x76D8), (0xEA46, 0x7698)),  # orr lsr #31 -> lsr #30
    ((0xEA4F, 0x099E), (0xEA4F, 0x095E)),  # lsr #2 -> lsr #1
])
def test_a_mutated_instruction_fails(code, old, new):
    """The checks see the instructions: each mutant of rq (the first
    occurrence of the instruction changed) fails them."""
    pat = struct.pack("<2H", *old)
    assert pat in code["rq"]
    mutant = {"rq": code["rq"].replace(pat, struct.pack("<2H", *new), 1)}
    rng = random.Random(44)
    with pytest.raises(AssertionError):
        for _ in range(60):
            _case(mutant, rng, rng.randrange(2))


def _gather(code, rng, n=None):
    """gather on the emulated M4: a window of n values from input bytes
    at any address (read as words: LDR), checked against the contract;
    the block's other words as they were."""
    n = rng.randint(1, 70) if n is None else n
    zp = rng.randint(-128, 127)
    x = bytes(rng.choice([0, 127, 128, 255, rng.randrange(256)])
              for _ in range(n))
    emu = Emulator(True)
    xa = emu.alloc(x, offset=rng.randrange(4), unaligned=True)
    va = emu.alloc(b"\xee" * (4 * n), writable=True)
    blk = [va, 0x11, va + 4 * n, 0x33, 0x44, 0x55, 0x66, xa, -zp, 0]
    ba = emu.alloc(struct.pack("<10i", *[_w32(v) for v in blk]),
                   writable=True)
    assert emu.call(code["gather"], ba, 0) == 0
    v = [b - 256 * (b > 127) - zp for b in x]
    assert emu.words(va, n) == v
    want = list(blk)
    want[6] = _w32(-128 * sum(v))
    assert emu.words(ba, 10) == [_w32(w) for w in want]


def test_gather_every_length_and_address(code):
    """Every window length 1..70 (the 4-value groups and their tails),
    the input at each address mod 4, any zero point: V[i] = x[i] - zp and
    BASE = -128 * sum(V), nothing else written."""
    rng = random.Random(45)
    for n in range(1, 71):
        _gather(code, rng, n)


@pytest.mark.parametrize("old,new", [
    ((0xFA43, 0xF994), (0xFA43, 0xF9A4)),  # sxtab ror #8 -> ror #16
    ((0xFA43, 0xFBB4), (0xFA43, 0xFB84)),  # sxtab ror #24 -> no rotation
])
def test_gather_mutated_instruction_fails(code, old, new):
    """Each mutant of gather (first occurrence changed) fails."""
    pat = struct.pack("<2H", *old)
    assert pat in code["gather"]
    mutant = {"gather": code["gather"].replace(
        pat, struct.pack("<2H", *new), 1)}
    rng = random.Random(46)
    with pytest.raises(AssertionError):
        for _ in range(20):
            _gather(mutant, rng)


def test_module_compiles_for_armv6m():
    """Only Thumb-1 mnemonics, the ARMv7E-M instructions as data: the
    same bytes for armv6m (a port freezing every thumb*.py)."""
    assert asm_functions(RQ) == asm_functions(RQ, "armv7emsp")
