"""Memory planner: places activation buffers into one arena.

Greedy by size, like TFLM's GreedyMemoryPlanner
(tensorflow/lite/micro/memory_planner/greedy_memory_planner.cc): buffers
are placed largest first, each at the lowest 16-byte aligned offset where it
does not overlap any already placed buffer whose lifetime overlaps its own.
Lifetimes are inclusive operator index ranges [first, last].

Unlike TFLM, plan_model() lets an int8 ADD or SUB write its output over
a same-shape input that is not read after it (in_place): at a residual
connection, where the two inputs and the output are all alive, that
saves the output's size (16 KB of ResNet-8's arena). And the output of
an int8 CONV_2D, AVERAGE_POOL_2D or MAX_POOL_2D may overlap the input
that dies there where the input starts far enough after the output
(overlap: the kernel writes output rows in order, each below the input
rows still to be read): at a network's first, widest layers, where
input and output make the arena's peak, the input then takes only a few
rows of room of its own.

grow() then widens the elastic buffers (a kernel's work buffer that only
buys speed, planned at its least size) into the room the plan leaves
during their operator, without moving anything else.

plan_model() plans a whole model: it runs under CPython too, so host tools
show exactly the plan the board will use.
"""

from array import array

from micropython import const

from .errors import ModelError
from .kernels import ALIAS_CODES, INPLACE_CODES

_INT8 = const(9)
_AVERAGE_POOL_2D = const(1)
_CONV_2D = const(3)
_MAX_POOL_2D = const(17)
# the options' fields overlap() reads
_CONV2D_STRIDE_W = const(1)
_CONV2D_STRIDE_H = const(2)
_CONV2D_DILATION_H_FACTOR = const(5)
_POOL2D_STRIDE_H = const(2)
_POOL2D_FILTER_HEIGHT = const(4)

ALIGN = 16


def align_up(n, a=ALIGN):
    """n rounded up to a multiple of a."""
    return (n + a - 1) // a * a


class Buffer:
    """One planned buffer: size in bytes, lifetime [first, last], offset;
    want: the bytes an elastic buffer would rather have (grow())."""

    want = 0
    link = None  # overlap(): (root of the buffer that this one may
    # overlap, the least bytes from its offset to this one's)

    def __init__(self, size, first, last):
        self.size = size
        self.first = first
        self.last = last
        self.offset = 0


def plan(buffers, links=()):
    """Assign .offset to every Buffer; return the arena size in bytes.

    buffers: list of Buffer. Ties in size keep list order, so the plan is
    deterministic. Runs in O(n^2) for n buffers (n is small on a board).
    links: i, j, d, i, j, d, ... (overlap(), links()): buffers[i] may
    share bytes with buffers[j] where it starts d bytes or more after it
    (d a multiple of ALIGN). The buffers linked together (a chain of
    layers) are then placed together, d bytes apart, when the order
    reaches the largest of them, at the lowest offset where none
    overlaps a placed buffer alive with it; that plan is kept where it
    is smaller than the plan without links.
    """
    apart = _plan(buffers, None)
    if not links:
        return apart
    offsets = [b.offset for b in buffers]
    total = _plan(buffers, _link_groups(len(buffers), links))
    if total < apart:
        return total
    for b, o in zip(buffers, offsets):
        b.offset = o
    return apart


def _plan(buffers, rel):
    """plan() with the linked buffers grouped by rel (_link_groups; None:
    no links)."""
    # (size, index) keys: MicroPython's sort is not stable, so ties must
    # not be left to it (the board and the host tools must agree).
    order = sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, i))
    placed = []
    total = 0
    for i in order:
        group = None if rel is None else rel[i]
        if group is True:  # placed with its group
            continue
        if group is None:
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
            continue
        base = _group_base(buffers, group, placed)
        for k, o in group:
            b = buffers[k]
            b.offset = base + o
            placed.append(b)
            rel[k] = True
            total = max(total, align_up(b.offset + b.size))
    return total


