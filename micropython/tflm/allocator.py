"""Construction of an Interpreter: TFLM's MicroAllocator.

Imported by Interpreter() for its construction only, together with what
only construction uses (verify, planner, quant, context, and the kernels'
prepare helpers, conv_util: CONSTRUCTION in interpreter.py);
the interpreter drops them from sys.modules when it is built, so that a
board's heap gets their RAM back (function objects, module dicts, machine
code: about 11 KB on armv6m) and keeps only what invoke() and the
tensors' methods use. The next Interpreter imports them again.

Construction follows TFLM's MicroAllocator so that a board's heap, which
never moves objects, does not fragment: every size is known before any
large block is taken. A first pass parses and verifies the model, plans
the activations, and runs every kernel's prepare with a sizing context
(context.py) that records what it asks for: scratch buffers (planned into
the head with the activations, each living only during its operator) and
the bytes it keeps for eval (the tail). Everything of that pass is
dropped, and so are verify, planner and the kernels' prepare-time
helpers (quant, conv_util, gemmlowp, the *_prep modules), imported with
the kernels' code before the pass (quant, first imported there and
dropped at once, only for its names: a module's first import interns
them, blocks kept for good, which amid the pass's objects would split
the free heap); then the arena, one bytearray of head + tail,
is allocated while little else is live, and the second pass prepares
each operator for real (the kernels' prepare imports the helpers again),
parsing only that operator's tensors, and copies what it keeps into the
tail.
"""

import gc
from array import array

from micropython import const

from . import kernels
from .context import KernelContext
from .heap import pack, zeros
from .errors import (ArenaError, TFLMError, UnsupportedOpError,
                     out_of_memory)
from .interpreter import _bind, _drop, stops
from .model import Model
from .source import (allocate, arena_hint, block, free as _free,
                     open_model as _open_model, oom as _oom)

_MIN_SCRATCH = const(32)
# CONSTRUCTION[3:14] (interpreter.py) are quant, context and the kernels'
# prepare-time helpers (_drop's bits: _HELPERS); context (_CONTEXT), which
# this module holds, stays
_HELPERS = const(0x3ff8)
_CONTEXT = const(16)
# the helpers with viper code, conv_util and decode_prep (CONSTRUCTION[5],
# [13]), which _prepare keeps: each import of native code leaves a few
# bytes for good (MicroPython keeps a root pointer per load), and
# conv_util serves most kernels' prepare
_NATIVE = const(0x2020)
# Scratch requests per operator that _where has room for before the
# sizing pass (CONV_2D makes 2); more cost one reallocation.
_REQUESTS_PER_OP = const(2)
# _high: bytes left free above the sizing pass's buffer (the free heap
# outside its largest block, the holes that imports leave, is rarely
# more: a filler that does not fit costs a collection), and the
# smallest filler worth making
_FILL_SPARE = const(8192)
_FILL_MIN = const(4096)


def _scrub(a, b, c):
    """Nothing: calling it overwrites the caller's dead value-stack slots
    (see Interpreter._build)."""


def _sizing_tensor(m, i, where, dummy):
    """Tensor i parsed anew and bound for the sizing pass (None for -1):
    a constant to the model bytes, an activation (where[i] >= 0) to the
    front of the sizing buffer dummy (see _size)."""
    if i < 0:
        return None
    return _bind(m.tensor(i), min(where[i], 0), m.fb.mv, dummy)


def _get(m, i, io, views, where, head):
    """Tensor i of model m bound to its bytes (None for -1): a subgraph
    input or output from io, else parsed anew (garbage after prepare)
    with the data view that views[i] keeps (a list made before the
    loop: a dict growing there would need a new table amid the
    garbage), so that every operator's state holds the same view object
    of a tensor."""
    if i < 0:
        return None
    t = io.get(i)
    if t is not None:
        return t
    t = m.tensor(i)
    v = views[i]
    if v is None:
        v = views[i] = _bind(t, where[i], m.fb.mv, head).data
    t.data = v
    return t


