"""`make bench`: our runtime on the MicroPython unix port vs TFLM.

For every shared int8 model and the demo model, on this machine, in one
run: median invoke() time of ours (unix port, many invokes per round) and
of TFLM's reference interpreter (PyPI tflite-micro: only its invoke() is
timed, with time.perf_counter), their ratio, MACs and MMAC/s, our planned
arena vs TFLM's arena head (planned activations) and tail (persistent
structures), heap in use after load, interpreter construction time; a
per-operator-type time profile of the four MLPerf-Tiny-sized models; and
how much faster our viper CONV_2D kernel is than the same loops as
bytecode and as @micropython.native (host_tools/mp_viper_bench.py).

Method (machine noise): R rounds (default 5); each round runs ours (one
unix-port process, N invokes, median) and then TFLM (N' invokes, median),
N and N' sized for ~0.25 s each. The ratio is computed per round, from
two medians measured back to back, and the reported ratio is the median
of the per-round ratios; its min..max across rounds shows the noise.
Outputs are checked bit-exact against TFLM's before timing.

Writes bench/results.json (everything, raw per-round figures included),
bench/results.md (tables) and bench/ratios.png (bar chart of the ratios).
"""

import json
import os
import platform
import statistics
import sys
import time

import numpy as np

from . import PKG_DIR, ROOT, arena, device, inputs, macs
from .cli_run import model_io
from .demo import MODEL as DEMO_MODEL, TEST as DEMO_TEST
from .oracle import Reference
from .png import Canvas, text_width

SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))
OUT_DIR = os.path.join(ROOT, "bench")

# name -> (model path relative to SHARED, sample input file or None).
# Models without a sample get seeded random input (timing hardly depends
# on the values: there are no data-dependent loops).
MODELS = [
    ("hello_world_int8", "hello_world_int8/hello_world_int8.tflite", None),
    ("micro_speech_quantized",
     "micro_speech_quantized/micro_speech_quantized.tflite",
     "micro_speech_quantized/yes_features.npy"),
    ("micro_speech_unalign", "micro_speech_unalign/model.tflite",
     "micro_speech_quantized/yes_features.npy"),
    ("person_detect", "person_detect/person_detect.tflite",
     "person_detect/person.bmp"),
    ("tiny_kws_ref_int8", "tiny_kws_ref_int8/kws_ref_model.tflite",
     "tiny_kws_ref_int8/input.npy"),
    ("tiny_ic_resnet_int8",
     "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite",
     "tiny_ic_resnet_int8/input.npy"),
    ("tiny_ad01_int8", "tiny_ad01_int8/ad01_int8.tflite",
     "tiny_ad01_int8/normal_id_01_00000000_hist_librosa.bin"),
    ("test_conv_model", "test_conv_model/test_conv_model.tflite", None),
    ("network_tester_model", "network_tester_model/network_model.tflite",
     None),
    ("simple_add", "simple_add/simple_add_model.tflite", None),
    ("add_model_int8", "add_model_int8/add_model.tflite", None),
    ("digits_cnn (demo)", None, None),
]
# The target: each at most 2x TFLM's time.
TARGETS = ("person_detect", "tiny_kws_ref_int8", "tiny_ic_resnet_int8",
           "tiny_ad01_int8")
VIPER_MODEL = ("tiny_kws_ref_int8/kws_ref_model.tflite", 2)
ROUND_S = 0.25


def add_parser(sub):
    b = sub.add_parser("bench", help="time every model: ours vs TFLM, "
                       "MACs, arena, heap; write bench/results.*")
    b.add_argument("--rounds", type=int, default=5,
                   help="rounds per model (ratio = median over rounds)")
    b.add_argument("--models", default="",
                   help="comma-separated name substrings (default: all)")
    b.add_argument("--out", default=None,
                   help="output folder (default bench/; a --models subset "
                        "writes nothing unless given one, so that the "
                        "committed full results stay whole)")
    b.add_argument("--no-extras", action="store_true",
                   help="skip the per-op profile and the viper comparison")
    b.add_argument("--replot", action="store_true",
                   help="only rewrite results.md and ratios.png from the "
                        "existing results.json")


