"""Both cores of a dual-core board: tflm.Interpreter(model, cores=2).

On an RP2040 or RP2350 (rp2 port) `_thread.start_new_thread` runs a
function on the second core, in parallel with the first (no GIL; only one
thread may run there). With cores=2 one long-lived worker thread, shared
by every interpreter, takes half of each large CONV_2D and
DEPTHWISE_CONV_2D operator of subgraph 0 while the calling thread
computes the other half; invoke() then returns once both halves are done.
The outputs are the same bits as with cores=1 (each output value is
computed by the same code from the same inputs; only which core computes
it changes).

How an operator is split: by output rows (for a 1x1 stride-1 CONV_2D,
whose rows prepare joins into one row of pixels: by pixels), not by
output channels as TFLM's loops might suggest: a half of the rows is the
same kernel run on a smaller output (OH rows, fewer) and on an input view
that starts further down, with no change to the kernels' loops (each
core gathers only the input windows of its own pixels, once, where a
split by channels would gather every window on both cores). The second
half's input starts at row d = m * stride_h - pad_h of the input (m: the
first output row of that half), with the padding above it 0 and H - d
rows: the same taps in the image as the whole operator's. Operators with
a batch other than 1, fewer than 2 output rows (pixels), or fewer than
MIN_MACS multiply-accumulates run on the first core alone (handing work
over costs microseconds on rp2, tens of them where an OS wakes the
thread: see SPIN), as does every operator of another kind. Float32 and
int16 CONV_2D / DEPTHWISE_CONV_2D are not split either.

RAM: the worker's stack (4 KB on rp2, from the heap, at the first
cores=2 interpreter), and per interpreter, made at construction: per
split operator a copy of its parameter block per half (32 words, its
buffers' regions and offsets included) and a tuple (about 0.3 KB on a
32-bit port), and two int32 buffers, the second core's work buffers (the
window buffer and the accumulators of CONV_2D, the plane of
DEPTHWISE_CONV_2D), each as large as the largest split operator needs
(counted in interp.ram). invoke() allocates nothing.

Errors: cores=2 where `_thread` is missing (or the second core is taken:
start_new_thread fails) raises CoresError (a TFLMError) from the
constructor; an exception on the second core during invoke() comes back
as InvokeError from invoke() (after the first core's half is done: never
a hang). Compiled models (host_tools compile) are split the same way:
each half's state is a copy of the operator's parameter block on the
heap, its pairs (fixedpoint.rel) pointing from the copy to where the
operator's point (its half of the input and output, the second core's
work buffers).
"""

import sys
from array import array

from .errors import InvokeError, TFLMError

try:
    import _thread
except ImportError:
    _thread = None

# Operators with fewer multiply-accumulates run on one core.
MIN_MACS = 20000
# Polls of a lock (acquire(0)) before a thread blocks on it. 0: none.
# On rp2 a blocked core waits in WFE and wakes at once (0 is right). On
# an OS (the unix port) waking a blocked thread takes tens of
# microseconds, a split operator's half a few hundred: a few thousand
# polls save that where each thread has a core of its own, and cost a
# lot where they share one (the poller takes the worker's time).
SPIN = 0
# Accumulator words of the second core's CONV_2D batches (NB pixels of OC
# accumulators: at least one pixel, at most NB of the first core's)
_ACC_WORDS = 512

# Parameter block words: requant's qp (3), then the kernel's p words
# (conv.py _P_*, depthwise_conv.py _P_*: the same first 16)
_QP = 3
_B, _H, _W, _C, _OH, _OW, _OC, _KH, _KW, _CIN = range(_QP, _QP + 10)
_SH, _PH = _QP + 10, _QP + 14
_NB = _QP + 18  # conv.py _P_NB
_DB = _QP + 20  # conv.py _P_DBLK
_TH, _PWW = _QP + 17, _QP + 19  # depthwise_conv.py _P_TH, _P_PWW
_DH = _QP + 12  # depthwise_conv.py _P_DH
# Parameter words after qp (conv.py, depthwise_conv.py) and the words of
# the work buffers' blocks (conv.py _BLK; its P word _P_DBLK for _conv_any;
# depthwise_conv.py _DWB):
# tests/test_cores.py checks them against the kernels' constants
_CONV_P, _DW_P = 21, 22
_BLK, _DWB = 33, 45

# The states' buffers (fixedpoint.rel: conv.py, depthwise_conv.py _A,
# _NPAIRS; their slots _S_*)
_S_X, _S_OUT = 0, 3
_S_SCRATCH, _S_WIN = 6, 7  # conv.py
_S_WORK = 6  # depthwise_conv.py
_CONV_A, _CONV_PAIRS = 24, 8
_DW_A, _DW_PAIRS = 25, 8


