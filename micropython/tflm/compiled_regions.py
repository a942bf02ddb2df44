"""A compiled model's CONV_2D and DEPTHWISE_CONV_2D parameter blocks
checked before the first invoke: each buffer's region and offset
(fixedpoint.rel) within its block or a region of the interpreter
(compiled.build calls it when those kernels are imported). A
construction-only module (interpreter.CONSTRUCTION).
"""

import sys

from .errors import FormatError


def check(steps, regions):
    """FormatError unless each buffer (fixedpoint.rel) of the parameter
    block of every CONV_2D and DEPTHWISE_CONV_2D step (an address in the
    tail or the words, or a view) lies in its block (region 0) or in
    region 1-4 of regions (head, tail, words, model)."""
    from struct import unpack_from

    from .static_arena import _address
    kinds = {}
    for name, evals in (("conv", ("_eval_1x1", "_eval_any")),
                        ("depthwise_conv", ("_eval_k3", "_eval_any"))):
        mod = sys.modules.get("tflm.kernels." + name)
        for k in evals if mod else ():
            kinds[getattr(mod, k)] = mod.PAIRS
    sizes = [len(v) * (4 if r == 2 else 1) for r, v in enumerate(regions)]
    for k in range(0, len(steps), 2):
        pr = kinds.get(steps[k])
        if pr is None:
            continue
        first, n = pr
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
            w = unpack_from("<%di" % (1 + n), st, at + 4 * first)
            ok = w[0] >> (4 * n) == 0 if n < 8 else w[0] >= 0
            for j in range(n):
                r = w[0] >> (4 * j) & 15
                ok = ok and r <= 4 and 0 <= w[1 + j] <= (
                    sizes[r - 1] if r else end)
        if not ok:
            raise FormatError("compiled block: step %d's parameter block "
                              "points outside the arena and the model"
                              % (k // 2))
