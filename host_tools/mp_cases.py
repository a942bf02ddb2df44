# Runs inside MicroPython (not CPython): the one device-side driver of
# the host tools. host_tools/case_driver.py starts it and reads its
# answers, for the conformance runner, the fuzzer, the kernel tests
# (tests/mp_batch.py), device.run_model (tests, demo, run, bench) and
# bench-device (on an armv6m target).
# Arguments: pkg_dir cases_file first_id [flag ...] (a target without
# sys.argv gets them as ARGS, prepended to this file). Flags: "api" (the
# fuzzer's bad API calls, below), "twice" / "repeat=N" (invoke each input
# set twice / N times, the inputs written again before each: eval must
# not depend on what the last invoke left), "scratch=N" (every operator
# gets N words of scratch: the kernels' chunked paths), "setup=PATH" (a
# file executed after `import tflm`, e.g. to lower a kernel's fast-path
# threshold), "offset=N" (the model N bytes into its buffer instead of
# id % 4), "path" (the Interpreter gets the model's path, as a user's
# script does: read in place from ROMFS, no copy on the heap), "stats"
# (the ok line adds the interpreter's figures, below), "profile=N" (then
# N invoke(profile=True) of the last set: per-operator median
# microseconds).
# cases_file has one line per case: "id<TAB>model path<TAB>input sets",
# the sets separated by ';', each the input paths separated by '|' (a set
# "!reset" calls interp.reset() instead: its outputs are null). For
# every case with id >= first_id, in file order, it builds an Interpreter
# over the model placed id % 4 bytes into a buffer (constants at every
# alignment: boards fault on unaligned 16/32-bit loads), and per input
# set writes the inputs (each file whose size fits the input, else the
# fill pattern, byte j = (37 * j + 11) & 255; a missing file or one of
# another size is a bug, except with api), invokes under heap_lock
# and keeps the outputs; it prints one JSON line:
#   {"id": k, "r": "ok", "src": "bf", "out": [hex, ...], "dt": [dtype, ...],
#    "sets": [[hex, ...], ...], "ms": t}
#   {"id": k, "r": "err", "cls": "ModelError", "msg": "...", "stage": s}
#   {"id": k, "r": "bug", "cls": "IndexError", "msg": "...", "stage": s}
# "out" holds the outputs after the last set, "sets" those after each set;
# "src" says per input (of the last set) whether the file ("b") or the
# fill pattern ("f") was written. Input sets "-": none (the model is only
# built; "out" is then empty). With "stats" an ok line also has "arena"
# (interp.arena_size), "persistent", "tail_ram" (the tail's bytes in RAM:
# repl.tail_in_ram), "compiled", "copied" (bytes), "heap" (bytes the
# built interpreter keeps on the heap, after gc.collect()), "build_us"
# (construction) and "us" (microseconds of each invoke, in order); with
# "profile=N" "ops" ([[op index, name, median us], ...]) and "total" (the
# median profiled invoke). "err" is a TFLMError; "bug" any other
# exception, or an
# invoke() that needed the heap (MemoryError under heap_lock), or (with
# api, the fuzzer's mode) an undocumented exception from a bad API call
# (API_CALLS) on a model that ran, or an invoke() that fails after them.
import sys
import gc
import json
import time
import binascii
import micropython

try:  # a target without sys.argv gets them prepended (ARGS = (...))
    _args = ARGS  # noqa: F821
    target = True
except NameError:
    _args = sys.argv[1:]
    target = False
pkg, cases_file, first = _args[:3]
flags = _args[3:]
api = "api" in flags
reps = 2 if "twice" in flags else 1
stats = "stats" in flags
by_path = "path" in flags
offset = profile = None
for _f in flags:
    if _f.startswith("repeat="):
        reps = int(_f[7:])
    elif _f.startswith("offset="):
        offset = int(_f[7:])
    elif _f.startswith("profile="):
        profile = int(_f[8:])
stats = stats or bool(profile)
sys.path.insert(0, pkg)
import tflm  # noqa: E402

first = int(first)
for _f in flags:
    if _f.startswith("setup="):
        with open(_f[6:]) as _s:
            exec(_s.read(), {})
scratch_calls = None  # with scratch=N: calls of the forced length
for _f in flags:
    if _f.startswith("scratch="):
        import tflm.allocator
        scratch_calls = [0]

        def _forced(ts, n=int(_f[8:])):
            scratch_calls[0] += 1
            return n
        tflm.allocator._scratch_len = _forced