class CoresError(TFLMError):
    """cores=2 where the board cannot run a thread on a second core
    (no `_thread` module, or start_new_thread failed)."""


# The worker: its locks (go: released to hand it a half; done: released
# by it once that half ran) and its job [eval function, state, the
# exception it raised or None].
_go = None
_done = None
_job = [None, None, None]


def _worker():
    job = _job
    go = _go
    done = _done
    while True:
        n = SPIN  # polls before it sleeps on the lock (see SPIN)
        while n and not go.acquire(0):
            n -= 1
        if not n:
            go.acquire()
        try:
            job[0](job[1])
        except BaseException as e:  # noqa: B902 (back to invoke())
            job[2] = e
        done.release()


def start(cores):
    """Check Interpreter's cores= and start the worker (once): ValueError
    unless cores is 1 or 2 (TypeError: not an int); CoresError where no
    thread can run on a second core."""
    global _go, _done
    if not isinstance(cores, int) or isinstance(cores, bool):
        raise TypeError("cores must be 1 or 2, not %s"
                        % type(cores).__name__)
    if cores not in (1, 2):
        raise ValueError("cores must be 1 or 2, got %d" % cores)
    if cores == 1 or _go is not None:
        return
    if _thread is None:
        raise CoresError("cores=2 needs the _thread module (rp2: RP2040, "
                         "RP2350); this MicroPython has none")
    go = _thread.allocate_lock()
    done = _thread.allocate_lock()
    go.acquire()
    done.acquire()
    _go, _done = go, done
    try:
        _thread.start_new_thread(_worker, ())
    except Exception as e:
        _go = _done = None
        raise CoresError("cores=2: cannot start a thread on the second "
                         "core (%s)" % e)


def _split(s):
    """The eval of a split operator, s = (eval, first half's state,
    second half's state, operator index, its name): the worker runs
    the second half while this thread runs the first. Allocates nothing
    (unless the worker raised: InvokeError)."""
    f = s[0]
    job = _job
    job[0] = f
    job[1] = s[2]
    job[2] = None
    _go.release()
    try:
        f(s[1])
    finally:
        done = _done
        n = SPIN
        while n and not done.acquire(0):
            n -= 1
        if not n:
            done.acquire()
    e = job[2]
    if e is not None:
        job[2] = None
        raise InvokeError("op %d (%s): on the second core: %s: %s"
                          % (s[3], s[4], type(e).__name__, e))


def _words(v, n):
    """n int32 words at v (a buffer, or an address: compiled models) as
    a new array('i')."""
    import struct
    if isinstance(v, int):
        from uctypes import bytearray_at
        v = bytearray_at(v, 4 * n)
    return array("i", struct.unpack("%di" % n, bytes(v)[:4 * n]))


def _targets(st, p, first, n, bases):
    """The addresses of the n buffers of parameter block st (its words
    p), their regions and offsets from word first (fixedpoint.rel);
    bases: a compiled interpreter's (fixedpoint, BASES) or None."""
    from uctypes import addressof
    a = st if isinstance(st, int) else addressof(st)
    out = []
    for k in range(n):
        r = p[first] >> (4 * k) & 15
        out.append((addressof(bases[1]) + bases[1][r - 1] if r else a)
                   + p[first + 1 + k])
    return out


def _repoint(q, first, targets):
    """Block q (an array('i') on the heap, near the arena) from word
    first: region 0, int32 offsets from q to targets."""
    from uctypes import addressof
    a = addressof(q)
    q[first] = 0
    for k, t in enumerate(targets):
        q[first + 1 + k] = ((t - a + 0x80000000) & 0xFFFFFFFF) - \
            0x80000000


