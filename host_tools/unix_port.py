"""The MicroPython unix port from CPython: where its binary is, how a
script runs on it (host_tools/device.py builds on this; the device driver,
host_tools/case_driver.py, starts its processes with it)."""

import os
import shutil
import subprocess
import sys

from . import ROOT

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
