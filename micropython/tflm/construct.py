"""Which construction builds an Interpreter: a compiled model in place
(a buffer, a ROMFS file) from its block (compiled.py), without the plain
construction's modules; any other model the plain way (allocator.py,
which builds a compiled model read into RAM from its block too). A
construction-only module (interpreter.CONSTRUCTION).
"""


def build(it, model, arena_size, had, arena):
    """Construct Interpreter it (see Interpreter: the arguments are
    checked there but arena=, checked here: TypeError for a bad one).
    MemoryError becomes ArenaError (errors.out_of_memory)."""
    try:
        _build(it, model, arena_size, had, arena)
    except MemoryError:
        from .errors import out_of_memory
        raise out_of_memory(it._stage)


def _build(it, model, arena_size, had, arena):
    src = None
    if arena is not None:
        from .static_arena import check
        src = arena if isinstance(arena, bytearray) else None
        arena = check(arena)
    from .source import block, open_model
    it._stage = "reading the model"
    buf = open_model(model, False)[0]
    if buf is not None:
        at = block(buf)
        if at is not None:
            it._stage = "loading the compiled models' code"
            from .compiled import build as built
            if built(it, buf, arena_size, arena, src, None, at):
                return
    # (allocator opens the model again: a view made here, before the
    # construction modules, costs a board's heap more at the peak)
    buf = None
    from .allocator import build as plain
    plain(it, model, arena_size, had, arena, src)
