"""Machine code that runs from ROMFS: a kernel module's viper and
asm_thumb functions executed in place from flash, not copied to RAM.

MicroPython copies the machine code of every @micropython.viper and
@micropython.asm_thumb function into the GC heap when it imports a .mpy,
even from ROMFS (py/persistentcode.c); for a convolution model that is
10-20 KB of RAM on a Cortex-M0+. An image built by
`python -m host_tools romfs` for a Thumb arch (host_tools/romcode.py)
stores, for each such module M, a stub M.mpy whose native functions hold
16 bytes each (`bx lr`, "TFRC", their index, their code's CRC-32) and
M.rom, the real
machine code, 16-byte aligned in the image; M.mpy ends with
`link(globals(), names)`, which points each function object at its code
in M.rom. Viper code finds its constants and runtime table through the
function object's module context (py/emitnative.c), so the code runs
unchanged from any address; the stubs' RAM is freed by the next GC.

Only for images built so: the unix port and `mpremote cp` installs
import plain .mpy files and never call this.
"""

# Words before the code pointer in the function object (py/objfun.h):
# mp_obj_fun_bc_t {base, context, child_table, bytecode} for viper,
# mp_obj_fun_asm_t {base, n_args, fun_data, type_sig} for asm_thumb.
_VIPER, _ASM = 3, 2
_MAGIC = b"TFRC"
_HEAD = b"TFRM"
_NEAR = 1 << 20  # the stub's code lies in the heap, near its function


def _u32(b, i):
    return b[i] | b[i + 1] << 8 | b[i + 2] << 16 | b[i + 3] << 24


def link(g, names):
    """Point the stub functions of the module whose globals are g at
    their machine code in the .rom file next to its .mpy (g["__file__"]
    with .rom for .mpy). names: ((name, kind), ...), kind 2 viper, 3
    asm_thumb: the module-level functions the image builder stubbed.
    Raises ImportError naming the module and what does not match (no
    __file__, a missing or damaged .rom file, code not 4-byte aligned in
    memory, a function object or stub not laid out as expected): the
    image must then be built with --code-in-ram.
    """
    import sys
    import uctypes
    word, ptr = 4, uctypes.UINT32
    if sys.maxsize > 0x7FFFFFFF:  # (the unix port, in tests)
        word, ptr = 8, uctypes.UINT64
    # a board allocates machine code in the GC heap, near its function
    # object: a pointer elsewhere means another layout (not read); the
    # unix port maps it apart
    near = _NEAR if sys.platform not in ("linux", "darwin") else 1 << 62
    mod = g.get("__name__", "?")
    try:
        path = g["__file__"]
        if not path.endswith(".mpy"):
            raise ValueError("not from a .mpy")
        path = path[:-4] + ".rom"
        try:
            rom = memoryview(open(path, "rb"))
        except OSError as e:
            raise ValueError("%s: %s" % (path, e))
        base = uctypes.addressof(rom)
        n = len(rom)
        if n < 8 or bytes(rom[:4]) != _HEAD:
            raise ValueError("no code table")
        count = _u32(rom, 4)
        code0 = (8 + 16 * count + 15) & ~15
        if code0 > n or (base + code0) & 3:
            raise ValueError("code at %d, not 4-byte aligned" % base)
        for name, kind in names:
            f = g.get(name)
            if f is None:
                continue  # (defined in a branch not taken)
            if str(type(f)) != "<class 'function'>":
                raise ValueError("%s: not a function" % name)
            s = uctypes.struct(id(f), {
                "p": word * (_VIPER if kind == 2 else _ASM) | ptr})
            p = s.p
            if p & 1 or not -near < p - id(f) < near:
                raise ValueError("%s: not a stub" % name)
            stub = uctypes.bytes_at(p + 4, 12)
            k = _u32(stub, 4)
            if stub[:4] != _MAGIC or k >= count:
                raise ValueError("%s: not a stub" % name)
            e = 8 + 16 * k
            kk, off, size = _u32(rom, e), _u32(rom, e + 4), _u32(rom, e + 8)
            if kk != kind or off & 3 or code0 + off + size > n or \
                    _u32(rom, e + 12) != _u32(stub, 8):
                raise ValueError("%s: code entry %d (another build?)"
                                 % (name, k))
            s.p = base + code0 + off
    except (KeyError, ValueError, TypeError) as e:
        raise ImportError("%s: machine code in ROMFS: %s (build the image "
                          "with --code-in-ram)" % (mod, e))
