"""IF, WHILE and CALL_ONCE: operators that run other subgraphs.

TFLM: tensorflow/lite/micro/kernels/if.cc, while.cc, call_once.cc, the
copies of kernels/kernel_util.cc (CopyOpInputsToSubgraphInputs,
CopySubgraphOutputsToOpOutputs, CopyOpOutputsToSubgraphInputs,
CopyOpInputsToOpOutputs) and MicroInterpreterGraph::InvokeSubgraph.
A subgraph's tensors are planned into the same arena (tflm/graphs.py);
each called subgraph is prepared once, as a list of (eval, state) steps
(graphs.io), which these operators run as invoke() runs subgraph 0's.
Data passes by copies of whole tensors, as in TFLM.

IF: input 0 the condition (bool, one element: TFLM's Prepare), inputs
1.. copied to the inputs of then_subgraph_index when its byte is not
0, else of else_subgraph_index; that subgraph runs; its outputs are
copied to the IF's outputs (none when it has no outputs). Every input
and output pair must have the same type and bytes, for both branches
(TFLM checks the counts of the then branch at Prepare, the rest at Eval,
where a mismatch fails the invoke: refused here at construction).

WHILE: inputs, outputs, the cond subgraph's inputs, the body's inputs
and outputs all pair up (same count, types and bytes). Eval: the inputs
are copied to the cond's inputs and to the outputs; cond runs; while
the first byte of its output 0 is not 0, the outputs are copied to the
body's inputs, body runs, its outputs are copied to the outputs and
those to the cond's inputs, and cond runs again. (A cond that never
turns false loops forever, as in TFLM.)

CALL_ONCE: no inputs or outputs; the first invoke runs
init_subgraph_index, later ones nothing. TFLM's CALL_ONCE has no reset:
after interp.reset() it does not run again (resource variables are then
back to their reset value: kernels/resource.py).

Errors (PrepareError): subgraph indices out of range or 0 (recursion is
a ModelError, graphs.py), counts, types or sizes that do not pair up, an
IF condition that is not a one-element bool, a WHILE cond without a
bool output.
"""

from micropython import const

from ..errors import PrepareError
from ..heap import _copy, persistent

_BOOL = const(6)
_IF = const(118)
_WHILE = const(119)
_IF_OPTIONS = const(92)
_WHILE_OPTIONS = const(93)
_CALL_ONCE_OPTIONS = const(103)
_IF_THEN_SUBGRAPH_INDEX = const(0)
_IF_ELSE_SUBGRAPH_INDEX = const(1)
_WHILE_COND_SUBGRAPH_INDEX = const(0)
_WHILE_BODY_SUBGRAPH_INDEX = const(1)
_CALL_ONCE_INIT_SUBGRAPH_INDEX = const(0)

# IF's state: the condition's byte, then (copies in, steps, copies out),
# else likewise
_SI_COND = const(0)
_SI_THEN_IN = const(1)
_SI_THEN = const(2)
_SI_THEN_OUT = const(3)
_SI_ELSE_IN = const(4)
_SI_ELSE = const(5)
_SI_ELSE_OUT = const(6)
# WHILE's state: copies (inputs -> cond's inputs, inputs -> outputs,
# outputs -> body's inputs, body's outputs -> outputs, outputs ->
# cond's inputs), cond's steps, body's steps, cond's output 0
_S_IN_COND = const(0)
_S_IN_OUT = const(1)
_S_OUT_BODY = const(2)
_S_BODY_OUT = const(3)
_S_OUT_COND = const(4)
_S_COND_STEPS = const(5)
_S_BODY_STEPS = const(6)
_S_FLAG = const(7)
# CALL_ONCE's state: the has-run byte, the init subgraph's steps
_SC_RAN = const(0)
_SC_INIT = const(1)


def _run(steps):
    """Run a subgraph's steps (MicroInterpreterGraph::InvokeSubgraph)."""
    i = 0
    n = len(steps)
    while i < n:
        steps[i](steps[i + 1])
        i += 2


def _copies(c):
    """Copy every (source, destination, bytes) triple of tuple c."""
    k = 0
    n = len(c)
    while k < n:
        _copy(c[k + 1], c[k], c[k + 2])
        k += 3


def _eval_if(st):
    if st[_SI_COND][0]:
        _copies(st[_SI_THEN_IN])
        _run(st[_SI_THEN])
        _copies(st[_SI_THEN_OUT])
    else:
        _copies(st[_SI_ELSE_IN])
        _run(st[_SI_ELSE])
        _copies(st[_SI_ELSE_OUT])


