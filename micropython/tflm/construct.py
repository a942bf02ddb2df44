"""Which construction builds an Interpreter: a compiled model (a buffer
or a ROMFS file used in place, or a file of a flash file system read
into RAM first) from its block (compiled.py), without the plain
construction's modules; any other model the plain way (allocator.py). A
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
    from .source import block, free, open_model
    it._stage = "reading the model"
    buf = open_model(model, False)[0]
    free0 = None
    if buf is None:
        # a file that is not used in place (a flash file system): read
        # into RAM here, so that a compiled one builds without the plain
        # construction's modules (a plain one is read again after them)
        from . import flatbuf  # (block's: imported below the bytes)
        del flatbuf
        free0 = free()
        buf = open_model(model)[0]
    if buf is not None:
        at = block(buf)
        if at is not None:
            it._stage = "loading the compiled models' code"
            if free0 is None:
                from .compiled import build as built
            else:  # read into RAM (its code is not the model's)
                f = free()
                from .compiled import build as built
                it._imported += f - free()
                it.model_in_ram = True
            if built(it, buf, arena_size, arena, src, free0, at):
                return
    # (allocator opens the model again: a view made here, before the
    # construction modules, costs a board's heap more at the peak)
    buf = None
    from .allocator import build as plain
    plain(it, model, arena_size, had, arena, src)
