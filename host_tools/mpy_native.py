"""The RAM that a .mpy file's native code takes when a board imports it.

A port copies the machine code of every @micropython.viper / native
function (and a viper function's rodata and bss) into RAM when it imports
the .mpy, even from ROMFS (py/persistentcode.c: bytecode can run in place,
machine code is always loaded). The unix port puts that code outside the
GC heap, so gc.mem_alloc() there does not show it: this reader counts it
from the file instead, for any -march.

The format (MicroPython .mpy version 6, docs/reference/mpyfiles.rst):
header 'M', 6, feature byte (arch << 2 | sub-version), small-int bits;
an optional varuint of arch flags (feature bit 0x40); varuint counts of
qstrs and constant objects; the qstrs; the objects; then the module's raw
code, a tree: varuint kind_len (kind = low 2 bits: 0 bytecode, 1 native,
2 viper, 3 asm; bit 2: has children; length = kind_len >> 3), the code,
kind-specific fields, and the children.
"""

GC_BLOCK = 16          # bytes per GC block on a 32-bit port

_KIND_BYTECODE, _KIND_NATIVE, _KIND_VIPER, _KIND_ASM = 0, 1, 2, 3
_VIPER_RELOC, _VIPER_RODATA, _VIPER_BSS = 0x10, 0x20, 0x40
_OBJ_STR, _OBJ_BYTES, _OBJ_TUPLE = 5, 6, 10
_OBJ_SIMPLE = (0, 1, 2, 3, 4)  # fun table, None, False, True, Ellipsis


class MpyError(ValueError):
    """Not a .mpy file this reader understands (offset in the message)."""


class _Reader:
    def __init__(self, data):
        self.b = data
        self.i = 0

    def byte(self):
        if self.i >= len(self.b):
            raise MpyError("truncated .mpy at offset %d" % self.i)
        self.i += 1
        return self.b[self.i - 1]

    def skip(self, n):
        if self.i + n > len(self.b):
            raise MpyError("truncated .mpy at offset %d" % self.i)
        self.i += n

    def uint(self):
        n = 0
        while True:
            c = self.byte()
            n = (n << 7) | (c & 0x7F)
            if not c & 0x80:
                return n


def _obj(r):
    kind = r.byte()
    if kind in _OBJ_SIMPLE:
        return
    if kind == _OBJ_TUPLE:
        for _ in range(r.uint()):
            _obj(r)
        return
    r.skip(r.uint() + (kind in (_OBJ_STR, _OBJ_BYTES)))  # + terminator


def _blocks(n):
    return -(-n // GC_BLOCK) * GC_BLOCK if n else 0


def _raw_code(r, out, codes):
    flags = 0
    kind_len = r.uint()
    kind, children, n = kind_len & 3, kind_len & 4, kind_len >> 3
    if kind == _KIND_ASM:
        codes.append(bytes(r.b[r.i:r.i + n]))
    r.skip(n)
    if kind != _KIND_BYTECODE:
        ram = _blocks(n)
        if kind == _KIND_NATIVE:
            r.uint()  # prelude offset
        else:
            flags = r.uint()
            if kind == _KIND_VIPER:
                rodata = r.uint() if flags & _VIPER_RODATA else 0
                bss = r.uint() if flags & _VIPER_BSS else 0
                ram += _blocks(-(-bss // 4) * 4 + rodata)
                r.skip(rodata)
            else:  # asm: n_pos_args, type signature
                r.uint()
                r.uint()
        out.append((kind, n, ram))
    if children:
        for _ in range(r.uint()):
            _raw_code(r, out, codes)
    if kind == _KIND_VIPER and flags & _VIPER_RELOC:
        skip_relocations(r)


def skip_relocations(r):
    """Reader r past a viper function's relocation records, which follow
    its children (py/persistentcode.c: mp_native_relocate runs once the
    children are loaded)."""
    while True:
        op = r.byte()
        if op == 0xFF:
            return
        if op & 1:
            r.uint()
        op >>= 1
        if op <= 5 and op & 1:
            r.uint()


def skip_header(r):
    """Reader r (at a .mpy's start) past the header, the qstrs and the
    constant objects, to the module's raw code. Raises MpyError for
    anything but a version 6 .mpy."""
    if r.byte() != ord("M") or r.byte() != 6:
        raise MpyError("not a version 6 .mpy file")
    feature = r.byte()
    r.byte()  # small int bits
    if feature & 0x40:
        r.uint()
    n_qstr, n_obj = r.uint(), r.uint()
    for _ in range(n_qstr):
        n = r.uint()
        if not n & 1:           # else a static qstr's index
            r.skip((n >> 1) + 1)
    for _ in range(n_obj):
        _obj(r)


def native_functions(data, codes=None):
    """[(kind, code bytes, RAM bytes)] for every native, viper or asm
    function in .mpy `data` (bytes), in file order. RAM rounds each
    allocation up to whole 16-byte GC blocks (32-bit ports). codes: a
    list that gets the machine code (bytes) of each asm function
    (@micropython.asm_thumb), in file order. Raises MpyError for
    anything but a version 6 .mpy."""
    r = _Reader(data)
    skip_header(r)
    out = []
    _raw_code(r, out, [] if codes is None else codes)
    return out


def native_ram(data):
    """Bytes of RAM (whole GC blocks) that importing .mpy `data` spends
    on machine code, rodata and bss. Raises MpyError."""
    return sum(ram for _, _, ram in native_functions(data))
