"""Many models in one MicroPython process: the device side of the kernel
tests (test_kernels_misc, test_ops_*), run by host_tools/mp_cases.py, the
runner that conformance and the fuzzer use too. Much faster than a
process per model, and every model runs the way a board runs it.

run_on_device(cases, tmp_path, scratch=None): cases is a list of
(model bytes, input sets), an input set being a list of numpy arrays (one
per model input). Model k starts k % 4 bytes into a buffer (constants at
every alignment); each input set is written, then invoked twice under
micropython.heap_lock() (eval must allocate nothing and must not depend
on state left by the last invoke), inputs set again before each invoke.
scratch overrides the interpreter's scratch length (to exercise the
chunked paths); SETUP (code run after `import tflm`) lets a test lower a
kernel's threshold. Returns one result per case: ("OK", [[output bytes
per output] per input set]), ("ERR", "Type message") for a model rejected
at load, or ("IERR", "Type message") for a TFLMError raised by invoke();
the outputs are also written to tmp_path as <case>.out<set>_<output>.
Anything else (a crash, a hang, another exception, an invoke that
allocated) fails the calling test.
"""

import binascii
import os

import numpy as np

from host_tools import case_driver, device

SETUP = ""  # MicroPython code run after `import tflm` (test_fast_paths)


class _Case:
    def __init__(self, k, model, sets):
        self.id, self.model, self.sets, self.dev = k, model, sets, None


def run_on_device(cases, tmp_path, scratch=None):
    """See the module docstring."""
    d = str(tmp_path)
    todo = []
    for k, (raw, sets) in enumerate(cases):
        pre = os.path.join(d, "%d" % k)
        with open(pre + ".tflite", "wb") as f:
            f.write(raw)
        paths = []
        for j, ins in enumerate(sets):
            paths.append([])
            for i, x in enumerate(ins):
                p = "%s.in%d_%d" % (pre, j, i)
                with open(p, "wb") as f:
                    f.write(np.ascontiguousarray(x).tobytes())
                paths[-1].append(p)
        todo.append(_Case(k, pre + ".tflite", paths))
    flags = ["twice"] + (["scratch=%d" % scratch] if scratch else [])
    if SETUP:
        setup = os.path.join(d, "setup.py")
        with open(setup, "w") as f:
            f.write(SETUP)
        flags.append("setup=" + setup)
    case_driver.run_unix(todo, d, "batch", lambda c: c.model, 600,
                         flags=flags, heap=device.HEAP)
    out = []
    for c in todo:
        r = c.dev
        if r["r"] == "err" and r["stage"] in ("build", "invoke"):
            out.append(("ERR" if r["stage"] == "build" else "IERR",
                        "%s %s" % (r["cls"], r["msg"])))
            continue
        assert r["r"] == "ok", "case %d: %s" % (c.id, r)
        got = [[binascii.unhexlify(h) for h in outs]
               for outs in (r["sets"] if r["sets"] is not None
                            else [r["out"]])]
        for j, outs in enumerate(got):  # also as files: <k>.out<set>_<i>
            for i, b in enumerate(outs):
                with open(os.path.join(d, "%d.out%d_%d" % (c.id, j, i)),
                          "wb") as f:
                    f.write(b)
        out.append(("OK", got))
    return out