def _link_groups(n, links):
    """Per buffer index: None (no link), else the list [(index, offset
    from the group's first buffer)] of its group (the same list object
    for every member)."""
    rel = [None] * n
    for q in range(0, len(links), 3):
        i, j, d = links[q], links[q + 1], links[q + 2]
        gi, gj = rel[i], rel[j]
        if gi is None and gj is None:
            rel[i] = rel[j] = [(j, 0), (i, d)]
        elif gi is None:  # i joins j's group
            gj.append((i, dict(gj)[j] + d))
            rel[i] = gj
        elif gj is None:
            gi.append((j, dict(gi)[i] - d))
            rel[j] = gi
        elif gi is not gj:  # j's group joins i's
            s = dict(gi)[i] - d - dict(gj)[j]
            for k, o in gj:
                gi.append((k, o + s))
                rel[k] = gi
    return rel


def _group_base(buffers, group, placed):
    """The lowest base where each buffer k of group (_link_groups), at
    base + its offset in the group, overlaps no placed buffer alive with
    it."""
    low = -min(o for _, o in group)
    cands = [low]
    lives = []
    for k, o in group:
        b = buffers[k]
        live = [p for p in placed
                if p.first <= b.last and b.first <= p.last]
        lives.append(live)
        for p in live:
            c = align_up(p.offset + p.size) - o
            if c > low:
                cands.append(c)
    cands.sort()
    for base in cands:
        ok = True
        for (k, o), live in zip(group, lives):
            lo = base + o
            hi = lo + buffers[k].size
            for p in live:
                if lo < p.offset + p.size and p.offset < hi:
                    ok = False
                    break
            if not ok:
                break
        if ok:
            return base
    return cands[-1]  # (not reached: above every placed buffer, it fits)


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


