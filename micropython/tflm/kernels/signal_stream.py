"""SignalDelay, SignalFramer, SignalStacker and SignalOverlapAdd: the
streaming operators of TFLM's Signal library (custom ops), with state
across invokes.

Follow signal/micro/kernels/delay.cc, framer.cc, stacker.cc and
overlap_add.cc with signal/src/circular_buffer.cc and overlap_add.cc:

    SignalDelay (options: delay_length)   int16 [..., F] -> int16, same
        element count: every row is a stream delayed by delay_length
        samples (TFLM's circular buffer starts with delay_length zeros).
    SignalFramer (options: frame_size, frame_step, prefill)   int16
        [..., k * frame_step] -> int16 [..., k, frame_size] (rank + 1, k *
        frame_size values per row) and bool [] output_valid: each step of
        a row's stream is appended to its buffer; when it holds
        frame_size samples, the oldest frame_size are that frame's output
        and frame_step of them are dropped; otherwise the frame is not
        written and output_valid is false. prefill: the buffer starts
        with frame_size - frame_step zeros.
    SignalStacker (options: num_channels, stacker_left_context,
        stacker_right_context, stacker_step)   int16 [>= C] -> int16 [C *
        (left + right + 1)] and bool [] output_valid: the first C inputs
        are appended (the very first frame left + 1 times); once the
        buffer holds the whole window it is the output (valid) and C *
        stacker_step samples are dropped; else the output is not written.
    SignalOverlapAdd (options: T, frame_step)   int16 (T 7) or float32
        (T 0) [..., k, F] -> [..., k * frame_step]: per frame, buffer +=
        frame (int16: saturated; float32: one rounding, f32.vec), the
        first frame_step values of the buffer are output, the buffer
        shifts by frame_step and is zero-filled at its end.

State (the buffers, fill counts and the Stacker's first-frame flag) is
ctx.state, laid out so that zeros are TFLM's Reset: interp.reset()
restarts every stream (a prefilled Framer's buffer starts with its zeros,
the fill count is kept relative to that).

Refused at prepare (PrepareError): what TFLM's Prepare refuses (tensor
counts, ranks, types, a Framer input whose last dimension is not a
multiple of frame_step), and what TFLM would run out of bounds on or
crash in (its asserts are off): negative delay_length; frame_size or
frame_step below 1, prefill with frame_size < frame_step (a negative zero
count); num_channels below 1, a negative context, stacker_step outside 1
.. left + right + 1 (the buffer would overflow); an OverlapAdd frame_step
outside 1 .. F; T other than int16 / float32 for OverlapAdd; an input
shorter than what is read and outputs of another size than what is
written (the rest would hold whatever the arena held).
"""

import micropython
from micropython import const

from ..errors import PrepareError
from . import signal_util as su

_BOOL = const(6)
_FLOAT32 = const(0)
_INT16 = const(7)

# state tuples' slots
_S_X = const(0)
_S_Y = const(1)
_S_BUF = const(2)
_S_W = const(3)    # state words (fill count, flags)
_S_P = const(4)    # parameter block
_S_V = const(5)    # output_valid / float32: f32.vec
_S_Q = const(6)    # float32: vec's clamp range and 1.0
_S_VP = const(7)   # float32: vec's parameter block (set at eval)
_S_ROWS = const(8)  # float32 OverlapAdd: rows, frames, step, frame size
_S_NF = const(9)
_S_STEP = const(10)
_S_FS = const(11)

# parameter blocks' words
_P_ROWS = const(0)
_P_LEN = const(1)    # F (Delay), frames per row (Framer, OverlapAdd), C
_P_A = const(2)      # delay_length, frame_size, window size C*(l+r+1)
_P_B = const(3)      # frame_step, C * stacker_step, left context
_P_C = const(4)      # Framer: prefilled samples; OverlapAdd: frame size
_P_CAP = const(5)    # Framer: buffer samples per row
_P_N = const(6)


