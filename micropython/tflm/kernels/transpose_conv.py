"""TRANSPOSE_CONV, int8 (per-channel or per-tensor quantized int8 filter).

Follows tensorflow/lite/micro/kernels/transpose_conv.cc with
reference_integer_ops::TransposeConv (kernels/internal/reference/
integer_ops/transpose_conv.h). Inputs: output_shape (ignored, as TFLM
ignores it: the output tensor's shape is used), filter [OC, KH, KW, IC],
input [B, H, W, IC], optional int32 bias [OC]; output [B, OH, OW, OC].

TFLM scatters: every input pixel (iy, ix) adds (x - input_zero_point) *
f[oc, ky, kx, ic] into an int32 accumulator of output pixel
(iy * SH - PH + ky, ix * SW - PW + kx), then adds the bias and
requantizes like CONV_2D. The padding is ComputePaddingHeightWidth with
the OUTPUT's height and width as the image size (stride, dilation 1).

This kernel gathers instead, one output pixel at a time: output row oy
receives filter rows ky = (oy + PH) - SH * iy for the input rows iy with
0 <= ky < KH (likewise for columns), so its accumulators are the same
sums in another order. int32 sums are exact modulo 2**32 in any order,
so the results are TFLM's bit for bit, without an output-sized int32
buffer (TFLM's scratch): the accumulators of a batch of pixels sit in the
shared ctx.scratch and are requantized by fixedpoint.requant_i8b.

Per output pixel, the contributing input pixels' v = x - zero_point are
gathered into the shared work buffer (conv_util.work_buffer) with each
tap's filter offset, then every output channel is a dot product of its
filter taps with that window. Filter bytes are read with ptr8 (any
alignment); products are int8 * int9.
"""

from array import array

import micropython
from micropython import const

from ..heap import zeros
from ..errors import PrepareError
from ..fixedpoint import requant_i8b

_INT8 = const(9)
_PADDING_SAME = const(0)
_PADDING_VALID = const(1)


_TRANSPOSE_CONV_OPTIONS = const(49)  # BuiltinOptions.TransposeConvOptions
_TRANSPOSE_CONV_FUSED_ACTIVATION_FUNCTION = const(3)
_TRANSPOSE_CONV_PADDING = const(0)
_TRANSPOSE_CONV_STRIDE_H = const(2)
_TRANSPOSE_CONV_STRIDE_W = const(1)
_INT16 = const(7)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def _io(op, ins, outs):
    """(filter, input, bias or None, output), types and ranks checked."""
    from . import conv_util
    if len(ins) not in (3, 4) or len(outs) != 1:
        _fail(op, "expected 3 or 4 inputs and 1 output, got %d and %d"
              % (len(ins), len(outs)))
    filt, x, y = ins[1], ins[2], outs[0]
    bias = ins[3] if len(ins) == 4 else None
    if x is not None and x.type != _INT8:
        _fail(op, "input %s is %s: only int8 is supported"
              % (x.label(), x.dtype))
    for t, what in ((x, "input"), (filt, "filter"), (y, "output")):
        conv_util.check_type(op, t, _INT8, what)
        conv_util.check_rank4(op, t, what)
        if min(t.shape) < 1:
            _fail(op, "%s %s has an empty shape %s"
                  % (what, t.label(), t.shape))
    for t, what in ((x, "input"), (y, "output")):
        if not t.scales:
            _fail(op, "%s %s is not quantized" % (what, t.label()))
    if not filt.scales or len(filt.zero_points) != len(filt.scales):
        _fail(op, "filter %s needs as many zero points as scales"
              % filt.label())
    return filt, x, bias, y


def _geometry(op, filt, x, y, padding, sh, sw):
    """Check shapes and options; return (pad_h, pad_w)."""
    from . import conv_util
    if padding not in (_PADDING_SAME, _PADDING_VALID):
        _fail(op, "unknown padding %d" % padding)
    if not 1 <= min(sh, sw) <= max(sh, sw) <= conv_util.INT16_MAX:
        _fail(op, "strides (%d, %d) must be in [1, %d]"
              % (sh, sw, conv_util.INT16_MAX))
    b, h, w, ic = x.shape
    oc, kh, kw, fic = filt.shape
    ob, oh, ow, occ = y.shape
    if fic != ic or ob != b or occ != oc:
        _fail(op, "input %s %s, filter %s %s and output %s %s do not match"
              % (x.label(), x.shape, filt.label(), filt.shape, y.label(),
                 y.shape))
    # TFLM: padding 0 when ComputeOutSizeChecked fails (odd VALID sizes).
    ph = pw = 0
    n_h = conv_util.out_size(padding, oh, kh, sh, 1)
    n_w = conv_util.out_size(padding, ow, kw, sw, 1)
    if n_h is not None and n_w is not None:
        ph = conv_util.pad_before(sh, 1, oh, kh, n_h)
        pw = conv_util.pad_before(sw, 1, ow, kw, n_w)
    if max(ph, pw) > conv_util.INT16_MAX:
        _fail(op, "padding (%d, %d) exceeds %d"
              % (ph, pw, conv_util.INT16_MAX))
    return ph, pw


