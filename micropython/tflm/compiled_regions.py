"""A compiled model's CONV_2D and DEPTHWISE_CONV_2D parameter blocks
checked before the first invoke: each buffer's region and offset
(fixedpoint.rel) within its block or a region of the interpreter
(compiled.build calls it when those kernels are imported); and the
BASES and LOCK their invokes use. A construction-only module
(interpreter.CONSTRUCTION).
"""

import sys

from .errors import ArenaError, FormatError
from .heap import zeros


def check(steps, regions):
    """The number of int8 CONV_2D and DEPTHWISE_CONV_2D steps; FormatError
    unless, for every one, its state is its parameter block (an address
    in the tail or the words, or a view of them) and each buffer of it
    (fixedpoint.rel) starts in region 1-4 of regions (head, tail, words,
    model), those its eval writes (the module's WRITES) in the head, the
    output whole there (B * OH * OW * OC bytes: conv.py's and
    depthwise_conv.py's first parameter words, as cores.py reads them)."""
    from struct import unpack_from

    from .static_arena import _address
    kinds = {}
    for name, evals in (("conv", ("_eval_1x1", "_eval_any")),
                        ("depthwise_conv", ("_eval_k3", "_eval_any"))):
        mod = sys.modules.get("tflm.kernels." + name)
        for k in evals if mod else ():
            kinds[getattr(mod, k)] = mod
    sizes = [len(v) * (4 if r == 2 else 1) for r, v in enumerate(regions)]
    found = 0
    for k in range(0, len(steps), 2):
        mod = kinds.get(steps[k])
        if mod is None:
            continue
        found += 1
        first, n = mod.PAIRS
        end = 4 * (first + 1 + n)  # the block's bytes
        st, at, ok = steps[k + 1], 0, False
        if type(st) is int:  # an address in the tail or the words
            for r in (1, 2):
                a = _address(regions[r])
                if a <= st and st + end <= a + sizes[r]:
                    st, at = regions[r], st - a
                    break
        if type(st) is memoryview and at + end <= len(bytes(st[:1])) * \
                len(st):
            w = unpack_from("<%di" % (first + 1 + n), st, at)
            rmap = w[first]
            ok = rmap >> (4 * n) == 0 if n < 8 else rmap >= 0
            for j in range(n):
                r = rmap >> (4 * j) & 15
                o = w[first + 1 + j]
                ok = ok and 1 <= r <= 4 and 0 <= o < sizes[r - 1] and (
                    r == 1 or j not in mod.WRITES)
                if j == mod.WRITES[0]:  # the output: B * OH * OW * OC
                    ok = ok and 0 <= w[3] * w[7] * w[8] * w[9] <= \
                        sizes[0] - o
        if not ok:
            raise FormatError("compiled block: step %d's parameter block "
                              "points outside the arena and the model"
                              % (k // 2))
    return found


def bases(regions):
    """fixedpoint.rel's BASES for regions (head, tail, words, model):
    array('i') [each one's address less the array's] (region r at word
    r - 1); and
    fixedpoint.LOCK made where there are threads (once). ArenaError on a
    64-bit port where they lie 2 GB or more apart."""
    from .static_arena import _address
    fp = sys.modules["tflm.fixedpoint"]
    if fp.LOCK is None:
        try:
            from _thread import allocate_lock
            fp.LOCK = allocate_lock()
        except ImportError:
            pass
    b = zeros("i", len(regions))
    a = _address(b)
    for r, v in enumerate(regions):
        if len(v):
            d = ((_address(v) - a + 0x80000000) & 0xFFFFFFFF) - 0x80000000
            if sys.maxsize > 0x7FFFFFFF and d != _address(v) - a:
                raise ArenaError("on a 64-bit port the model's bytes must "
                                 "lie within 2 GB of the arena")
            b[r] = d
    return b
