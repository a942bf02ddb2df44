"""ADD's and SUB's lookup-table kernel for equal shapes on Cortex-M4/M7/
M33 (kernels.DSP): add._add_lut with its element loop in machine code
(thumb_dsp.add_lut: two table lookups, SMMULR and TFLM's rounding, zero
point, clamp and store in 21 instructions an element; the viper loop
takes about 260 on an M4). add.py binds eval_lut (below) as its
_eval_lut, so plain and compiled models (a block made on the host names
add._eval_lut and add._add_lut) both run it: add_lut where the strides
are a = b = 1 (equal shapes) and the output shift negative (every
trained model's: the output multiplier twice_max / (2**20 * out_scale)
is far below 1/2), else add._add_lut. add_lut's block goes in the
state's last buffer (add.LUT_WORDS words, planned on every build). A DSP
build's package only (romfs.DSP_ONLY).
"""

import micropython

from . import thumb_dsp
from .add import _add_lut as _VIPER
from .add import fill_tables

_LOOP = thumb_dsp.add_lut


def eval_lut(state):
    """add._eval_lut (the same state): add_lut where it applies (see
    the module), else add._add_lut."""
    if _fits(state[3]):
        add_lut(0, 0, 0, state)
    else:
        _VIPER(0, 0, 0, state)


@micropython.viper
def _fits(prm) -> int:
    """1 when the parameters prm (add.bind_lut's int32 words: the
    output shift at 8, the strides a and b at 13 and 14) take add_lut:
    a = b = 1 and a negative shift."""
    q = ptr32(prm)
    if q[13] != 1 or q[14] != 1:
        return 0
    return (q[8] >> 31) & 1


@micropython.viper
def add_lut(x: int, i: int, t: int, st):
    """add._add_lut (the same st and results) for strides a = b = 1 and
    a negative output shift: the tables (add.fill_tables, unless built),
    then thumb_dsp.add_lut over the n elements, its block in st[5]."""
    fill_tables(st[3], st[4], 20)
    q = ptr32(st[3])
    one: int = 1
    S: int = one << 31
    n: int = q[0]
    blk = ptr32(st[5])
    blk[0] = int(ptr8(st[0])) + n
    blk[1] = int(ptr8(st[1])) + n
    blk[2] = int(ptr8(st[2])) + q[15] + n
    blk[3] = 0 - n
    blk[4] = int(ptr32(st[4]))
    blk[5] = q[7]
    blk[6] = 0 - ((q[8] ^ S) - S)
    blk[7] = q[9]
    blk[8] = q[10]
    blk[9] = q[11]
    _LOOP(st[5], 0)