def build(it, model, arena_size, had, user=None, src=None):
    """Construct Interpreter `it` from `model` (a path or a buffer; the
    arguments are checked): read, parse, verify, plan, prepare (or, for
    a compiled model read into RAM here, compiled.build). user: None, or
    the arena= buffer (a memoryview from static_arena.check; src: the
    bytearray given, or None), which then holds the arena
    (static_arena.place). Sets
    it.ram to the heap that construction kept (the code of the kernel
    modules it imported not counted). had: the CONSTRUCTION modules
    imported before (interpreter._drop); verify and planner, which the
    sizing pass is the last to use, are dropped before the arena is
    allocated (the real pass's small objects take their blocks), and
    without arena= the kernels' prepare-time helpers too. Raises
    what Interpreter documents; any exception that is not a TFLMError or
    OSError becomes one (verify.internal_error)."""
    try:
        # The attributes only the plain construction sets (a compiled
        # model's interpreter has none of them: Interpreter.__init__
        # leaves them to the class), set now: the instance's table grows
        # once, here, rather than amid the construction's objects
        it._model = it._tensors = None
        it.copied_bytes = it.persistent_size = it._n_requests = 0
        it.model_in_ram = False
        # with arena=, the construction modules now, next to this module
        # (the kernels' code comes once the plan is done: see _build)
        if user is not None:
            _helpers(it, had)
        free0 = _free()
        it._stage = "reading the model"
        buf, it.model_in_ram = _open_model(model)
        # a compiled model read into RAM (the interpreter tried those in
        # place: it.compiled is then set)
        if getattr(it, "_compiled", None) is None and \
                block(buf) is not None:
            f = _free()  # its code is not the model's (it.ram)
            from .compiled import build as built
            it._imported = f - _free()
            if built(it, buf, arena_size, user, src, free0):
                return
        it._stage = "parsing the model"
        _build(it, buf, arena_size, had, user, src)
    except TFLMError:
        raise
    except OSError:
        raise
    except MemoryError:  # verify may be gone, and the heap is short
        # (what needs less: no hint with arena=, made at boot already)
        raise out_of_memory(it._stage, arena_hint if user is None
                            else None)
    except Exception as e:  # last line of defence: see verify.py
        from . import verify
        raise verify.internal_error(e, it._stage)
    it._model = None  # parsed again on access (Interpreter.model)
    q = 0
    if user is None:
        # What the real pass imported again is not kept: dropped now.
        # quant's heap is measured: the sizing pass imported it after
        # free0, and _build took it off it._imported when it dropped it.
        q = _free()
        _drop(had | _CONTEXT, 3, 4)
        q = _free() - q if q is not None else 0
        _drop(had | _CONTEXT, 5, 14)
    free1 = _free()
    it.ram = (free0 - free1 - it._imported - q if free0 is not None
              else it.arena_size + it.persistent_size)