def _plan(kind, p):
    """(first output row / pixel of the second half, its input byte
    offset, its output byte offset, its win words, its scratch words) of
    an operator's parameter block p, or None when it is not split."""
    if p[_B] != 1:
        return None
    oh, ow, oc, c = p[_OH], p[_OW], p[_OC], p[_C]
    macs = oh * ow * oc * p[_KH] * p[_KW]
    if kind == 0:  # conv 1x1
        macs *= c
        if oh == 1:  # one row of pixels: split it
            if ow < 2 or macs < MIN_MACS:
                return None
            m = ow // 2
            return (m, m * p[_SH + 1] * c, m * oc, _BLK + c, 2 * oc)
    elif kind == 1:  # conv any
        macs *= p[_CIN]
    if oh < 2 or macs < MIN_MACS:
        return None
    m = oh // 2
    d = m * p[_SH] - p[_PH]  # the second half's first input row
    if d < 0 or d >= p[_H]:
        return None
    if kind == 0:
        return (m, d * p[_W] * c, m * ow * oc, _BLK + c, 2 * oc)
    if kind == 1:
        nb = min(p[_NB], max(1, _ACC_WORDS // oc))
        return (m, d * p[_W] * c, m * ow * oc,
                p[_DB] + p[_KH] * p[_KW] * p[_CIN], nb * oc)
    kh = p[_KH]
    eh = (kh - 1) * p[_DH] + 1
    plane = ((p[_TH] - 1) * p[_SH] + eh) * p[_PWW]
    return (m, d * p[_W] * c, m * ow * oc,
            oc + kh * p[_KW] + _DWB + ((plane + 3) >> 2), 0)


def _overlaps(st, p, kind, it):
    """Whether the input and output of a CONV_2D or DEPTHWISE_CONV_2D
    step (state st, its parameter block's words p) share arena bytes: a
    model compiled on the host has CONV_2D write over the input rows it
    has read (planner.overlap), and the second core's rows, written at
    once, would overwrite rows the first core still reads; such a step
    runs on the first core alone. (A plain model's plan links none for
    cores=2.)"""
    first, n = (_CONV_A, _CONV_PAIRS) if kind < 2 else (_DW_A, _DW_PAIRS)
    ta = _targets(st, p, first, n, getattr(it, "_bases", None))
    x, y = ta[_S_X], ta[_S_OUT]
    return x < y + p[_B] * p[_OH] * p[_OW] * p[_OC] and \
        y < x + p[_B] * p[_H] * p[_W] * p[_C]


def split(it):
    """Split interpreter it's large CONV_2D and DEPTHWISE_CONV_2D steps
    between the cores (see the module's docstring). Returns the number of
    operators split."""
    conv = sys.modules.get("tflm.kernels.conv")
    dw = sys.modules.get("tflm.kernels.depthwise_conv")
    kinds = []
    if conv is not None:
        kinds += [(conv._eval_1x1, conv._conv_1x1, 0, "CONV_2D"),
                  (conv._eval_any, conv._eval_any, 1, "CONV_2D")]
    if dw is not None:
        kinds += [(dw._eval_k3, dw._dwp, 2, "DEPTHWISE_CONV_2D"),
                  (dw._eval_any, dw._dwp, 2, "DEPTHWISE_CONV_2D")]
    steps = it._steps
    todo = []
    nw = ns = 0
    for k in range(0, len(steps), 2):
        for ev, f, kind, name in kinds:
            if steps[k] is ev:
                st = steps[k + 1]
                p = _words(st, _CONV_A + 1 + _CONV_PAIRS if kind < 2
                           else _DW_A + 1 + _DW_PAIRS)
                pl = _plan(kind, p)
                if pl is not None and _overlaps(st, p, kind, it):
                    pl = None  # (a compiled model's plan: see _overlaps)
                if pl is not None:
                    todo.append((k, f, kind, name, p, pl))
                    nw = max(nw, pl[3])
                    ns = max(ns, pl[4])
                break
    if not todo:
        return 0
    win = array("i", bytes(4 * nw))
    acc = array("i", bytes(4 * max(ns, 1)))
    from uctypes import addressof
    bases = getattr(it, "_bases", None)
    for k, f, kind, name, p, pl in todo:
        st = steps[k + 1]
        first, n = (_CONV_A, _CONV_PAIRS) if kind < 2 else \
            (_DW_A, _DW_PAIRS)
        ta = _targets(st, p, first, n, bases)
        m = pl[0]
        a = array("i", p)
        b = array("i", p)
        if kind == 0 and p[_OH] == 1:
            a[_OW] = a[_W] = m
            b[_OW] = b[_W] = p[_OW] - m
        else:
            a[_OH] = m
            b[_OH] = p[_OH] - m
            b[_H] = p[_H] - pl[1] // (p[_W] * p[_C])
            b[_PH] = 0
        if kind == 1:
            b[_NB] = pl[4] // p[_OC]
        tb = list(ta)
        tb[_S_X] += pl[1]
        tb[_S_OUT] += pl[2]
        if kind == 2:
            tb[_S_WORK] = addressof(win)
        else:
            tb[_S_SCRATCH] = addressof(acc)
            tb[_S_WIN] = addressof(win)
        _repoint(a, first, ta)
        _repoint(b, first, tb)
        ops = it._prof_ops
        # (win and acc: held, the halves' blocks point to them)
        steps[k + 1] = (f, a, b, ops[k // 2] if ops else k // 2, name,
                        win, acc)
        steps[k] = _split
    return len(todo)
