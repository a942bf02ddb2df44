"""RESHAPE, SQUEEZE, EXPAND_DIMS: prepare (see reshape.py, which keeps
what invoke() runs). Construction only: imported by reshape.prepare, and
dropped once an interpreter is built (interpreter.CONSTRUCTION).
"""

from array import array

from micropython import const

from ..errors import InvokeError
from .reshape import _check_shape, _fail

_EXPAND_DIMS = const(70)
_INT32 = const(2)
_RESHAPE = const(22)
_SQUEEZE = const(43)
_RESHAPE_NEW_SHAPE = const(0)
_SQUEEZE_SQUEEZE_DIMS = const(0)


def resolve_shape(op, shape, src_shape):
    """Apply TFLite's reshape rules to a requested shape.

    A single -1 is inferred from the element count of src_shape (the
    input's shape). Raises PrepareError, naming both shapes, for more than
    one -1, other negative dimensions, an indivisible count, or a product
    that differs from the input's.
    """
    count = 1
    for d in src_shape:
        count *= d
    src_shape = tuple(src_shape)
    known, stretch = 1, -1
    for i, d in enumerate(shape):
        if d == -1:
            if stretch >= 0:
                _fail(op, "shape %s has more than one -1" % (tuple(shape),))
            stretch = i
        elif d < 0:
            _fail(op, "shape %s has negative dimension %d"
                  % (tuple(shape), d))
        else:
            known *= d
    shape = list(shape)
    if stretch >= 0:
        if known == 0 or count % known:
            _fail(op, "cannot infer -1 in %s from the %d elements of input "
                  "shape %s" % (tuple(shape), count, src_shape))
        shape[stretch] = count // known
    elif known != count:
        _fail(op, "shape %s holds %d elements, input shape %s has %d"
              % (tuple(shape), known, src_shape, count))
    return tuple(shape)


def _shape_tensor(ins):
    """The shape input TFLite reads: a 1-D int32 second input (its
    ShapeIsVector); any other second input is ignored, as there."""
    t = ins[1] if len(ins) > 1 else None
    if t is None or t.type != _INT32 or len(t.shape) != 1:
        return None
    return t


def _reshape_target(op, ins, ctx):
    """The requested shape: a constant shape tensor, else
    ReshapeOptions.new_shape, else None (the stored output shape)."""
    st = _shape_tensor(ins)
    if st is not None and (st.is_const or st.size == 0):
        return ctx.const_ints(op, st, "shape tensor") or ()
    if st is None and op.options is not None \
            and op.options.has(_RESHAPE_NEW_SHAPE):
        vals = op.options.int_vector(_RESHAPE_NEW_SHAPE)
        return () if vals == (0,) else vals  # legacy [0]: a scalar
    return None


def _squeeze_target(op, src):
    rank = len(src.shape)
    axes = (op.options.int_vector(_SQUEEZE_SQUEEZE_DIMS)
            if op.options is not None else ())
    drop = set()
    for a in axes:
        if not -rank <= a < rank:
            _fail(op, "squeeze axis %d is out of range for rank %d"
                  % (a, rank))
        a = a + rank if a < 0 else a
        if src.shape[a] != 1:
            _fail(op, "cannot squeeze dimension %d of %s: it is %d"
                  % (a, tuple(src.shape), src.shape[a]))
        drop.add(a)
    if not axes:
        drop = set(i for i, d in enumerate(src.shape) if d == 1)
    return tuple(d for i, d in enumerate(src.shape) if i not in drop)


def _expand_target(op, ins, ctx):
    src = ins[0]
    if len(ins) < 2 or ins[1] is None:
        _fail(op, "needs an axis input")
    vals = ctx.const_ints(op, ins[1], "axis")
    if vals is None or len(vals) != 1:
        _fail(op, "axis %s must be a constant with one element"
              % ins[1].label())
    rank = len(src.shape)
    axis = vals[0]
    if axis < 0:
        axis += rank + 1
    if not 0 <= axis <= rank:
        _fail(op, "axis %d is out of range for rank %d" % (vals[0], rank))
    return tuple(src.shape[:axis]) + (1,) + tuple(src.shape[axis:])


def _check_io(op, ins, outs):
    if not ins or ins[0] is None or len(outs) != 1 or outs[0] is None:
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


def _stored_shape(op, ins, dst):
    """The output's shape in the model; a stored [0] of a one-input
    RESHAPE means a scalar (TFLM reshape_common.cc, legacy models)."""
    shape = tuple(dst.shape)
    if op.code == _RESHAPE and len(ins) == 1 and shape == (0,):
        return ()
    return shape


def output_shape(op, ins, ctx):
    """The output shape TFLite's rules give for this operator, or None
    for a RESHAPE whose only source is the stored output shape."""
    src = ins[0]
    if op.code == _SQUEEZE:
        return _squeeze_target(op, src)
    if op.code == _EXPAND_DIMS:
        return _expand_target(op, ins, ctx)
    target = _reshape_target(op, ins, ctx)
    return None if target is None else resolve_shape(op, target, src.shape)


def _agrees(op, stored, want):
    if stored == want:
        return True
    # A scalar squeeze result stored as [1] (TFLM squeeze_test.cc
    # SqueezeAllDims; TFLM only checks the dimensions it keeps).
    return op.code == _SQUEEZE and want == () and stored == (1,)


def prepare(op, ins, outs, ctx):
    """Check a RESHAPE / SQUEEZE / EXPAND_DIMS operator.

    ins[0]: data (any type). RESHAPE takes its shape from the first of: a
    1-D int32 shape tensor (constant, or computed by the graph: then its
    values are checked at invoke), ReshapeOptions.new_shape, the stored
    output shape; a single -1 is inferred; [] and the legacy [0] mean a
    scalar. SQUEEZE uses SqueezeOptions.squeeze_dims (none: every size-1
    dimension; negative: counted from the end). EXPAND_DIMS takes a
    one-element constant int32/int64 axis (negative: rank + 1 + axis).
    The output must have the input's type and quantization and agree with
    the shape these rules give. Semantics: TFLM kernels/reshape.cc,
    reshape_common.cc, squeeze.cc, expand_dims.cc and TFLite's reshape.
    Raises PrepareError naming the op and both shapes. The output's data
    is a view of the input's bytes (the planner gives them one buffer), so
    nothing runs at invoke unless a computed shape tensor must be checked.
    """
    src, dst = _check_io(op, ins, outs)
    stored = _stored_shape(op, ins, dst)
    want = output_shape(op, ins, ctx)
    if want is None:
        want = resolve_shape(op, stored, src.shape)
    if not _agrees(op, stored, want):
        _fail(op, "output %s is stored with shape %s but the operator gives "
              "%s" % (dst.label(), tuple(dst.shape), want))
    if stored != tuple(dst.shape):  # legacy [0]: becomes a scalar view
        dst.shape, dst.size, dst.nbytes = stored, src.size, src.nbytes
        dst.data = src.data
    st = _shape_tensor(ins) if op.code == _RESHAPE else None
    if st is None or st.is_const or st.size == 0:
        return None, None
    return _computed_shape(op, st, want)


def _computed_shape(op, st, want):
    """Eval step that checks a computed shape tensor against want."""
    if st.size != len(want):
        _fail(op, "shape tensor %s has %d entries, the output has rank %d"
              % (st.label(), st.size, len(want)))
    err = InvokeError("%s: shape tensor %s does not hold the planned "
                      "output shape %s (or it with one -1)"
                      % (op.label(), st.label(), want))
    return _check_shape, (st.data, array("i", want), len(want), err)
