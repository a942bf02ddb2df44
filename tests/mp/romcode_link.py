# Runs in MicroPython: the device side of tests/test_romcode.py, which
# prepends IMAGES = [(image path, module name)] and CODE = {name: hex of
# the function's machine code in the module as mpy-cross made it}. Mounts
# each image at /rom, imports its module (whose last statement links its
# stub functions to the .rom file, tflm/romcode.py) and prints one JSON
# line: [name, the bytes at the function's code pointer equal CODE[name]]
# for each function, or [module, "ImportError", message]. Never calls the
# functions: the unix port's heap is not executable.
import sys
import json
import uctypes
import vfs

word, ptr = 4, uctypes.UINT32
if sys.maxsize > 0x7FFFFFFF:
    word, ptr = 8, uctypes.UINT64
found = []
for path, mod in IMAGES:  # noqa: F821 (prepended)
    with open(path, "rb") as f:
        raw = f.read()
    buf = bytearray(len(raw) + 16)
    k = -uctypes.addressof(buf) % 16
    buf[k:k + len(raw)] = raw
    vfs.mount(vfs.VfsRom(memoryview(buf)[k:k + len(raw)]), "/rom")
    sys.path.insert(0, "/rom")
    try:
        m = __import__(mod)
        for name, code in sorted(CODE.items()):  # noqa: F821
            code = bytes.fromhex(code)
            f = getattr(m, name)
            p = uctypes.struct(id(f), {"p": 3 * word | ptr}).p
            found.append([name, uctypes.bytes_at(p, len(code)) == code])
    except ImportError as e:
        found.append([mod, "ImportError", str(e)])
    sys.path.pop(0)
    vfs.umount("/rom")
print(json.dumps(found))