def model_path(rel):
    return DEMO_MODEL if rel is None else os.path.join(SHARED, rel)


def sample_input(name, rel, sample):
    """One list of input bytes: the sample file, else seeded random."""
    ins, _ = model_io(model_path(rel))
    if rel is None:
        x = np.load(DEMO_TEST)["x"][0]
        return [x.astype(np.int8).tobytes()]
    if sample:
        return [inputs.from_file(os.path.join(SHARED, sample), ins[0])]
    rng = np.random.default_rng(0)
    return [inputs.random_input(t, rng) for t in ins]


def tflm_times(ref, arrs, n):
    """n timings (us) of TFLM's invoke() alone, inputs set beforehand."""
    for i, x in enumerate(arrs):
        d = ref.input_details(i)
        ref.interp.set_input(np.asarray(x, d["dtype"]).reshape(d["shape"]),
                             i)
    invoke = ref.interp.invoke
    invoke()
    out = []
    clock = time.perf_counter
    for _ in range(n):
        t0 = clock()
        invoke()
        out.append((clock() - t0) * 1e6)
    return out


def repeats_for(us):
    return max(5, min(1000, int(ROUND_S * 1e6 / max(us, 1.0))))


def bench_model(name, rel, sample, rounds):
    """All figures for one model (a dict)."""
    path = model_path(rel)
    ins, outs = model_io(path)
    data = sample_input(name, rel, sample)
    ref = Reference(path)
    arrs = [np.frombuffer(d, inputs.NP_DTYPES[t["dtype"]])
            for d, t in zip(data, ins)]
    want = [o.tobytes() for o in ref.run(arrs)]
    got, info = device.run_model(path, [data], len(outs), repeat=3)
    if got is None:
        raise SystemExit("%s rejected: %s" % (name, info))
    exact = got[0] == want
    n_ours = repeats_for(statistics.median(info["us"]))
    n_tflm = repeats_for(statistics.median(tflm_times(ref, arrs, 5)))
    per_round = []
    for _ in range(rounds):
        _, info = device.run_model(path, [data], len(outs), repeat=n_ours)
        ours = statistics.median(info["us"])
        tflm = statistics.median(tflm_times(ref, arrs, n_tflm))
        per_round.append({"ours_us": ours, "tflm_us": tflm,
                          "ratio": ours / tflm,
                          "build_us": info["build_us"],
                          "heap": info["heap"]})
    ratios = [r["ratio"] for r in per_round]
    ours = statistics.median(r["ours_us"] for r in per_round)
    mac = macs.total(path)
    ta = arena.tflm_arena(path)
    return {
        "name": name, "model": rel or os.path.relpath(path, ROOT),
        "bit_exact": exact, "macs": mac,
        "ours_us": ours,
        "tflm_us": statistics.median(r["tflm_us"] for r in per_round),
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios), "ratio_max": max(ratios),
        "mmacs": mac / ours if ours else 0.0,
        "arena": info["arena"], "copied": info["copied"],
        "persistent": info["persistent"],
        "tflm_head": ta.get("head"), "tflm_tail": ta.get("tail"),
        "heap": statistics.median(r["heap"] for r in per_round),
        "build_us": statistics.median(r["build_us"] for r in per_round),
        "invokes_per_round": [n_ours, n_tflm], "rounds": per_round,
    }


def op_profile(name, rel, sample, repeats=20):
    """Per-operator median us (unix port, invoke(profile=True), on the
    model's sample input) and the share of each operator type."""
    path = model_path(rel)
    _, outs = model_io(path)
    got, info = device.run_model(path, [sample_input(name, rel, sample)],
                                 len(outs), profile=repeats)
    if got is None:
        raise SystemExit("%s rejected: %s" % (name, info))
    res = {"ops": info["ops"], "total": info["total"]}
    total = sum(t for _, _, t in res["ops"]) or 1
    by_type = {}
    for _, name, t in res["ops"]:
        by_type[name] = by_type.get(name, 0) + t
    res["share"] = {k: v / total for k, v in sorted(
        by_type.items(), key=lambda kv: -kv[1])}
    return res


