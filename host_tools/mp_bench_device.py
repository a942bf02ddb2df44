# Runs in MicroPython on a target: the device side of
# host_tools/bench_device.py, which prepends IMAGE (a ROMFS image path, for a
# target that has no /rom yet) and NAMES (the models to run).
import gc
import json
import sys
import time
try:
    import os
    os.stat("/rom/tflm")
except OSError:
    import uctypes
    import vfs
    with open(IMAGE, "rb") as f:  # noqa: F821 (prepended)
        raw = f.read()
    buf = bytearray(len(raw) + 16)
    k = -uctypes.addressof(buf) % 16
    buf[k:k + len(raw)] = raw
    raw = None
    vfs.mount(vfs.VfsRom(memoryview(buf)[k:]), "/rom")
    sys.path.insert(0, "/rom")
import tflm
def zero(interp):
    # a graph input's bytes may be reused once it is read: zero it anew
    for t in interp.inputs:
        d = t.data
        for i in range(len(d)):
            d[i] = 0
rows = None
for name in NAMES:  # noqa: F821 (prepended)
    # nothing of the previous model may stay alive (its profile rows
    # would split the heap before the next arena)
    interp = rows = None
    tflm.unload()
    gc.collect()
    interp = tflm.Interpreter("/rom/%s.tflite" % name)
    zero(interp)
    interp.invoke()
    zero(interp)
    t0 = time.ticks_us()
    interp.invoke()
    t1 = time.ticks_us()
    zero(interp)
    interp.invoke(profile=True)
    rows = interp.profile()
    print("R " + json.dumps({"name": name, "us": time.ticks_diff(t1, t0),
                             "ops": [[i, n, us] for i, n, us in rows],
                             "out": list(bytes(interp.output(0).data))}))
