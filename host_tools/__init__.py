"""Host tools for tflm (CPython): run models on the MicroPython unix port,
compare with the TFLM reference interpreter, inspect and plan models."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG_DIR = os.path.join(ROOT, "micropython")
if PKG_DIR not in sys.path:
    sys.path.insert(0, PKG_DIR)


def device_script(name):
    """The text of host_tools/<name>, a script that runs in MicroPython
    (the mp_*.py files: they are files, linted with the rest, and the
    tools write or pass them to the unix port or a target)."""
    with open(os.path.join(ROOT, "host_tools", name)) as f:
        return f.read()
