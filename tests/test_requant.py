"""fixedpoint.requant_i8b (fused, batched requantize + store) equals
TFLM's int64 MultiplyByQuantizedMultiplier + zero point + clamp."""

import numpy as np
import pytest

from conftest import run_mp
from test_fixedpoint import mbqm_int64


def vectors(n, nch, seed):
    """x: int32 accumulators; per-channel m, shift chosen so that most
    results land near the int8 range (so the clamp hides little)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 32, n)
    x = rng.integers(-(1 << 31), 1 << 31, n) >> bits
    edges = [0, 1, -1, (1 << 31) - 1, -(1 << 31), 1 << 30, -(1 << 30),
             (1 << 30) - 1, -(1 << 15), (1 << 16) - 1,
             # the edges of requant_i8b's fast path, |x| <= 2**20
             1 << 20, -(1 << 20), (1 << 20) + 1, -(1 << 20) - 1,
             (1 << 20) - 1, 1 - (1 << 20), (1 << 21) + 3, -(1 << 21) - 3]
    x[:len(edges)] = edges
    m = rng.integers(1 << 30, 1 << 31, nch)
    m[::5] = (1 << 31) - 1
    m[1::7] = 1 << 30
    shift = rng.integers(-31, 4, nch)
    return x, m, shift


def expected(x, m, s, nch, zp, lo, hi):
    c = np.arange(len(x)) % nch
    return np.clip(mbqm_int64(x, m[c], s[c]) + zp, lo, hi).astype(np.int8)


CASES = [(1, 0, -128, 127), (3, -5, -128, 127), (8, 17, -100, 90),
         (16, -128, -128, 127), (64, 3, 0, 127)]


@pytest.mark.parametrize("nch,zp,lo,hi", CASES)
def test_requant_i8_on_unix_port(tmp_path, nch, zp, lo, hi):
    n = nch * (4000 // nch)
    x, m, s = vectors(n, nch, nch)
    # Results spread over the int8 range: rescale x per channel so that
    # MBQM lands within a few hundred (a clamp-only test would hide bugs).
    want = expected(x, m, s, nch, zp, lo, hi)
    for name, a in (("x", x), ("m", m), ("s", s)):
        (tmp_path / (name + ".bin")).write_bytes(np.int32(a).tobytes())
    code = """
from array import array
import micropython
from tflm.fixedpoint import requant_i8b
def load(name):
    a = array('i')
    with open(%r + '/' + name + '.bin', 'rb') as f:
        a.extend(array('i', f.read()))
    return a
x, m, s = load('x'), load('m'), load('s')
qp = array('i', (%d, %d, %d))
out = bytearray(len(x) + 3)
micropython.heap_lock()
requant_i8b(0, 0, 0, x, len(x), %d, m, s, qp, out, 3, 1)
micropython.heap_unlock()
with open(%r + '/out.bin', 'wb') as f:
    f.write(out)
""" % (str(tmp_path), zp, lo, hi, nch, str(tmp_path))
    run_mp(code, tmp_path)
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.int8)
    assert not got[:3].any()
    assert np.array_equal(got[3:], want)
    # the case is informative: not everything clamps
    inside = np.sum((want > lo) & (want < hi))
    assert inside > len(want) // 20, inside