def _build(it, buf, arena_size, had, user, src):
    # On a board the heap never moves an object: whatever lives on is
    # made right after a gc.collect() (it then takes the lowest free
    # blocks), and whatever dies is dropped before the arena is taken.
    it._model = m = Model(buf, check=False)  # header fields only
    it._buf = buf
    # With arena= no arena block is to come: the kernels' code is made
    # once the plan is done (_size), so that the check's and the plan's
    # peaks do not come on top of it; else it is made first, lowest.
    keep = None
    if user is None:
        f = _import_kernels(it, m)
        keep = _lasting(m)  # the model's heap (it.ram), not code
        if f is not None:
            f = _free()
        # then the construction modules, above the kernels' code rather
        # than below it: dropped once the plan is done, their room joins
        # the free heap above rather than leaving a hole below (their
        # heap is not the model's: build's free0 was read before them)
        _helpers(it, had)
        if f is not None:
            it._imported += f - _free()
    it._stage = "parsing the model"
    m.check()
    g = None  # the subgraphs IF, WHILE, CALL_ONCE run (graphs.py)
    if m.num_subgraphs > 1:
        from . import graphs
        g = graphs.build(m)
        graphs = None
    it._stage = "resolving operators"
    mods = _resolve(it, user is None, g)
    it._stage = "planning the arena"
    if g is None:
        from . import verify
        verify.check_plan_size(m)
        verify = None
    # The sizing pass's throw-away buffer: as large as the largest
    # activation (larger scratch requests get a buffer of their own):
    # arena= or the model's bytes where they are as large (_custom).
    big = 0
    for t in (m.tensors if g is None else g.tensors()):
        if not t.is_const:
            big = max(big, t.nbytes)
    n = (m.n_tensors if g is None else g.n_tensors) + \
        3 * _REQUESTS_PER_OP * len(mods)
    t = None
    m.release()
    gc.collect()
    # Per tensor where its bytes are, then (operator, head offset,
    # bytes) of each scratch request: see _size. With what _where keeps
    # after the real pass (the tensors' entries) made now, low, rather
    # than as a slice amid the real pass's objects, or after the sizing
    # pass's buffer (which a stale word on the C stack may keep alive a
    # while: whatever is made after it would then split the free heap
    # the arena needs); or before the construction modules (_lasting).
    if keep is None:
        mods = tuple(mods)
        it._where = array("i", range(n))
        kept_where = zeros("i", m.n_tensors)
    else:
        it._where, kept_where = keep[0], keep[1]
        keep[:] = mods  # (shrinks in place: no new block)
        mods = keep
    keep = None
    what = "allocating the arena (its largest tensor alone)"
    skip = 0
    if user is not None:  # aligned, claimed (static_arena.place)
        from .static_arena import align
        user, skip = align(it, user, src)
    if user is not None and len(user) >= big:
        dummy = user  # whatever it holds is overwritten in static_arena.place
    elif len(m.fb.mv) >= big + 15 and not _custom(mods):
        # the model's own bytes from a 16-byte aligned one, as the
        # arena's head (kernels check a buffer's alignment): no built-in
        # prepare writes an activation or a scratch buffer in the sizing
        # pass, nor reads their values (tests/test_construction_writes.py:
        # the model's bytes stay as they were, and the sizes the same),
        # so that this pass needs no buffer of its own; not with a
        # Python custom op (tflm.register_op), whose prepare may
        from .kernels.conv_util import _low_bits
        dummy = m.fb.mv[-_low_bits(m.fb.mv) & 15:]
    else:
        free = _free()
        if free is not None and free < big:
            raise _oom(what, big, arena_hint())
        try:
            dummy = _high(big, free)
        except MemoryError:
            raise _oom(what, big, arena_hint())
    head, tail, words, mods = (_size if g is None else g.size)(
        it, mods, dummy, None if user is None else had)
    # verify and planner (their last use was in _size): not the model's
    # heap (made before build's free0, or counted in it._imported), nor
    # is what they give back;
    # without arena=, the kernels' prepare-time helpers too (quant,
    # conv_util, gemmlowp, the *_prep modules), which the sizing pass
    # used: the real pass imports each again when a
    # kernel's prepare asks for it, into the holes below the arena or
    # above it, instead of their blocks splitting the free heap the
    # arena needs. (One _drop call: another call here changes what stale
    # words the C stack keeps, and a dead block kept alive high up can
    # split the heap as well.)
    free = _free()
    _drop(had | (_CONTEXT if user is None else _HELPERS), 1, 14)
    if free is not None:
        it._imported -= _free() - free
    dummy = None
    # The _size call left dummy in a dead slot of this frame's value
    # stack, which the GC scans conservatively: a call with as many
    # arguments overwrites it (as _drop's does too), or the 16+ KB buffer
    # would stay alive until the arena is allocated (and split the heap
    # once freed).
    _scrub(0, 0, 0)
    gc.collect()
    need = head + tail + 4 * words
    if arena_size is not None and arena_size < need:
        raise ArenaError("arena of %d bytes is too small: the model "
                         "needs %d (%d head + %d tail)"
                         % (arena_size, need, head, need - head))
    it.arena_size = head
    if user is not None:
        it._stage = "placing the arena"
        from .static_arena import place
        place(it, user, head, tail, words, skip)
        it._stage = "preparing"
        (_prepare if g is None else g.prepare)(it, mods, head, tail,
                                               kept_where, had | _CONTEXT)
        return
    # Nothing is made from here until the arena is
    allocate(it, head, tail, words)
    it._stage = "preparing"
    (_prepare if g is None else g.prepare)(it, mods, head, tail, kept_where,
                                           had | _CONTEXT)

def _custom(mods):
    """Whether one of mods is no kernel module: a Python custom op
    (custom.py), or with arena= a placeholder (_resolve(load=False))."""
    t = type(kernels)
    for mod in mods:
        if type(mod) is not t:
            return True
    return False


