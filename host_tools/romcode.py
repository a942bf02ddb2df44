"""Machine code in ROMFS, run in place: a kernel module as a stub .mpy and
a .rom file of its machine code (the board side: tflm/kernels/__init__.py,
link_code).

A board copies the machine code of every @micropython.viper and
@micropython.asm_thumb function of an imported .mpy into RAM, even from
ROMFS (py/persistentcode.c). For a Thumb image (romfs.THUMB_ARCHES) this
module rewrites each package module that has such functions at module
level:

1. its source gets a last statement, `link_code(globals(), NAMES)` from
   tflm.kernels, NAMES the module-level viper / asm_thumb functions
   ((name, kind) pairs, found with ast);
2. mpy-cross compiles it as usual;
3. split() replaces the code of each viper / asm_thumb function that is a
   direct child of the module's code (a `def` at module level) and needs
   no relocation, read-only data or bss (those stay in the .mpy) by a
   16-byte stub (`bx lr`, 2 bytes of padding, b"TFRC", its index and the
   CRC-32 of its code, uint32 little-endian), and returns the real code
   as a .rom file:

       b"TFRM", uint32 count, count x (uint32 kind, offset, size, CRC-32),
       zero padding to 16 bytes, the code (each function 16-byte aligned,
       offsets from there)

   (a stub and an entry agree on the CRC only if they come from the same
   build: the board refuses a .rom file from another one)

The image holds a module's .rom file at rom_path(its dotted name), and
puts .rom files 16-byte aligned (romfs._write_tree), so the code keeps
the alignment that mpy-cross assumed for its literal pools.
The .mpy format (version 6) is read as in mpy_native.py.
"""

import ast
import struct
import zlib

from .mpy_native import MpyError, _Reader, skip_header, skip_relocations

MAGIC = b"TFRC"
HEAD = b"TFRM"
SUFFIX = ".rom"
CODE_DIR = "tflm/_code/"  # where an image holds the .rom files
ENTRY = 16                           # bytes per .rom table entry
# A module with less machine code than this keeps it in RAM: linking
# costs its import ~0.2 M instructions on a Cortex-M0+ (opening the .rom
# file, the link call), worth it only for a few hundred bytes of RAM.
MIN_CODE = 512
STUB = b"\x70\x47\x00\x00" + MAGIC   # bx lr; padding; magic; then index
_KIND_VIPER, _KIND_ASM = 2, 3
REBOUND = 4   # native_names' flag: an import may rebind the name
_DECORATORS = {"viper": _KIND_VIPER, "asm_thumb": _KIND_ASM}
_NO_STUB = 0x70  # viper scope flags: relocations, rodata, bss


def _varuint(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def rom_path(name):
    """Where the image holds the machine code of module `name` (dotted):
    tflm/_code/<name>.rom (tflm/kernels/__init__.py's _CODE_DIR)."""
    return "%s%s%s" % (CODE_DIR, name, SUFFIX)


def native_names(source):
    """[(name, kind)] of the module-level functions of `source` (Python
    text) decorated with @micropython.viper (kind 2) or
    @micropython.asm_thumb (kind 3), including those under a module-level
    if / try; kind | REBOUND where a module-level import may rebind the
    name (conv.py's `from .conv_dsp import conv_any as _conv_any` on
    Cortex-M4: link_code then leaves alone what the name holds if it is
    not a stub). Raises ValueError if such a name is defined twice or
    assigned at module level (the stub could then outlive its name), or
    if the module calls one of its functions while it is imported (a
    native one is a stub until the module's last statement links it)."""
    tree = ast.parse(source)
    found, assigned, imported = [], set(), set()

    def walk(body):
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    imported.add((a.asname or a.name).split(".")[0])
            elif isinstance(node, (ast.For, ast.With, ast.Global)):
                for n in ast.walk(node.target if isinstance(node, ast.For)
                                  else node):
                    if isinstance(n, ast.Name):
                        assigned.add(n.id)
                assigned.update(getattr(node, "names", ()))
            elif isinstance(node, ast.FunctionDef):
                for d in node.decorator_list:
                    if (isinstance(d, ast.Attribute)
                            and isinstance(d.value, ast.Name)
                            and d.value.id == "micropython"
                            and d.attr in _DECORATORS):
                        found.append((node.name, _DECORATORS[d.attr]))
            elif isinstance(node, (ast.If, ast.Try)):
                for part in ("body", "orelse", "finalbody", "handlers"):
                    sub = getattr(node, part, [])
                    for s in sub:
                        walk(s.body if isinstance(s, ast.ExceptHandler)
                             else [s])
            elif isinstance(node, (ast.Assign, ast.AnnAssign,
                                   ast.AugAssign)):
                targets = getattr(node, "targets", None) or [node.target]
                for t in targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            assigned.add(n.id)
    walk(tree.body)
    found = [(n, k | REBOUND if n in imported else k) for n, k in found]
    names = [n for n, _ in found]
    dup = {n for n in names if names.count(n) > 1 or n in assigned}
    if dup:
        raise ValueError("native functions defined twice or reassigned: %s"
                         % ", ".join(sorted(dup)))
    # called while the module is imported: before link() they are stubs
    # (any module-level function: it might call one)
    defs = set(names) | {n.name for n in tree.body
                         if isinstance(n, ast.FunctionDef)}
    early = set()
    stack = [n for n in tree.body if not isinstance(
        n, (ast.FunctionDef, ast.ClassDef))]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) \
                and n.func.id in defs:
            early.add(n.func.id)
        stack.extend(ast.iter_child_nodes(n))
    if early and names:
        raise ValueError("functions called at import: %s"
                         % ", ".join(sorted(early)))
    return found


