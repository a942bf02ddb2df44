"""RESHAPE, SQUEEZE, EXPAND_DIMS as metadata changes (zero copy).

TFLM (tensorflow/lite/micro/kernels/reshape.cc, reshape_common.cc,
squeeze.cc, expand_dims.cc) copies the data into a second buffer. Here the
memory planner gives input and output one buffer (planner.alias_roots), so
eval does nothing: prepare only works out the output shape by TFLite's
rules and checks it against the shape stored in the model.
"""

from .. import schema
from ..errors import PrepareError


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def _const_ints(op, t, ctx, what):
    """Values of a constant int32 / int64 tensor as a tuple."""
    if t.const_pos is None:
        return None
    fb = ctx.model.fb
    if t.type == schema.INT32:
        return tuple(fb.i32(t.const_pos + 4 * k) for k in range(t.size))
    if t.type == schema.INT64:
        return tuple(fb.i64(t.const_pos + 8 * k) for k in range(t.size))
    _fail(op, "%s %s must be int32 or int64, not %s"
          % (what, t.label(), t.dtype))


def resolve_shape(op, shape, count):
    """Apply TFLite's reshape rules to a requested shape.

    A single -1 is inferred from count (the input's element count).
    Raises PrepareError for more than one -1, other negative dimensions,
    an indivisible count, or a product that differs from count.
    """
    known, stretch = 1, -1
    for i, d in enumerate(shape):
        if d == -1:
            if stretch >= 0:
                _fail(op, "shape %s has more than one -1" % (shape,))
            stretch = i
        elif d < 0:
            _fail(op, "shape %s has negative dimension %d" % (shape, d))
        else:
            known *= d
    shape = list(shape)
    if stretch >= 0:
        if known == 0 or count % known:
            _fail(op, "cannot infer -1 in %s from %d elements"
                  % (tuple(shape), count))
        shape[stretch] = count // known
    elif known != count:
        _fail(op, "shape %s holds %d elements, the input has %d"
              % (tuple(shape), known, count))
    return tuple(shape)


def _reshape_target(op, ins, ctx):
    """The requested shape: shape tensor, else new_shape, else None."""
    if len(ins) > 1 and ins[1] is not None:
        vals = _const_ints(op, ins[1], ctx, "shape tensor")
        if vals is not None:
            if len(ins[1].shape) > 1:
                _fail(op, "shape tensor %s must be 1-D" % ins[1].label())
            return vals
    if op.options is not None and op.options.has(0):
        vals = op.options.int_vector(0)
        if len(ins) == 1 and vals == (0,):
            return ()  # legacy [0]: a scalar
        return vals
    return None


def _squeeze_target(op, src):
    rank = len(src.shape)
    axes = op.options.int_vector(0) if op.options is not None else ()
    drop = set()
    for a in axes:
        if not -rank <= a < rank:
            _fail(op, "squeeze axis %d is out of range for rank %d"
                  % (a, rank))
        a = a + rank if a < 0 else a
        if src.shape[a] != 1:
            _fail(op, "cannot squeeze dimension %d of %s: it is %d"
                  % (a, src.shape, src.shape[a]))
        drop.add(a)
    if not axes:
        drop = set(i for i, d in enumerate(src.shape) if d == 1)
    return tuple(d for i, d in enumerate(src.shape) if i not in drop)


def _expand_target(op, ins, ctx):
    src = ins[0]
    if len(ins) < 2 or ins[1] is None:
        _fail(op, "needs an axis input")
    vals = _const_ints(op, ins[1], ctx, "axis")
    if vals is None or len(vals) != 1:
        _fail(op, "axis %s must be a constant with one element"
              % ins[1].label())
    rank = len(src.shape)
    axis = vals[0]
    if axis < 0:
        axis += rank + 1
    if not 0 <= axis <= rank:
        _fail(op, "axis %d is out of range for rank %d" % (vals[0], rank))
    return src.shape[:axis] + (1,) + src.shape[axis:]


def _check_io(op, ins, outs):
    if not ins or ins[0] is None or len(outs) != 1:
        _fail(op, "needs one data input and one output")
    src, dst = ins[0], outs[0]
    if src.type != dst.type:
        _fail(op, "input %s is %s, output %s is %s"
              % (src.label(), src.dtype, dst.label(), dst.dtype))
    if (src.scales, src.zero_points) != (dst.scales, dst.zero_points):
        _fail(op, "output %s has quantization %s/%s, input %s has %s/%s: a "
              "reshape cannot requantize"
              % (dst.label(), dst.scales, dst.zero_points, src.label(),
                 src.scales, src.zero_points))
    return src, dst


def output_shape(op, ins, ctx):
    """The output shape TFLite's rules give for this operator."""
    src = ins[0]
    if op.code == schema.SQUEEZE:
        return _squeeze_target(op, src)
    if op.code == schema.EXPAND_DIMS:
        return _expand_target(op, ins, ctx)
    target = _reshape_target(op, ins, ctx)
    return None if target is None else resolve_shape(op, target, src.size)


def prepare(op, ins, outs, ctx):
    """Check a RESHAPE / SQUEEZE / EXPAND_DIMS operator.

    ins[0]: data (any type); RESHAPE may have a shape tensor (int32 1-D)
    or ReshapeOptions.new_shape; SQUEEZE uses SqueezeOptions.squeeze_dims;
    EXPAND_DIMS takes a one-element int32/int64 axis tensor. The output must
    have the input's type and quantization and the shape these rules give
    (when the rules give none, the stored output shape is used).
    Raises PrepareError naming the op and both shapes. Returns (None,
    None): nothing runs at invoke time.
    """
    src, dst = _check_io(op, ins, outs)
    want = output_shape(op, ins, ctx)
    if want is None:
        want = resolve_shape(op, dst.shape, src.size)
    if tuple(dst.shape) != want:
        _fail(op, "output %s is stored with shape %s but the operator gives "
              "%s" % (dst.label(), dst.shape, want))
    return None, None
