# Runs in MicroPython: tests/test_flash_image.py, which prepends NAMES
# and DIR.
import json
from tflm import flashimage as fi
from tflm.errors import FormatError
out = {}
for name in NAMES:  # noqa: F821 (prepended)
    mem = bytearray(open(DIR + "/" + name, "rb").read())  # noqa: F821 (prepended)
    try:
        fi.model("m", mem)
        out[name] = None
    except FormatError as e:
        out[name] = str(e)
mem = bytearray(open(DIR + "/model_torn", "rb").read())  # noqa: F821 (prepended)
out["unchecked"] = len(fi.model("m", mem, check=False))
print(json.dumps(out))
