"""TFLM side of the conformance runner, in a worker process.

    python -m host_tools.conformance.oracle_worker LOG [GEN_DIR ...]

Reads one JSON case per stdin line, either a model to run, {"id": k,
"model": path, "inputs": [path, ...]}, or one to generate first, {"id": k,
"op": name, "seed": s, "i": i, "size": n, "dir": folder}: the op's
generator (cases.discover, plus the gen_*.py of each GEN_DIR) makes the
model and inputs, written to folder/<k>.tflite and folder/<k>.in<j>
(generating here keeps the runner's process free, and J workers generate
in parallel). Runs the model with host_tools.oracle.Reference (TFLM's
reference interpreter, in this process) and prints one JSON line per case:

    {"id": k, "r": "ok", "out": [hex, ...], "dt": [dtype, ...],
     "model": path, "inputs": [path, ...]}
    {"id": k, "r": "invalid", "msg": "..."}     TFLM rejected the model
                                                (or the generator raised)

TFLM aborts the process on some models it rejects (TFLITE_CHECK): the
runner then sees the worker exit and restarts it after that case. TFLM's
own messages (MicroPrintf, on fd 1 and 2) go to LOG, after a line
"@@case k" per case, and the part written during a case is its "msg";
results use a private copy of the original stdout.
"""

import json
import os
import sys

import numpy as np


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def generate(case, gens):
    """Write a generated case's files; returns (model path, input paths)
    or raises what the generator raises."""
    from . import cases
    raw, ins = cases.make_case(gens[case["op"]], case["seed"], case["i"],
                               case["size"])
    base = os.path.join(case["dir"], "%d" % case["id"])
    with open(base + ".tflite", "wb") as f:
        f.write(raw)
    paths = []
    for j, data in enumerate(ins):
        paths.append("%s.in%d" % (base, j))
        with open(paths[-1], "wb") as f:
            f.write(data)
    return base + ".tflite", paths


def run_case(case, log_fd, gens=None):
    """Result dict of one case (see the module doc)."""
    from ..oracle import Reference
    if "op" in case:
        try:
            case["model"], case["inputs"] = generate(case, gens)
        except Exception as e:  # noqa: B902 - a generator bug, reported
            import traceback
            where = traceback.extract_tb(e.__traceback__)[-1]
            return {"id": case["id"], "r": "invalid",
                    "msg": "generator raised %s: %s (%s:%d)" % (
                        type(e).__name__, e, os.path.basename(
                            where.filename), where.lineno)}
    os.write(log_fd, b"\n@@case %d\n" % case["id"])  # see runner
    start = os.lseek(log_fd, 0, os.SEEK_END)
    try:
        ref = Reference(_read(case["model"]))
        arrays = []
        for i, p in enumerate(case["inputs"]):
            d = ref.input_details(i)
            arrays.append(np.frombuffer(_read(p), dtype=d["dtype"]))
        outs = ref.run(arrays)
    except Exception as e:  # noqa: B902 - TFLM rejects with RuntimeError
        os.lseek(log_fd, start, os.SEEK_SET)
        said = os.read(log_fd, 4000).decode("utf-8", "replace").strip()
        return {"id": case["id"], "r": "invalid",
                "msg": ("%s: %s" % (type(e).__name__, e)
                        + ("; TFLM says: " + said if said else ""))}
    return {"id": case["id"], "r": "ok",
            "out": [np.ascontiguousarray(o).tobytes().hex() for o in outs],
            "dt": [o.dtype.name for o in outs],
            "model": case["model"], "inputs": case["inputs"]}


def main(log_path, gen_dirs=()):
    """Worker loop: read case requests (JSON lines) on stdin, generate
    each model and run it in TFLM, answer one JSON line each on the
    original stdout; TFLM's own output goes to log_path."""
    out = os.fdopen(os.dup(1), "w")
    log_fd = os.open(log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    sys.stdout = sys.stderr = os.fdopen(os.dup(log_fd), "w", buffering=1)
    from tflite_micro.python.tflite_micro import runtime  # noqa: F401
    from . import cases
    gens = cases.discover(gen_dirs)
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        case = json.loads(line)
        res = run_case(case, log_fd, gens)
        out.write(json.dumps(res) + "\n")
        out.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