def plan_model(model, total=True, conv=True):
    """Plan every activation of a model.Model into one arena.

    Returns (arena_bytes, buffers, root): buffers maps the root tensor
    index of each alias group to its Buffer; root is alias_roots(model).
    total=False: the buffers only, not placed (arena_bytes 0: the
    allocator plans them at the end of its sizing pass, with the scratch
    buffers, while less is alive). conv=False: no CONV_2D's output
    overlaps its input (overlap(); Interpreter(cores=2), whose cores.py
    splits those operators by rows between the cores). Raises
    ModelError for graphs that cannot be planned.
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
    overlap(model, root, merged, conv)
    if not total:
        return 0, merged, root
    # In root-index order: MicroPython's dict order differs from CPython's.
    roots = sorted(merged)
    return plan([merged[r] for r in roots],
                links(roots, merged)), merged, root


def links(roots, buffers, out=None, at=0):
    """plan()'s links of buffers (root -> Buffer, Buffer.link set by
    overlap()) listed in the order of roots: i, j, d triples, written
    into array out from index at, or (out None) as a new array('i')."""
    if out is None:
        out = array("i", [0] * (3 * sum(
            1 for r in roots if buffers[r].link is not None)))
    for i, r in enumerate(roots):
        k = buffers[r].link
        if k is not None:
            out[at] = i
            out[at + 1] = roots.index(k[0])
            out[at + 2] = k[1]
            at += 3
    return out


def overlap(model, root, merged, conv=True):
    """Link the input buffer of each int8 CONV_2D, AVERAGE_POOL_2D and
    MAX_POOL_2D to its output's where the input's buffer dies at that
    operator (no later operator reads it; no subgraph output or
    variable: TFLM's planner too reuses a subgraph input's bytes once it
    is read, its issue 2290) and the output's starts there, so that
    plan() may let them overlap (Buffer.link).

    Their loops (conv.py's viper, Thumb and DSP ones, pooling.py's and
    max_pool.py's) write output row r = (batch b, y) only once every row
    before it is written, and from then on read only input rows from
    b * H + max(0, y * stride_h - reach) on, reach the filter's height
    less one (times the dilation: the padding above is at most that):
    so the input may start d bytes after the output where, for every r,
    the output's first r + 1 rows end before that input row starts (or
    more: d bytes or more after the output); for a 1x1 CONV_2D also
    where pixel p's input starts after pixel p + 1's output ends (see
    below). No link where another input of the operator shares x's
    bytes. (DEPTHWISE_CONV_2D goes in
    tiles of many rows, every channel in turn: linked too, the chains of
    links it would add left no tested model's plan smaller.) conv=False:
    no CONV_2D linked. Changes merged's Buffers (.link) in place.
    """
    tensors = model.tensors
    kept = set(root[i] for i in model.outputs if i >= 0)
    for t in tensors:
        if t.is_variable:
            kept.add(root[t.index])
    for op in model.operators:
        code = op.code
        if op.custom_code is not None or len(op.outputs) != 1 \
                or not op.inputs or code not in (
                    _CONV_2D, _AVERAGE_POOL_2D, _MAX_POOL_2D) \
                or code == _CONV_2D and not conv:
            continue
        x, y = op.inputs[0], op.outputs[0]
        if x < 0 or y < 0:
            continue
        rx, ry = root[x], root[y]
        # (another input that is x's bytes, e.g. a filter RESHAPEd from
        # x, would be read after the output is written over them)
        if [i for i in op.inputs[1:] if i >= 0 and root[i] == rx]:
            continue
        bx, by = merged.get(rx), merged.get(ry)
        tx, ty = tensors[x], tensors[y]
        if (bx is None or by is None or rx == ry or rx in kept
                or bx.link is not None or bx.last != op.index
                or by.first != op.index or tx.type != _INT8
                or ty.type != _INT8 or len(tx.shape) != 4
                or len(ty.shape) != 4):
            continue
        B, H, W, C = tx.shape
        b2, OH, OW, OC = ty.shape
        if code == _CONV_2D:
            w = op.inputs[1] if len(op.inputs) > 1 else -1
            f = tensors[w].shape if w >= 0 else ()
            if len(f) != 4:
                continue
            sh = op.opt_int(_CONV2D_STRIDE_H, 0)
            reach = op.opt_int(_CONV2D_DILATION_H_FACTOR, 1) * (f[1] - 1)
        else:
            sh = op.opt_int(_POOL2D_STRIDE_H, 0)
            reach = op.opt_int(_POOL2D_FILTER_HEIGHT, 0) - 1
        if (b2 != B or sh < 1 or reach < 0
                or min(H, W, C, OH, OW, OC) < 1):
            continue
        d = gap(B, H, OH, sh, reach, W * C, OW * OC)
        n = B * H * W
        if code == _CONV_2D and f[1] == 1 and f[2] == 1 and n > 1 and \
                sh == 1 and op.opt_int(_CONV2D_STRIDE_W, 0) == 1:
            # a 1x1 filter at stride 1 makes one row of all the pixels
            # (conv.py), which thumb_dsp.pixels takes in pairs, gathering
            # a pair's first pixel again after writing both pixels'
            # outputs where a value is beyond its fast path: pixel p's
            # input then starts after pixel p + 1's output ends (more
            # than gap's rows ask only where W is 1)
            d = max(d, 2 * OC, n * OC - (n - 2) * C)
        bx.link = (ry, align_up(d))


def gap(B, H, OH, sh, reach, ri, ro):
    """The least bytes from an output's start to its input's (overlap()):
    the most, over batches b and output rows y, of (b * OH + y + 1) * ro
    - (b * H + max(0, y * sh - reach)) * ri, ri and ro the bytes of an
    input and an output row, and at least -B * H * ri (the input then
    ends where the output starts). Linear in b, rising in y up to
    k = reach // sh (no row above the first read yet), linear beyond:
    taken at b 0 or B - 1 and y k, k + 1 or OH - 1 (a few terms,
    however large a forged model's shapes)."""
    k = min(reach // sh, OH - 1)
    d = -ri * B * H
    for b in (0, B - 1):
        for y in (k, min(k + 1, OH - 1), OH - 1):
            d = max(d, (b * OH + y + 1) * ro
                    - (b * H + max(0, y * sh - reach)) * ri)
    return d


def in_place(model, root, merged):
    """Give the output of each int8 INPLACE_CODES operator (ADD, SUB) the
    buffer of an input that it may overwrite: an int8 input of the
    output's shape (so no broadcast: element i of the output is computed
    from element i of that input, which the kernel reads first) whose
    buffer's lifetime ends at this operator (no later operator reads it,
    and it is no subgraph input, output or variable). The first such
    input wins.
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
