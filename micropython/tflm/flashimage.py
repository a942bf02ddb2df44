"""Models in a flash image between the firmware and the file system (rp2).

A stock RPI_PICO firmware uses the first ~340 KB of the 640 KiB code region
of its flash, and littlefs the rest of the chip; the flash in between is
erased and unused. host_tools/flash_image.py writes models there as a UF2
that the boot ROM's drive (or `picotool load`) writes in place, leaving
firmware and file system untouched. Here the board finds that image and
gives each model as a view of XIP flash, so Interpreter() reads it in place
and no model byte is copied to RAM. Imported only when used
(tflm.flash_models / tflm.flash_model).

Image layout (little-endian; the image is a whole number of 4 KB sectors
and ends exactly where the file system starts):

    start                 models, each at a multiple of 16 bytes
    end - 32 - 48 * n     table: n entries of 48 bytes: name (UTF-8,
                          NUL-padded, 32 bytes), offset from start (u32),
                          length (u32), CRC-32 (u32), 0 (u32)
    end - 32              footer: magic b'tflm-img', version 1 (u32),
                          n (u32), image length (u32), CRC-32 of the table
                          (u32), end address (u32), CRC-32 of the footer's
                          first 28 bytes (u32)

Where the firmware ends and the file system starts comes from the
firmware's own pico-sdk binary info (pico/binary_info/defs.h and
structure.h): the header (markers 0x7188ebf2 / 0xe71aa390) in the first
bytes of the image points to an array of entries, among them the binary
end (type ID_AND_INT, tag 'RP', id 0x68f465de) and MicroPython's block
device "MicroPython" (type BLOCK_DEVICE, tag 'MP': address, size).

Every function takes mem, a buffer whose byte 0 is at address base (the
XIP window on a board: uctypes.bytearray_at(0x10000000, 16 MiB), the
default on rp2; tests pass a bytearray).
"""

import struct

from micropython import const

from .errors import FormatError, TFLMError

XIP_BASE = const(0x10000000)
_XIP_SIZE = const(0x1000000)
_BI_START = const(0x7188EBF2)
_BI_END = const(0xE71AA390)
_BI_ID_AND_INT = const(5)
_BI_BLOCK_DEVICE = const(7)
_TAG_RP = const(0x5052)   # BINARY_INFO_MAKE_TAG('R', 'P')
_TAG_MP = const(0x504D)   # BINARY_INFO_MAKE_TAG('M', 'P')
_ID_BINARY_END = const(0x68F465DE)
_MAX_ENTRIES = const(1024)  # more binary info entries than any firmware
MAGIC = b"tflm-img"
VERSION = const(1)
FOOTER = const(32)
ENTRY = const(48)
NAME = const(32)
SECTOR = const(4096)


def xip():
    """(mem, base): the board's XIP flash window, read in place.
    Raises TFLMError where there is none (not an rp2 board)."""
    import sys
    if sys.platform != "rp2":
        raise TFLMError("flash model images are for rp2 boards (this is "
                        "%s); elsewhere pass mem=" % sys.platform)
    import uctypes
    return uctypes.bytearray_at(XIP_BASE, _XIP_SIZE), XIP_BASE


def _u32(mem, off):
    return struct.unpack_from("<I", mem, off)[0]


def _in(mem, base, addr, n):
    return base <= addr and addr + n <= base + len(mem)


def _cstr(mem, base, addr, limit=64):
    if not _in(mem, base, addr, 1):
        return b""
    o = addr - base
    end = o
    stop = min(len(mem), o + limit)
    while end < stop and mem[end]:
        end += 1
    return bytes(mem[o:end])


def layout(mem=None, base=XIP_BASE):
    """(firmware end, file system start, file system bytes) as addresses /
    bytes, from the firmware's binary info. Raises FormatError (naming
    what is missing) if there is no binary info, or it lacks the binary
    end or MicroPython's "MicroPython" block device."""
    return regions(mem, base)[:3]


def regions(mem=None, base=XIP_BASE):
    """layout() plus the ROMFS partition a firmware built with one has
    ((address, bytes), or None): (firmware end, file system start, file
    system bytes, romfs). Raises FormatError as layout()."""
    if mem is None:
        mem, base = xip()
    hdr = -1
    for off in range(0, min(SECTOR, len(mem) - 19), 4):
        if _u32(mem, off) == _BI_START and _u32(mem, off + 16) == _BI_END:
            hdr = off
            break
    if hdr < 0:
        raise FormatError("no pico-sdk binary info in the first 4 KB of "
                          "flash (at 0x%08x): not an rp2 firmware" % base)
    start, end = _u32(mem, hdr + 4), _u32(mem, hdr + 8)
    if not (_in(mem, base, start, end - start) and start <= end
            and end - start <= 4 * _MAX_ENTRIES and (end - start) % 4 == 0):
        raise FormatError("binary info at 0x%08x lists entries at "
                          "0x%08x..0x%08x, outside flash"
                          % (base + hdr, start, end))
    fw_end = storage = romfs = None
    for p in range(start, end, 4):
        a = _u32(mem, p - base)
        if not _in(mem, base, a, 24):
            continue  # an entry in RAM (or garbage): not one of ours
        o = a - base
        typ, tag = struct.unpack_from("<HH", mem, o)
        if typ == _BI_ID_AND_INT and tag == _TAG_RP and \
                _u32(mem, o + 4) == _ID_BINARY_END:
            fw_end = _u32(mem, o + 8)
        elif typ == _BI_BLOCK_DEVICE and tag == _TAG_MP:
            name = _cstr(mem, base, _u32(mem, o + 4))
            if name == b"MicroPython":
                storage = (_u32(mem, o + 8), _u32(mem, o + 12))
            elif name == b"ROMFS":
                romfs = (_u32(mem, o + 8), _u32(mem, o + 12))
    if fw_end is None or storage is None:
        raise FormatError("the firmware's binary info has no %s"
                          % ("binary end" if fw_end is None else
                             "'MicroPython' file system entry"))
    return fw_end, storage[0], storage[1], romfs


