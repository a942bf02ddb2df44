"""Memory planner: places activation buffers into one arena.

Greedy by size, like TFLM's GreedyMemoryPlanner
(tensorflow/lite/micro/memory_planner/greedy_memory_planner.cc): buffers
are placed largest first, each at the lowest 16-byte aligned offset where it
does not overlap any already placed buffer whose lifetime overlaps its own.
Lifetimes are inclusive operator index ranges [first, last].

Unlike TFLM, plan_model() lets an int8 ADD or SUB write its output over
a same-shape input that is not read after it (in_place): at a residual
connection, where the two inputs and the output are all alive, that
saves the output's size (16 KB of ResNet-8's arena).

grow() then widens the elastic buffers (a kernel's work buffer that only
buys speed, planned at its least size) into the room the plan leaves
during their operator, without moving anything else.

plan_model() plans a whole model: it runs under CPython too, so host tools
show exactly the plan the board will use.
"""

from micropython import const

from .errors import ModelError
from .kernels import ALIAS_CODES, INPLACE_CODES

_INT8 = const(9)

ALIGN = 16


def align_up(n, a=ALIGN):
    """n rounded up to a multiple of a."""
    return (n + a - 1) // a * a


class Buffer:
    """One planned buffer: size in bytes, lifetime [first, last], offset;
    want: the bytes an elastic buffer would rather have (grow())."""

    want = 0

    def __init__(self, size, first, last):
        self.size = size
        self.first = first
        self.last = last
        self.offset = 0


def plan(buffers):
    """Assign .offset to every Buffer; return the arena size in bytes.

    buffers: list of Buffer. Ties in size keep list order, so the plan is
    deterministic. Runs in O(n^2) for n buffers (n is small on a board).
    """
    # (size, index) keys: MicroPython's sort is not stable, so ties must
    # not be left to it (the board and the host tools must agree).
    order = sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, i))
    placed = []
    total = 0
    for i in order:
        b = buffers[i]
        live = [p for p in placed
                if p.first <= b.last and b.first <= p.last]
        live.sort(key=lambda p: p.offset)
        off = 0
        for p in live:
            if off + b.size <= p.offset:
                break
            off = max(off, align_up(p.offset + p.size))
        b.offset = off
        placed.append(b)
        total = max(total, align_up(off + b.size))
    return total


def grow(buffers, total):
    """Grow each elastic buffer of a plan (want > size: an operator's
    work buffer that speeds it up, planned at its least size) to want
    bytes where the arena's first total bytes have a free gap that large
    during its lifetime, else to the largest such gap (its own place at
    least): its offset and size change, nothing else moves and the
    arena stays total bytes. Sizes granted are multiples of 4, offsets
    of ALIGN. In list order (an elastic buffer grown takes the room it
    got from those after it). Not in TFLM, whose kernels ask for fixed
    scratch sizes."""
    for b in buffers:
        want = b.want
        if want <= b.size:
            continue
        live = [p for p in buffers
                if p is not b and p.first <= b.last and b.first <= p.last]
        live.sort(key=lambda p: p.offset)
        best, size = b.offset, b.size
        off = 0
        for k in range(len(live) + 1):
            end = live[k].offset if k < len(live) else total
            n = min(want, end - off) & ~3
            if n > size:
                best, size = off, n
                if n == want:
                    break
            if k < len(live):
                off = max(off, align_up(live[k].offset + live[k].size))
        b.offset, b.size = best, size


def alias_roots(model):
    """root[i]: the tensor whose bytes tensor i shares.

    The output of an ALIAS_CODES operator (RESHAPE, ...) is a view of its
    first input, transitively (reshape -> squeeze -> expand_dims chains).
    plan_model() gives each group one buffer that lives from the first
    producer to the last consumer of any member; a constant root makes the
    whole group view the model bytes. Raises ModelError for an alias
    operator without a data input, or whose output is a variable tensor
    (state must have bytes of its own).
    """
    root = list(range(len(model.tensors)))
    for op in model.operators:
        if op.code in ALIAS_CODES and op.custom_code is None:
            if not op.inputs or op.inputs[0] < 0 or len(op.outputs) != 1:
                raise ModelError("%s needs a data input and one output"
                                 % op.label())
            out = op.outputs[0]
            if 0 <= out < len(root) and model.tensors[out].is_variable:
                raise ModelError("%s writes variable %s: a view cannot "
                                 "hold state" % (op.label(),
                                                 model.tensors[out].label()))
            root[out] = root[op.inputs[0]]
    return root


