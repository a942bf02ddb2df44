# Runs inside the MicroPython unix port (not CPython): our side of the
# conformance runner. Arguments: pkg_dir cases_file first_id
# cases_file has one line per case: "id<TAB>model path<TAB>input paths
# separated by '|'". For every case with id >= first_id, in file order,
# builds an Interpreter (over the model placed id % 4 bytes into a
# buffer), sets the inputs, invokes under heap_lock and prints one JSON
# line:
#   {"id": k, "r": "ok", "out": [hex, ...], "dt": [dtype, ...]}
#   {"id": k, "r": "err", "cls": "PrepareError", "msg": "...", "stage": s}
#   {"id": k, "r": "bug", "cls": "IndexError", "msg": "...", "stage": s}
# "err" is a TFLMError; "bug" any other exception, or an invoke() that
# needed the heap (MemoryError under heap_lock).
import sys
import gc
import json
import binascii
import micropython

try:  # a target without sys.argv gets them prepended (runner.run_target)
    pkg, cases_file, first = ARGS  # noqa: F821
except NameError:
    pkg, cases_file, first = sys.argv[1:4]
sys.path.insert(0, pkg)
import tflm  # noqa: E402

first = int(first)


def read(path):
    """The bytes of a file."""
    with open(path, "rb") as f:
        return f.read()


def emit(d):
    """One JSON result line on stdout (read by runner.py)."""
    print(json.dumps(d))


def run_case(k, model_path, inputs):
    """Build, set inputs, invoke under heap_lock; emit ok (outputs as
    hex), err (a TFLMError) or bug (any other exception, or an invoke
    that allocated)."""
    stage = "build"
    try:
        # The model starts k % 4 bytes into a buffer, so constants sit at
        # every alignment (boards fault on unaligned 16/32-bit loads).
        raw = read(model_path)
        off = k % 4
        buf = bytearray(off + len(raw))
        buf[off:] = raw
        interp = tflm.Interpreter(memoryview(buf)[off:])
        stage = "set"
        for i in range(len(interp.inputs)):
            interp.input(i).set(read(inputs[i]))
        stage = "invoke"
        err = None
        micropython.heap_lock()
        try:
            interp.invoke()
        except Exception as e:  # noqa: B902 - reported below, unlocked
            err = e
        micropython.heap_unlock()
        if isinstance(err, MemoryError):
            emit({"id": k, "r": "bug", "cls": "MemoryError",
                  "msg": "invoke() allocated on the heap", "stage": stage})
            return
        if err is not None:
            raise err
        stage = "output"  # (the heap is unlocked: a small target may
        # run out of memory converting a large output)
        out = [binascii.hexlify(bytes(t.data)).decode()
               for t in interp.outputs]
        emit({"id": k, "r": "ok", "out": out,
              "dt": [t.dtype for t in interp.outputs]})
    except tflm.TFLMError as e:
        emit({"id": k, "r": "err", "cls": type(e).__name__,
              "msg": str(e)[:400], "stage": stage})
    except Exception as e:  # noqa: B902 - any other exception is a bug
        emit({"id": k, "r": "bug", "cls": type(e).__name__,
              "msg": str(e)[:400], "stage": stage})


def main():
    """Run every case of the cases file from the first id on."""
    with open(cases_file) as f:
        lines = f.read().split("\n")
    for line in lines:
        if not line:
            continue
        k, model_path, ins = line.split("\t")
        k = int(k)
        if k < first:
            continue
        run_case(k, model_path, [p for p in ins.split("|") if p])
        gc.collect()


main()
