# Runs in MicroPython: the device side of host_tools/boards.py
# (measure_one), one process per model; see the comment above MEASURE
# there for its arguments and output.
import sys
import gc
import json
sys.path.insert(0, sys.argv[1])
with open(sys.argv[2]) as f:
    mods, path = (f.read().split("\n") + [""])[:2]
import micropython  # noqa: E402 (qstr_info: see boards.measure_one)


def qstrs(stage):
    print("QSTR", stage)
    micropython.qstr_info()


gc.collect()
a = gc.mem_alloc()
qstrs("start")
import tflm  # noqa: E402
gc.collect()
b = gc.mem_alloc()
qstrs("core")
r = {"bits": 64 if sys.maxsize > (1 << 32) else 32, "core": b - a}
for name in mods.split(","):
    if name:
        __import__("tflm.kernels." + name)
gc.collect()
c = gc.mem_alloc()
qstrs("kernels")
r["kernels"] = c - b
# what only construction uses (an Interpreter imports it and drops it once
# built; imported here, it stays): part of the peak, not of what is kept
for name in tflm.interpreter.CONSTRUCTION:
    # the kernels' helpers that kernels._LAZY declares (of any type) came
    # with the kernel modules that use them, if the model needs them;
    # tflm.compiled (and compiled_regions) builds compiled models only,
    # without the plain
    # construction's modules; tflm.graphs only models with subgraphs
    if ":" + name.rpartition(".")[2] + " " not in tflm.kernels._LAZY + " " \
            and name not in ("tflm.compiled", "tflm.compiled_regions",
                             "tflm.graphs"):
        __import__(name)
gc.collect()
r["construction"] = gc.mem_alloc() - c
qstrs("construction")
if path:
    with open(path, "rb") as f:
        buf = f.read()
    gc.collect()
    a = gc.mem_alloc()
    try:
        it = tflm.Interpreter(buf)
        gc.collect()
        r["total"] = gc.mem_alloc() - a
        r["arena"] = it.arena_size
        r["persistent"] = it.persistent_size
        r["ops"] = len(it.model.operators)
    except Exception as e:
        r["error"] = "%s: %s" % (type(e).__name__, e)
print(json.dumps(r))