def linked_source(source, frm="tflm.kernels"):
    """source with the link statement appended (None if the module has
    no module-level viper or asm_thumb function); frm: the module that
    has link_code (tests: tflm.romcode)."""
    names = native_names(source)
    if not names:
        return None
    return (source.rstrip("\n") + "\n\nfrom %s import link_code as "
            "_link_code\n_link_code(globals(), %r)\ndel _link_code\n"
            % (frm, tuple(names)))


# The board side, which an image that links appends to this module's
# source (a module of its own would cost every import of it ~0.4 M
# instructions on a Cortex-M0+; other builds leave it out)
BOARD_SIDE = "tflm/romcode.py"
APPEND_TO = "tflm/kernels/__init__.py"


def board_side(path):
    """The code of tflm/romcode.py (path: its file) without its module
    docstring: what APPEND_TO gets in an image that links."""
    with open(path) as f:
        text = f.read()
    tree = ast.parse(text)
    first = tree.body[1] if ast.get_docstring(tree) else tree.body[0]
    return "".join(text.splitlines(True)[first.lineno - 1:])


def split(data):
    """(stub .mpy bytes, .rom bytes or None) for .mpy `data`: see the
    module docstring. (data, None) when no function was moved, or their
    code is under MIN_CODE bytes in all (then compile the module without
    the link statement: it would find no .rom file). Raises MpyError
    for anything but a version 6 .mpy."""
    r = _Reader(data)
    skip_header(r)
    out = bytearray(data[:r.i])
    code = bytearray()
    table = []

    def raw_code(depth):
        start = r.i
        kind_len = r.uint()
        kind, children, n = kind_len & 3, kind_len & 4, kind_len >> 3
        c0 = r.i
        r.skip(n)
        c1 = r.i
        movable = False
        flags = 0
        if kind == 1:       # native: its prelude is in the code
            r.uint()
        elif kind == _KIND_VIPER:
            flags = r.uint()
            movable = depth == 1 and not flags & _NO_STUB
            rodata = r.uint() if flags & 0x20 else 0
            if flags & 0x40:
                r.uint()
            r.skip(rodata)
        elif kind == _KIND_ASM:  # scope flags, n_pos_args, type_sig
            r.uint()
            r.uint()
            r.uint()
            movable = depth == 1
        if movable:
            code.extend(bytes(-len(code) % 16))
            crc = zlib.crc32(data[c0:c1])
            stub = STUB + struct.pack("<II", len(table), crc)
            table.append((kind, len(code), n, crc))
            code.extend(data[c0:c1])
            out.extend(_varuint(len(stub) << 3 | children | kind))
            out.extend(stub)
        else:
            out.extend(data[start:c1])
        out.extend(data[c1:r.i])
        if children:
            count = r.uint()
            out.extend(_varuint(count))
            for _ in range(count):
                raw_code(depth + 1)
        if flags & 0x10:  # viper relocations: after the children
            r0 = r.i
            skip_relocations(r)
            out.extend(data[r0:r.i])
    raw_code(0)
    if r.i != len(data):
        raise MpyError("%d bytes after the module's code" % (len(data) - r.i))
    if sum(e[2] for e in table) < MIN_CODE:
        return data, None
    head = HEAD + struct.pack("<I", len(table)) + b"".join(
        struct.pack("<IIII", *e) for e in table)
    head += bytes(-len(head) % 16)
    return bytes(out), head + bytes(code)


def join(stub, rom):
    """The .mpy that split() took apart, from its two parts: each stub's
    code replaced by its function's code in rom (for tests: split then
    join gives the same bytes)."""
    count = struct.unpack_from("<I", rom, 4)[0]
    code0 = -(-(8 + ENTRY * count) // 16) * 16
    parts, i = [], 0
    while True:
        k = stub.find(MAGIC, i)
        if k < 0:
            break
        index = struct.unpack_from("<I", stub, k + 4)[0]
        kind, off, size, _ = struct.unpack_from("<IIII", rom,
                                                8 + ENTRY * index)
        s0 = k - 4                           # the stub's first byte
        # its kind_len varuint, the 2 bytes before: 16 << 3 | flags
        assert stub[s0 - 2] == 0x81, "not a stub at %d" % s0
        flags = stub[s0 - 1] & 7
        parts.append(stub[i:s0 - 2])
        parts.append(_varuint(size << 3 | flags))
        parts.append(rom[code0 + off:code0 + off + size])
        i = k + 12
    parts.append(stub[i:])
    return b"".join(parts)
