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

Also here, because modules that live on use them and context.py goes
once an interpreter is built (interpreter.CONSTRUCTION): persistent()
and keep(), the kernels' calls of the context's requests (with a
fallback for contexts without them), and _copy.
"""

import gc
import sys
from array import array

import micropython  # under CPython, the tflm package installs a shim

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


def persistent(ctx, typecode, n, untouched=False):
    """ctx.persistent(typecode, n, untouched): n zeros in the arena's
    persistent part (KernelContext.persistent); an array for a context
    without it (kernel tests) or no context."""
    f = getattr(ctx, "persistent", None)
    return zeros(typecode, n) if f is None else f(typecode, n, untouched)


def keep(ctx, a, itemsize=4):
    """ctx.keep(a, itemsize) (the interpreter moves a into its persistent
    arena after prepare: KernelContext.keep); a unchanged for a context
    without keep()."""
    k = getattr(ctx, "keep", None)
    return a if k is None else k(a, itemsize)


@micropython.viper
def _copy(dst, src, n: int):
    """dst[0:n] = the first n bytes of src's buffer (any buffer types)."""
    d = ptr8(dst)
    s = ptr8(src)
    i: int = 0
    while i < n:
        d[i] = s[i]
        i += 1
