"""RESHAPE, SQUEEZE, EXPAND_DIMS as metadata changes (zero copy).

TFLM (tensorflow/lite/micro/kernels/reshape.cc, reshape_common.cc,
squeeze.cc, expand_dims.cc) copies the data into a second buffer. Here the
memory planner gives input and output one buffer (planner.alias_roots; a
constant input gives an output that views the model bytes), so eval does
nothing: prepare works out the output shape by TFLite's rules and checks
it against the shape stored in the model. The one exception is a RESHAPE
whose shape tensor is computed by the graph: its values only exist at
invoke time, so a tiny eval step checks them against the planned shape.
Prepare is in reshape_prep.py (construction only).
"""

import micropython
from micropython import const

from ..errors import PrepareError, raise_made

_INT32 = const(2)
_INT64 = const(4)


def _fail(op, msg):
    raise PrepareError("%s: %s" % (op.label(), msg))


def prepare(op, ins, outs, ctx):
    """See reshape_prep.prepare (construction only: it is dropped once an
    interpreter is built, interpreter.CONSTRUCTION)."""
    from .reshape_prep import prepare
    return prepare(op, ins, outs, ctx)


@micropython.viper
def _shape_matches(v, want, n: int) -> int:
    """1 if int32 values v equal want, one of them possibly -1."""
    pv = ptr32(v)
    pw = ptr32(want)
    one: int = 1
    S: int = one << 31
    stretch: int = 0
    k: int = 0
    while k < n:
        x: int = (pv[k] ^ S) - S
        if x != pw[k]:
            if x != -1 or stretch:
                return 0
            stretch = 1
        k += 1
    return 1


def _check_shape(st):
    v, want, n, err = st
    if not _shape_matches(v, want, n):
        raise_made(err)  # a copy: a re-raised err would keep growing
