# Runs inside the MicroPython unix port (host_tools/bench.py prepends
# LAYOUT, conv.py's state slot names): how much faster is our viper
# CONV_2D 1x1 kernel than the same algorithm as plain bytecode, and as
# @micropython.native? Arguments: pkg_dir model_path op_index repeats.
#
# Method: build the interpreter, invoke once on seeded input so that the
# layer's input holds real activations, then prepare the chosen 1x1
# CONV_2D op again (same state: bias, multipliers, scratch). The
# plain version below is the loop structure of conv._conv_1x1 written
# with ordinary indexing of the same memoryviews / arrays; requantization
# is the same fixedpoint.requant_i8b call in all three, so the comparison
# is about the multiply-accumulate loops. Every version must write the
# same output bytes. Prints one JSON line with the median times (us).
import sys
import json
import time
import micropython

pkg, model_path, op_index, repeats = sys.argv[1:5]
sys.path.insert(0, pkg)
from array import array

import tflm
from tflm.kernels import conv, conv_util
from tflm.fixedpoint import requant_i8b

op_index, repeats = int(op_index), int(repeats)

SRC = """
def conv1x1(st):
    # conv.py's prepare's (parameter block, buffers...) by the names of
    # its slots (LAYOUT: conv.py's _S_* slots, the buffers after the
    # block; _P_* parameter words after the _QP words of qp)
    p = st[0]
    B = p[QP + P_B]; H = p[QP + P_H]; W = p[QP + P_W]; C = p[QP + P_C]
    OH = p[QP + P_OH]; OW = p[QP + P_OW]; OC = p[QP + P_OC]
    SH = p[QP + P_SH]; SW = p[QP + P_SW]; off = p[QP + P_OFF]
    x = st[1 + S_X]; w = st[1 + S_FILTER]; bias = st[1 + S_BIAS]
    out = st[1 + S_OUT]; mults = st[1 + S_MULTS]; shifts = st[1 + S_SHIFTS]
    qp = p; scratch = st[1 + S_SCRATCH]
    cap = p[QP + P_NB] * OC
    pb = 0
    o = 0
    for b in range(B):
        for oy in range(OH):
            xpix = (b * H + oy * SH) * W * C
            for ox in range(OW):
                xe = xpix + C
                s = 0
                for i in range(xpix, xe):
                    s += (x[i] ^ 0x80) + off
                base = -128 * s
                wa = 0
                for k in range(OC):
                    acc = bias[k] + base
                    for i in range(xpix, xe):
                        acc += (w[wa] ^ 0x80) * ((x[i] ^ 0x80) + off)
                        wa += 1
                    acc = (acc + 0x80000000) & 0xFFFFFFFF  # int32 wrap
                    scratch[pb + k] = acc - 0x80000000
                pb += OC
                o += OC
                if pb >= cap:
                    requant_i8b(0, 0, 0, scratch, pb, OC, mults, shifts, qp,
                                out, o - pb, 0)
                    pb = 0
                xpix += SW * C
    if pb:
        requant_i8b(0, 0, 0, scratch, pb, OC, mults, shifts, qp, out,
                    o - pb, 0)
"""


def compile_variant(decorator):
    g = {"requant_i8b": requant_i8b, "micropython": micropython}
    g.update(LAYOUT)  # noqa: F821 (prepended by host_tools/bench.py)
    exec(decorator + SRC, g)
    return g["conv1x1"]


def median_us(fn, st, n):
    times = []
    for _ in range(n):
        t0 = time.ticks_us()
        fn(st)
        times.append(time.ticks_diff(time.ticks_us(), t0))
    times.sort()
    return times[len(times) // 2]


class _Ctx:
    """A kernel context (tflm/context.py) whose scratch is an array('i'),
    which the bytecode variant above indexes by word."""

    def __init__(self, model, ts):
        self.model = model
        from tflm.allocator import _scratch_len
        self.scratch_len = _scratch_len(ts)
        self.scratch = array("i", range(self.scratch_len))
        self.copied_bytes = 0


def _words(b):
    """The int32 values of b (an array('i'), or little-endian bytes)."""
    if isinstance(b, array):
        return b
    out = array("i", [0] * (len(b) // 4))
    for k in range(len(out)):
        v = b[4 * k] | b[4 * k + 1] << 8 | b[4 * k + 2] << 16 | \
            b[4 * k + 3] << 24
        out[k] = v - (1 << 32) if v & 0x80000000 else v
    return out


def main():
    with open(model_path, "rb") as f:
        interp = tflm.Interpreter(f.read())
    seed = 1
    for t in interp.inputs:  # deterministic pseudo-random input bytes
        d = t.data
        for i in range(len(d)):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            d[i] = seed >> 16 & 0xFF
    interp.invoke()
    model = interp.model  # (parsed again on each access)
    op = model.operators[op_index]
    ts = interp.tensors
    ins = [ts[i] if i >= 0 else None for i in op.inputs]
    outs = [ts[i] for i in op.outputs]
    fn, st = conv.prepare(op, ins, outs, _Ctx(model, outs))
    if fn is not conv._eval_1x1:
        raise SystemExit("op %d is not a 1x1 CONV_2D" % op_index)
    out = outs[0].data
    fn(st)
    # the plain variants read prepare's buffers (conv_util.HELD: the
    # state is the parameter block) and index the bias by word: as
    # array('i')
    bufs = conv_util.HELD[-1]
    b = 1 + LAYOUT["S_BIAS"]  # noqa: F821 (prepended)
    plain = bufs[:b] + (_words(bufs[b]),) + bufs[b + 1:]
    want = bytes(out)
    res = {"op": op_index, "name": op.name,
           "macs": outs[0].size * ins[1].shape[3]}
    variants = [("viper", fn, repeats, st),
                ("native", compile_variant("@micropython.native"), 3, plain),
                ("bytecode", compile_variant(""), 3, plain)]
    for name, f, n, s in variants:
        out[:] = bytes(len(out))
        f(s)
        res[name + "_same"] = bytes(out) == want
        res[name + "_us"] = median_us(f, s, n)
    print(json.dumps(res))


main()
