# Runs in MicroPython: tests/test_audio.py, which prepends PATHS.
import json
from tflm import audio
from tflm.errors import FormatError
out = []
for p in PATHS:  # noqa: F821 (prepended)
    try:
        a = audio.read_wav(p)
        out.append(["ok", len(a), a[0], a[len(a) - 1]])
    except FormatError as e:
        out.append(["FormatError", str(e)])
print(json.dumps(out))
