"""`python -m host_tools flash-image`: models for an rp2 board's flash.

A stock RPI_PICO firmware (MicroPython 1.25-1.29) keeps its code in the
first 640 KiB of the 2 MiB flash and littlefs in the other 1,408 KiB
(MICROPY_HW_FLASH_STORAGE_BYTES); the firmware image is about 340 KB, so
some 300 KB in between are erased and unused. This tool lays models out
there (tflm/flashimage.py describes the image: models, then a table and a
footer that end exactly where the file system starts) and writes them as a
UF2 file. The boot ROM's USB drive (hold BOOTSEL while plugging the board
in, then copy the file onto RPI-RP2) or `picotool load -x` writes only the
256-byte blocks a UF2 names, at the addresses it names: firmware and file
system stay as they are. On the board, tflm.flash_model(name) is then a view
of the model in flash: nothing is read into RAM.

The firmware's size differs between versions, so the tool needs to know
where the one on the board ends: --firmware FILE.uf2 (the firmware file
flashed) or --firmware-end ADDRESS (what `hex(tflm.flashimage.layout()[0])`
prints on the board). A model set that does not fit between there
and the file system is refused, with the bytes missing. Only rp2 boards
have such a gap that a UF2 can write: an STM32 board's MicroPython keeps
its file system in internal flash sectors in the middle of the firmware's
own range and has no UF2 loader (see docs/flash-models.md).

UF2: https://github.com/microsoft/uf2 (512-byte blocks, magic numbers,
flag 0x2000 = family id present). Families: RP2040 0xe48bff56; RP2350
0xe48bff57 ("absolute": written where the addresses say, whatever the
partition table; the RP2350 datasheet, section 5.5.3).
"""

import os
import struct
import sys
import zlib

from tflm import flashimage as fi  # the layout the board reads

UF2_MAGIC0 = 0x0A324655
UF2_MAGIC1 = 0x9E5D5157
UF2_MAGIC_END = 0x0AB16F30
UF2_FLAG_FAMILY = 0x00002000
UF2_PAYLOAD = 256
FAMILIES = {"RP2040": 0xE48BFF56, "RP2350": 0xE48BFF57}
ALIGN = 16


class FlashImageError(Exception):
    """A model set or board this tool cannot make an image for (the
    message says why, and by how many bytes where that applies)."""