def _lasting(m):
    """For _build without arena=, right after the kernels' code: the
    objects that live through both passes, made before the construction
    modules rather than above them (dropped after the sizing pass, their
    room then joins the free heap the arena needs instead of lying below
    these): [_where (array('i') of n_tensors + _REQUESTS_PER_OP * 3 per
    operator), kept_where (n_tensors zeros), then one slot per operator
    (for the kernel modules: the list itself, _build's mods)], sized
    from model m's header; None for a model of several subgraphs
    (graphs.py sizes them), or where they do not fit (a forged header:
    _build makes them once the model is verified, and reports it)."""
    if m.num_subgraphs > 1:
        return None
    try:
        k = [None] * (m.n_operators + 2)
        k[0] = array("i", range(m.n_tensors + 3 * _REQUESTS_PER_OP
                                * m.n_operators))
        k[1] = zeros("i", m.n_tensors)
    except MemoryError:
        return None
    return k


def _helpers(it, had):
    """Import verify, planner and conv_util (the kernels' prepare
    helpers) now rather than amid the sizing pass's objects; only
    sys.modules keeps them until _build drops them. Import quant too and
    drop it (unless had: interpreter._drop's bits) at once: a module's
    first import interns its names (qstrs, kept for good, in pools and
    chunks of chars that the heap gives when the last is full); made
    amid the sizing pass, which imports quant for most kernels' prepare,
    such a block split the free heap that the arena needs. Imported
    again there it interns nothing, and does not live through the
    parsing and the plan."""
    it._stage = "loading the construction modules"
    from . import planner, quant, verify
    from .kernels import conv_util
    del planner, quant, verify, conv_util
    _drop(had, 3, 4)  # quant (CONSTRUCTION[3])


def _high(n, free):
    """bytearray(n) placed high in the heap: a filler block takes the
    free heap below it while it is made (the GC's first fit puts a
    block at the lowest place it fits) and is dropped then (its room is
    free again at the sizing pass's first collection), so that what the
    pass makes and keeps lands below the buffer, or at the top above it,
    not amid the free heap: once the buffer goes, the free heap between
    is one block for the arena. free: the free heap (None: not known, no
    filler). MemoryError when n bytes are not free in one block."""
    k = 0 if free is None else free - n - _FILL_SPARE
    while k >= _FILL_MIN:
        try:
            filler = bytearray(k)
        except MemoryError:  # the free heap is not one block
            k -= k >> 2
            continue
        try:
            d = bytearray(n)
        except MemoryError:  # no room left above the filler
            d = None
        del filler
        if d is not None:
            return d
        k -= k >> 2
    return bytearray(n)


def _import_kernels(it, m):
    """Import the kernel modules model m uses (kernels.preload), each
    after a collection (long-lived code, packed low); it._imported grows
    by the heap they took (code, not this model's: see build). Returns
    the free heap after them (None where not known)."""
    it._stage = "importing kernels"
    before = _free()
    for code in m.used_codes():
        kernels.preload(code, m)
    for name in m.used_codes(True):  # built-in CUSTOM ops (Signal)
        kernels.preload(32, m, name)
    if m.num_subgraphs > 1:  # those IF, WHILE, CALL_ONCE may run
        from . import graphs
        graphs.preload(m)
    after = _free()
    if before is not None:
        it._imported += before - after
    return after


def _kernel(op, load=True):
    """The kernel of operator op (TFLM's op resolver): a registered
    Python custom op's object, or a kernel module (imported); with
    load=False True where there is one, nothing imported. None when
    there is none."""
    if op.custom_code is not None:
        from .custom import find
        mod = find(op.custom_code)
        if mod is not None:
            return mod
        if not load:  # a built-in one (TFLM's Signal ops)?
            return kernels.custom_module_name(op.custom_code) is not None \
                or None
        return kernels.find(op.code, op.custom_code)
    if not load:
        return kernels.module_name(op.code) is not None or None
    return kernels.find(op.code)


def _resolve(it, load=True, g=None):
    """_kernel(op, load) of each operator (of every subgraph g has:
    graphs.Graphs); UnsupportedOpError naming every operator without
    one."""
    mods, missing = [], []
    hint = ""
    for op in (it._model.operators if g is None else g.operators()):
        mod = _kernel(op, load)
        if mod is None:
            missing.append(op.label())
            if op.custom_code is not None:
                hint = "; register custom ops with tflm.register_op"
        mods.append(mod)
    if missing:
        raise UnsupportedOpError("no kernel for " + ", ".join(missing)
                                 + hint)
    return mods

