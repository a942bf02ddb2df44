"""The subgraphs that IF, WHILE and CALL_ONCE run, and their arena plan.

Follows TFLM's MicroInterpreterGraph (micro_interpreter_graph.cc) and
AllocationInfoBuilder (micro_allocation_info.cc). A construction-only
module (interpreter.CONSTRUCTION), imported only for a model whose
subgraph 0 runs another subgraph.

Which subgraphs: those that subgraph 0's control-flow operators call,
transitively (IfOptions.then / else_subgraph_index, WhileOptions.cond /
body_subgraph_index, CallOnceOptions.init_subgraph_index; the schema's
default 0 when the options table is absent or of another type). A
subgraph nothing calls is neither verified nor prepared (TFLM prepares
it but never runs it: a model's other signatures). A call of subgraph 0
or of a subgraph on its own call path (recursion, which TFLM's planner
follows forever) is a ModelError, and so is a nesting deeper than
MAX_DEPTH.

Numbering: the operators of the subgraphs called, in subgraph order
(subgraph 0's first, as TFLM prepares them), get global indices (the
kernel context's operator index, the scratch requests'), and so do
their tensors (the allocator's where[]).

The plan: TFLM's allocation scopes. Every operator opens a scope; its
outputs are created there; the subgraphs it calls get their scopes
next, nested; its inputs and outputs are last used in the scope after
those, and its scratch buffers live across all of them. A subgraph's
inputs are created where it starts, its outputs live to where it ends.
A subgraph called twice is marked twice (a tensor's first scope is its
first creation, its last the last use). Tensors of different subgraphs
share bytes only where their scopes do not overlap, as in TFLM (the
then and else branches of an IF; a WHILE's cond and body, whose inputs
the WHILE copies in before each run). Variable tensors live throughout.
Unlike subgraph 0 alone (planner.in_place), no output is written over
an input.
"""

from array import array

from micropython import const

from .errors import ModelError

_IF = const(118)
_WHILE = const(119)
_CALL_ONCE = const(129)
_IF_OPTIONS = const(92)
_WHILE_OPTIONS = const(93)
_CALL_ONCE_OPTIONS = const(103)
_IF_THEN_SUBGRAPH_INDEX = const(0)
_IF_ELSE_SUBGRAPH_INDEX = const(1)
_WHILE_COND_SUBGRAPH_INDEX = const(0)
_WHILE_BODY_SUBGRAPH_INDEX = const(1)
_CALL_ONCE_INIT_SUBGRAPH_INDEX = const(0)

_MODEL_SUBGRAPHS = const(2)
_MAX_PLAN_WORK = const(1 << 17)
MAX_DEPTH = 8  # subgraphs nested in subgraphs (the planner recurses)


def callees(op):
    """The subgraph indices operator op runs, in TFLM's planning order
    (then, else; cond, body; init): () for any other operator."""
    if op.custom_code is not None:
        return ()
    c, t = op.code, op.options_type
    if c == _IF:
        if t != _IF_OPTIONS:
            return (0, 0)
        return (op.opt_int(_IF_THEN_SUBGRAPH_INDEX, 0),
                op.opt_int(_IF_ELSE_SUBGRAPH_INDEX, 0))
    if c == _WHILE:
        if t != _WHILE_OPTIONS:
            return (0, 0)
        return (op.opt_int(_WHILE_COND_SUBGRAPH_INDEX, 0),
                op.opt_int(_WHILE_BODY_SUBGRAPH_INDEX, 0))
    if c == _CALL_ONCE:
        if t != _CALL_ONCE_OPTIONS:
            return (0,)
        return (op.opt_int(_CALL_ONCE_INIT_SUBGRAPH_INDEX, 0),)
    return ()


def build(m):
    """Graphs(m) if subgraph 0 of model m (checked) has an operator that
    runs another subgraph, else None (the allocator's single subgraph)."""
    for op in m.operators:
        if callees(op):
            return Graphs(m)
    return None


def subgraph(m, s):
    """Subgraph s of model m as a model.Model of its own (the same bytes;
    header fields only: check() parses and verifies the rest)."""
    from .model import Model
    sub = Model(m.fb.mv, check=False, verified=True)
    root = sub.fb.root()
    t = root.table_at(root.vector(_MODEL_SUBGRAPHS, 4)[0], s)
    sub._sg = t.pos
    sub.n_tensors = n = t.vector(0, 4)[1]
    sub.n_operators = t.vector(3, 4)[1]
    sub.inputs = sub._indices(t, 1, n, "subgraph input")
    sub.outputs = sub._indices(t, 2, n, "subgraph output")
    sub.name = t.string(4)
    return sub