def prepare(op, ins, outs, ctx):
    """Check a SignalDelay / SignalFramer / SignalStacker /
    SignalOverlapAdd operator (op.name) and bind its eval; shapes, types,
    options and refusals as in the module doc (PrepareError)."""
    name = op.name
    if name == "SignalDelay":
        return _prepare_delay(op, ins, outs, ctx)
    if name == "SignalFramer":
        return _prepare_framer(op, ins, outs, ctx)
    if name == "SignalStacker":
        return _prepare_stacker(op, ins, outs, ctx)
    if name == "SignalOverlapAdd":
        return _prepare_overlap_add(op, ins, outs, ctx)
    raise PrepareError("%s: no Signal kernel here" % op.label())


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def _size(op, t, n, what):
    if t.size != n:
        _fail(op, "%s has %d elements; TFLM %s %d" % (
            t.label(), t.size, what, n))


def _params(ctx, *vals):
    from .conv_util import keep
    p = su.words(_P_N)
    for k, v in enumerate(vals):
        p[k] = v
    return keep(ctx, p)


def _prepare_delay(op, ins, outs, ctx):
    su.io(op, ins, outs, 1, 1)
    x, y = ins[0], outs[0]
    su.want(op, x, _INT16, -2)
    su.want(op, y, _INT16)
    d = su.options(op, 1)[0]  # 'delay_length'
    if d < 0:
        _fail(op, "delay_length %d is negative" % d)
    f = x.shape[-1]
    rows = x.size // f if f else 0
    _size(op, y, x.size, "writes")
    buf = ctx.state("B", 2 * rows * d)
    w = ctx.state("i", 1)  # the position in the delay lines
    return _eval_delay, (su.aligned(x, ctx), y.data, buf, w,
                         _params(ctx, rows, f, d))


def _eval_delay(st):
    _delay(st[_S_X], st[_S_Y], st[_S_BUF], st[_S_W], st[_S_P])


@micropython.viper
def _delay(x, y, buf, w, p):
    """Each row of F samples through its delay line of d samples
    (buf[row * d ...]), all rows at position w[0]."""
    px = ptr16(x)
    py = ptr16(y)
    pb = ptr16(buf)
    q = ptr32(p)
    pw = ptr32(w)
    rows: int = q[_P_ROWS]
    f: int = q[_P_LEN]
    d: int = q[_P_A]
    pos: int = pw[0]
    end: int = pos
    r: int = 0
    while r < rows:
        k: int = pos
        i: int = 0
        o: int = r * f
        if d == 0:
            while i < f:
                py[o + i] = px[o + i]
                i += 1
        else:
            b: int = r * d
            while i < f:
                py[o + i] = pb[b + k]
                pb[b + k] = px[o + i]
                i += 1
                k += 1
                if k == d:
                    k = 0
        end = k
        r += 1
    pw[0] = end


def _prepare_framer(op, ins, outs, ctx):
    su.io(op, ins, outs, 1, 2)
    x, (y, v) = ins[0], outs
    su.want(op, x, _INT16, -2)
    su.want(op, y, _INT16, len(x.shape) + 1)
    su.want(op, v, _BOOL, 0)
    fs, step, prefill = su.options(op, 3, (2,))
    if fs < 1 or step < 1:
        _fail(op, "frame_size %d and frame_step %d must be at least 1"
              % (fs, step))
    if prefill and fs < step:
        _fail(op, "prefill with frame_size %d < frame_step %d (TFLM "
              "writes a negative count of zeros)" % (fs, step))
    last = x.shape[-1]
    if last < step or last % step:
        _fail(op, "%s's last dimension %d is not a multiple of frame_step "
              "%d" % (x.label(), last, step))
    rows = x.size // last
    nf = last // step
    _size(op, y, rows * nf * fs, "writes")
    cap = (fs + step - 1) // step * step
    buf = ctx.state("B", 2 * rows * cap)
    w = ctx.state("i", 1)  # samples held, minus the prefilled ones
    p = _params(ctx, rows, nf, fs, step, fs - step if prefill else 0, cap)
    return _eval_framer, (su.aligned(x, ctx), y.data, buf, w, p, v.data)


