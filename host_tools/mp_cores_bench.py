# Runs in MicroPython: what cores=2 (tflm/cores.py) gains, two ways.
# On a board or emulator with one core (the qemu ports: no _thread), from
# a ROMFS image holding the package and /rom/person_detect.tflite:
#   python3 /opt/mpbuild/qemu-m0/run.py --timeout 1500 --target m0-192k \
#       --romfs IMG host_tools/mp_cores_bench.py
# it builds the model with cores=1, times invoke() (T1), splits its
# operators as cores=2 does (tflm.cores.split, no thread needed), then
# times every step once, each split operator's two halves one after the
# other: the critical path of cores=2 is the other steps plus the longer
# half of each split one (handing over not counted). Where _thread runs
# threads in parallel (the unix port: `micropython host_tools/
# mp_cores_bench.py PKG_DIR MODEL [REPEATS [SPIN]]`), it also times
# invoke() with cores=1 and cores=2 (tflm.cores.SPIN = SPIN, default 0),
# interleaved, and prints their medians.
# Both models' outputs must be equal. Prints lines of `key value`.
import gc
import sys
import time

MODEL = "/rom/person_detect.tflite"
REPEATS = 0  # 0: no threaded timing
SPIN = 0
if len(sys.argv) > 2:
    sys.path.insert(0, sys.argv[1])
    MODEL = sys.argv[2]
    REPEATS = int(sys.argv[3]) if len(sys.argv) > 3 else 21
    SPIN = int(sys.argv[4]) if len(sys.argv) > 4 else 0
else:
    sys.path.insert(0, "/rom")

import tflm  # noqa: E402
from tflm import cores  # noqa: E402

ticks, diff = time.ticks_us, time.ticks_diff


def fill(it):
    d = it.input(0).data
    for i in range(len(d)):
        d[i] = (i * 7 + 3) & 255


def timed(it):
    fill(it)
    t = ticks()
    it.invoke()
    return diff(ticks(), t)


it = tflm.Interpreter(MODEL)
t1 = timed(it)
ref = bytes(it.output(0).data)
free = gc.mem_free()
n = cores.split(it)
gc.collect()
print("split", n, "of", len(it._steps) // 2, "steps")
print("ram_split", free - gc.mem_free())
fill(it)
steps = it._steps
crit = seq = 0
for k in range(0, len(steps), 2):
    s = steps[k + 1]
    if steps[k] is cores._split:
        t = ticks()
        s[0](s[1])
        a = diff(ticks(), t)
        t = ticks()
        s[0](s[2])
        b = diff(ticks(), t)
        print("op", s[3], s[4], a, b)
    else:
        t = ticks()
        steps[k](s)
        a = diff(ticks(), t)
        b = 0
    seq += a + b
    crit += max(a, b)
print("same", bytes(it.output(0).data) == ref)
print("t1_us", t1)
print("halves_in_sequence_us", seq)
print("critical_path_us", crit)
print("ratio %.3f" % (t1 / crit))
if REPEATS:
    it = None
    gc.collect()
    cores.SPIN = SPIN
    one = tflm.Interpreter(MODEL)
    two = tflm.Interpreter(MODEL, cores=2)
    ts = ([], [])
    for r in range(REPEATS):
        ts[0].append(timed(one))
        ts[1].append(timed(two))
    print("same2", bytes(one.output(0).data) == bytes(two.output(0).data))
    m = [sorted(v)[len(v) // 2] for v in ts]
    print("median_cores1_us", m[0])
    print("median_cores2_us", m[1])
    print("threaded_ratio %.3f" % (m[0] / m[1]))