def preload(m):
    """Import the kernel modules of subgraphs 1.. of model m (the
    allocator's _import_kernels does subgraph 0's), each as
    kernels.preload does."""
    from . import kernels
    for s in range(1, m.num_subgraphs):
        sub = subgraph(m, s)
        for code in sub.used_codes():
            kernels.preload(code, sub)
        for name in sub.used_codes(True):
            kernels.preload(32, sub, name)


class Graphs:
    """The subgraphs model m's subgraph 0 runs (m: checked, its lists
    parsed). Attributes: subs (per subgraph index: its model.Model,
    verified, or None when nothing calls it), order (the indices of
    those called, 0 first), tbase / obase (per subgraph: the global
    index of its first tensor / operator), n_tensors, n_operators
    (totals), steps (per subgraph: the list of its (eval, state) steps,
    set by the allocator's real pass), tensor (set by the allocator: a
    function (s, i) -> tensor i of subgraph s, bound for the current
    pass). Raises ModelError (see the module doc)."""

    def __init__(self, m):
        n = m.num_subgraphs
        subs = self.subs = [None] * n
        subs[0] = m
        todo = [0]
        while todo:
            s = todo.pop()
            for op in subs[s].operators:
                for c in callees(op):
                    if 0 < c < n and subs[c] is None:
                        sub = subgraph(m, c)
                        sub.check()  # parse and verify (verify.py)
                        subs[c] = sub
                        todo.append(c)
        self.order = [s for s in range(n) if subs[s] is not None]
        self.tbase = [0] * n
        self.obase = [0] * n
        nt = no = 0
        for s in self.order:
            self.tbase[s], self.obase[s] = nt, no
            nt += subs[s].n_tensors
            no += subs[s].n_operators
        self.n_tensors, self.n_operators = nt, no
        self.steps = [None] * n
        self.counts = [0] * n
        # set by the allocator for each pass: (f, args...), f(subgraph
        # model, i, *args, global index of its first tensor) -> tensor i
        # bound for that pass
        self.tensor = None
        self.base = 0  # the operator op() gave: its first tensor's index

    def op(self, g):
        """(subgraph index, its Model, global index of its first tensor,
        operator) of global operator g; sets self.base."""
        for s in reversed(self.order):
            if self.obase[s] <= g:
                sub = self.subs[s]
                self.base = self.tbase[s]
                return s, sub, self.base, sub.operator(g - self.obase[s])
        raise IndexError(g)

    def io(self, op, s, what):
        """(inputs, outputs, steps) of subgraph s, which operator op runs
        (its option `what` names s): the subgraph's input and output
        tensors bound for this pass, and the list of its (eval, state)
        steps, filled once every subgraph is prepared (a throw-away list
        in the sizing pass). PrepareError for an index out of range
        (TFLM's Prepare: index < NumSubgraphs) or 0."""
        sub = self.subs[s] if 0 < s < len(self.subs) else None
        if sub is None:
            raise _no_subgraph(op, s, what, len(self.subs))
        b = self.tbase[s]
        f = self.tensor[0]
        a = self.tensor[1:] + (b,)
        ins = [f(sub, i, *a) for i in sub.inputs]
        outs = [f(sub, i, *a) for i in sub.outputs]
        steps = self.steps[s]
        return ins, outs, [] if steps is None else steps

    def begin(self):
        """Before the real pass: the step list of each subgraph called
        (IF, WHILE, CALL_ONCE keep them in their state)."""
        for s in self.order[1:]:
            self.steps[s] = [None] * (2 * self.subs[s].n_operators)

    def keep(self, s, fn, state):
        """The real pass: a step (eval fn, state) of subgraph s > 0."""
        c = self.counts[s]
        lst = self.steps[s]
        lst[2 * c] = fn
        lst[2 * c + 1] = state
        self.counts[s] = c + 1

    def finish(self):
        """After the real pass: each step list cut to its steps (the
        same lists: the operators hold them)."""
        for s in self.order[1:]:
            del self.steps[s][2 * self.counts[s]:]
        self.tensor = None

    def operators(self):
        """Every operator called, in global order."""
        out = []
        for s in self.order:
            out += self.subs[s].operators
        return out

    def tensors(self):
        """Every tensor of the subgraphs called, in global order."""
        out = []
        for s in self.order:
            out += self.subs[s].tensors
        return out

    def release(self):
        for s in self.order:
            self.subs[s].release()

    def plan(self):
        """(buffers, root, first, last): buffers maps the global root
        tensor of each alias group to its planner.Buffer (lifetimes in
        scopes), root the global root of each tensor, first / last the
        scopes (array('i')) of each global operator, for its scratch
        buffers. Raises ModelError (planner.lifetimes' checks, per
        subgraph; a recursion; too much to plan)."""
        from . import planner
        nt = self.n_tensors
        root = list(range(nt))
        for s in self.order:
            sub, b = self.subs[s], self.tbase[s]
            planner.lifetimes(sub)  # its checks: produced before read...
            r = planner.alias_roots(sub)
            for i in range(sub.n_tensors):
                root[b + i] = b + r[i]
        t_first = array("i", [-1] * nt)
        t_last = array("i", [-1] * nt)
        o_first = array("i", [-1] * self.n_operators)
        o_last = array("i", [-1] * self.n_operators)
        scope = self._mark(0, 0, [], t_first, t_last, o_first, o_last)
        tensors = self.tensors()
        merged = {}
        for i in range(nt):
            t = tensors[i]
            if t.is_variable:
                f, e = 0, scope
            else:
                f, e = t_first[i], t_last[i]
                if e < 0 or t.is_const or t.nbytes == 0:
                    continue
                if f < 0:
                    f = e
            if t.itemsize == 0:
                raise ModelError("%s has unsupported type %s"
                                 % (t.label(), t.dtype))
            r = root[i]
            if tensors[r].is_const:
                continue
            buf = merged.get(r)
            if buf is None:
                merged[r] = planner.Buffer(t.nbytes, f, e)
            else:
                buf.size = max(buf.size, t.nbytes)
                buf.first = min(buf.first, f)
                buf.last = max(buf.last, e)
        _check_work(merged)
        return merged, root, o_first, o_last

    def _mark(self, s, scope, path, t_first, t_last, o_first, o_last):
        """TFLM's MarkAllocationLifetimes for subgraph s from scope;
        returns the last scope used."""
        if s in path:
            raise ModelError("subgraph %d runs itself (through subgraphs "
                             "%s): recursion is not supported"
                             % (s, path))
        if len(path) >= MAX_DEPTH:
            raise ModelError("subgraphs nested more than %d deep: %s"
                             % (MAX_DEPTH, path + [s]))
        path.append(s)
        sub, b, ob = self.subs[s], self.tbase[s], self.obase[s]
        for i in sub.inputs:
            if t_first[b + i] < 0:
                t_first[b + i] = scope
            t_last[b + i] = scope
        for k, op in enumerate(sub.operators):
            scope += 1
            for i in op.outputs:
                if t_first[b + i] < 0:
                    t_first[b + i] = scope
            start = scope
            for c in callees(op):
                if c == 0 or not 0 <= c < len(self.subs):
                    # 0: a recursion; out of range: the kernel says so
                    if c == 0:
                        raise ModelError("%s of subgraph %d runs subgraph "
                                         "0: recursion is not supported"
                                         % (op.label(), s))
                    continue
                scope = self._mark(c, scope + 1, path, t_first, t_last,
                                   o_first, o_last)
            for i in op.inputs:
                if i >= 0:
                    t_last[b + i] = scope
            for i in op.outputs:
                t_last[b + i] = scope
            if o_first[ob + k] < 0:
                o_first[ob + k] = start
            o_last[ob + k] = scope
        for i in sub.outputs:
            if t_first[b + i] < 0:
                t_first[b + i] = scope
            t_last[b + i] = scope
        path.pop()
        return scope

    def size(self, it, mods, dummy, late=None):
        """allocator._size for this model (see _size below)."""
        return _size(self, it, mods, dummy, late)

    def prepare(self, it, mods, head, tail, kept_where, had=0):
        """allocator._prepare for this model (see _prepare below; its
        helpers stay imported through the pass: had unused)."""
        _prepare(self, it, mods, head, tail, kept_where)

    def check_bindings(self, tensors, root):
        """verify.check_bindings over every subgraph called (tensors,
        root: global lists)."""
        for s in self.order:
            b = self.tbase[s]
            for op in self.subs[s].operators:
                for i in op.inputs + op.outputs:
                    if i < 0:
                        continue
                    t, r = tensors[b + i], tensors[root[b + i]]
                    have = None if t.data is None else len(t.data)
                    if r.is_const and r is not t:
                        have = r.const_len
                    if have != t.nbytes:
                        raise ModelError(
                            "subgraph %d: %s: %s needs %d bytes but is "
                            "bound to %s" % (s, op.label(), t.label(),
                                             t.nbytes, have))


