"""VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE: resource variables.

TFLM: tensorflow/lite/micro/kernels/var_handle.cc, read_variable.cc,
assign_variable.cc and micro_resource_variable.cc (MicroResourceVariables).

A resource variable is found by (container, shared_name)
(VarHandleOptions): VAR_HANDLE's prepare gives each new pair the next id
(in the order the operators are prepared: subgraph 0's, then each called
subgraph's), a pair whose container is absent matches any container
(FindId). A resource tensor (TensorType RESOURCE, or int32: one
element) holds the id as an int32: VAR_HANDLE writes it at every
invoke, and IF / WHILE copy it between subgraphs like any tensor.

The variable's bytes are allocated (in the arena's tail) by the first
ASSIGN_VARIABLE prepared whose handle comes from a VAR_HANDLE of its own
subgraph, with the size of the value assigned, and set to its reset
value: the low byte of the value tensor's first zero point when it has
scales and zero points (TFLM memsets the int8 zero point), else 0.
They keep their value across invokes; interp.reset() sets them to the
reset value again (MicroResourceVariables::ResetAll), while CALL_ONCE
does not run its init subgraph again (kernels/control.py).
READ_VARIABLE copies the variable's bytes to its output,
ASSIGN_VARIABLE its input 1 into the variable; both read the id from
their input 0 at invoke.

Types: the value may be any type of whole bytes (int8, int16, int32,
float32, bool, ...); the bytes are copied. Refused (PrepareError): a
VAR_HANDLE without shared_name, or with a container where an earlier one
had none (TFLM's FindId would strcmp a null pointer), or whose output is
not a one-element resource or int32 tensor; counts other than TFLM's
(READ: 1 in, 1 out; ASSIGN: 2 in, 0 out), a handle input that is not a
one-element resource (READ) or resource / int32 (ASSIGN) tensor; where
the handle's VAR_HANDLE is in the same subgraph, a READ of a variable no
ASSIGN allocates or of another size, an ASSIGN of another size than the
variable's (TFLM's DCHECKs). A handle passed in from another subgraph is
checked at invoke: InvokeError for an unknown id or a size that differs.
"""

from micropython import const

from ..errors import InvokeError, PrepareError
from ..heap import _copy, persistent

_INT32 = const(2)
_RESOURCE = const(13)
_VAR_HANDLE = const(142)
_READ_VARIABLE = const(143)
_VAR_HANDLE_OPTIONS = const(111)
_VAR_HANDLE_CONTAINER = const(0)
_VAR_HANDLE_SHARED_NAME = const(1)

# ctx.resources: [(container, shared_name) per id, the variables' bytes
# per id (None until allocated; the list READ / ASSIGN states share),
# {global tensor index: id} of VAR_HANDLE outputs, [(id, bytes, label)]
# to check once every operator is prepared, check (the allocator calls
# it: it names nothing of this module)]
_R_NAMES = const(0)
_R_BUFS = const(1)
_R_HANDLES = const(2)
_R_CHECKS = const(3)

# READ / ASSIGN state: the handle's bytes, the value's bytes, its byte
# count, the variables' bytes (shared list)
_S_HANDLE = const(0)
_S_VALUE = const(1)
_S_N = const(2)
_S_BUFS = const(3)
# VAR_HANDLE state: the output's bytes, the id
_SV_OUT = const(0)
_SV_ID = const(1)


def _eval_handle(st):
    h = st[_SV_OUT]  # the output's 4 bytes: the id, int32
    v = st[_SV_ID]
    h[0] = v & 0xFF
    h[1] = v >> 8 & 0xFF
    h[2] = 0
    h[3] = 0


def _var(st):
    """The variable's bytes for the id in the handle, or InvokeError."""
    h = st[_S_HANDLE]
    bufs = st[_S_BUFS]
    i = h[0] | h[1] << 8
    if h[2] or h[3] or i >= len(bufs):
        raise InvokeError("resource handle %d: no such variable" % i)
    b = bufs[i]
    if b is None or len(b) != st[_S_N]:
        raise InvokeError("resource variable %d: %s bytes, not %d"
                          % (i, None if b is None else len(b), st[_S_N]))
    return b


