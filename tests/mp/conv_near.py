# Runs in MicroPython: tests/test_kernels_conv.py (see the test).
import sys
import uctypes
sys.path.insert(0, sys.argv[1])
from tflm.errors import PrepareError
from tflm.kernels import conv_util

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