# On the unix port (run from source) the construction modules are
# imported once and stay: they would be compiled again for every model. A
# target (ARGS) builds as a board does, importing and dropping them; that
# a board gets their RAM back is tests/test_board_heap.py's business.
if not target:
    for _m in tflm.interpreter.CONSTRUCTION:
        __import__(_m)


def read(path):
    """The bytes of a file."""
    with open(path, "rb") as f:
        return f.read()


def fill(n, boolean=False):
    # byte j = (37 * j + 11) & 255; its low bit only for a bool tensor
    # (TFLM's Python wrapper turns any non-zero byte into 1)
    b = bytearray(n)
    v = 11
    for j in range(n):
        b[j] = v & 1 if boolean else v
        v = (v + 37) & 255
    return b


def emit(d):
    """One JSON result line on stdout (read by case_driver.serve)."""
    print(json.dumps(d))


# Bad calls on a built interpreter (issue 17): each must raise one of
# the documented exceptions (or none), and invoke() must still run,
# allocation-free, afterwards. Case k tries API_TRIES of them.
API_CALLS = (
    "it.predict(None)", "it.predict('x')", "it.predict([[[1.0]]])",
    "it.predict(b'')", "it.predict(it.input(0).data, out=5)",
    "it.predict(it.input(0).data, out=[bytearray(1)] * 9)",
    "it.predict(it.input(0).data, dequantize=False, out=bytearray(1))",
    "it.output(0).get(bytearray(1))", "it.output(0).dequantize(array('f'))",
    "it.output(0).view()[10**6]", "it.output(0).view()[-10**6]",
    "it.output(0).view()[0] = 10**12", "it.input(0).set([None])",
    "it.input(0).set_float([float('nan')])", "it.input(0).set(5)",
    "it.set_tensor(-1, b'')", "it.get_tensor(10**6)", "it.top(0)",
    "it.top('a')", "it.input(7)", "it.output(-1)", "it.set_input(b'', 3)",
    "it.get_input_details()", "it.reset()", "it.labels", "repr(it)",
    "it.output(0).get()", "it.output(0).dequantize()",
)
API_TRIES = 4
API_ERRORS = (tflm.TFLMError, TypeError, ValueError, IndexError)


def api_bug(k, it):
    """The first of case k's API calls that raised anything else than
    API_ERRORS, as (call, exception), or None."""
    from array import array  # noqa: F401 (used by the calls)
    env = {"it": it, "array": array}
    for j in range(API_TRIES):
        call = API_CALLS[(k * 7 + j * 5) % len(API_CALLS)]
        try:
            exec(call, env)
        except API_ERRORS:
            pass
        except Exception as e:  # noqa: B902 - undocumented: a bug
            return call, e
    return None


status = [None]  # what the last locked_invoke's invoke() returned


def locked_invoke(interp, us=None):
    """interp.invoke() under heap_lock: the exception it raised (a
    MemoryError if it allocated), or None (what invoke() returned: in
    status[0]). us: a list that gets the invoke's microseconds."""
    err = None
    micropython.heap_lock()
    t1 = time.ticks_us()
    try:
        status[0] = interp.invoke()
    except Exception as e:  # noqa: B902 - returned, heap unlocked
        err = e
    t1 = time.ticks_diff(time.ticks_us(), t1)
    micropython.heap_unlock()
    if us is not None:
        us.append(t1)
    return err


