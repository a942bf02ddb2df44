# Package cost: the heap that importing tflm, then a model's kernel
# modules, keeps (host_tools/fit.py package_cost()). The package is
# imported from a ROMFS image, as on a board with ROMFS: bytecode runs in
# place, while native (viper) code, function objects, module dicts and
# qstrs are made in RAM.
# argv: ROMFS image, file of modules to import after tflm (one a line;
# kernel modules only, but for CONSTRUCTION's: what they import comes with
# them).
# Then imports what only construction uses (tflm.interpreter.CONSTRUCTION,
# the kernels' helpers that this model's kernels declare (kernels._LAZY)
# among them: an Interpreter imports those for its construction and drops
# them after).
# Then drops them and the parser, as a built interpreter does.
# Prints qstr_info() after the kernels and at rest (each after a line
# "qstr: STAGE"), then one JSON line: {"tflm": bytes, "kernels": bytes,
# "construction": bytes, "at_rest": bytes (what is left of all that),
# "after_tflm": [module names], "after_kernels": [module names],
# "at_rest_modules": [module names]}.
import gc
import json
import micropython
import sys
import uctypes
import vfs

with open(sys.argv[1], "rb") as f:
    raw = f.read()
buf = bytearray(len(raw) + 16)
k = -uctypes.addressof(buf) % 16
buf[k:k + len(raw)] = raw
del raw
vfs.mount(vfs.VfsRom(memoryview(buf)[k:]), "/rom")
sys.path.insert(0, "/rom")
with open(sys.argv[2]) as f:
    names = [n for n in f.read().split() if n.startswith("tflm.kernels.")]
gc.collect()
a0 = gc.mem_alloc()
import tflm  # noqa: E402,F401 (imported to measure what it keeps)
# the kernels' prepare helpers come and go with construction: those that
# kernels._LAZY declares (of any type) for the kernels and tensor types
# that need them (listed in names), the others (conv_util) with every
# construction
C = tflm.interpreter.CONSTRUCTION
# (tflm.static_arena: only a construction with arena= imports it;
# tflm.compiled, tflm.compiled_regions: only one of a compiled model;
# tflm.graphs: only one of a model whose subgraph 0 runs others)
only = ("tflm.static_arena", "tflm.compiled", "tflm.compiled_regions",
        "tflm.graphs")
built = [n for n in C if n not in only and (
    n in names
    or ":" + n.rpartition(".")[2] + " " not in tflm.kernels._LAZY + " ")]
names = [n for n in names if n not in C]
gc.collect()
a1 = gc.mem_alloc()
m1 = sorted(k for k in sys.modules if k.startswith("tflm"))
for name in names:
    __import__(name)
gc.collect()
a2 = gc.mem_alloc()
m2 = sorted(k for k in sys.modules if k.startswith("tflm"))
# the qstr pools now and at rest (micropython.qstr_info() prints them:
# fit.package_cost reads its n_total_bytes): the names and short strings
# of the modules imported from here on stay interned once they are
# dropped, in pools that grow in steps of a kilobyte or more
print("qstr: kernels")
micropython.qstr_info()
for name in built:
    __import__(name)
gc.collect()
a3 = gc.mem_alloc()
# then what an interpreter leaves once built: it drops those and the
# parser (tflm.interpreter.PARSE)
tflm.interpreter._drop(0, parse=True)
a4 = gc.mem_alloc()
m4 = sorted(k for k in sys.modules if k.startswith("tflm"))
print("qstr: at_rest")
micropython.qstr_info()
print(json.dumps({"tflm": a1 - a0, "kernels": a2 - a1, "construction": a3 - a2,
                  "at_rest": a4 - a0, "after_tflm": m1, "after_kernels": m2,
                  "at_rest_modules": m4}))
