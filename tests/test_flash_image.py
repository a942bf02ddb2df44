"""Models in an rp2 board's flash, between firmware and file system
(host_tools/flash_image.py writes the UF2, tflm/flashimage.py reads it).

A fake 2 MiB RPI_PICO flash stands in for the board: a firmware stub with
pico-sdk binary info (the header after boot2 and the vector table, a
binary-end entry, MicroPython's "MicroPython" block device at 0x100a0000,
1408 KiB) and the UF2's blocks written where they say, as the boot ROM
does. The device module runs on the MicroPython unix port with that
buffer as its XIP window.
"""

import json
import struct
import zlib

import pytest

from conftest import device_script, run_mp, shared
from host_tools import flash_image as fx
from host_tools.boards import get_board

XIP = 0x10000000
FLASH = 2 << 20
STORAGE = XIP + (640 << 10)  # RPI_PICO: 2 MiB - 1408 KiB
KB = 1024


def fake_flash(fw_end, storage=STORAGE, info=True):
    """A 2 MiB flash (erased: 0xff) holding a firmware stub that ends at
    fw_end, with pico-sdk binary info naming fw_end and the file system
    (a littlefs-looking first block at storage)."""
    f = bytearray(b"\xff" * FLASH)
    f[0:fw_end - XIP] = bytes((i * 7) & 0xff for i in range(fw_end - XIP))
    if info:
        hdr = 0x100 + 0xC0  # after boot2 and the vector table (RP2040)
        arr, ent, name = 0x1000, 0x1100, 0x1200
        ptrs = [XIP + ent, XIP + ent + 0x40, 0x20000100]  # + one in RAM
        struct.pack_into("<5I", f, hdr, 0x7188EBF2, XIP + arr,
                         XIP + arr + 4 * len(ptrs), XIP + 0x1300,
                         0xE71AA390)
        struct.pack_into("<%dI" % len(ptrs), f, arr, *ptrs)
        # bi_binary_end: ID_AND_INT, tag 'RP', id, value
        struct.pack_into("<HHII", f, ent, 5, 0x5052, 0x68F465DE, fw_end)
        # bi_block_device: BLOCK_DEVICE, tag 'MP', name, address, size,
        # extra, flags
        struct.pack_into("<HHIIIIH", f, ent + 0x40, 7, 0x504D,
                         XIP + name, storage, XIP + FLASH - storage, 0, 3)
        f[name:name + 12] = b"MicroPython\0"
    f[storage - XIP:storage - XIP + 8] = b"\x00\x00\x00\x00littlefs"[:8]
    return f


def tflite(n, fill=1):
    """n bytes that pass for a .tflite file (the TFL3 identifier at byte
    4, which flash_image checks)."""
    return (b"\0\0\0\0TFL3" + bytes([fill]) * n)[:max(n, 8)]


def write_uf2(flash, uf2):
    """What the boot ROM does with a UF2 file: each block's payload at
    its address."""
    for addr, payload, _ in fx.read_uf2(uf2):
        flash[addr - XIP:addr - XIP + len(payload)] = payload


def test_uf2_blocks_by_hand():
    """300 bytes at 0x10056000: two 512-byte blocks, the UF2 magics,
    flag 0x2000 with the RP2040 family, consecutive addresses, numbers
    and count, the second payload padded with 0xff."""
    data = bytes(range(256)) + bytes(44)
    out = fx.uf2(data, 0x10056000, 0xE48BFF56)
    assert len(out) == 1024
    for k in range(2):
        blk = out[512 * k:512 * (k + 1)]
        assert struct.unpack_from("<8I", blk) == (
            0x0A324655, 0x9E5D5157, 0x2000, 0x10056000 + 256 * k, 256, k, 2,
            0xE48BFF56)
        assert struct.unpack_from("<I", blk, 508) == (0x0AB16F30,)
        assert blk[32 + 256:508] == bytes(476 - 256)
    assert out[32:288] == bytes(range(256))
    assert out[512 + 32:512 + 32 + 44] == bytes(44)
    assert out[512 + 32 + 44:512 + 288] == b"\xff" * 212
    with pytest.raises(fx.FlashImageError):
        fx.uf2(data, 0x10056010, 0xE48BFF56)  # not page aligned
    with pytest.raises(fx.FlashImageError):
        fx.read_uf2(out[:-1])


