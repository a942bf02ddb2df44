# Runs in MicroPython: tests/test_flash_image.py, which prepends NAMES,
# DIR and END.
import json
from tflm import flashimage as fi
from tflm.errors import TFLMError
out = {}
for name in NAMES:  # noqa: F821 (prepended)
    mem = bytearray(open(DIR + "/" + name, "rb").read())  # noqa: F821 (prepended)
    try:
        fi.table(mem, 0x10000000, END)  # noqa: F821 (prepended)
        out[name] = None
    except TFLMError as e:
        out[name] = str(e)
m = bytearray(64)
import struct  # noqa: E402
struct.pack_into("<5I", m, 0, 0x7188EBF2, 0x10000000 + 62, 0x10000000 + 64,
                 0, 0xE71AA390)
try:
    fi.layout(m, 0x10000000)
    out["bi_range"] = None
except TFLMError as e:
    out["bi_range"] = str(e)
print(json.dumps(out))
