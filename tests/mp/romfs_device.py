# Runs in MicroPython: tests/test_romfs.py (models read in place from a
# ROMFS image; see the test for its arguments and output).
import sys
import gc
import json
import uctypes
import vfs
import micropython
img, work, n_sets = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = sys.argv[4:]
with open(img, "rb") as f:
    raw = f.read()
buf = bytearray(len(raw) + 16)
k = -uctypes.addressof(buf) % 16
buf[k:k + len(raw)] = raw
rom = memoryview(buf)[k:k + len(raw)]
base = uctypes.addressof(rom)
del raw
vfs.mount(vfs.VfsRom(rom), "/rom")
sys.path.insert(0, "/rom")
import tflm  # noqa: E402 (after /rom is mounted)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def in_file(lo, hi, mv):
    a = uctypes.addressof(mv)
    return lo <= a and a + len(mv) <= hi


def warm_up(path):
    # imports the kernel modules the model uses; in a function of its
    # own, so that no stale slot of run()'s frame keeps the garbage alive
    # (the GC scans frames conservatively)
    tflm.Interpreter(path)


def run(name):
    path = "/rom/%s.tflite" % name
    f = open(path, "rb")
    lo = uctypes.addressof(f)
    hi = lo + len(memoryview(f))
    f.close()
    rec = {"name": name, "offset": lo - base}
    try:
        warm_up(path)
        gc.collect()
        before = gc.mem_alloc()
        interp = tflm.Interpreter(path)
        gc.collect()
        rec["heap"] = gc.mem_alloc() - before
    except Exception as e:
        rec["error"] = "%s: %s" % (type(e).__name__, e)
        return rec
    rec["arena"] = interp.arena_size + interp.persistent_size
    rec["size"] = hi - lo
    rec["in_ram"] = interp.model_in_ram
    rec["model_at"] = uctypes.addressof(interp.model.fb.mv) - base
    consts = [t for t in interp.tensors if t.is_const and t.nbytes]
    rec["consts"] = len(consts)
    rec["consts_in_rom"] = sum(in_file(lo, hi, t.data) for t in consts)
    fails = 0
    for s in range(n_sets):
        for i, t in enumerate(interp.inputs):
            t.data[:] = read("%s/in_%s_%d_%d.bin" % (work, name, s, i))
        micropython.heap_lock()
        try:
            interp.invoke()
        except MemoryError:
            fails += 1
        finally:
            micropython.heap_unlock()
        for j, t in enumerate(interp.outputs):
            with open("%s/out_%s_%d_%d.bin" % (work, name, s, j), "wb") as o:
                o.write(t.data)
    rec["alloc_fail"] = fails
    return rec


for name in names:
    try:
        rec = run(name)
    except Exception as e:
        rec = {"name": name, "error": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps(rec))
    gc.collect()
print(json.dumps({"package": tflm.__file__}))
