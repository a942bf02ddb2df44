# Runs in MicroPython: tests/test_kernels_conv.py (see the test).
import sys
import uctypes
sys.path.insert(0, sys.argv[1])
from array import array  # noqa: E402
from tflm.context import pairs  # noqa: E402
from tflm.errors import PrepareError  # noqa: E402
from tflm.kernels import conv_util  # noqa: E402

class Op:
    def label(self):
        return "op 0 (CONV_2D)"

class Ctx:
    sizing = False

work = bytearray(64)
a = uctypes.addressof(work)
for gap in (0, 1 << 20, 0x70000000, 0x7A000000, -0x7A000000):
    far = uctypes.bytearray_at(a + gap, 16)  # never read
    try:
        conv_util.check_near(Op(), Ctx(), work, (None, far))
        print(gap, "ok")
    except PrepareError as e:
        print(gap, "PrepareError", "2 GB" in str(e))

# context.pairs (the packed states' offsets, fixedpoint.rel): int32 offsets
# from the parameter block, exact mod 2**32 on a 32-bit port
for gap in (0, 1 << 20, 0x70000000, 0x7A000000, -0x7A000000):
    p = array("i", [7, 7, 7])
    far = uctypes.bytearray_at(uctypes.addressof(p) + gap, 16)  # never read
    want = ((gap + 0x80000000) & 0xFFFFFFFF) - 0x80000000
    try:
        held = []
        q = pairs((p, far), 1, held)
        # (far: a bytearray, no view of the arena: held)
        print("PAIRS", gap, "ok", q is p and list(p) == [7, 0, want]
              and held == [far])
    except ValueError as e:
        print("PAIRS", gap, "ValueError", "2 GB" in str(e))
