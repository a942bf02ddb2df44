"""Shared test helpers: paths, the unix port runner, the TFLM oracle."""

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import host_tools  # noqa: E402,F401  (puts micropython/ on sys.path)
from host_tools import device  # noqa: E402

SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))
PKG = os.path.join(ROOT, "micropython")


def shared(*parts):
    """Path of a file in ../shared/models; skips the test if absent."""
    p = os.path.join(SHARED, *parts)
    if not os.path.exists(p):
        pytest.skip("shared model file missing: %s" % p)
    return p


def run_mp(code, tmp_path, timeout=300, heap="32M"):
    """Run MicroPython source on the unix port with the package on its
    path; returns stdout. Fails the test on a non-zero exit."""
    script = tmp_path / "t.py"
    script.write_text("import sys\nsys.path.insert(0, %r)\n" % PKG + code)
    proc = device.run_script(str(script), timeout=timeout, heap=heap)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def run_bytes(raw, tmp_path, sets, n_out=1, **kw):
    """Run model bytes on the unix port: (outputs, info) of
    device.run_model; outputs is None when tflm rejected the model."""
    path = tmp_path / "m.tflite"
    path.write_bytes(raw)
    return device.run_model(str(path), sets, n_out, **kw)