def _eval_while(st):
    _copies(st[_S_IN_COND])
    _copies(st[_S_IN_OUT])
    cond = st[_S_COND_STEPS]
    flag = st[_S_FLAG]
    _run(cond)
    while flag[0]:
        _copies(st[_S_OUT_BODY])
        _run(st[_S_BODY_STEPS])
        _copies(st[_S_BODY_OUT])
        _copies(st[_S_OUT_COND])
        _run(cond)


def _eval_call_once(st):
    ran = st[_SC_RAN]
    if not ran[0]:
        _run(st[_SC_INIT])
        ran[0] = 1


def _pairs(op, src, dst, what):
    """(source data, destination data, bytes, ...) for tensors src[k] ->
    dst[k]: same count, type and bytes, else PrepareError; pairs of no
    bytes are left out."""
    if len(src) != len(dst):
        raise PrepareError("%s: %d %s, %d to pair them with"
                           % (op.label(), len(src), what, len(dst)))
    out = []
    for a, b in zip(src, dst):
        if a.type != b.type or a.nbytes != b.nbytes:
            raise PrepareError("%s: %s %s (%s %s) and %s (%s %s) differ"
                               % (op.label(), what, a.label(), a.dtype,
                                  a.shape, b.label(), b.dtype, b.shape))
        if a.nbytes:
            out += (a.data, b.data, a.nbytes)
    return tuple(out)


def prepare(op, ins, outs, ctx):
    """IF, WHILE or CALL_ONCE (see the module doc). ins / outs: the
    operator's tensors (any types but resource handles pass as their
    int32 ids); the subgraphs' from graphs.io. Raises PrepareError."""
    from ..graphs import io
    label = op.label()
    for t in ins + outs:
        if t is None:
            raise PrepareError("%s: an omitted tensor" % label)
    if op.code == _IF:
        then_i = else_i = 0
        if op.options_type == _IF_OPTIONS:
            then_i = op.opt_int(_IF_THEN_SUBGRAPH_INDEX, 0)
            else_i = op.opt_int(_IF_ELSE_SUBGRAPH_INDEX, 0)
        if not ins:
            raise PrepareError("%s: no condition input" % label)
        c = ins[0]
        if c.type != _BOOL or c.size != 1:
            raise PrepareError("%s: condition %s must be a bool of one "
                               "element, not %s %s"
                               % (label, c.label(), c.dtype, c.shape))
        st = [c.data]
        for s, what in ((then_i, "then_subgraph_index"),
                        (else_i, "else_subgraph_index")):
            si, so, steps = io(ctx, op, s, what)
            st.append(_pairs(op, ins[1:], si, "inputs"))
            st.append(steps)
            st.append(_pairs(op, so, outs, "outputs") if so else ())
        return _eval_if, tuple(st)
    if op.code == _WHILE:
        cond_i = body_i = 0
        if op.options_type == _WHILE_OPTIONS:
            cond_i = op.opt_int(_WHILE_COND_SUBGRAPH_INDEX, 0)
            body_i = op.opt_int(_WHILE_BODY_SUBGRAPH_INDEX, 0)
        ci, co, cond = io(ctx, op, cond_i, "cond_subgraph_index")
        bi, bo, body = io(ctx, op, body_i, "body_subgraph_index")
        if not co or co[0].nbytes < 1:
            raise PrepareError("%s: the cond subgraph %d has no output to "
                               "read the condition from" % (label, cond_i))
        if co[0].type != _BOOL:
            raise PrepareError("%s: the cond subgraph's output %s must be "
                               "bool, not %s" % (label, co[0].label(),
                                                 co[0].dtype))
        return _eval_while, (
            _pairs(op, ins, ci, "inputs"), _pairs(op, ins, outs, "inputs"),
            _pairs(op, outs, bi, "outputs"), _pairs(op, bo, outs,
                                                    "body outputs"),
            _pairs(op, outs, ci, "outputs"), cond, body, co[0].data)
    # CALL_ONCE
    if ins or outs:
        raise PrepareError("%s: takes no inputs or outputs (%d, %d)"
                           % (label, len(ins), len(outs)))
    init = 0
    if op.options_type == _CALL_ONCE_OPTIONS:
        init = op.opt_int(_CALL_ONCE_INIT_SUBGRAPH_INDEX, 0)
    steps = io(ctx, op, init, "init_subgraph_index")[2]
    # has run: in the tail, not a ctx.state (reset() leaves it, as TFLM)
    ran = persistent(ctx, "B", 1)
    ran[0] = 0
    return _eval_call_once, (ran, steps)