def test_image_layout_by_hand():
    """Two models: 16-byte aligned in order, table and footer at the end,
    whole sectors ending at the file system, CRCs of each part."""
    a, b = b"A" * 100, b"B" * 5000
    start, img = fx.image([("a", a), ("bee", b)], STORAGE)
    assert len(img) == 8192 and start == STORAGE - 8192
    assert img[0:100] == a and img[100:112] == b"\xff" * 12
    assert img[112:5112] == b
    foot = img[-32:]
    assert foot[:8] == b"tflm-img"
    ver, n, length, tcrc, end, fcrc = struct.unpack_from("<6I", foot, 8)
    assert (ver, n, length, end) == (1, 2, 8192, STORAGE)
    assert fcrc == zlib.crc32(foot[:28])
    table = img[-32 - 96:-32]
    assert tcrc == zlib.crc32(table)
    assert table[:32] == b"a".ljust(32, b"\0")
    assert struct.unpack_from("<4I", table, 32) == (0, 100, zlib.crc32(a),
                                                    0)
    assert struct.unpack_from("<4I", table, 80) == (112, 5000,
                                                    zlib.crc32(b), 0)
    for bad in ([], [("", a)], [("a", a), ("a", b)], [("x" * 32, a)]):
        with pytest.raises(fx.FlashImageError):
            fx.image(bad, STORAGE)


def test_build_refuses_what_does_not_fit():
    """person_detect (300,568 B: 74 sectors with table and footer) after
    a 340 KB firmware fits a Pico with one sector to spare; after a
    firmware 8 KB bigger it is 4 KB short, and the message says so."""
    pico = get_board("pico")
    with open(shared("person_detect", "person_detect.tflite"), "rb") as f:
        pd = [("person_detect", f.read())]
    data, note = fx.build(pico, pd, XIP + 0x55000)
    assert "303104 bytes at 0x1005b000" not in note  # sanity of the next
    assert note.startswith("1 model(s), 303104 bytes at 0x10056000"), note
    assert "4096 bytes of the gap left" in note
    assert len(data) == 303104 // 256 * 512
    with pytest.raises(fx.FlashImageError) as e:
        fx.build(pico, pd, XIP + 0x55000 + 8 * KB)
    assert "4096 bytes short" in str(e.value)
    # the firmware's last, partly used sector is never erased
    with pytest.raises(fx.FlashImageError):
        fx.build(pico, pd, XIP + 0x56001)
    with pytest.raises(fx.FlashImageError) as e:
        fx.build(get_board("pybv11"), pd, 0x08040000)
    assert "only rp2 boards" in str(e.value)


def test_pico2_family_and_layout():
    """Pico 2: the RP2350's 'absolute' family, the file system at 1 MiB
    (4 MiB flash, 3 MiB of littlefs)."""
    end, fam = fx.board_layout(get_board("pico2"))
    assert (end, fam) == (XIP + (1 << 20), 0xE48BFF57)
    data, _ = fx.build(get_board("pico2"), [("m", tflite(1000))],
                       XIP + 0x70000)
    blocks = fx.read_uf2(data)
    assert {f for _, _, f in blocks} == {0xE48BFF57}
    assert blocks[-1][0] + 256 == end


def test_firmware_end_from_uf2(tmp_path):
    fw = fx.uf2(bytes(1000), XIP, 0xE48BFF56)
    p = tmp_path / "fw.uf2"
    p.write_bytes(fw)
    assert fx.firmware_end(str(p)) == XIP + 1024  # 4 blocks of 256


DEVICE = device_script("flash_device.py")