def _eval_read(st):
    _copy(st[_S_VALUE], _var(st), st[_S_N])


def _eval_assign(st):
    _copy(_var(st), st[_S_VALUE], st[_S_N])


def _table(ctx):
    r = getattr(ctx, "resources", None)
    if r is None:  # (the allocator calls check once all are prepared)
        r = ctx.resources = ([], [], {}, [], check)
    return r


def prepare(op, ins, outs, ctx):
    """VAR_HANDLE, READ_VARIABLE or ASSIGN_VARIABLE (see the module doc):
    ins / outs the operator's tensors. Raises PrepareError."""
    label = op.label()
    r = _table(ctx)
    g = getattr(ctx, "graphs", None)  # graphs.Graphs: base, the global
    base = 0 if g is None else g.base  # index of the op's first tensor
    if op.code == _VAR_HANDLE:
        if ins or len(outs) != 1:
            raise PrepareError("%s: takes no inputs and one output (%d, %d)"
                               % (label, len(ins), len(outs)))
        y = outs[0]
        if y is None or y.type not in (_RESOURCE, _INT32) or y.size != 1:
            raise PrepareError("%s: output must be a resource of one "
                               "element" % label)
        t = op.options if op.options_type == _VAR_HANDLE_OPTIONS else None
        cont = None if t is None else t.string(_VAR_HANDLE_CONTAINER, None)
        name = None if t is None else t.string(_VAR_HANDLE_SHARED_NAME, None)
        if name is None:
            raise PrepareError("%s: VarHandleOptions.shared_name is absent"
                               % label)
        names = r[_R_NAMES]
        for k in range(len(names)):  # TFLM's FindId
            c, n = names[k]
            if cont is not None and c is None:  # its strcmp(NULL) crashes
                raise PrepareError("%s: container '%s' compared with the "
                                   "absent container of '%s'"
                                   % (label, cont, n))
            if (cont is None or c == cont) and n == name:
                v = k
                break
        else:
            v = len(names)
            names.append((cont, name))
            r[_R_BUFS].append(None)
        r[_R_HANDLES][base + y.index] = v
        return _eval_handle, (y.data, v)
    read = op.code == _READ_VARIABLE
    if len(ins) != (1 if read else 2) or len(outs) != (1 if read else 0):
        raise PrepareError("%s: takes %s" % (label, "one input and one "
                                             "output" if read else
                                             "two inputs and no output"))
    h = ins[0]
    x = outs[0] if read else ins[1]
    if h is None or x is None or h.size != 1 or not (
            h.type == _RESOURCE or h.type == _INT32 and not read):
        raise PrepareError("%s: input 0 must be a resource handle of one "
                           "element" % label)
    n = x.nbytes
    v = r[_R_HANDLES].get(base + h.index)
    if v is not None:  # its VAR_HANDLE is in this subgraph
        bufs = r[_R_BUFS]
        if not read and bufs[v] is None:  # MicroResourceVariables::Allocate
            b = persistent(ctx, "B", n)
            fill = 0
            if x.scale_reader()[0] and x.zero_point_count():
                fill = x.zero_point & 0xFF
            if not ctx.sizing:
                for k in range(n):
                    b[k] = fill
                ctx.variables.append((b, fill))  # set by reset()
            bufs[v] = b
        r[_R_CHECKS].append((v, n, label))
    return (_eval_read if read else _eval_assign), (h.data, x.data, n,
                                                    r[_R_BUFS])


def check(r):
    """Once every operator is prepared (the sizing pass): each READ /
    ASSIGN whose handle is known reads or writes a variable that an
    ASSIGN allocated, of its size. PrepareError otherwise. r: the
    table (ctx.resources)."""
    for v, n, label in r[_R_CHECKS]:
        b = r[_R_BUFS][v]
        if b is None:
            raise PrepareError("%s: resource variable '%s' is read but no "
                               "ASSIGN_VARIABLE sets it" % (label,
                                                            r[_R_NAMES][v][1]))
        if len(b) != n:
            raise PrepareError("%s: resource variable '%s' has %d bytes, "
                               "this operator %d" % (label, r[_R_NAMES][v][1],
                                                     len(b), n))