def _no_subgraph(op, s, what, n):
    from .errors import PrepareError
    return PrepareError("%s: %s %d is not a subgraph it can run (%d "
                        "subgraph%s; subgraph 0 is the model)"
                        % (op.label(), what, s, n, "" if n == 1 else "s"))


def io(ctx, op, s, what):
    """Graphs.io of the model's graphs (ctx.graphs, set by the
    allocator), or the PrepareError of a model without subgraphs to
    run (kernels/control.py's prepare)."""
    g = getattr(ctx, "graphs", None)
    if g is None:
        raise _no_subgraph(op, s, what, 1)
    return g.io(op, s, what)


def _check_work(merged):
    """verify.check_plan_size's bound, for the scopes' lifetimes."""
    events = []
    for b in merged.values():
        events.append((b.first, 1))
        events.append((b.last + 1, -1))
    events.sort()
    live = peak = 0
    for _, d in events:
        live += d
        peak = max(peak, live)
    if len(merged) * peak > _MAX_PLAN_WORK:  # as verify's
        raise ModelError("%d activations with up to %d alive at once: too "
                         "many to plan" % (len(merged), peak))


# --- construction with subgraphs: allocator._size and _prepare's loops
# over every subgraph called (the allocator calls Graphs.size and
# Graphs.prepare for such a model, so that its own code, which every
# construction loads, stays as it is for one subgraph) ---------------