def viper_vs_bytecode(repeats=30):
    """mp_viper_bench.py on one 1x1 CONV_2D layer (see that file)."""
    import tempfile
    from . import device_script, kernel_consts
    rel, op = VIPER_MODEL
    # conv.py's state layout, by name (its _S_ / _P_ / _QP constants)
    layout = kernel_consts("kernels/conv.py", ("S_", "P_", "QP"))
    with tempfile.TemporaryDirectory(prefix="tflm_viper_bench_") as tmp:
        script = os.path.join(tmp, "mp_viper_bench.py")
        with open(script, "w") as f:
            f.write("LAYOUT = %r\n" % layout
                    + device_script("mp_viper_bench.py"))
        proc = device.run_script(script, [PKG_DIR, model_path(rel), str(op),
                                          str(repeats)])
    if proc.returncode:
        raise SystemExit(proc.stdout + proc.stderr)
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    res["model"] = rel
    return res


def machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    proc = device.run_script(os.path.join(ROOT, "host_tools",
                                          "mp_version.py"))
    return {"cpu": cpu, "cores": os.cpu_count(),
            "python": platform.python_version(),
            "micropython": proc.stdout.strip(),
            "micropython_bin": device.micropython_bin(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def kb(n):
    return "-" if n is None else "%.1f" % (n / 1024.0)


def num(n):
    return "-" if n is None else "{:,}".format(n)


def markdown(res):
    m = res["machine"]
    lines = [
        "# Benchmarks: tflm (MicroPython unix port) vs TFLM reference",
        "",
        "Generated by `make bench` (host_tools/bench.py) on %s: %s, %d "
        "cores, %s; TFLM = PyPI tflite-micro reference kernels, timed "
        "around `invoke()` only. Load average %s at start, %s at end."
        % (m["date"], m["cpu"], m["cores"], m["micropython"],
           res["load_start"], res["load_end"]),
        "",
        "Times are medians over many invokes; *ratio* = ours / TFLM, "
        "computed per round from back-to-back medians, median over %d "
        "rounds (min..max shows machine noise). Arena: our planned "
        "activation arena (*head*) and persistent arena (*tail*: "
        "multipliers, shifts, unaligned biases, tables); TFLM's "
        "*head* is its planned activation arena and *tail* its persistent "
        "structures (64-bit build). Heap: `gc.mem_alloc()` growth while "
        "building the interpreter (both arena blocks, kernel modules "
        "imported, state; not the model bytes). Build: "
        "time to construct the interpreter. %s For models that take a few "
        "microseconds the ratio measures per-invoke overhead (a "
        "Python-level call per operator), not kernel speed."
        % (res["rounds"],
           "Every output was bit-exact with TFLM's."
           if all(r["bit_exact"] for r in res["models"]) else
           "OUTPUTS DIFFER from TFLM's where marked NOT EXACT."),
        "",
        "| model | MACs | ours ms | TFLM ms | ratio (min..max) | MMAC/s "
        "| arena head / tail B | TFLM head / tail B | heap KiB | build ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in res["models"]:
        lines.append(
            "| %s%s | %s | %.3f | %.3f | **%.2f** (%.2f..%.2f) | %s | %s "
            "/ %s | %s / %s | %s | %.1f |"
            % (r["name"], "" if r["bit_exact"] else " (NOT EXACT)",
               "{:,}".format(r["macs"]), r["ours_us"] / 1000,
               r["tflm_us"] / 1000, r["ratio"], r["ratio_min"],
               r["ratio_max"], "%.1f" % r["mmacs"] if r["macs"] else "-",
               num(r["arena"]), num(r["persistent"]), num(r["tflm_head"]),
               num(r["tflm_tail"]),
               kb(r["heap"]), r["build_us"] / 1000))
    target = [r for r in res["models"] if r["name"] in TARGETS]
    if target:
        worst = max(target, key=lambda r: r["ratio"])
        lines += ["", "Target (issue 5): person_detect, tiny_kws, "
                  "tiny_ic_resnet and tiny_ad01 each at most 2x TFLM. "
                  "Worst: %s at %.2fx: %s." % (
                      worst["name"], worst["ratio"],
                      "met" if worst["ratio"] <= 2 else "NOT met")]
    fits = res.get("fit")
    if fits:
        lines += [
            "", "## Board fit", "",
            "Construction on a board-sized heap (host_tools/fit.py, unix "
            "port %s, package as .mpy, the model's kernels imported first): "
            "*kept* is the heap the interpreter keeps; construction needs "
            "the *holes* that the imports left (free blocks outside the "
            "largest one) and the *margin* beyond kept (512 B steps, 8 KB "
            "of them succeeding in a row); "
            "next to TFLM's arena. Issue 14's goals on 32-bit: holes + "
            "margin <= 8 KB, kept <= TFLM + 4 KB. *Package*: the heap "
            "that `import tflm`, then the model's kernel modules keep, "
            "imported from ROMFS (bytecode in place; host_tools/fit.py "
            "package_cost), plus the armv6m machine code of those modules, "
            "which a Cortex-M0 board copies to RAM (the unix port keeps "
            "it outside its heap). Issue 14's goal: package <= 24 KB on "
            "armv6m; *at rest*: what is left of it (native code included) "
            "once the interpreter is built, which drops the parser that "
            "`import tflm` imported. *Construction modules*: what the "
            "modules that only "
            "construction uses take on top while an interpreter is built "
            "(it drops them once built; the margin is measured with them "
            "imported)." % fits[0]["arch"], "",
            "| model | kept B | head / tail B | holes + margin KiB | TFLM "
            "head + tail B | package KiB: tflm + kernels + armv6m code "
            "| at rest KiB | construction modules KiB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for f in fits:
            p = f.get("package") or {}
            lines.append("| %s | %s | %s / %s | %s + %s | %s | %s | %s | %s |"
                         % (f["name"], num(f["kept"]), num(f["head"]),
                            num(f["tail"]), kb(f["holes"]), kb(f["margin"]),
                            num(f["tflm"]),
                            "%s + %s + %s" % (kb(p["tflm"]), kb(p["kernels"]),
                                              kb(p["tflm_native"] +
                                                 p["kernels_native"]))
                            if p else "-",
                            kb(p["at_rest"] + p["tflm_native"] +
                               p["kernels_native"]) if "at_rest" in p
                            else "-",
                            kb(p["construction"]) if "construction" in p
                            else "-"))
    v = res.get("viper")
    if v:
        lines += [
            "", "## Viper vs bytecode", "",
            "The multiply-accumulate loops of our 1x1 CONV_2D kernel on %s "
            "op %d (%s MACs), the same algorithm as plain bytecode and as "
            "`@micropython.native` (host_tools/mp_viper_bench.py; the same "
            "requantization call in all three; identical output bytes: "
            "%s):" % (v["model"], v["op"], "{:,}".format(v["macs"]),
                      v["viper_same"] and v["native_same"]
                      and v["bytecode_same"]),
            "",
            "| variant | us | x slower than viper |",
            "|---|---:|---:|",
        ]
        for k in ("viper", "native", "bytecode"):
            lines.append("| %s | %d | %.1f |" % (
                k, v[k + "_us"], v[k + "_us"] / v["viper_us"]))
    prof = res.get("profiles")
    if prof:
        lines += ["", "## Where the time goes (unix port)", "",
                  "Share of operator time by operator type, from "
                  "`invoke(profile=True)` (median per op over 20 "
                  "invokes):", "",
                  "| model | total ms | shares |", "|---|---:|---|"]
        for name, p in prof.items():
            shares = ", ".join("%s %.0f%%" % (k, 100 * s)
                               for k, s in p["share"].items()
                               if s >= 0.005)
            lines.append("| %s | %.2f | %s |" % (name, p["total"] / 1000,
                                                 shares))
    return "\n".join(lines) + "\n"


def chart(res, path):
    """Bar chart of the ratios (log-free: 0..max), a line at 1x and 2x."""
    rows = res["models"]
    top = max([2.5] + [r["ratio_max"] for r in rows])
    w, h, left, pad = 800, 60 + 26 * len(rows), 190, 70
    c = Canvas(w, h)
    c.text(20, 10, "ours / TFLM reference, invoke time (lower is "
           "better)", scale=2)
    x0, x1 = left, w - pad
    scale = (x1 - x0) / top
    y = 42
    for r in rows:
        c.text(x0 - 8 - text_width(r["name"]), y + 6, r["name"])
        color = (70, 130, 200) if r["ratio"] <= 2 else (210, 80, 60)
        c.box(x0, y, x0 + max(2, int(r["ratio"] * scale)), y + 18, color)
        lo, hi = (x0 + int(r["ratio_min"] * scale),
                  x0 + int(r["ratio_max"] * scale))
        c.hline(lo, hi + 1, y + 9, (0, 0, 0))
        label = "%.2fx" % r["ratio"]
        c.text(x0 + int(r["ratio_max"] * scale) + 6, y + 6, label)
        y += 26
    for v, col in ((1, (120, 120, 120)), (2, (200, 0, 0))):
        xv = x0 + int(v * scale)
        c.vline(xv, 38, y, col)
        c.text(xv - 6, y + 4, "%dx" % v, col)
    c.vline(x0, 38, y, (0, 0, 0))
    c.save(path)


def write(res, out):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(markdown(res))
    chart(res, os.path.join(out, "ratios.png"))
    print("wrote %s/results.md, results.json, ratios.png" % out)


def board_fit(todo):
    """fit.measure() and fit.package_cost() of every benchmarked model,
    with TFLM's head + tail."""
    import tempfile
    from . import fit
    out = []
    with tempfile.TemporaryDirectory() as work:
        pkg = fit.package(work)
        arch = fit.unix_arch()
        image = fit.rom_image(work)
        for name, rel, _ in todo:
            path = model_path(rel)
            r = fit.measure(pkg, path)
            r["package"] = fit.package_cost(image, path, work)
            ta = arena.tflm_arena(path)
            r.update(name=name, arch=arch,
                     tflm=ta.get("head", 0) + ta.get("tail", 0))
            print("fit %-20s kept %7d holes %6d margin %7d TFLM %7d" % (
                name, r["kept"], r["holes"], r["margin"], r["tflm"]))
            out.append(r)
    return out


def main(args):
    want = [s for s in args.models.split(",") if s]
    out = args.out or (None if want else OUT_DIR)
    if args.replot:
        with open(os.path.join(out or OUT_DIR, "results.json")) as f:
            write(json.load(f), out or OUT_DIR)
        return 0
    todo = [m for m in MODELS if not want or any(s in m[0] for s in want)]
    if out is not None:
        os.makedirs(out, exist_ok=True)
    res = {"machine": machine(), "rounds": args.rounds,
           "load_start": "%.2f" % os.getloadavg()[0], "models": []}
    print("%-24s %10s %10s %7s %12s %8s %8s"
          % ("model", "ours ms", "TFLM ms", "ratio", "(min..max)",
             "MMAC/s", "arena"))
    for name, rel, sample in todo:
        r = bench_model(name, rel, sample, args.rounds)
        res["models"].append(r)
        print("%-24s %10.3f %10.3f %7.2f %5.2f..%-5.2f %8.1f %8d%s"
              % (name, r["ours_us"] / 1000, r["tflm_us"] / 1000,
                 r["ratio"], r["ratio_min"], r["ratio_max"], r["mmacs"],
                 r["arena"], "" if r["bit_exact"] else "  NOT BIT-EXACT"))
        sys.stdout.flush()
    if not args.no_extras:
        res["fit"] = board_fit(todo)
        res["viper"] = viper_vs_bytecode()
        print("viper vs bytecode (%s op %d): viper %d us, native %d us, "
              "bytecode %d us" % (res["viper"]["model"], res["viper"]["op"],
                                  res["viper"]["viper_us"],
                                  res["viper"]["native_us"],
                                  res["viper"]["bytecode_us"]))
        res["profiles"] = {name: op_profile(name, rel, sample)
                           for name, rel, sample in MODELS
                           if name in TARGETS}
    res["load_end"] = "%.2f" % os.getloadavg()[0]
    if out is None:
        print("(a subset of the models: bench/results.* left as they are; "
              "--out DIR writes this run's)")
    else:
        write(res, out)
    bad = [r["name"] for r in res["models"] if not r["bit_exact"]]
    return 1 if bad else 0