def profiled(interp, inputs, n):
    """n invoke(profile=True) with the input files `inputs` written before
    each: ([[op index, name, median us], ...], median total us)."""
    runs, totals = [], []
    for _ in range(n):
        for i, t in enumerate(interp.inputs):
            t.set(read(inputs[i]) if i < len(inputs) else
                  fill(t.nbytes, t.dtype == "bool"))
        interp.invoke(profile=True)
        rows = interp.profile()
        runs.append([r[2] for r in rows])
        totals.append(interp._prof_us[len(rows)])
    ops = []
    for j, (i, name, _) in enumerate(rows):
        ts = sorted(r[j] for r in runs)
        ops.append([i, name, ts[len(ts) // 2]])
    totals.sort()
    return ops, totals[len(totals) // 2]


def run_case(k, model_path, sets):
    """Build, then per input set write the inputs and invoke under
    heap_lock (reps times), then with api the bad API calls and invoke
    again; emit ok (outputs as hex), err (a TFLMError) or bug."""
    stage = "build"
    t0 = time.ticks_ms()
    try:
        if by_path:
            model = model_path
        else:
            raw = read(model_path)
            off = k % 4 if offset is None else offset
            buf = bytearray(off + len(raw))
            buf[off:] = raw
            raw = None
            model = memoryview(buf)[off:]
        gc.collect()
        before = gc.mem_alloc()
        t1 = time.ticks_us()
        interp = tflm.Interpreter(model)
        model = None
        build_us = time.ticks_diff(time.ticks_us(), t1)
        if stats:
            gc.collect()
            heap = gc.mem_alloc() - before  # (before repl's import)
            from tflm.repl import tail_in_ram
            fig = {"arena": interp.arena_size,
                   "persistent": interp.persistent_size,
                   "tail_ram": tail_in_ram(interp),
                   "compiled": getattr(interp, "_compiled", None) is True,
                   "copied": interp.copied_bytes, "build_us": build_us,
                   "heap": heap, "us": []}
        if scratch_calls is not None:
            if not scratch_calls[0]:
                raise RuntimeError("the forced scratch length was not used")
            scratch_calls[0] = 0
        outs, src, sts = [], "", []
        last = None  # the last input set (not a reset)
        for inputs in sets:
            if inputs == ["!reset"]:  # a step of an invoke / reset history
                stage = "reset"
                interp.reset()
                outs.append(None)
                sts.append(None)
                continue
            last = inputs
            if not api and len(inputs) != len(interp.inputs):
                raise ValueError("%d input files given, the model has %d "
                                 "inputs" % (len(inputs),
                                             len(interp.inputs)))
            for _ in range(reps):
                stage = "set"
                src = ""
                for i, t in enumerate(interp.inputs):
                    data = read(inputs[i]) if i < len(inputs) else None
                    if not api and (data is None or len(data) != t.nbytes):
                        # (the fuzzer's base inputs may not fit its models)
                        raise ValueError("input %d: %s bytes given, the "
                                         "tensor has %d" % (
                                             i, None if data is None
                                             else len(data), t.nbytes))
                    if data is None or len(data) != t.nbytes:
                        data = fill(t.nbytes, t.dtype == "bool")
                        src += "f"
                    else:
                        src += "b"
                    interp.input(i).set(data)
                stage = "invoke"
                err = locked_invoke(interp, fig["us"] if stats else None)
                if isinstance(err, MemoryError):
                    emit({"id": k, "r": "bug", "cls": "MemoryError",
                          "msg": "invoke() allocated on the heap",
                          "stage": stage})
                    return
                if err is not None:
                    raise err
            sts.append(status[0] or 0)  # 0: TFLM's kTfLiteOk
            stage = "output"  # (the heap is unlocked: a small target may
            # run out of memory converting a large output)
            outs.append([binascii.hexlify(t.data).decode()
                         for t in interp.outputs])
        if profile and last is not None:
            stage = "profile"
            fig["ops"], fig["total"] = profiled(interp, last, profile)
        if api and outs:
            stage = "api"
            bad = api_bug(k, interp)
            if bad is not None:
                emit({"id": k, "r": "bug", "cls": type(bad[1]).__name__,
                      "msg": "%s: %s" % (bad[0], bad[1]), "stage": stage})
                return
            stage = "invoke after api"
            err = locked_invoke(interp)
            if err is not None:
                emit({"id": k, "r": "bug", "cls": type(err).__name__,
                      "msg": "invoke() after the API calls: %s" % err,
                      "stage": stage})
                return
        res = {"id": k, "r": "ok", "src": src, "out": outs[-1] or [] if outs
               else [],
               "sets": outs if reps > 1 or len(outs) != 1 else None,
               "dt": [t.dtype for t in interp.outputs], "st": sts,
               "ms": time.ticks_diff(time.ticks_ms(), t0)}
        if stats:
            res.update(fig)
        emit(res)
    except tflm.TFLMError as e:
        emit({"id": k, "r": "err", "cls": type(e).__name__,
              "msg": str(e)[:400], "stage": stage,
              "ms": time.ticks_diff(time.ticks_ms(), t0)})
    except Exception as e:  # noqa: B902 - any other exception is a bug
        emit({"id": k, "r": "bug", "cls": type(e).__name__,
              "msg": str(e)[:400], "stage": stage,
              "ms": time.ticks_diff(time.ticks_ms(), t0)})


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
        sets = [] if ins == "-" else [[p for p in one.split("|") if p]
                                      for one in ins.split(";")]
        run_case(k, model_path, sets)
        if target:  # a session on a board: what the last model imported
            tflm.unload()  # goes, as docs/memory.md advises between models
        gc.collect()


main()
