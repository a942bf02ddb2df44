"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED on float32 tensors.

Follow TFLM's float reference kernels (tensorflow/lite/kernels/internal/
reference/conv.h Conv, depthwiseconv_float.h DepthwiseConv,
fully_connected.h FullyConnected) as the micro kernels call them: for
each output value, in output order,

    total = 0.0f
    for each in-image tap (filter_y, filter_x, in_channel order):
        total += input * filter          (two float32 roundings, no FMA)
    out = ActivationFunctionWithMinMax(total + bias, act_min, act_max)

Taps in the padding are skipped, as TFLM skips them. The arithmetic is
f32.dot (bit-exact float32 in integer viper code, see f32.py), on
Cortex-M4F/M7/M33 (kernels.FPU) thumb_fpu.dot (the same bits from the
FPU's VMUL and VADD); the loops
here only find each output pixel's in-image window and call dot once per
pixel (all output channels) or, for FULLY_CONNECTED, once per batch row.
Weights at an unaligned address are copied once (f32.words).

Reached through the int8 modules' prepare (conv.py, depthwise_conv.py,
fully_connected.py), which hand float32 operators to prepare_conv /
prepare_depthwise / prepare_fc.
"""

from array import array

import micropython
from micropython import const

from ..errors import PrepareError
from . import FPU, f32

dot = None
if FPU:  # Cortex-M4F/M7/M33: VFP single precision
    try:
        from .thumb_fpu import dot
    except (ImportError, SyntaxError, ValueError):  # a build without it
        dot = None
if dot is None:
    from .f32 import dot

_FULLY_CONNECTED_OPTIONS = const(8)
_CONV2D_DILATION_H_FACTOR = const(5)
_CONV2D_DILATION_W_FACTOR = const(4)
_CONV2D_FUSED_ACTIVATION_FUNCTION = const(3)
_CONV2D_PADDING = const(0)
_CONV2D_STRIDE_H = const(2)
_CONV2D_STRIDE_W = const(1)
_DEPTHWISE_CONV2D_DEPTH_MULTIPLIER = const(3)
_DEPTHWISE_CONV2D_DILATION_H_FACTOR = const(6)
_DEPTHWISE_CONV2D_DILATION_W_FACTOR = const(5)
_DEPTHWISE_CONV2D_FUSED_ACTIVATION_FUNCTION = const(4)
_DEPTHWISE_CONV2D_PADDING = const(0)
_DEPTHWISE_CONV2D_STRIDE_H = const(2)
_DEPTHWISE_CONV2D_STRIDE_W = const(1)
_FULLY_CONNECTED_FUSED_ACTIVATION_FUNCTION = const(0)
_FULLY_CONNECTED_WEIGHTS_FORMAT = const(1)


def _io(op, ins, outs, rank4=True):
    """(input, filter, bias or None, output) of a float32 conv-like op."""
    from . import conv_util
    if len(ins) not in (2, 3) or len(outs) != 1 or None in (ins[0], ins[1]):
        raise PrepareError("%s: expected input, filter, optional bias and "
                           "1 output" % op.label())
    inp, filt, out = ins[0], ins[1], outs[0]
    bias = ins[2] if len(ins) == 3 else None
    f32.check_float(op, (inp, filt, bias, out))
    if rank4:
        for t, what in ((inp, "input"), (filt, "filter"), (out, "output")):
            conv_util.check_rank4(op, t, what)
    return inp, filt, bias, out


def _bias(op, bias, n, ctx):
    """(words, 1) for a float32 bias of n values, or (None, 0)."""
    if bias is None:
        return None, 0
    if bias.size != n:
        raise PrepareError("%s: bias %s has %d elements, expected %d"
                           % (op.label(), bias.label(), bias.size, n))
    return f32.words(bias, ctx), 1


def _q(act):
    """dot's constants: [initial 0.0, act_min, act_max, 1.0]."""
    lo, hi = f32.act_range(act)
    return f32.consts(f32.ZERO, lo, hi, f32.ONE)


