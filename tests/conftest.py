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


def device_script(name):
    """The text of tests/mp/<name>: a script that a test runs in
    MicroPython (a file, so that it is read and linted as code)."""
    with open(os.path.join(ROOT, "tests", "mp", name)) as f:
        return f.read()


def unix_target_cmd():
    """A --target-cmd (with {image} and {script}) whose target is the
    unix port (tests/unix_target.py)."""
    import shlex
    return "%s %s {image} {script} %s" % (
        shlex.quote(sys.executable),
        shlex.quote(os.path.join(ROOT, "tests", "unix_target.py")),
        shlex.quote(device.micropython_bin()))


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


def fc_multiplier(input_scale, filter_scale, output_scale):
    """Per-tensor multiplier as kernel_util.cc's GetQuantizedConvolution-
    Multipler reads: in_scale * filter_scale in float32 first, then the
    double division. The kernels do not use it: the TFLM build we test
    against (PyPI tflite-micro) takes the double product for
    FULLY_CONNECTED (quant.conv_multiplier); test_fuzz.py shows models
    where the two differ. Raises ModelError outside float32's range."""
    from tflm import quant
    prod = quant.mul(quant.from_f32(input_scale),
                     quant.from_f32(filter_scale), 24)
    n = quant.bitlen(prod[0]) + prod[1]  # 2**(n-1) <= prod < 2**n
    if prod[0] and not -125 <= n <= 128:
        raise quant.ModelError("scale product %r * %r is outside float32's "
                               "normal range" % (input_scale, filter_scale))
    return quant.quantize_multiplier(
        quant.div(prod, quant.from_f32(output_scale)))


def unix_arch():
    """The mpy-cross -march of the unix port the tests run (x64, or x86
    for a 32-bit build given by TFLM_MICROPYTHON)."""
    import subprocess
    from host_tools import romfs
    proc = subprocess.run([device.micropython_bin(), "-c",
                           "import sys; print(sys.implementation._mpy)"],
                          capture_output=True, text=True, timeout=60)
    return romfs.arch_of(int(proc.stdout))
