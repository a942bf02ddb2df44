"""The int8 LSTM's per-gate loop in viper, for ports without Thumb machine
code (the unix port, esp32, RISC-V): thumb_lstm.py's twin, with the same
function, block (GATE_BLOCK there) and results (lstm_int8.py imports one
of the two: kernels.THUMB).
"""

import micropython


@micropython.viper
def gate(g, t, tab, blk) -> int:
    """thumb_lstm.gate: for i < N, in place on int32 words, v = g[i], or
    sat16(clamp16(g[i]) + clamp16(t[i])) when ADD; then g[i] = TFLM's
    int16 Logistic(v * 3) when KIND is 1, its int16 Tanh of (v * MULT +
    round) >> SHIFT when KIND is 2, v when 0. Returns 0."""
    pg = ptr32(g)
    pt = ptr32(t)
    pb = ptr32(blk)
    tb = ptr8(tab)
    one: int = 1
    S: int = one << 31
    n: int = pb[0]
    add: int = pb[1]
    kind: int = pb[2]
    mult: int = (pb[3] ^ S) - S
    shift: int = pb[4]
    rnd: int = 0
    if shift > 0:
        rnd = one << (shift - 1)
    i: int = 0
    while i < n:
        v: int = (pg[i] ^ S) - S
        if add:
            b: int = (pt[i] ^ S) - S
            if v > 32767:
                v = 32767
            if v < -32768:
                v = -32768
            if b > 32767:
                b = 32767
            if b < -32768:
                b = -32768
            v += b
            if v > 32767:
                v = 32767
            if v < -32768:
                v = -32768
        if kind == 1:
            v = v * 3
            a: int = v
            if a < 0:
                a = 0 - a
            uh: int = a >> 9
            if uh >= 255:
                r: int = 0x7FFF << 10
            else:
                ua: int = tb[2 * uh] | (tb[2 * uh + 1] << 8)
                ub: int = tb[2 * uh + 2] | (tb[2 * uh + 3] << 8)
                r = (ua << 9) + (a & 0x1FF) * (ub - ua)
            if v >= 0:
                r = r + 512
            else:
                r = (one << 25) - r + 511
            v = r >> 10
        elif kind == 2:
            v = (v * mult + rnd) >> shift
            a = v
            if a < 0:
                a = 0 - a
            uh = a >> 8
            if uh >= 255:
                r = 0xFFFF << 8
            else:
                ua = tb[2 * uh] | (tb[2 * uh + 1] << 8)
                ub = tb[2 * uh + 2] | (tb[2 * uh + 3] << 8)
                r = (ua << 8) + (a & 0xFF) * (ub - ua)
            if v >= 0:
                r = r - (one << 23) + 128
            else:
                r = (one << 23) - r + 127
            v = r >> 8
        pg[i] = v
        i += 1
    return 0
