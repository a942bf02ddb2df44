"""TFLM's own arena figures for a model (the bar for our memory plan)."""

import re
import subprocess
import sys

_SCRIPT = """
import sys
from tflite_micro.python.tflite_micro import runtime
it = runtime.Interpreter.from_file(sys.argv[1], arena_size=4 << 20)
it.print_allocations()
"""


def tflm_arena(path):
    """{'head': bytes, 'tail': bytes, 'total': bytes} that TFLM's
    RecordingMicroAllocator reports for a model (64-bit host build).
    Runs in a subprocess because TFLM prints from C."""
    out = subprocess.run([sys.executable, "-c", _SCRIPT, path],
                         capture_output=True, text=True, timeout=120)
    out = out.stdout + out.stderr  # TFLM logs to stderr
    found = dict(re.findall(r"allocation (head|tail|total) (\d+) bytes",
                            out))
    return {k: int(v) for k, v in found.items()}