def _eval_framer(st):
    _framer(st[_S_X], st[_S_Y], st[_S_BUF], st[_S_W], st[_S_P],
            st[_S_V])


@micropython.viper
def _framer(x, y, buf, w, p, valid):
    """Every row's frames (linear buffers of cap samples, the oldest
    first, w[0] + prefill of them held)."""
    px = ptr16(x)
    py = ptr16(y)
    pb = ptr16(buf)
    q = ptr32(p)
    rows: int = q[_P_ROWS]
    nf: int = q[_P_LEN]
    fs: int = q[_P_A]
    step: int = q[_P_B]
    cap: int = q[_P_CAP]
    held: int = ptr32(w)[0] + q[_P_C]
    ok: int = 1
    end: int = held
    r: int = 0
    while r < rows:
        a: int = held
        b: int = r * cap
        fr: int = 0
        while fr < nf:
            i: int = 0
            s: int = (r * nf + fr) * step
            while i < step:
                pb[b + a + i] = px[s + i]
                i += 1
            a += step
            if a >= fs:
                o: int = (r * nf + fr) * fs
                i = 0
                while i < fs:
                    py[o + i] = pb[b + i]
                    i += 1
                a -= step
                i = 0
                while i < a:
                    pb[b + i] = pb[b + step + i]
                    i += 1
            else:
                ok = 0
            fr += 1
        end = a
        r += 1
    ptr32(w)[0] = end - q[_P_C]
    ptr8(valid)[0] = ok


def _prepare_stacker(op, ins, outs, ctx):
    su.io(op, ins, outs, 1, 2)
    x, (y, v) = ins[0], outs
    su.want(op, x, _INT16, 1)
    su.want(op, y, _INT16, 1)
    su.want(op, v, _BOOL, 0)
    nc, left, right, step = su.options(op, 4)
    if nc < 1 or left < 0 or right < 0:
        _fail(op, "num_channels %d must be at least 1 and the contexts "
              "(%d, %d) not negative" % (nc, left, right))
    win = left + right + 1
    if not 1 <= step <= win:
        _fail(op, "stacker_step %d must be 1 .. %d (left + right + 1): "
              "TFLM's buffer would overflow" % (step, win))
    if x.size < nc:
        _fail(op, "%s has %d elements; TFLM reads num_channels %d" % (
            x.label(), x.size, nc))
    _size(op, y, nc * win, "writes")
    buf = ctx.state("B", 2 * nc * win)
    w = ctx.state("i", 2)  # samples held, first frame seen
    return _eval_stacker, (su.aligned(x, ctx), y.data, buf, w,
                           _params(ctx, 1, nc, nc * win, nc * step, left),
                           v.data)


def _eval_stacker(st):
    _stacker(st[_S_X], st[_S_Y], st[_S_BUF], st[_S_W], st[_S_P], st[_S_V])


@micropython.viper
def _stacker(x, y, buf, w, p, valid):
    px = ptr16(x)
    py = ptr16(y)
    pb = ptr16(buf)
    q = ptr32(p)
    pw = ptr32(w)
    nc: int = q[_P_LEN]
    win: int = q[_P_A]
    drop: int = q[_P_B]
    a: int = pw[0]
    i: int = 0
    while i < nc:
        pb[a + i] = px[i]
        i += 1
    a += nc
    if pw[1] == 0:  # CircularBufferExtend: the first frame left times
        k: int = q[_P_C]
        while k > 0:
            i = 0
            while i < nc:
                pb[a + i] = pb[a - nc + i]
                i += 1
            a += nc
            k -= 1
        pw[1] = 1
    if a >= win:
        i = 0
        while i < win:
            py[i] = pb[i]
            i += 1
        a -= drop
        i = 0
        while i < a:
            pb[i] = pb[drop + i]
            i += 1
        ptr8(valid)[0] = 1
    else:
        ptr8(valid)[0] = 0
    pw[0] = a


