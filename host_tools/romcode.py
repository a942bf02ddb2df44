"""Machine code in ROMFS, run in place: a kernel module as a stub .mpy and
a .rom file of its machine code (the board side: tflm/romcode.py).

A board copies the machine code of every @micropython.viper and
@micropython.asm_thumb function of an imported .mpy into RAM, even from
ROMFS (py/persistentcode.c). For a Thumb image (romfs.THUMB_ARCHES) this
module rewrites each package module that has such functions at module
level:

1. its source gets a last statement, `link(globals(), NAMES)` from
   tflm.romcode, NAMES the module-level viper / asm_thumb functions
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

The image builder puts .rom files 16-byte aligned (romfs._write_tree), so
the code keeps the alignment that mpy-cross assumed for its literal pools.
The .mpy format (version 6) is read as in mpy_native.py.
"""

import ast
import struct
import zlib

from .mpy_native import MpyError, _obj, _Reader

MAGIC = b"TFRC"
HEAD = b"TFRM"
SUFFIX = ".rom"
ENTRY = 16                           # bytes per .rom table entry
STUB = b"\x70\x47\x00\x00" + MAGIC   # bx lr; padding; magic; then index
_KIND_VIPER, _KIND_ASM = 2, 3
_DECORATORS = {"viper": _KIND_VIPER, "asm_thumb": _KIND_ASM}
_NO_STUB = 0x70  # viper scope flags: relocations, rodata, bss


def _varuint(n):
    out = [n & 0x7F]
    n >>= 7
    while n:
        out.append(0x80 | (n & 0x7F))
        n >>= 7
    return bytes(reversed(out))


def native_names(source):
    """[(name, kind)] of the module-level functions of `source` (Python
    text) decorated with @micropython.viper (kind 2) or
    @micropython.asm_thumb (kind 3), including those under a module-level
    if / try. Raises ValueError if such a name is defined twice or
    assigned at module level (the stub could then outlive its name), or
    if the module calls one of its functions while it is imported (a
    native one is a stub until the module's last statement links it)."""
    tree = ast.parse(source)
    found, assigned = [], set()

    def walk(body):
        for node in body:
            if isinstance(node, ast.FunctionDef):
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


def linked_source(source):
    """source with the link statement appended (None if the module has
    no module-level viper or asm_thumb function)."""
    names = native_names(source)
    if not names:
        return None
    return (source.rstrip("\n") + "\n\nfrom tflm.romcode import link as "
            "_romcode_link\n_romcode_link(globals(), %r)\ndel _romcode_link"
            "\n" % (tuple(names),))


def split(data):
    """(stub .mpy bytes, .rom bytes or None) for .mpy `data`: see the
    module docstring. None when no function was moved. Raises MpyError
    for anything but a version 6 .mpy."""
    r = _Reader(data)
    if r.byte() != ord("M") or r.byte() != 6:
        raise MpyError("not a version 6 .mpy file")
    feature = r.byte()
    r.byte()
    if feature & 0x40:
        r.uint()
    n_qstr, n_obj = r.uint(), r.uint()
    for _ in range(n_qstr):
        n = r.uint()
        if not n & 1:
            r.skip((n >> 1) + 1)
    for _ in range(n_obj):
        _obj(r)
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
            # (py/persistentcode.c, mp_native_relocate)
            r0 = r.i
            while True:
                op = r.byte()
                if op == 0xFF:
                    break
                if op & 1:
                    r.uint()
                op >>= 1
                if op <= 5 and op & 1:
                    r.uint()
            out.extend(data[r0:r.i])
    raw_code(0)
    if r.i != len(data):
        raise MpyError("%d bytes after the module's code" % (len(data) - r.i))
    if not table:
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
