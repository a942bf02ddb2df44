"""RESHAPE as a metadata change: the output shares its input's bytes.

TFLM (tensorflow/lite/micro/kernels/reshape.cc) copies the data; here the
memory planner gives input and output one buffer, so eval does nothing.
prepare checks that the stored output shape holds the same elements of the
same type.
"""

from ..errors import PrepareError

def prepare(op, ins, outs, ctx):
    """Check RESHAPE: same type and element count in and out.

    Raises PrepareError naming the op and both shapes. Returns (None, None):
    there is nothing to run at invoke time.
    """
    if not ins or ins[0] is None or len(outs) != 1:
        raise PrepareError("%s needs one data input and one output"
                           % op.label())
    src, dst = ins[0], outs[0]
    if src.type != dst.type:
        raise PrepareError("%s: input %s is %s, output %s is %s"
                           % (op.label(), src.label(), src.dtype,
                              dst.label(), dst.dtype))
    if src.size != dst.size:
        raise PrepareError("%s: cannot reshape %s to %s"
                           % (op.label(), src.shape, dst.shape))
    return None, None
