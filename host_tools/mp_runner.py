# Runs inside the MicroPython unix port (not CPython): the device side of
# host_tools.device.run_model. Arguments:
#   pkg_dir model_path work_dir n_sets repeat offset heap_lock
# Reads work_dir/in_<set>_<input>.bin, writes work_dir/out_<set>_<output>.bin
# and prints one JSON line with arena bytes and per-invoke microseconds.
import sys
import time
import json
import gc
import micropython

pkg, model_path, work, n_sets, repeat, offset, lock = sys.argv[1:8]
sys.path.insert(0, pkg)
import tflm
from tflm import Interpreter

n_sets, repeat, offset, lock = int(n_sets), int(repeat), int(offset), int(lock)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def load_model():
    raw = read(model_path)
    if not offset:
        return raw
    # The model starts 'offset' bytes into a larger buffer (alignment test).
    big = bytearray(len(raw) + offset)
    big[offset:] = raw
    return memoryview(big)[offset:]


def invoke(interp):
    # Returns 0 on success, 1 if invoke() needed the heap.
    if lock:
        micropython.heap_lock()
        try:
            interp.invoke()
        except MemoryError:
            micropython.heap_unlock()
            return 1
        micropython.heap_unlock()
    else:
        interp.invoke()
    return 0


def main():
    model = load_model()
    gc.collect()
    before = gc.mem_alloc()
    t0 = time.ticks_us()
    try:
        interp = Interpreter(model)
    except tflm.TFLMError as e:
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
        return
    build_us = time.ticks_diff(time.ticks_us(), t0)
    gc.collect()
    heap = gc.mem_alloc() - before
    times = []
    alloc_fail = 0
    for k in range(n_sets):
        data = [read("%s/in_%d_%d.bin" % (work, k, i))
                for i in range(len(interp.inputs))]
        for r in range(repeat):
            # The arena reuses input bytes once they are consumed, as in
            # TFLM: set the inputs again before every invoke.
            for t, d in zip(interp.inputs, data):
                t.set(d)
            t0 = time.ticks_us()
            alloc_fail += invoke(interp)
            times.append(time.ticks_diff(time.ticks_us(), t0))
        for j, t in enumerate(interp.outputs):
            with open("%s/out_%d_%d.bin" % (work, k, j), "wb") as f:
                f.write(t.data)
    print(json.dumps({"arena": interp.arena_size, "us": times,
                      "persistent": interp.persistent_size,
                      "heap": heap, "build_us": build_us,
                      "copied": interp.copied_bytes,
                      "alloc_fail": alloc_fail}))


main()
