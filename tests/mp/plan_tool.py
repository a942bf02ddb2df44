# Runs in MicroPython: tests/test_plan_tool.py, which prepends PATHS.
import json
from tflm.model import Model
from tflm import planner
out = {}
for path in PATHS:  # noqa: F821 (prepended)
    with open(path, 'rb') as f:
        m = Model(f.read())
    arena, bufs, root = planner.plan_model(m)
    out[path] = [arena, sorted([r, b.offset] for r, b in bufs.items())]
print(json.dumps(out))
