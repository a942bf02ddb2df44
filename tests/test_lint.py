"""`make lint` (ruff with ruff.toml: pyflakes' checks, pycodestyle's errors
and line length) passes on the whole tree."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_ruff_finds_nothing():
    ruff = os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.path.exists(ruff):
        ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (requirements.txt pins it)")
    proc = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