def _prepare_overlap_add(op, ins, outs, ctx):
    su.io(op, ins, outs, 1, 1)
    x, y = ins[0], outs[0]
    ttype = su.option_by_key(op, "T")  # OverlapAddInitAll: m["T"]
    if ttype not in (_INT16, _FLOAT32):
        _fail(op, "T = %s: TFLM's SignalOverlapAdd supports int16 (7) and "
              "float32 (0)" % ttype)
    step = su.options(op, 2)[1]  # 'frame_step', after 'T'
    su.want(op, x, ttype, -2)
    su.want(op, y, ttype, len(x.shape) - 1)
    if len(x.shape) < 2:
        _fail(op, "%s needs at least 2 dimensions" % x.label())
    fs, nf = x.shape[-1], x.shape[-2]
    if not 1 <= step <= fs:
        _fail(op, "frame_step %d must be 1 .. frame size %d" % (step, fs))
    rows = x.size // (fs * nf) if fs * nf else 0
    _size(op, y, rows * nf * step, "writes")
    isz = 2 if ttype == _INT16 else 4
    buf = ctx.state("B", isz * rows * fs)
    p = _params(ctx, rows, nf, step, isz, fs)
    if ttype == _INT16:
        return _eval_ola16, (su.aligned(x, ctx), y.data, buf, None, p)
    from . import f32
    from .conv_util import keep
    vp = f32.slots(f32.VEC_SLOTS)  # set from Python at eval: not kept
    vp[7] = fs
    vp[5] = vp[1] = 1
    q = keep(ctx, f32.consts(f32.NEG_INF, f32.INF, f32.ONE))
    return _eval_ola_f32, (f32.words(x, ctx), y.data, buf, None, p, f32.vec,
                           q, vp, rows, nf, step, fs)


def _eval_ola16(st):
    _ola16(st[_S_X], st[_S_Y], st[_S_BUF], st[_S_P])


@micropython.viper
def _ola16(x, y, buf, p):
    px = ptr16(x)
    pb = ptr16(buf)
    q = ptr32(p)
    rows: int = q[_P_ROWS]
    nf: int = q[_P_LEN]
    step: int = q[_P_A]
    fs: int = q[_P_C]
    r: int = 0
    while r < rows:
        b: int = r * fs
        fr: int = 0
        while fr < nf:
            s: int = (r * nf + fr) * fs
            i: int = 0
            while i < fs:
                v: int = ((px[s + i] ^ 0x8000) - 0x8000) + \
                    ((pb[b + i] ^ 0x8000) - 0x8000)
                if v < -32768:
                    v = -32768
                elif v > 32767:
                    v = 32767
                pb[b + i] = v
                i += 1
            _emit(y, buf, 2 * (r * nf + fr) * step, 2 * b, 2 * step,
                  2 * fs)
            fr += 1
        r += 1


@micropython.viper
def _emit(y, buf, o: int, b: int, n: int, m: int):
    """y's bytes [o, o + n) = buf's [b, b + n); buf's [b, b + m) shifts
    down by n bytes, zeros filling its end (OverlapAdd's memcpy,
    memmove, memset)."""
    py = ptr8(y)
    pb = ptr8(buf)
    i: int = 0
    while i < n:
        py[o + i] = pb[b + i]
        i += 1
    i = 0
    while i < m - n:
        pb[b + i] = pb[b + n + i]
        i += 1
    while i < m:
        pb[b + i] = 0
        i += 1


def _eval_ola_f32(st):
    vp = st[_S_VP]
    vec = st[_S_V]
    q = st[_S_Q]
    x = st[_S_X]
    buf = st[_S_BUF]
    y = st[_S_Y]
    nf = st[_S_NF]
    step = st[_S_STEP]
    fs = st[_S_FS]
    for r in range(st[_S_ROWS]):
        for fr in range(nf):
            vp[0] = (r * nf + fr) * fs  # a: the frame
            vp[2] = 2                   # b: 1.0 (q[2]), stride 0
            vp[4] = vp[6] = r * fs      # c and out: the buffer
            vec(vp, q, x, q, buf, buf)  # buf = fl(buf + fl(x * 1))
            _emit(y, buf, 4 * (r * nf + fr) * step, 4 * r * fs, 4 * step,
                  4 * fs)

