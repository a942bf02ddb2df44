"""Heap discipline for construction on a board's GC heap.

MicroPython's heap never moves an object and allocates first fit from the
lowest free block once a collection ran. Construction therefore collects
at its phase boundaries: whatever lives on is then made in the lowest free
blocks, packed, instead of wherever the garbage of parsing (big numbers of
the multipliers, per-channel scale tuples) has pushed the next free block,
where it would split the free space into pieces too small for the arena
or a kernel's next array.

A collection marks the live objects and sweeps up to the highest block
ever used: cheap on a board's heap and on a mostly empty large one.
tests/test_board_heap.py runs construction on squeezed heaps.
"""

import gc
import sys
from array import array

_MP = sys.implementation.name == "micropython"


def pack():
    """gc.collect() on MicroPython (see the module doc); nothing under
    CPython, where host tools parse models."""
    if _MP:
        gc.collect()


def zeros(typecode, n):
    """array(typecode) of n zeros in one block of its final size
    (array(tc, bytes(k)) would briefly need the memory twice)."""
    if typecode in "bB":  # small; range(n) would not fit under CPython
        return array(typecode, bytes(n))
    a = array(typecode, range(n))  # a range has a length: no growing
    for i in range(n):
        a[i] = 0
    return a