def _size(it, mods, dummy, late=None):
    """The sizing pass (see the module doc): returns (head bytes, tail
    bytes, tail words, the kernel modules: with late (arena=: the
    CONSTRUCTION modules imported before, as _build's had), imported
    here once the plan is made; else mods) and fills _where: per tensor
    its head offset (-1: none, <= -2: constant at -2 - w in the model),
    then per scratch request its operator, head offset and bytes
    (negative: a work buffer).
    dummy: a buffer as large as the largest activation, which planned
    activations are bound to (prepare keeps views of them but never
    reads or writes their values: the model's bytes, arena=, or a
    throw-away one). The parsed tensor list lives only while the
    activations are planned; each operator's prepare then gets its own
    tensors, parsed anew. What this pass makes is garbage when it
    returns, but _where and with late the kernel modules."""
    m = it._model
    tensors = it._tensors = m.tensors
    dummy = memoryview(dummy)
    mv = m.fb.mv
    from . import planner, verify  # dropped when this returns
    _, buffers, groups = planner.plan_model(
        m, False, getattr(it, "_split", None) is None)
    where = it._where
    for t in tensors:
        r = tensors[groups[t.index]]
        if r.is_const:
            where[t.index] = -2 - r.const_pos
        else:  # the root tensor of its alias group, for now
            where[t.index] = r.index if r.index in buffers else -1
        _bind(t, min(where[t.index], 0), mv, dummy)  # as _sizing_tensor
    verify.check_bindings(it, groups)
    nt = len(tensors)
    it._tensors = tensors = groups = t = r = None
    m.release()
    pack()  # what lives on in this pass is made low from here on
    # each planned group: root, bytes, first and last operator; then
    # planner.links's triples (one array: another small object living
    # through the pass, made here, can split the heap that the kernels'
    # code needs with arena=)
    roots = sorted(buffers)
    nr = n = 4 * len(roots)
    for r in roots:
        if buffers[r].link is not None:
            n += 3
    life = array("i", range(n))
    planner.links(roots, buffers, life, nr)
    for j, r in enumerate(roots):
        b = buffers[r]
        life[4 * j] = r
        life[4 * j + 1] = b.size
        life[4 * j + 2] = b.first
        life[4 * j + 3] = b.last
    buffers = b = None
    pack()
    if late is not None:  # arena=: the kernels' code now (see _build),
        # in the room of the verifier too, whose last use was above
        verify = None
        _drop(late, 1, 2)
        _import_kernels(it, m)
        it._stage = "resolving operators"
        mods = tuple([_kernel(m.operator(k)) for k in range(len(mods))])
        pack()
    ctx = KernelContext(m, offsets=where, first=nt, dummy=dummy)
    for k, mod in enumerate(mods):
        op = m.operator(k)
        it._stage = "preparing " + op.label()
        ins = [_sizing_tensor(m, i, where, dummy) for i in op.inputs]
        outs = [_sizing_tensor(m, i, where, dummy) for i in op.outputs]
        ctx.begin(k, _scratch_len(outs))
        ctx.finish(mod.prepare(op, ins, outs, ctx)[1])
        op = ins = outs = None
        pack()  # keeps what lives packed low (heap.py)
    r = getattr(ctx, "resources", None)  # kernels/resource.py: its
    if r is not None:  # variables' sizes checked
        r[-1](r)
    it._stage = "planning the arena"  # drops the last op's label
    bufs = [planner.Buffer(life[4 * j + 1], life[4 * j + 2],
                           life[4 * j + 3]) for j in range(len(roots))]
    head = plan_requests(it, bufs, ctx.sizing_requests(), nt, None,
                         life[nr:])
    planner = verify = None
    where = it._where
    offset = {}
    for j, r in enumerate(roots):
        offset[r] = bufs[j].offset
    for i in range(nt):
        if where[i] >= 0:
            where[i] = offset[where[i]]
    return head, ctx.tail_size, ctx.words_size, mods


