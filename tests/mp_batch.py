"""Many models in one MicroPython process: the device side of the kernel
tests (test_kernels_misc, test_ops_*). Much faster than a process per
model, and every model runs the way a board runs it.

run_on_device(cases, tmp_path, scratch=None): cases is a list of
(model bytes, input sets), an input set being a list of numpy arrays (one
per model input). Model k starts k % 4 bytes into a buffer (constants at
every alignment); each input set is written, then invoked twice under
micropython.heap_lock() (eval must allocate nothing and must not depend
on state left by the last invoke), inputs set again before each invoke.
scratch overrides the interpreter's scratch length (to exercise the
chunked paths). Returns one result per case: ("OK", [[output bytes per
output] per input set]), ("ERR", "Type message") for a model rejected at
load, or ("IERR", "Type message") for a TFLMError raised by invoke().
"""

import os

import numpy as np

from conftest import PKG, device_script
from host_tools import device

RUNNER = device_script("batch.py")


def run_on_device(cases, tmp_path, scratch=None):
    """See the module docstring."""
    d = str(tmp_path)
    for k, (raw, sets) in enumerate(cases):
        pre = os.path.join(d, "%d" % k)
        with open(pre + ".tflite", "wb") as f:
            f.write(raw)
        for j, ins in enumerate(sets):
            for i, x in enumerate(ins):
                with open("%s.in%d_%d" % (pre, j, i), "wb") as f:
                    f.write(np.ascontiguousarray(x).tobytes())
            open("%s.set%d" % (pre, j), "wb").close()
    script = os.path.join(d, "mp_batch_runner.py")
    with open(script, "w") as f:
        f.write(RUNNER)
    args = [PKG, d, str(len(cases))] + ([str(scratch)] if scratch else [])
    proc = device.run_script(script, args, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    status = {}
    for line in proc.stdout.splitlines():
        parts = line.split(" ", 2)
        if parts[0] in ("OK", "ERR", "IERR"):
            status[int(parts[1])] = parts
    out = []
    for k, (_, sets) in enumerate(cases):
        st = status.get(k)
        assert st is not None, "case %d did not run:\n%s" % (k, proc.stdout)
        if st[0] != "OK":
            out.append((st[0], st[2]))
            continue
        pre = os.path.join(d, "%d" % k)
        got = []
        for j in range(len(sets)):
            outs, i = [], 0
            while os.path.exists("%s.out%d_%d" % (pre, j, i)):
                with open("%s.out%d_%d" % (pre, j, i), "rb") as f:
                    outs.append(f.read())
                i += 1
            got.append(outs)
        out.append(("OK", got))
    return out