def prepare_conv(op, ins, outs, ctx):
    """Float32 CONV_2D (called by conv.prepare).

    ins: input [B,H,W,C], filter [OC,KH,KW,CIN] (C = groups * CIN), bias
    [OC] or None, all float32; outs: [B,OH,OW,OC]. Conv2DOptions as the
    int8 kernel reads them. Raises PrepareError.
    """
    from . import conv_util
    inp, filt, bias, out = _io(op, ins, outs)
    padding = op.opt_byte(_CONV2D_PADDING, 0)
    sw = op.opt_int(_CONV2D_STRIDE_W, 0)
    sh = op.opt_int(_CONV2D_STRIDE_H, 0)
    act = op.opt_byte(_CONV2D_FUSED_ACTIVATION_FUNCTION, 0)
    dw = op.opt_int(_CONV2D_DILATION_W_FACTOR, 1)
    dh = op.opt_int(_CONV2D_DILATION_H_FACTOR, 1)
    b, h, w, c = inp.shape
    oc, kh, kw, cin = filt.shape
    if cin < 1 or c % cin or oc < 1 or oc % (c // cin):
        raise PrepareError("%s: filter %s shape %s does not split input %s "
                           "depth %d into groups" % (op.label(), filt.label(),
                                                     filt.shape, inp.label(),
                                                     c))
    ph, pw = conv_util.geometry(op, inp, filt, out, padding, sh, sw, dh, dw,
                                oc)
    bw, has_b = _bias(op, bias, oc, ctx)
    g = array("i", (b, h, w, c, out.shape[1], out.shape[2], oc, kh, kw, cin,
                    sh, sw, dh, dw, ph, pw, oc // (c // cin), has_b))
    # g and q kept in the tail (read-only for eval: ADDRESSES)
    k = conv_util.keep
    g = k(ctx, g)
    st = (g, f32.slots(f32.DOT_SLOTS), k(ctx, _q(act)), inp.data,
          f32.words(filt, ctx), bw if has_b else g, out.data)
    return _eval_conv, st


def prepare_depthwise(op, ins, outs, ctx):
    """Float32 DEPTHWISE_CONV_2D (called by depthwise_conv.prepare).

    ins: input [B,H,W,C], filter [1,KH,KW,OC] (OC = C * depth_multiplier),
    bias [OC] or None, all float32; outs: [B,OH,OW,OC].
    DepthwiseConv2DOptions as the int8 kernel reads them. Raises
    PrepareError (also when OC != C * depth_multiplier).
    """
    from . import conv_util
    inp, filt, bias, out = _io(op, ins, outs)
    padding = op.opt_byte(_DEPTHWISE_CONV2D_PADDING, 0)
    sw = op.opt_int(_DEPTHWISE_CONV2D_STRIDE_W, 0)
    sh = op.opt_int(_DEPTHWISE_CONV2D_STRIDE_H, 0)
    dm = op.opt_int(_DEPTHWISE_CONV2D_DEPTH_MULTIPLIER, 0)
    act = op.opt_byte(_DEPTHWISE_CONV2D_FUSED_ACTIVATION_FUNCTION, 0)
    dw = op.opt_int(_DEPTHWISE_CONV2D_DILATION_W_FACTOR, 1)
    dh = op.opt_int(_DEPTHWISE_CONV2D_DILATION_H_FACTOR, 1)
    b, h, w, c = inp.shape
    one, kh, kw, oc = filt.shape
    if one != 1 or dm < 1 or c < 1 or oc != c * dm:
        raise PrepareError("%s: filter %s shape %s does not fit input %s "
                           "depth %d with depth_multiplier %d"
                           % (op.label(), filt.label(), filt.shape,
                              inp.label(), c, dm))
    ph, pw = conv_util.geometry(op, inp, filt, out, padding, sh, sw, dh, dw,
                                oc)
    bw, has_b = _bias(op, bias, oc, ctx)
    g = array("i", (b, h, w, c, out.shape[1], out.shape[2], oc, kh, kw, dm,
                    sh, sw, dh, dw, ph, pw, 0, has_b))
    # g and q kept in the tail (read-only for eval: ADDRESSES)
    k = conv_util.keep
    g = k(ctx, g)
    st = (g, f32.slots(f32.DOT_SLOTS), k(ctx, _q(act)), inp.data,
          f32.words(filt, ctx), bw if has_b else g, out.data)
    return _eval_depthwise, st


def prepare_fc(op, ins, outs, ctx):
    """Float32 FULLY_CONNECTED (called by fully_connected.prepare).

    ins: input (any rank, batches x depth values), weights [units, depth]
    (rank >= 2, last two dims), bias [units] or None; outs: batches x
    units values, last dim units. FullyConnectedOptions: activation,
    weights_format (DEFAULT only). Raises PrepareError.
    """
    from . import conv_util
    x, wt, bias, y = _io(op, ins, outs, rank4=False)
    label = op.label()
    opts = op.options_type == _FULLY_CONNECTED_OPTIONS
    if opts and op.opt_byte(_FULLY_CONNECTED_WEIGHTS_FORMAT, 0) != 0:
        raise PrepareError("%s: weights_format %d is not supported"
                           % (label,
                              op.opt_byte(_FULLY_CONNECTED_WEIGHTS_FORMAT, 0)))
    act = (op.opt_byte(_FULLY_CONNECTED_FUSED_ACTIVATION_FUNCTION, 0)
           if opts else 0)
    if len(wt.shape) < 2 or not y.shape:
        raise PrepareError("%s: weights %s shape %s must have rank >= 2"
                           % (label, wt.label(), wt.shape))
    units, depth = wt.shape[-2], wt.shape[-1]
    if depth <= 0 or x.size % depth or wt.size != units * depth:
        raise PrepareError("%s: input %s shape %s is not rows of the "
                           "weights %s depth %d" % (label, x.label(), x.shape,
                                                    wt.label(), depth))
    batches = x.size // depth
    if y.shape[-1] != units or y.size != batches * units:
        raise PrepareError("%s: output %s shape %s, expected %d rows of %d "
                           "units" % (label, y.label(), y.shape, batches,
                                      units))
    bw, has_b = _bias(op, bias, units, ctx)
    g = array("i", (batches, units, depth, has_b))
    # g and q kept in the tail (read-only for eval: ADDRESSES)
    k = conv_util.keep
    g = k(ctx, g)
    st = (g, f32.slots(f32.DOT_SLOTS), k(ctx, _q(act)), x.data,
          f32.words(wt, ctx), bw if has_b else g, y.data)
    return _eval_fc, st


@micropython.viper
def _window(lo: int, k: int, d: int, size: int, p) -> int:
    """First in-image tap of a k-tap window starting at lo with dilation d
    over [0, size); stores the tap count in p[0] (0 if none)."""
    kl: int = 0
    while kl < k and lo + kl * d < 0:
        kl += 1
    kh: int = kl
    while kh < k and lo + kh * d < size:
        kh += 1
    ptr32(p)[0] = kh - kl
    return kl


# The state: (g, dot's parameter block p, dot's q, x, w, bias (g when
# none), out). The slots that eval only casts to pointers: a compiled
# model stores there the address of its view of the arena or the model,
# an int, no object (compiled.py T_ADDR).
ADDRESSES = (0, 2, 3, 4, 5, 6)

# Geometry slots (st[0]): 0 B, 1 H, 2 W, 3 C, 4 OH, 5 OW, 6 OC, 7 KH,
# 8 KW, 9 CIN (conv) / DM (depthwise), 10 SH, 11 SW, 12 DH, 13 DW, 14 PH,
# 15 PW, 16 FPG (conv: filters per group), 17 has bias.

@micropython.viper
def _eval_conv(st):
    g = ptr32(st[0])
    p = st[1]
    pp = ptr32(p)
    q = st[2]
    x = st[3]
    w = st[4]
    bias = st[5]
    out = st[6]
    B: int = g[0]
    H: int = g[1]
    W: int = g[2]
    C: int = g[3]
    OH: int = g[4]
    OW: int = g[5]
    OC: int = g[6]
    KH: int = g[7]
    KW: int = g[8]
    CIN: int = g[9]
    SH: int = g[10]
    SW: int = g[11]
    DH: int = g[12]
    DW: int = g[13]
    FPG: int = g[16]
    has_b: int = g[17]
    one: int = 1
    # Loops of dot: rows (ky), taps (kx), channels; when a window row is
    # contiguous in input and filter (dilation_w 1, one group) the tap
    # and channel loops are a single loop.
    contiguous: int = 0
    if DW == 1 and C == CIN:
        contiguous = 1
    pp[3] = DH * W * C
    pp[4] = KW * CIN
    pp[9] = 1
    pp[10] = 1
    # one dot call per output pixel: OC outputs, the filter moves by a
    # whole filter per output, the input by CIN per group of FPG filters
    pp[11] = 0 - one  # no bias
    if has_b:
        pp[11] = 0
    pp[13] = OC
    pp[14] = CIN
    pp[15] = FPG
    pp[16] = KH * KW * CIN
    o: int = 0
    b: int = 0
    while b < B:
        oy: int = 0
        while oy < OH:
            iy0: int = oy * SH - g[14]
            kyl: int = int(_window(iy0, KH, DH, H, p))
            nky: int = pp[0]
            ox: int = 0
            while ox < OW:
                ix0: int = ox * SW - g[15]
                kxl: int = int(_window(ix0, KW, DW, W, p))
                nkx: int = pp[0]
                pp[0] = ((b * H + iy0 + kyl * DH) * W + ix0 + kxl * DW) * C
                pp[1] = (kyl * KW + kxl) * CIN
                pp[2] = nky
                if nkx == 0:
                    pp[2] = 0
                if contiguous:
                    pp[5] = 1
                    pp[8] = nkx * CIN
                else:
                    pp[5] = nkx
                    pp[6] = DW * C
                    pp[7] = CIN
                    pp[8] = CIN
                pp[12] = o
                dot(p, q, x, w, bias, out)
                o += OC
                ox += 1
            oy += 1
        b += 1

@micropython.viper
def _eval_depthwise(st):
    g = ptr32(st[0])
    p = st[1]
    pp = ptr32(p)
    q = st[2]
    x = st[3]
    w = st[4]
    bias = st[5]
    out = st[6]
    B: int = g[0]
    H: int = g[1]
    W: int = g[2]
    C: int = g[3]
    OH: int = g[4]
    OW: int = g[5]
    OC: int = g[6]
    KH: int = g[7]
    KW: int = g[8]
    DM: int = g[9]
    SH: int = g[10]
    SW: int = g[11]
    DH: int = g[12]
    DW: int = g[13]
    has_b: int = g[17]
    one: int = 1
    # Loops of dot: rows (ky) and taps (kx) of one channel; n1 = 1. One
    # call per output pixel: OC outputs, the filter moves by 1 per output,
    # the input by 1 per DM outputs.
    pp[3] = DH * W * C
    pp[4] = KW * OC
    pp[5] = 1
    pp[9] = DW * C
    pp[10] = OC
    pp[11] = 0 - one
    if has_b:
        pp[11] = 0
    pp[13] = OC
    pp[14] = 1
    pp[15] = DM
    pp[16] = 1
    o: int = 0
    b: int = 0
    while b < B:
        oy: int = 0
        while oy < OH:
            iy0: int = oy * SH - g[14]
            kyl: int = int(_window(iy0, KH, DH, H, p))
            nky: int = pp[0]
            ox: int = 0
            while ox < OW:
                ix0: int = ox * SW - g[15]
                kxl: int = int(_window(ix0, KW, DW, W, p))
                nkx: int = pp[0]
                pp[0] = ((b * H + iy0 + kyl * DH) * W + ix0 + kxl * DW) * C
                pp[1] = (kyl * KW + kxl) * OC
                pp[2] = nky
                pp[8] = nkx
                pp[12] = o
                dot(p, q, x, w, bias, out)
                o += OC
                ox += 1
            oy += 1
        b += 1

@micropython.viper
def _eval_fc(st):
    g = ptr32(st[0])
    p = st[1]
    pp = ptr32(p)
    q = st[2]
    x = st[3]
    w = st[4]
    bias = st[5]
    out = st[6]
    batches: int = g[0]
    units: int = g[1]
    depth: int = g[2]
    has_b: int = g[3]
    one: int = 1
    pp[2] = 1
    pp[5] = 1
    pp[8] = depth
    pp[9] = 1
    pp[10] = 1
    pp[11] = 0 - one
    if has_b:
        pp[11] = 0
    pp[13] = units  # one call per batch row: the weights move a row
    pp[16] = depth  # per unit, the input stays
    b: int = 0
    while b < batches:
        pp[0] = b * depth
        pp[12] = b * units
        dot(p, q, x, w, bias, out)
        b += 1