def test_device_reads_the_image_in_place(tmp_path):
    """The UF2 written to the fake Pico's flash: layout() finds firmware
    end and file system, models() lists the image, model() is a view of
    the bytes person_detect.tflite holds, and an interpreter built on it
    gives the output it gives from RAM; the file system is untouched."""
    pd_path = shared("person_detect", "person_detect.tflite")
    with open(pd_path, "rb") as f:
        pd = f.read()
    flash = fake_flash(XIP + 0x54F3C)
    before = bytes(flash[STORAGE - XIP:])
    data, _ = fx.build(get_board("pico"), [("person_detect", pd),
                                           ("tiny", tflite(33))],
                       XIP + 0x54F3C)
    write_uf2(flash, data)
    assert bytes(flash[STORAGE - XIP:]) == before
    assert flash[:0x54F3C] == fake_flash(XIP + 0x54F3C)[:0x54F3C]
    fp = tmp_path / "flash.bin"
    fp.write_bytes(flash)
    code = "FLASH = %r\nPD = %r\n" % (str(fp), pd_path) + DEVICE
    out = json.loads(run_mp(code, tmp_path).strip().splitlines()[-1])
    assert out["layout"] == [XIP + 0x54F3C, STORAGE, FLASH - (640 << 10)]
    assert out["models"] == [["person_detect", len(pd)], ["tiny", 33]]
    assert out["same"] is True
    assert out["in_ram"] is False
    assert out["flash_out"] == out["ram_out"]
    assert "has: person_detect, tiny" in out["missing"]


BROKEN = device_script("flash_broken.py")


