"""Reading the model and asking the heap: what both constructions use,
the plain one (allocator.py) and the compiled one (compiled.py), and the
interpreter to choose between them (a construction-only module:
interpreter.CONSTRUCTION).
"""

import gc

from micropython import const

from .errors import ArenaError, FormatError, ModelError
from .heap import zeros

_BUFFER_DATA = const(0)
_METADATA_BUFFER = const(1)
_METADATA_NAME = const(0)
_MODEL_BUFFERS = const(4)
_MODEL_METADATA = const(6)


def free():
    """Free heap bytes after a collection (MicroPython), else None."""
    gc.collect()
    f = getattr(gc, "mem_free", None)
    return f() if f is not None else None


def build_modules():
    """Import what a compiled build uses and Interpreter() drops once
    built (the parser, the kernel registry, static_arena), before the
    free heap is read for it.ram (compiled.build, construct.py): after
    tflm.unload() or an earlier construction they are not in
    sys.modules, and counted there they would be taken for the
    interpreter's."""
    from . import flatbuf, kernels, model, static_arena  # noqa: F401


def oom(what, need, hint=""):
    """ArenaError: `what` needs `need` bytes, more than the heap has (or
    than its largest free block: then hint, what avoids that, follows)."""
    have = free()
    return ArenaError("%s needs %d bytes: %s" % (
        what, need, "out of memory" if have is None else
        "%d bytes free%s" % (have, "" if have < need else
                             ", but not in one block" + hint)))


def arena_oom(need, head, plain=True):
    """ArenaError: the need-byte arena (head bytes of head) does not fit;
    plain: a plain construction's (a compiled model needs less)."""
    return oom("allocating the %d-byte arena (%d head + %d tail)"
               % (need, head, need - head), need, arena_hint(plain))


def arena_hint(plain=True):
    """What avoids an arena's "not in one block" (arena_oom; the plain
    construction's sizing pass, allocator.py, too)."""
    return (" (make the arena first at boot and pass it as arena=: "
            "docs/memory.md%s)"
            % ("; a model compiled on the host needs less" if plain
               else ""))


def allocate(it, head, tail, words, n=None):
    """it.arena = bytearray(head + tail) and it._words = words int32
    zeros (the tail's words: an array of their own, so that kernels fill
    them by index: context.persistent), after a collection; ArenaError
    (arena_oom) when they do not fit. Nothing else is made first: the
    message is formatted only on failure. n: free() as the caller just
    read it (nothing kept made since: a compiled build, compiled.py),
    else collected and read here (a board's gc.mem_free() costs a few
    hundred thousand instructions)."""
    need = head + tail + 4 * words
    it._stage = "allocating the arena"
    have = free() if n is None else n
    if have is not None and have < need:
        raise arena_oom(need, head, n is None)
    try:
        it.arena = bytearray(head + tail)
        it._words = zeros("i", words)
    except MemoryError:
        it.arena = it._words = None
        raise arena_oom(need, head, n is None)


def open_model(model, read=True):
    """(buffer, in_ram) for a path or buffer-protocol object.

    A path on a filesystem that maps files (vfs.VfsRom) is used in place
    through memoryview(file); otherwise the file is read into RAM, into
    one bytearray of the file's size (no growing read), or with
    read=False (None, False) is returned. Raises ArenaError when the
    heap has no block that large.
    """
    if not isinstance(model, str):
        return memoryview(model), False
    try:
        f = open(model, "rb")
        import os
        if os.stat(model)[0] & 0x4000:  # S_IFDIR: the unix port opens it
            f.close()
            raise OSError(21, "is a directory")  # EISDIR
    except OSError as e:  # MicroPython's says only "[Errno 2] ENOENT"
        why = " (%s)" % e.args[1] if len(e.args) > 1 else ""
        raise OSError(e.args[0], "cannot open the model file %r%s"
                      % (model, why))
    try:
        try:
            return memoryview(f), False
        except TypeError:
            if not read:
                return None, False
        n = f.seek(0, 2)
        f.seek(0)
        have = free()
        if have is not None and have < n:
            raise oom("reading %s into RAM" % model, n)
        try:
            buf = bytearray(n)
        except MemoryError:
            raise oom("reading %s into RAM" % model, n)
        if f.readinto(buf) != n:
            raise FormatError("%s: short read" % model)
        return buf, True
    finally:
        f.close()


def metadata(fb, name):
    """(byte position, bytes) of the data of the Model.metadata entry
    named name (str) in FlatBuffer fb, or None when there is none (as
    TFLM finds "OfflineMemoryAllocation": micro_allocator.cc). Reads are
    bounds-checked (FormatError); ModelError for an entry whose buffer
    index is out of range."""
    root = fb.root()
    start, n = root.vector(_MODEL_METADATA, 4)
    for k in range(n):
        md = root.table_at(start, k)
        if md.string(_METADATA_NAME) != name:
            continue
        b = md.u32(_METADATA_BUFFER)
        bstart, nb = root.vector(_MODEL_BUFFERS, 4)
        if b >= nb:
            raise ModelError("metadata %r uses buffer %d of %d"
                             % (name, b, nb))
        return root.table_at(bstart, b).vector(_BUFFER_DATA, 1)
    return None


def block(buf):
    """(position, bytes) of the compiled block (compiled.py) in model
    bytes buf, or None: none there, or bytes that are not a readable
    model (plain construction then says what is wrong)."""
    from .errors import TFLMError
    from .flatbuf import FlatBuffer
    try:
        return metadata(FlatBuffer(buf), "tflm_compiled")  # compiled.NAME
    except TFLMError:
        return None
