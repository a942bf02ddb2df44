"""DEPTH_TO_SPACE and SPACE_TO_DEPTH, int8 and float32 (bytes only move).

Follows tensorflow/lite/micro/kernels/depth_to_space.cc and
space_to_depth.cc with reference_ops::
DepthToSpace / SpaceToDepth (kernels/internal/reference/
depth_to_space.h, space_to_depth.h), block size bs:

    DEPTH_TO_SPACE: [B, H, W, bs*bs*C] -> [B, H*bs, W*bs, C],
        out[b, h*bs + dy, w*bs + dx, c] = in[b, h, w, (dy*bs + dx)*C + c]
    SPACE_TO_DEPTH: [B, H*bs, W*bs, C] -> [B, H, W, bs*bs*C], the inverse.

Both are one 6-D transpose with permutation [0, 1, 3, 2, 4, 5]: of the
input seen as [B, H, W, bs, bs, C] (DEPTH_TO_SPACE) or [B, H, bs, W, bs,
C] (SPACE_TO_DEPTH), so eval is transpose.py's byte-moving loop. As in
TFLM, values are copied unchanged (no quantization check: an int8 output
with other scales gets the input's bytes), and a block size below 1 is
refused, as TFLM refuses it. TFLM computes the output shape and writes it
into the tensor; here the model's stored output shape must be that shape
(PrepareError otherwise). The plan (sizes, strides, the odometer eval
moves) is kept in the arena's tail.
"""

from micropython import const

from ..heap import keep
from ..errors import PrepareError
from .transpose import _eval, plan

_DEPTH_TO_SPACE = const(5)
_FLOAT32 = const(0)
_INT8 = const(9)
_DEPTH_TO_SPACE_OPTIONS = const(94)
_SPACE_TO_DEPTH_OPTIONS = const(19)
_DEPTH_TO_SPACE_BLOCK_SIZE = const(0)


def prepare(op, ins, outs, ctx):
    """Check a DEPTH_TO_SPACE or SPACE_TO_DEPTH operator and plan its
    data movement.

    ins: [input float32 or int8 [B, H, W, C]]; outs: [output of the same
    type, the shape above]. Option: block_size (field 0 of
    DepthToSpaceOptions / SpaceToDepthOptions), at least 1; C divisible
    by block_size**2 (DEPTH_TO_SPACE), H and W by block_size
    (SPACE_TO_DEPTH). Raises PrepareError naming the op and tensor.
    """
    label = op.label()
    if len(ins) != 1 or ins[0] is None or len(outs) != 1 or \
            outs[0] is None:
        raise PrepareError("%s needs one input and one output" % label)
    x, y = ins[0], outs[0]
    to_space = op.code == _DEPTH_TO_SPACE
    if x.type not in (_FLOAT32, _INT8) or y.type != x.type:
        raise PrepareError("%s: input %s is %s, output %s is %s; supported: "
                           "float32 or int8, the same for both"
                           % (label, x.label(), x.dtype, y.label(), y.dtype))
    if len(x.shape) != 4:
        raise PrepareError("%s: input %s has shape %s; it must have rank 4"
                           % (label, x.label(), tuple(x.shape)))
    want = (_DEPTH_TO_SPACE_OPTIONS if to_space else
            _SPACE_TO_DEPTH_OPTIONS)
    # block_size is field 0 of both DepthToSpaceOptions and SpaceToDepthOptions
    bs = (op.opt_int(_DEPTH_TO_SPACE_BLOCK_SIZE, 0)
          if op.options_type == want else 0)
    if bs < 1:
        raise PrepareError("%s: block_size %d must be at least 1"
                           % (label, bs))
    b, h, w, c = x.shape
    if to_space:
        if c % (bs * bs):
            raise PrepareError("%s: input %s has %d channels, not a multiple "
                               "of block_size**2 = %d"
                               % (label, x.label(), c, bs * bs))
        out = (b, h * bs, w * bs, c // (bs * bs))
        view = (b, h, w, bs, bs, c // (bs * bs))
    else:
        if h % bs or w % bs:
            raise PrepareError("%s: input %s is %dx%d, not a multiple of "
                               "block_size %d" % (label, x.label(), h, w, bs))
        out = (b, h // bs, w // bs, c * bs * bs)
        view = (b, h // bs, bs, w // bs, bs, c)
    if tuple(y.shape) != out:
        raise PrepareError("%s: output %s is stored with shape %s; block_size "
                           "%d gives %s" % (label, y.label(), tuple(y.shape),
                                            bs, out))
    return _eval, (x.data, y.data, keep(ctx, plan(view, (0, 1, 3, 2, 4, 5),
                                                  x.itemsize)))
