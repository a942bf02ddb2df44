# Runs in MicroPython: tests/test_flash_image.py, which prepends FLASH
# (a flash image) and PD (a model path).
import json
from tflm import flashimage as fi
from tflm.errors import FormatError
import tflm
mem = bytearray(open(FLASH, "rb").read())  # noqa: F821 (prepended)
out = {}
def err(f, *a, **k):
    try:
        f(*a, **k)
    except FormatError as e:
        return str(e)
    return None
out["layout"] = fi.layout(mem)
out["models"] = fi.models(mem)
mv = fi.model("person_detect", mem)
out["same"] = bytes(mv) == open(PD, "rb").read()  # noqa: F821 (prepended)
it = tflm.Interpreter(mv)
it.input(0).data[:] = bytes(9216)
it.invoke()
out["flash_out"] = list(it.output(0).data)
out["in_ram"] = it.model_in_ram
it2 = tflm.Interpreter(open(PD, "rb").read())  # noqa: F821 (prepended)
it2.input(0).data[:] = bytes(9216)
it2.invoke()
out["ram_out"] = list(it2.output(0).data)
out["missing"] = err(fi.model, "nope", mem)
print(json.dumps(out))