def lifetimes(model):
    """{tensor index: [first, last]} for every activation in use.

    Subgraph inputs live from op 0, outputs and variables until the last
    op. Raises ModelError if an operator reads a tensor that nothing has
    produced yet (this also rules out cycles) or writes a constant or an
    already written tensor.
    """
    tensors = model.tensors
    last_op = max(len(model.operators) - 1, 0)
    life = {}
    for i in model.inputs:
        life[i] = [0, 0]
    for t in tensors:
        if t.is_variable:
            life[t.index] = [0, last_op]
    for op in model.operators:
        for i in op.inputs:
            if i < 0 or tensors[i].is_const:
                continue
            if i not in life and tensors[i].nbytes == 0:
                # An empty tensor (e.g. RESHAPE's empty shape vector: a
                # file stores no bytes for it) needs no producer.
                life[i] = [op.index, op.index]
            if i not in life:
                raise ModelError("%s reads %s before any operator produces "
                                 "it" % (op.label(), tensors[i].label()))
            life[i][1] = max(life[i][1], op.index)  # variables: to the end
        for i in op.outputs:
            t = tensors[i] if i >= 0 else None
            if t is None or t.is_const or (i in life and not t.is_variable):
                raise ModelError("%s writes output %d, which is absent, "
                                 "constant or already written"
                                 % (op.label(), i))
            # a variable keeps its bytes from op 0 to the end (its state)
            life[i] = [0, last_op] if t.is_variable else [op.index,
                                                          op.index]
    for i in model.outputs:
        if i in life:
            life[i][1] = last_op
        elif not tensors[i].is_const:
            raise ModelError("output %s is never produced"
                             % tensors[i].label())
    return life


def plan_model(model):
    """Plan every activation of a model.Model into one arena.

    Returns (arena_bytes, buffers, root): buffers maps the root tensor
    index of each alias group to its Buffer; root is alias_roots(model).
    Raises ModelError for graphs that cannot be planned.
    """
    tensors = model.tensors
    root = alias_roots(model)
    merged = {}
    for i, (first, last) in lifetimes(model).items():
        t = tensors[i]
        if t.itemsize == 0:
            raise ModelError("%s has unsupported type %s"
                             % (t.label(), t.dtype))
        r = root[i]
        if tensors[r].is_const:
            continue
        b = merged.get(r)
        if b is None:
            merged[r] = Buffer(t.nbytes, first, last)
        else:
            b.size = max(b.size, t.nbytes)
            b.first = min(b.first, first)
            b.last = max(b.last, last)
    in_place(model, root, merged)
    # In root-index order: MicroPython's dict order differs from CPython's.
    return plan([merged[r] for r in sorted(merged)]), merged, root


def in_place(model, root, merged):
    """Give the output of each int8 INPLACE_CODES operator (ADD, SUB) the
    buffer of an input that it may overwrite: an int8 input of the
    output's shape (so no broadcast: element i of the output is computed
    from element i of that input, which the kernel reads first) whose
    buffer's lifetime ends at this operator (no later operator reads it,
    and it is no subgraph input, output or variable: the caller's input
    values survive invoke(), as in TFLM). The first such input wins.
    Changes root (the output's alias group joins the input's) and merged
    (root -> Buffer) in place.
    """
    tensors = model.tensors
    kept = set(root[i] for i in model.outputs + model.inputs if i >= 0)
    for t in tensors:
        if t.is_variable:
            kept.add(root[t.index])
    for op in model.operators:
        if op.code not in INPLACE_CODES or op.custom_code is not None \
                or len(op.outputs) != 1:
            continue
        y = op.outputs[0]
        by = merged.get(root[y]) if y >= 0 else None
        if by is None or by.first != op.index or \
                tensors[y].type != _INT8:
            continue
        ry = root[y]
        for x in op.inputs:
            if x < 0:
                continue
            rx = root[x]
            bx = merged.get(rx)
            if (bx is None or rx == ry or rx in kept or bx.last != op.index
                    or tensors[x].type != _INT8
                    or tensors[x].shape != tensors[y].shape
                    or bx.size < tensors[y].nbytes):
                continue
            for i in range(len(root)):
                if root[i] == ry:
                    root[i] = rx
            bx.size = max(bx.size, by.size)
            bx.last = by.last
            del merged[ry]
            if ry in kept:  # the group now holds a graph output
                kept.add(rx)
            break
