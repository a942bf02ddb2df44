# Runs in MicroPython: tests/test_board_heap.py (the sizing pass's buffer
# lies high: what is made while it lives lands below it). argv: package,
# "high" (allocator._high) or "plain" (bytearray: the check must fail).
import gc
import sys
import uctypes
sys.path.insert(0, sys.argv[1])
from tflm import allocator
gc.collect()
# small objects scattered low, as imports leave them
keep = [bytearray(16 * (k % 5 + 1)) for k in range(200)]
for k in range(0, len(keep), 3):
    keep[k] = None  # holes
gc.collect()
n = gc.mem_free() // 3
if sys.argv[2] == "high":
    d = allocator._high(n, gc.mem_free())
    gc.collect()  # as the sizing pass's first one: the filler goes
else:
    d = bytearray(n)
# what a sizing pass keeps: made while d lives, some larger than any hole
after = [bytearray(600) for _ in range(20)]
below = sum(uctypes.addressof(x) < uctypes.addressof(d) for x in after)
d = None
gc.collect()
# the free heap above what lives on: one block for an arena of 2 n
try:
    arena = bytearray(2 * n)
    fits = True
except MemoryError:
    fits = False
print(below, len(after), fits)