def test_missing_torn_and_overgrown_images(tmp_path):
    """Each way a flash image goes wrong is a FormatError saying which,
    never a wrong model: no image, a torn footer, table or model (CRC), a
    half-written UF2, a firmware grown into the image, no binary info."""
    model = tflite(10240, 7)
    fw = XIP + 0x50000
    data, _ = fx.build(get_board("pico"), [("m", model)], fw)
    start = fx.read_uf2(data)[0][0]
    cases = {}
    f = fake_flash(fw)
    cases["none"] = f
    good = fake_flash(fw)
    write_uf2(good, data)
    for name, off in (("footer_torn", STORAGE - 20),
                      ("table_torn", STORAGE - 40),
                      ("model_torn", start + 5000)):
        f = bytearray(good)
        f[off - XIP] ^= 0x10
        cases[name] = f
    f = fake_flash(fw)
    blocks = fx.read_uf2(data)
    half = fx.uf2(b"".join(p for _, p, _ in blocks[:len(blocks) // 2]),
                  start, 0xE48BFF56)
    write_uf2(f, half)
    cases["half_written"] = f
    f = fake_flash(start + 0x100)  # a bigger firmware under the image
    write_uf2(f, data)
    cases["overgrown"] = f
    f = fake_flash(fw, info=False)
    write_uf2(f, data)
    cases["no_info"] = f
    for name, f in cases.items():
        (tmp_path / name).write_bytes(f)
    out = json.loads(run_mp("NAMES = %r\nDIR = %r\n" % (sorted(cases),
                                                         str(tmp_path))
                            + BROKEN,
                            tmp_path).strip().splitlines()[-1])
    assert "no tflm model image ends at 0x100a0000" in out["none"]
    assert "footer CRC mismatch" in out["footer_torn"]
    assert "table CRC mismatch" in out["table_torn"]
    assert "flash model 'm' at 0x%08x: CRC mismatch" % start in \
        out["model_torn"]
    assert "no tflm model image" in out["half_written"]
    assert "has grown into the model image" in out["overgrown"]
    assert "no pico-sdk binary info" in out["no_info"]
    assert out["unchecked"] == len(model)


def test_deploy_flash_model_dry_run(tmp_path):
    """`deploy --flash-model` copies only the package, writes models.uf2
    (the same blocks flash_image.build makes) and prints the one step left;
    without --firmware, past the gap, or on an STM32 board it refuses
    and copies nothing."""
    import os
    import subprocess
    import sys
    from conftest import ROOT
    model = shared("person_detect", "person_detect.tflite")

    def deploy(*argv):
        return subprocess.run(
            [sys.executable, "-m", "host_tools", "deploy", "--port", "COM3",
             "--build-dir", str(tmp_path), "--dry-run"] + list(argv),
            cwd=ROOT, capture_output=True, text=True, timeout=300)

    proc = deploy("--board", "pico", "--flash-model", model, "--firmware",
                  "0x10054f3c")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cmds = [ln.split("  #")[0].split() for ln in proc.stdout.splitlines()
            if not ln.startswith("#")]
    assert [c[3:] for c in cmds] == [
        ["rm", "-r", ":tflm"],
        ["cp", "-r", os.path.join(str(tmp_path), "pico", "tflm"), ":"]]
    uf2 = os.path.join(str(tmp_path), "pico", "models.uf2")
    with open(uf2, "rb") as f, open(model, "rb") as m:
        assert f.read() == fx.build(get_board("pico"),
                                    [("person_detect", m.read())],
                                    0x10054F3C)[0]
    assert "picotool load" in proc.stdout
    assert "tflm.Interpreter(tflm.flash_model('person_detect'))" in \
        proc.stdout
    proc = deploy("--board", "pico", "--flash-model", model)
    assert proc.returncode == 2 and "needs --firmware" in proc.stderr
    proc = deploy("--board", "pico", "--flash-model", model, "--firmware",
                  "0x10058000")
    assert proc.returncode == 3 and "8192 bytes short" in proc.stderr
    assert "cp" not in proc.stdout
    proc = deploy("--board", "pybv11", "--flash-model", model,
                  "--firmware", "0x08040000")
    assert proc.returncode == 3 and "only rp2 boards" in proc.stderr


def test_make_deploy_passes_flash_arguments():
    import shutil
    import subprocess
    from conftest import ROOT
    if not shutil.which("make"):
        pytest.skip("no make")
    proc = subprocess.run(
        ["make", "-n", "--no-print-directory", "-o", ".venv/.installed",
         "deploy", "BOARD=pico", "FLASH_MODEL=m.tflite",
         "FIRMWARE=fw.uf2"], cwd=ROOT, capture_output=True, text=True)
    line = [x for x in proc.stdout.splitlines() if "host_tools" in x][-1]
    assert line.split()[-4:] == ["--flash-model", "m.tflite", "--firmware",
                                 "fw.uf2"]


def test_only_needed_leaves_flashimage_out_unless_asked():
    """`deploy --only-needed` copies flashimage.py only for a flash image
    model (it is imported only by tflm.flash_model / flash_models)."""
    from host_tools.build import needed_modules
    m = shared("hello_world_int8", "hello_world_int8.tflite")
    assert "tflm/flashimage.py" not in needed_modules([m])
    assert "tflm/flashimage.py" in needed_modules([m], flash=True)
    assert "tflm/interpreter.py" in needed_modules([m])


def test_build_refuses_a_firmware_end_outside_the_code_region():
    """A firmware end of 0, -1 or a size typed for an address would put
    the image over the firmware: refused."""
    pico = get_board("pico")
    for bad in (0, -1, 0x54F3C, XIP, STORAGE + 1):
        with pytest.raises(fx.FlashImageError) as e:
            fx.build(pico, [("m", tflite(100))], bad)
        assert "not an address in pico's flash code region" in str(e.value)
    with pytest.raises(fx.FlashImageError) as e:
        fx.build(pico, [("m", b"not a model at all")], XIP + 0x50000)
    assert "not a TFLite model" in str(e.value)


def _fw_uf2(tmp_path, flash, fw_end, extra=()):
    """A firmware .uf2 file of the first fw_end bytes of a fake flash,
    plus extra (address, payload, flags) blocks."""
    data = bytearray(fx.uf2(bytes(flash[:fw_end - XIP]), XIP, 0xE48BFF56))
    for addr, payload, flags in extra:
        blk = bytearray(fx.uf2(payload, addr, 0xE48BFF57))
        struct.pack_into("<I", blk, 8, flags)
        data += blk
    p = tmp_path / "fw.uf2"
    p.write_bytes(data)
    return str(p)


def test_firmware_end_reads_the_firmware_uf2(tmp_path):
    """The firmware .uf2's own binary info gives its end (not its last
    block's, which is padding to a 256-byte block); a block outside the
    code region (the RP2350's absolute block at 0x10ffff00) or flagged
    "not main flash" is not firmware; a firmware with a ROMFS partition
    is refused."""
    pico = get_board("pico")
    fw = XIP + 0x54F3C
    flash = fake_flash(fw)
    p = _fw_uf2(tmp_path, flash, fw, [(0x10FFFF00, bytes(256), 0xA000),
                                      (0x10200000, bytes(256), 0x2001)])
    assert fx.firmware_end(p, pico) == fw
    # without binary info: the last block in the code region
    p = _fw_uf2(tmp_path, fake_flash(fw, info=False), fw,
                [(0x10FFFF00, bytes(256), 0xA000)])
    assert fx.firmware_end(p, pico) == XIP + 0x55000
    # a ROMFS partition under the file system (a custom firmware)
    f = fake_flash(fw)
    struct.pack_into("<HHIIIIH", f, 0x1100 + 0x80, 7, 0x504D, XIP + 0x1210,
                     STORAGE - 0x20000, 0x20000, 0, 1)
    f[0x1210:0x1216] = b"ROMFS\0"
    struct.pack_into("<I", f, 0x1000 + 12, XIP + 0x1100 + 0x80)
    struct.pack_into("<I", f, 0x100 + 0xC0 + 8, XIP + 0x1000 + 16)
    p = _fw_uf2(tmp_path, f, fw)
    with pytest.raises(fx.FlashImageError) as e:
        fx.firmware_end(p, pico)
    assert "ROMFS partition" in str(e.value)


CRAFTED = device_script("flash_crafted.py")


def _crafted(entries, end=XIP + 8192):
    """An 8 KB image ending at end with raw table entries (name bytes,
    offset, size), every CRC right: only the table's content is wrong."""
    import tflm.flashimage as fi
    body = bytearray(b"\xff" * (8192 - 32 - 48 * len(entries)))
    table = b"".join(n.ljust(32, b"\0") + struct.pack("<4I", o, s, 0, 0)
                     for n, o, s in entries)
    head = fi.MAGIC + struct.pack("<5I", 1, len(entries), 8192,
                                  zlib.crc32(table), end)
    return bytes(body + table + head + struct.pack("<I", zlib.crc32(head)))


def test_crafted_tables_are_format_errors(tmp_path):
    """Tables a torn write cannot make but a crafted file can, each a
    FormatError on the board: a name that is not UTF-8, overlapping
    models, a model running into the table; and binary info whose entry
    range is not whole words."""
    cases = {"utf8": [(b"\xff", 0, 4)],
             "overlap": [(b"a", 0, 64), (b"b", 32, 64)],
             "into_table": [(b"a", 0, 8192 - 79)],
             "ok": [(b"a", 0, 64), (b"b", 64, 64)]}
    for name, entries in cases.items():
        (tmp_path / name).write_bytes(_crafted(entries))
    out = json.loads(run_mp("NAMES = %r\nDIR = %r\nEND = %d\n" % (
        sorted(cases), str(tmp_path), XIP + 8192) + CRAFTED,
                            tmp_path).strip().splitlines()[-1])
    assert out["ok"] is None
    assert "name is not UTF-8" in out["utf8"]
    assert "bad table entry 1" in out["overlap"]
    assert "bad table entry 0" in out["into_table"]
    assert "outside flash" in out["bi_range"]


def test_deploy_takes_a_decimal_firmware_end(tmp_path):
    import subprocess
    import sys
    from conftest import ROOT
    proc = subprocess.run(
        [sys.executable, "-m", "host_tools", "deploy", "--board", "pico",
         "--build-dir", str(tmp_path), "--dry-run", "--flash-model",
         shared("hello_world_int8", "hello_world_int8.tflite"),
         "--firmware", str(XIP + 0x54F3C)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "bytes of the gap left" in proc.stdout