def _taps(out_size, pad, stride, k, in_size):
    """Per output index o: (first filter index, its input index, count)
    of the taps (kk, i) with o + pad = i * stride + kk, 0 <= kk < k,
    0 <= i < in_size; kk grows by stride while i drops by 1."""
    t = zeros("i", 3 * out_size)
    for o in range(out_size):
        r = o + pad
        kk, i = r % stride, r // stride
        if i >= in_size:  # skip to the last input row
            kk += (i - in_size + 1) * stride
            i = in_size - 1
        n = 0
        while kk + n * stride < k and i - n >= 0:
            n += 1
        t[3 * o], t[3 * o + 1], t[3 * o + 2] = kk, i, n
    return t


def prepare(op, ins, outs, ctx):
    """Check a TRANSPOSE_CONV operator and bind its eval function.

    ins: [output_shape (not read), filter int8 [OC,KH,KW,IC], input int8
    [B,H,W,IC], bias int32 [OC] (optional)]; outs: [output int8
    [B,OH,OW,OC]]. TransposeConvOptions: padding (0), stride_w (1),
    stride_h (2), fused_activation_function (3). int16 inputs: tconv16.
    Raises PrepareError for float32 (not supported), wrong types, ranks,
    shapes, options or quantization.
    """
    from . import conv_util
    if len(ins) > 2 and ins[2] is not None and ins[2].type == _INT16:
        from .tconv16 import prepare as prepare16
        return prepare16(op, ins, outs, ctx)
    filt, x, bias, y = _io(op, ins, outs)
    # TFLM's parser keeps the defaults (SAME, strides 0: rejected below)
    # unless builtin_options is a TransposeConvOptions table.
    padding = sw = sh = act = 0
    if op.options_type == _TRANSPOSE_CONV_OPTIONS:
        padding = op.opt_byte(_TRANSPOSE_CONV_PADDING, 0)
        sw = op.opt_int(_TRANSPOSE_CONV_STRIDE_W, 0)
        sh = op.opt_int(_TRANSPOSE_CONV_STRIDE_H, 0)
        act = op.opt_byte(_TRANSPOSE_CONV_FUSED_ACTIVATION_FUNCTION, 0)
    ph, pw = _geometry(op, filt, x, y, padding, sh, sw)
    b, h, w, ic = x.shape
    oc, kh, kw, _ = filt.shape
    _, oh, ow, _ = y.shape
    mults, shifts, qp = conv_util.quant_params(op, x, filt, y, act, oc, True,
                                                ctx, neg_ok=True)
    bias_w = conv_util.bias_words(op, bias, oc, ctx)
    conv_util.check_scratch(op, ctx, oc)
    ytab = _taps(oh, ph, sh, kh, h)
    xtab = _taps(ow, pw, sw, kw, w)
    ny = max(ytab[3 * i + 2] for i in range(oh))
    nx = max(xtab[3 * i + 2] for i in range(ow))
    taps = zeros("i", max(1, ny * nx))
    win = conv_util.work_buffer(ctx, max(1, ny * nx) * ic)
    nb = ctx.scratch_len // oc
    p = array("i", (b, h, w, ic, oh, ow, oc, kh, kw, sh, sw,
                    -x.zero_point, nb))
    k = conv_util.keep
    # in the order of the _S_ slots (below)
    st = (k(ctx, p), x.data, filt.data, bias_w, y.data,
          mults, shifts, k(ctx, qp), ctx.scratch, win,
          k(ctx, taps), k(ctx, ytab), k(ctx, xtab))
    return _eval, st


# eval writes its taps table, which prepare kept: a compiled model keeps its
# tail in RAM, never read in place from the model's bytes
# (host_tools/mp_compile.py).
WRITES_KEPT = True

# The eval state (prepare's st), by named slot (as conv.py's; the
# names fold to the numbers):
_S_PARAMS = const(0)
_S_X = const(1)
_S_FILTER = const(2)
_S_BIAS = const(3)
_S_OUT = const(4)
_S_MULTS = const(5)
_S_SHIFTS = const(6)
_S_QP = const(7)
_S_SCRATCH = const(8)
_S_WIN = const(9)
_S_TAPS = const(10)
_S_YTAB = const(11)
_S_XTAB = const(12)
# st[_S_PARAMS]: these words (p in the viper code); OFF:
# -input_zero_point; NB: output pixels per requantization batch.
_P_B = const(0)
_P_H = const(1)
_P_W = const(2)
_P_IC = const(3)
_P_OH = const(4)
_P_OW = const(5)
_P_OC = const(6)
_P_KH = const(7)
_P_KW = const(8)
_P_SH = const(9)
_P_SW = const(10)
_P_OFF = const(11)
_P_NB = const(12)


