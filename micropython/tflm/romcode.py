"""Machine code that runs from ROMFS: a kernel module's viper and
asm_thumb functions executed in place from flash, not copied to RAM.

MicroPython copies the machine code of every @micropython.viper and
@micropython.asm_thumb function into the GC heap when it imports a .mpy,
even from ROMFS (py/persistentcode.c); for a convolution model that is
10-20 KB of RAM on a Cortex-M0+. An image built by
`python -m host_tools romfs` for a Thumb arch (host_tools/romcode.py)
stores, for each such module M, a stub M.mpy whose native functions hold
16 bytes each (`bx lr`, "TFRC", their index, their code's CRC-32) and
tflm/_code/<M's dotted name>.rom, the real machine code, 16-byte aligned
in the image (a directory of its own: the kernels' directory, which every
import searches, stays as short); M.mpy ends with
`link_code(globals(), names)`, which points each function object at its
code there. Viper code finds its constants and runtime table through the
function object's module context (py/emitnative.c), so the code runs
unchanged from any address; the stubs' RAM is freed by the next GC.

Only for images built so: the unix port and `mpremote cp` installs
import plain .mpy files and never call this.

The image builder appends this file to tflm/kernels/__init__.py (where
the kernel modules import link_code from) in such an image only: a
module of its own would cost each board ~0.4 M instructions to import,
and other builds nothing at all.
"""

import sys

# Words before the code pointer in the function object (py/objfun.h):
# mp_obj_fun_bc_t {base, context, child_table, bytecode} for viper,
# mp_obj_fun_asm_t {base, n_args, fun_data, type_sig} for asm_thumb.
_VIPER, _ASM = 3, 2
_MAGIC = 0x43524654  # b"TFRC" as a little-endian word
_HEAD = b"TFRM"
_NEAR = 1 << 20  # the stub's code lies in the heap, near its function
# where the .rom files are: tflm/_code/ (appended to kernels/__init__.py:
# its package's parent's)
_CODE_DIR = globals().get("__file__", "")
_CODE_DIR = _CODE_DIR[:_CODE_DIR.rfind("/kernels/") + 1] + "_code/"


def _u32(b, i):
    # (not struct: an import of struct searches the file system first)
    return b[i] | b[i + 1] << 8 | b[i + 2] << 16 | b[i + 3] << 24


def link_code(g, names):
    """Point the stub functions of the module whose globals are g at
    their machine code in _CODE_DIR + g["__name__"] + ".rom". names:
    ((name, kind), ...), kind 2 viper, 3 asm_thumb, + 4 where an import
    may have rebound the name (what it holds is then left alone unless
    it is a stub): the module-level functions the image builder stubbed.
    Raises FormatError naming the module and what does not match (a
    missing .rom file, a damaged one (its table does not lay the code
    out as the builder does), one of another build, code not 4-byte
    aligned in memory, a function object or stub not laid out as
    expected: the image must then be built again, or with
    --code-in-ram). The code itself is trusted as an .mpy file's is: a
    .rom file damaged inside its code can crash the board.
    """
    import uctypes
    word, ptr = 4, uctypes.UINT32
    if sys.maxsize > 0x7FFFFFFF:  # (the unix port, in tests)
        word, ptr = 8, uctypes.UINT64
    # a board allocates machine code in the GC heap, near its function
    # object: a pointer elsewhere means another layout (not read); the
    # unix port maps it apart
    near = _NEAR if sys.platform not in ("linux", "darwin") else 1 << 62
    layouts = {2: {"p": word * _VIPER | ptr}, 3: {"p": word * _ASM | ptr}}
    mod = g.get("__name__", "?")
    try:
        path = _CODE_DIR + mod + ".rom"
        try:
            rom = memoryview(open(path, "rb"))
        except OSError as e:
            raise ValueError("%s: %s" % (path, e))
        base = uctypes.addressof(rom)
        n = len(rom)
        if n < 8 or bytes(rom[:4]) != _HEAD:
            raise ValueError("%s: no code table" % path)
        count = _u32(rom, 4)
        code0 = (8 + 16 * count + 15) & ~15
        if code0 > n:
            raise ValueError("%s: a table of %d entries, %d bytes"
                             % (path, count, n))
        if (base + code0) & 3:
            raise ValueError("%s: code at 0x%x, not 4-byte aligned"
                             % (path, base + code0))
        # the table: (kind, offset, size, CRC-32) words, from byte 8;
        # the builder lays the code out in table order, each function
        # 16-byte aligned, the last one ending the file: any other
        # table is damaged (code run from a wrong offset can crash)
        tab = uctypes.struct(base + 8, {
            "w": (uctypes.ARRAY | 0, uctypes.UINT32 | 4 * count)}).w
        end = 0
        for k in range(0, 4 * count, 4):
            if tab[k] not in (2, 3) or tab[k + 1] != (end + 15) & ~15:
                raise ValueError("%s: code entry %d" % (path, k >> 2))
            end = tab[k + 1] + tab[k + 2]
        if code0 + end != n:
            raise ValueError("%s: %d entries for %d bytes of code"
                             % (path, count, n - code0))
        three = {"w": (uctypes.ARRAY | 0, uctypes.UINT32 | 3)}
        kinds = {}  # type -> is it a function's (one str() per type)
        for name, kind in names:
            f = g.get(name)
            if f is None:
                continue  # (defined in a branch not taken)
            rebound = kind & 4
            kind &= 3
            t = type(f)
            ok = kinds.get(t)
            if ok is None:
                ok = kinds[t] = str(t) == "<class 'function'>"
            if not ok or kind not in layouts:
                if rebound:
                    continue
                raise ValueError("%s: not a function" % name)
            a = id(f)  # (a 32-bit port's id() loses bit 31 of some)
            a = a & sys.maxsize if a < 0 else a
            s = uctypes.struct(a, layouts[kind])
            p = s.p
            stub = None
            if not p & 3 and -near < p - a < near:
                # the stub after its 4 bytes of code: magic, index, CRC
                stub = uctypes.struct(p + 4, three).w
                if stub[0] != _MAGIC:
                    stub = None
            if stub is None:
                if rebound:
                    continue  # (another module's function now)
                raise ValueError("%s: not a stub" % name)
            if stub[1] >= count:  # (a stub left as it is does nothing)
                raise ValueError("%s: stub %d of %d entries"
                                 % (name, stub[1], count))
            k = 4 * stub[1]
            off = tab[k + 1]
            if tab[k] != kind:
                raise ValueError("%s: code entry %d" % (name, k >> 2))
            if tab[k + 3] != stub[2]:
                raise ValueError("%s: code entry %d is of another build"
                                 % (name, k >> 2))
            s.p = base + code0 + off
    except (ValueError, TypeError) as e:
        from tflm.errors import FormatError
        raise FormatError("%s: machine code in ROMFS: %s (build the image "
                          "again, or with --code-in-ram)" % (mod, e))