def _bad(msg, end):
    return FormatError("flash model image ending at 0x%08x: %s" % (end, msg))


def table(mem=None, base=XIP_BASE, end=None):
    """(image start address, [(name, address, length, crc32)]) of the
    image that ends at address end (default: where the file system
    starts, from layout(), which also checks that the firmware ends
    before the image). Raises FormatError if there is no image there, if
    it is torn (a CRC or a bound does not hold) or if the firmware has
    grown into it."""
    if mem is None:
        mem, base = xip()
    fw_end = romfs = None
    if end is None:
        fw_end, end, _, romfs = regions(mem, base)
    if not _in(mem, base, end - FOOTER, FOOTER):
        raise _bad("outside flash", end)
    f = end - base - FOOTER
    if bytes(mem[f:f + 8]) != MAGIC:
        raise FormatError(
            "no tflm model image ends at 0x%08x, where the file system "
            "starts: write one with `python -m host_tools flash-image`"
            % end)
    from binascii import crc32
    version, n, length, tcrc, at, fcrc = struct.unpack_from("<6I", mem,
                                                             f + 8)
    if crc32(mem[f:f + FOOTER - 4]) != fcrc:
        raise _bad("footer CRC mismatch (a torn write?)", end)
    if version != VERSION:
        raise _bad("version %d (this tflm reads %d)" % (version, VERSION),
                   end)
    if at != end:
        raise _bad("built to end at 0x%08x" % at, end)
    tlen = n * ENTRY
    if length % SECTOR or length < FOOTER + tlen or \
            not _in(mem, base, end - length, length):
        raise _bad("bad length %d for %d models" % (length, n), end)
    start = end - length
    if fw_end is not None and fw_end > start:
        raise FormatError(
            "the firmware (ends at 0x%08x) has grown into the model image "
            "(0x%08x..0x%08x): write the image again for this firmware"
            % (fw_end, start, end))
    if romfs is not None and romfs[0] < end and start < romfs[0] + romfs[1]:
        raise FormatError(
            "this firmware has a ROMFS partition (0x%08x, %d bytes) where "
            "the model image is: put models in ROMFS instead" % romfs)
    t = f - tlen
    if crc32(mem[t:f]) != tcrc:
        raise _bad("table CRC mismatch (a torn write?)", end)
    out = []
    free = 0  # models are in table order and do not overlap
    for k in range(n):
        e = t + k * ENTRY
        name = bytes(mem[e:e + NAME])
        i = name.find(b"\0")
        name = name[:i] if i >= 0 else name
        off, size, crc, zero = struct.unpack_from("<4I", mem, e + NAME)
        if not name or off % 16 or zero or off < free or \
                off + size > t - (end - base - length):
            raise _bad("bad table entry %d" % k, end)
        free = off + size
        try:
            name = name.decode()
        except UnicodeError:
            raise _bad("table entry %d: name is not UTF-8" % k, end)
        out.append((name, start + off, size, crc))
    return start, out


def models(mem=None, base=XIP_BASE):
    """[(name, size in bytes)] of the models in the board's flash image
    (see table() for the errors)."""
    return [(e[0], e[2]) for e in table(mem, base)[1]]


def model(name, mem=None, base=XIP_BASE, check=True):
    """A memoryview of model `name` in flash (no copy), its CRC-32
    checked first unless check=False (about 2 ms per 100 KB on an
    RP2040). Raises FormatError if the image is missing or torn, the CRC
    does not match, or no model has that name (the message lists them)."""
    if mem is None:
        mem, base = xip()
    _, entries = table(mem, base)
    for n, addr, size, crc in entries:
        if n == name:
            mv = memoryview(mem)[addr - base:addr - base + size]
            if check:
                from binascii import crc32
                if crc32(mv) != crc:
                    raise FormatError("flash model %r at 0x%08x: CRC "
                                      "mismatch (a torn write?)"
                                      % (name, addr))
            return mv
    raise FormatError("no model %r in the flash image (it has: %s)"
                      % (name, ", ".join(e[0] for e in entries) or "none"))