def _sizing_tensor(m, i, where, dummy, b):
    """allocator._sizing_tensor for tensor i of subgraph model m, whose
    first tensor has global index b."""
    from .interpreter import _bind
    if i < 0:
        return None
    return _bind(m.tensor(i), min(where[b + i], 0), m.fb.mv, dummy)


def _get(m, i, io, views, where, head, b):
    """allocator._get for tensor i of subgraph model m (global index of
    its first tensor b; io: subgraph 0's inputs and outputs)."""
    from .interpreter import _bind
    if i < 0:
        return None
    t = io.get(i) if b == 0 else None
    if t is not None:
        return t
    t = m.tensor(i)
    i += b
    v = views[i]
    if v is None:
        v = views[i] = _bind(t, where[i], m.fb.mv, head).data
    t.data = v
    return t


def _size(g, it, mods, dummy, late=None):
    """allocator._size over every subgraph g runs (global tensor and
    operator indices; lifetimes in scopes: Graphs.plan)."""
    from . import allocator, planner
    from .context import KernelContext
    from .heap import pack
    from .interpreter import _bind, _drop
    m = it._model
    tensors = it._tensors = g.tensors()
    dummy = memoryview(dummy)
    mv = m.fb.mv
    buffers, groups, first, last = g.plan()
    where = it._where
    for i in range(len(tensors)):
        r = groups[i]
        if tensors[r].is_const:
            where[i] = -2 - tensors[r].const_pos
        else:  # the root tensor of its alias group, for now
            where[i] = r if r in buffers else -1
        _bind(tensors[i], min(where[i], 0), mv, dummy)
    g.check_bindings(tensors, groups)
    nt = len(tensors)
    it._tensors = tensors = groups = r = None
    m.release()
    g.release()
    pack()
    roots = sorted(buffers)
    life = array("i", range(4 * len(roots)))
    for j, r in enumerate(roots):
        b = buffers[r]
        life[4 * j] = r
        life[4 * j + 1] = b.size
        life[4 * j + 2] = b.first
        life[4 * j + 3] = b.last
    buffers = b = None
    pack()
    if late is not None:  # arena=: as allocator._size
        _drop(late, 1, 2)
        allocator._import_kernels(it, m)
        it._stage = "resolving operators"
        mods = tuple([allocator._kernel(g.op(k)[3])
                      for k in range(len(mods))])
        pack()
    ctx = KernelContext(m, offsets=where, first=nt, dummy=dummy)
    ctx.graphs = g
    g.tensor = (_sizing_tensor, where, dummy)
    for k, mod in enumerate(mods):
        s, ms, b, op = g.op(k)
        it._stage = "preparing %s of subgraph %d" % (op.label(), s)
        ins = [_sizing_tensor(ms, i, where, dummy, b) for i in op.inputs]
        outs = [_sizing_tensor(ms, i, where, dummy, b)
                for i in op.outputs]
        ctx.begin(k, allocator._scratch_len(outs))
        ctx.finish(mod.prepare(op, ins, outs, ctx)[1])
        op = ins = outs = ms = None
        pack()
    g.tensor = None
    r = getattr(ctx, "resources", None)
    if r is not None:
        r[-1](r)
    it._stage = "planning the arena"
    bufs = [planner.Buffer(life[4 * j + 1], life[4 * j + 2],
                           life[4 * j + 3]) for j in range(len(roots))]
    # each request across the subgraphs its operator runs, as TFLM
    head = allocator.plan_requests(it, bufs, ctx.sizing_requests(), nt,
                                   (first, last))
    where = it._where
    offset = {}
    for j, r in enumerate(roots):
        offset[r] = bufs[j].offset
    for i in range(nt):
        if where[i] >= 0:
            where[i] = offset[where[i]]
    return head, ctx.tail_size, ctx.words_size, mods