def _eval(st):
    _tconv(0, 0, 0, st)


@micropython.viper
def _tconv(acc: int, va: int, wa: int, st):
    """Gather each output pixel's taps, then one dot product per output
    channel and tap; requantize NB pixels at a time. acc, va, wa are the
    hot locals (callers pass 0): accumulator, window word address,
    filter byte address."""
    p = ptr32(st[_S_PARAMS])
    one: int = 1
    S: int = one << 31
    B: int = p[_P_B]
    H: int = p[_P_H]
    W: int = p[_P_W]
    IC: int = p[_P_IC]
    OH: int = p[_P_OH]
    OW: int = p[_P_OW]
    OC: int = p[_P_OC]
    KH: int = p[_P_KH]
    KW: int = p[_P_KW]
    SH: int = p[_P_SH]
    SW: int = p[_P_SW]
    off: int = (p[_P_OFF] ^ S) - S
    x0: int = int(ptr8(st[_S_X]))
    w0: int = int(ptr8(st[_S_FILTER]))
    bp = ptr32(st[_S_BIAS])
    out = st[_S_OUT]
    mults = st[_S_MULTS]
    shifts = st[_S_SHIFTS]
    qp = st[_S_QP]
    scratch = st[_S_SCRATCH]
    sp = ptr32(scratch)
    v0: int = int(ptr32(st[_S_WIN]))
    tp = ptr32(st[_S_TAPS])
    yt = ptr32(st[_S_YTAB])
    xt = ptr32(st[_S_XTAB])
    cap: int = p[_P_NB] * OC
    wsize: int = KH * KW * IC  # one output channel's filter
    ic4: int = 4 * (IC & ~3)  # unrolled part of a tap, in window bytes
    pb: int = 0
    o: int = 0
    b: int = 0
    while b < B:
        xb: int = x0 + b * H * W * IC
        oy: int = 0
        while oy < OH:
            ky0: int = yt[3 * oy]
            iy0: int = yt[3 * oy + 1]
            ny: int = yt[3 * oy + 2]
            ox: int = 0
            while ox < OW:
                kx0: int = xt[3 * ox]
                ix0: int = xt[3 * ox + 1]
                nx: int = xt[3 * ox + 2]
                # Gather the taps' v = x - zero_point and filter offsets.
                n: int = 0
                va = v0
                j: int = 0
                while j < ny:
                    ky: int = ky0 + j * SH
                    xr: int = xb + (iy0 - j) * W * IC
                    i: int = 0
                    while i < nx:
                        kx: int = kx0 + i * SW
                        tp[n] = (ky * KW + kx) * IC
                        n += 1
                        wa = xr + (ix0 - i) * IC  # walks the input here
                        e: int = wa + IC
                        while wa < e:
                            ptr32(va)[0] = ((ptr8(wa)[0] ^ 0x80) - 0x80) + off
                            va += 4
                            wa += 1
                        i += 1
                    j += 1
                k: int = 0
                wk: int = w0
                while k < OC:
                    acc = bp[k]
                    va = v0
                    t: int = 0
                    while t < n:
                        wa = wk + tp[t]
                        v4: int = va + ic4
                        ve: int = va + 4 * IC
                        while va < v4:
                            acc += (((ptr8(wa)[0] ^ 0x80) - 0x80)
                                    * ptr32(va)[0]
                                    + ((ptr8(wa)[1] ^ 0x80) - 0x80)
                                    * ptr32(va)[1]
                                    + ((ptr8(wa)[2] ^ 0x80) - 0x80)
                                    * ptr32(va)[2]
                                    + ((ptr8(wa)[3] ^ 0x80) - 0x80)
                                    * ptr32(va)[3])
                            va += 16
                            wa += 4
                        while va < ve:
                            acc += ((ptr8(wa)[0] ^ 0x80) - 0x80) * ptr32(va)[0]
                            va += 4
                            wa += 1
                        t += 1
                    sp[pb + k] = acc
                    wk += wsize
                    k += 1
                pb += OC
                o += OC
                if pb >= cap:
                    requant_i8b(0, 0, 0, scratch, pb, OC, mults, shifts, qp,
                                out, o - pb, 0)
                    pb = 0
                ox += 1
            oy += 1
        b += 1
    if pb:
        requant_i8b(0, 0, 0, scratch, pb, OC, mults, shifts, qp, out,
                    o - pb, 0)