def plan_requests(it, bufs, requests, nt, span, links=()):
    """Plan the activations' buffers bufs (planner.Buffer, one per alias
    group, in root order) and the scratch requests of the sizing pass
    (context.sizing_requests: (operator, bytes, least bytes)), each
    living during its operator (span None) or span[0][k] .. span[1][k]
    (graphs.py: the operators a subgraph's runs cover); an elastic
    request (least > 0) is planned at its least bytes, then grown into
    the room the head has (planner.grow); links: planner.plan's, among
    bufs (planner.overlap). Fills it._where's request
    entries (operator, head offset, granted bytes: negative for a work
    buffer), made longer when it has too little room; returns the
    head's bytes."""
    from . import planner
    r0 = len(bufs)
    for k, n, least in requests:
        b = planner.Buffer(least or abs(n), k if span is None else
                           span[0][k], k if span is None else span[1][k])
        if least:
            b.want = abs(n)
        bufs.append(b)
    head = planner.plan(bufs, links)
    planner.grow(bufs, head)
    where = it._where
    need = nt + 3 * len(requests)
    if need > len(where):  # more requests than _REQUESTS_PER_OP
        it._where = where = array("i", list(where) + [0] * (
            need - len(where)))
    for q, (k, n, _) in enumerate(requests):
        b = bufs[r0 + q]
        where[nt + 3 * q] = k
        where[nt + 3 * q + 1] = b.offset
        where[nt + 3 * q + 2] = -b.size if n < 0 else b.size
    it._n_requests = len(requests)
    return head


def _scratch_len(ts):
    """Words of scratch for an operator with outputs ts: twice the
    largest last dimension of its non-constant outputs, at least
    _MIN_SCRATCH (kernels work in chunks of what they get: a
    FULLY_CONNECTED layer with 640 inputs and 128 units takes 256)."""
    n = _MIN_SCRATCH
    for t in ts:
        if t is not None and not t.is_const and t.shape:
            n = max(n, 2 * t.shape[-1])
    return n

def _prepare(it, mods, head, tail, kept_where, had):
    """The real pass: each operator's tensors parsed on their own,
    prepared with views of the arena, kept arrays copied to the tail.
    kept_where: array('i') of n_tensors words, where _where's tensor
    entries are copied at the end. had: interpreter._drop's bits of the
    CONSTRUCTION modules to keep: before the first operator of each
    kernel (but the first) the prepare-time helpers that earlier
    kernels imported are dropped (but _NATIVE's; each prepare imports
    what it uses, which later ones of the same kernel find), so that
    the pass's peak holds one kind's helpers, not all (SOFTMAX's, last
    in most models, came on top of the convolutions' and the pools')."""
    m = it._model
    mv = memoryview(it.arena)
    hv = mv[:head]
    model_mv = m.fb.mv
    where = it._where
    ctx = KernelContext(m, hv, where, mv[head:], m.n_tensors,
                        it._n_requests, words=it._words)
    io = {}
    for i in m.inputs + m.outputs:
        if i not in io:
            io[i] = _bind(m.tensor(i), where[i], model_mv, hv)
    it.inputs = [io[i] for i in m.inputs]
    it.outputs = [io[i] for i in m.outputs]
    views = [None] * m.n_tensors
    # steps: eval function and state of each operator that runs, one
    # after the other in one list (no tuple per step)
    steps = [None] * (2 * len(mods))
    ran = array("i", range(len(mods)))
    n = 0
    for k, mod in enumerate(mods):
        j = 0  # the first operator of its kernel?
        while j < k and mods[j] is not mod:
            j += 1
        if j and j == k:
            _drop(had | _NATIVE, 3, 14)
        op = m.operator(k)
        it._stage = "preparing %s, with the %d-byte arena allocated" % (
            op.label(), len(it.arena))
        ins = [_get(m, i, io, views, where, hv) for i in op.inputs]
        outs = [_get(m, i, io, views, where, hv) for i in op.outputs]
        ctx.begin(k, _scratch_len(outs))
        fn, state = mod.prepare(op, ins, outs, ctx)
        state = ctx.finish(state)
        if fn is not None:
            steps[2 * n] = fn
            steps[2 * n + 1] = state
            ran[n] = k
            n += 1
        op = ins = outs = state = None
        pack()
    del steps[2 * n:]
    it.copied_bytes = ctx.copied_bytes
    if ctx.held:  # heap arrays that packed states point to
        it._held_bufs = ctx.held
    it._states = ctx.states or None  # reset() zeroes them
    it._variables = ctx.variables or None  # and sets these
    it.persistent_size = tail + 4 * len(it._words) + ctx.spilled
    # For invoke(profile=True): the operator index of each step, and
    # per-step microseconds plus the total (last slot), preallocated.
    it._prof_ops = ran[:n]
    it._prof_us = array("i", range(n + 1))
    it._steps = steps
    if stops(steps):
        it._stops = True
    # Only the tensors' entries are needed from now on (`tensors`).
    for i in range(len(kept_where)):
        kept_where[i] = where[i]
    it._where = kept_where
    ctx = where = None
    pack()