def _prepare(g, it, mods, head, tail, kept_where):
    """allocator._prepare over every subgraph g runs: subgraph 0's steps
    are the interpreter's, those of subgraph s > 0 go to g.steps[s]."""
    from .allocator import _scratch_len
    from .context import KernelContext
    from .heap import pack
    from .errors import PrepareError
    from .interpreter import _bind, stops
    m = it._model
    mv = memoryview(it.arena)
    hv = mv[:head]
    model_mv = m.fb.mv
    where = it._where
    nt = g.n_tensors
    ctx = KernelContext(m, hv, where, mv[head:], nt,
                        it._n_requests, words=it._words)
    io = {}
    for i in m.inputs + m.outputs:
        if i not in io:
            io[i] = _bind(m.tensor(i), where[i], model_mv, hv)
    it.inputs = [io[i] for i in m.inputs]
    it.outputs = [io[i] for i in m.outputs]
    views = [None] * nt
    steps = [None] * (2 * m.n_operators)
    ran = array("i", range(m.n_operators))
    ctx.graphs = g
    g.begin()
    g.tensor = (_get, io, views, where, hv)
    n = 0
    for k, mod in enumerate(mods):
        s, ms, b, op = g.op(k)
        it._stage = "preparing %s of subgraph %d, with the %d-byte arena " \
            "allocated" % (op.label(), s, len(it.arena))
        ins = [_get(ms, i, io, views, where, hv, b) for i in op.inputs]
        outs = [_get(ms, i, io, views, where, hv, b) for i in op.outputs]
        ctx.begin(k, _scratch_len(outs))
        fn, state = mod.prepare(op, ins, outs, ctx)
        state = ctx.finish(state)
        if fn is not None and s:
            g.keep(s, fn, state)
        elif fn is not None:
            steps[2 * n] = fn
            steps[2 * n + 1] = state
            ran[n] = k
            n += 1
        op = ins = outs = state = ms = None
        pack()
    del steps[2 * n:]
    g.finish()
    it.copied_bytes = ctx.copied_bytes
    if ctx.held:  # heap arrays that packed states point to
        it._held_bufs = ctx.held
    it._states = ctx.states or None
    it._variables = ctx.variables or None
    it.persistent_size = tail + 4 * len(it._words) + ctx.spilled
    it._prof_ops = ran[:n]
    it._prof_us = array("i", range(n + 1))
    it._steps = steps
    if stops(steps):
        it._stops = True
    for s in g.steps:
        if s and stops(s):
            raise PrepareError("CIRCULAR_BUFFER in a subgraph other than "
                               "0: TFLM's abort would end the whole invoke "
                               "there; not supported here")
    for i in range(len(kept_where)):
        kept_where[i] = where[i]
    it._where = kept_where
    ctx = where = None
    pack()
