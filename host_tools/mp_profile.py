# Runs inside the MicroPython unix port: per-operator times of a model
# with Interpreter.invoke(profile=True). Arguments: pkg_dir model_path
# repeats [input_file]. Input: the file's bytes if given, else seeded
# pseudo-random bytes. Prints one JSON line: {"ops": [[index, name,
# median us], ...], "total": median us of the whole profiled invoke}.
import sys
import json

pkg, model_path, repeats = sys.argv[1:4]
sys.path.insert(0, pkg)
import tflm

repeats = int(repeats)


def main():
    with open(model_path, "rb") as f:
        interp = tflm.Interpreter(f.read())
    if len(sys.argv) > 4:
        with open(sys.argv[4], "rb") as f:
            data = f.read()
    else:
        data = None
    seed = 1
    runs = []
    totals = []
    for _ in range(repeats):
        for t in interp.inputs:
            if data is not None:
                t.set(data)
                continue
            d = t.data
            for i in range(len(d)):
                seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
                d[i] = seed >> 16 & 0xFF
        interp.invoke(profile=True)
        runs.append([r[2] for r in interp.profile()])
        totals.append(interp._prof_us[len(runs[-1])])
    rows = interp.profile()
    ops = []
    for k, (i, name, _) in enumerate(rows):
        ts = sorted(r[k] for r in runs)
        ops.append([i, name, ts[len(ts) // 2]])
    totals.sort()
    print(json.dumps({"ops": ops, "total": totals[len(totals) // 2]}))


main()