def image(models, end):
    """(start address, image bytes) of models = [(name, bytes)] laid out
    to end at address `end` (a multiple of 4 KB: where the file system
    starts), in the format tflm/flashimage.py reads. Raises
    FlashImageError for an empty set, a bad or repeated name (1-31 bytes
    of UTF-8, no NUL)."""
    if not models:
        raise FlashImageError("no models given")
    if end % fi.SECTOR:
        raise FlashImageError("end 0x%08x is not a 4 KB sector boundary"
                              % end)
    body = bytearray()
    entries, seen = [], set()
    for name, data in models:
        try:
            raw = name.encode()
        except UnicodeError:
            raw = b""
        if not 1 <= len(raw) < fi.NAME or b"\0" in raw or name in seen:
            raise FlashImageError("model name %r: 1-%d bytes of UTF-8, no "
                                  "NUL, each name once" % (name,
                                                           fi.NAME - 1))
        seen.add(name)
        body += b"\xff" * (-len(body) % ALIGN)
        entries.append((raw, len(body), len(data), zlib.crc32(data)))
        body += data
    table = b"".join(raw.ljust(fi.NAME, b"\0") +
                     struct.pack("<4I", off, size, crc, 0)
                     for raw, off, size, crc in entries)
    need = len(body) + len(table) + fi.FOOTER
    length = -(-need // fi.SECTOR) * fi.SECTOR
    head = fi.MAGIC + struct.pack("<5I", fi.VERSION, len(entries), length,
                                  zlib.crc32(table), end)
    footer = head + struct.pack("<I", zlib.crc32(head))
    img = body + b"\xff" * (length - need) + table + footer
    assert len(img) == length
    return end - length, bytes(img)


def uf2(data, addr, family):
    """UF2 file bytes that write data at address addr (a multiple of 256)
    in 256-byte blocks, each naming family (flag 0x2000); the last block
    is padded with 0xff."""
    if addr % UF2_PAYLOAD:
        raise FlashImageError("address 0x%08x is not 256-byte aligned"
                              % addr)
    n = -(-len(data) // UF2_PAYLOAD)
    out = bytearray()
    for k in range(n):
        chunk = data[k * UF2_PAYLOAD:(k + 1) * UF2_PAYLOAD]
        chunk = chunk + b"\xff" * (UF2_PAYLOAD - len(chunk))
        out += struct.pack("<8I", UF2_MAGIC0, UF2_MAGIC1, UF2_FLAG_FAMILY,
                           addr + k * UF2_PAYLOAD, UF2_PAYLOAD, k, n,
                           family)
        out += chunk + b"\0" * (476 - UF2_PAYLOAD)
        out += struct.pack("<I", UF2_MAGIC_END)
    return bytes(out)


UF2_FLAG_NOT_MAIN_FLASH = 0x1


def read_uf2(data):
    """[(address, payload bytes, family or None)] of a UF2 file's blocks
    (not those flagged "not main flash"). Raises FlashImageError for a
    file that is not UF2 (size, magics)."""
    if not data or len(data) % 512:
        raise FlashImageError("not a UF2 file: %d bytes is not a multiple "
                              "of 512" % len(data))
    out = []
    for k in range(0, len(data), 512):
        (m0, m1, flags, addr, size, _, _,
         fam) = struct.unpack_from("<8I", data, k)
        (mend,) = struct.unpack_from("<I", data, k + 508)
        if (m0, m1, mend) != (UF2_MAGIC0, UF2_MAGIC1, UF2_MAGIC_END) or \
                size > 476:
            raise FlashImageError("not a UF2 file: bad block at byte %d" % k)
        if flags & UF2_FLAG_NOT_MAIN_FLASH:
            continue
        out.append((addr, data[k + 32:k + 32 + size],
                    fam if flags & UF2_FLAG_FAMILY else None))
    return out


def firmware_end(path, board=None):
    """Where the firmware in a UF2 file ends: from its own pico-sdk binary
    info (as the board reads it, tflm/flashimage.py) when the file has
    it, else where its last block below the file system ends (blocks
    elsewhere, such as the RP2350's 'absolute block' near the end of the
    XIP window, are not firmware). With board, its file system start and
    a ROMFS partition are checked too. Raises FlashImageError."""
    with open(path, "rb") as f:
        blocks = read_uf2(f.read())
    limit = board_layout(board)[0] if board else fi.XIP_BASE + (16 << 20)
    code = [(a, p) for a, p, _ in blocks
            if fi.XIP_BASE <= a and a + len(p) <= limit]
    if not code:
        raise FlashImageError("%s has no blocks in flash below 0x%08x: "
                              "not this board's firmware" % (path, limit))
    top = max(a + len(p) for a, p in code)
    mem = bytearray(b"\xff" * (top - fi.XIP_BASE))
    for a, p in code:
        mem[a - fi.XIP_BASE:a - fi.XIP_BASE + len(p)] = p
    try:
        end, fs, _, romfs = fi.regions(mem, fi.XIP_BASE)
    except fi.FormatError:
        return top
    if board and fs != limit:
        raise FlashImageError(
            "%s puts the file system at 0x%08x, not at 0x%08x as %s's "
            "stock firmware: not its firmware" % (path, fs, limit,
                                                   board["id"]))
    if romfs is not None:
        raise FlashImageError(
            "%s has a ROMFS partition (0x%08x, %d bytes) below the file "
            "system: put models in ROMFS instead" % ((path,) + romfs))
    return end


def board_layout(board):
    """(file system start address, UF2 family) of a boards/<id> board, or
    FlashImageError for a board without a gap a UF2 can fill."""
    if board["mcu"] not in FAMILIES:
        raise FlashImageError(
            "%s (%s): no flash model image: only rp2 boards (RP2040, "
            "RP2350) have free flash between firmware and file system "
            "that a UF2 file can write; see docs/flash-models.md"
            % (board["id"], board["mcu"]))
    return (fi.XIP_BASE + board["flash_bytes"] - board["filesystem_bytes"],
            FAMILIES[board["mcu"]])


def build(board, models, fw_end):
    """(UF2 bytes, one line saying where the image goes and what is left)
    for models = [(name, bytes)] on a board whose firmware ends at address
    fw_end. Raises FlashImageError if they do not fit (how many bytes
    short), fw_end is not an address between the start of flash and the
    file system, a model is not a .tflite file, or the board has no gap."""
    end, family = board_layout(board)
    if not fi.XIP_BASE < fw_end <= end:
        raise FlashImageError(
            "firmware end %s is not an address in %s's flash code region "
            "(0x%08x..0x%08x]: on the board, import tflm.flashimage as f; "
            "hex(f.layout()[0])" % (_addr(fw_end), board["id"], fi.XIP_BASE,
                                    end))
    for name, data in models:
        if data[4:8] != b"TFL3":
            raise FlashImageError("model %r is not a TFLite model (no TFL3 "
                                  "identifier at byte 4)" % name)
    start, img = image(models, end)
    # the boot ROM erases whole 4 KB sectors: the firmware's last one
    # must stay out of the image
    first_free = -(-fw_end // fi.SECTOR) * fi.SECTOR
    if start < first_free:
        raise FlashImageError(
            "the models need %d bytes of flash (4 KB sectors), but between "
            "the firmware's end (0x%08x) and the file system (0x%08x) "
            "there are %d: %d bytes short" % (
                len(img), fw_end, end, max(0, end - first_free),
                first_free - start))
    note = ("%d model(s), %d bytes at 0x%08x..0x%08x; %d bytes of the gap "
            "left" % (len(models), len(img), start, end, start - first_free))
    return uf2(img, start, family), note


def _addr(n):
    return "0x%08x" % n if n >= 0 else str(n)


def address(text):
    """An address from the command line: 0x... or decimal."""
    try:
        return int(text, 0)
    except ValueError:
        raise ValueError("not an address: %r" % text)


address.__name__ = "address"


def add_parser(sub):
    p = sub.add_parser(
        "flash-image", help="models for an rp2 board's flash, as a UF2 "
                            "file (read in place by tflm.flash_model)")
    p.add_argument("models", nargs="+", metavar="MODEL[=NAME]",
                   help=".tflite files (NAME: the name on the board, "
                        "default the file name without .tflite)")
    p.add_argument("--board", required=True, help="board id (boards/<id>)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--firmware", help="the firmware .uf2 file on the board "
                                      "(where it ends)")
    g.add_argument("--firmware-end", type=address,
                   help="address where the board's firmware ends (on the "
                        "board: import tflm.flashimage as f; "
                        "hex(f.layout()[0]))")
    p.add_argument("-o", "--output", required=True, help="UF2 file to write")
    p.add_argument("--no-compile", dest="compile", action="store_false",
                   help="store the models as they are (default: compiled "
                        "for the board's arch, host_tools compile)")
    return p


def parse_models(specs):
    """[(name, bytes)] of MODEL[=NAME] arguments (a MODEL whose path has
    an '=' in it works when it is given without a name)."""
    out = []
    for spec in specs:
        if os.path.exists(spec):
            path, name = spec, ""
        else:
            path, _, name = spec.rpartition("=")
        with open(path, "rb") as f:
            data = f.read()
        if not name:
            name = os.path.basename(path)
            if name.endswith(".tflite"):
                name = name[:-7]
        out.append((name, data))
    return out


def _compiled(models, arch):
    """[(name, bytes)] models, each compiled for arch where it can be
    (host_tools.compile); prints a line per model."""
    from .compile import CompileError, arena_line, compile_model
    from .unix_port import DeviceError
    out = []
    for name, data in models:
        try:
            data, info = compile_model(data, arch)
            print("# %s compiled for %s: %s" % (name, arch,
                                                 arena_line(info)))
        except (CompileError, ValueError, DeviceError) as e:
            print("# %s not compiled (%s): the board builds it the plain "
                  "way" % (name, str(e).splitlines()[0]))
        out.append((name, data))
    return out


def main(args):
    from .boards import get_board
    board = get_board(args.board)
    try:
        fw_end = (firmware_end(args.firmware, board) if args.firmware
                  else args.firmware_end)
        plain = parse_models(args.models)
        models = plain
        if getattr(args, "compile", False):
            models = _compiled(plain, board["march"])
        try:
            data, note = build(board, models, fw_end)
        except FlashImageError as e:
            if models is plain:
                raise
            # the compiled models (their blocks) do not fit where the
            # plain ones may
            print("# the compiled models do not fit (%s): the plain ones "
                  "instead" % e)
            data, note = build(board, plain, fw_end)
    except FlashImageError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    with open(args.output, "wb") as f:
        f.write(data)
    print("# %s: %s" % (board["id"], note))
    print("# write it: hold BOOTSEL while plugging the board in, copy %s "
          "onto the RPI-RP2 (or RP2350) drive; or `picotool load -x %s`"
          % (args.output, args.output))
    print("# then at the REPL:  import tflm; tflm.flash_models()")
    return 0
