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
    it._stage = "loading the construction modules"
    src = None
    if arena is not None:
        from .static_arena import check
        src = arena if isinstance(arena, bytearray) else None
        arena = check(arena)
    from .source import block, build_modules, free, open_model
    it._stage = "reading the model"
    buf = open_model(model, False)[0]
    free0 = None
    if buf is None and _names_a_block(model):
        # a compiled model in a file that is not used in place (a flash
        # file system): read into RAM here, so that it builds without
        # the plain construction's modules
        it._stage = "loading the compiled model's code"
        build_modules()  # (below the bytes, not counted in it.ram)
        it._stage = "reading the model"
        free0 = free()
        buf = open_model(model)[0]
    if buf is not None:
        at = block(buf)
        if at is not None:
            it._stage = "loading the compiled model's code"
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
    it._stage = "loading the construction modules"
    from .allocator import build as plain
    plain(it, model, arena_size, had, arena, src)


def _names_a_block(path):
    """Whether the metadata of the model file at path names a compiled
    block (compiled.NAME), read with a few 4-byte reads: the FlatBuffer's
    root table, its metadata vector (Model field 6) and each entry's
    name. False for anything else (the plain construction then reads
    and checks the file)."""
    want = b"tflm_compiled"  # compiled.NAME
    b = bytearray(4)
    try:
        with open(path, "rb") as f:
            def u(pos, n=4):
                if not 0 <= pos < 0x40000000:  # (beyond any file)
                    raise ValueError
                f.seek(pos)
                if f.readinto(b) != 4:
                    raise ValueError
                v = b[0] | b[1] << 8
                return v | b[2] << 16 | b[3] << 24 if n == 4 else v

            def field(t, k):  # table t's field k: its position, or 0
                vt = t - (u(t) ^ 0x80000000) + 0x80000000
                return t + u(vt + 4 + 2 * k, 2) if u(vt, 2) > 4 + 2 * k \
                    and u(vt + 4 + 2 * k, 2) else 0

            root = u(0)
            at = field(root, 6)
            if not at:
                return False
            vec = at + u(at)
            for k in range(min(u(vec), 64)):
                e = vec + 4 + 4 * k
                t = e + u(e)
                at = field(t, 0)
                if at:
                    s = at + u(at)
                    if u(s) == len(want):
                        f.seek(s + 4)  # (s + 4 was read: in range)
                        if f.read(len(want)) == want:
                            return True
    except (OSError, ValueError, MemoryError):
        pass
    return False
