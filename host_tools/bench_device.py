"""`python -m host_tools bench-device`: instructions per MAC on an armv6m
(Cortex-M0+) and an armv7emsp (Cortex-M4F) MicroPython, per model and per
operator type.

The unix port's time says little about a board: there the figure that
matters is how many Thumb instructions the kernels spend per
multiply-accumulate. This tool builds a ROMFS image (the package as .mpy
for the target's arch, the benchmark models and zero inputs), runs the
project's device driver (host_tools/mp_cases.py, through
case_driver.run_target) once per model on the target with that image
mounted at /rom (a fresh heap for each), and turns its times into
instructions:

- each model: construct, invoke twice and time the second (the whole
  model), then one invoke(profile=True) (per operator), with
  time.ticks_us(), the inputs zeroed before each (the output is
  reported);
- instructions = µs x --per-us (default 1000: on an emulator run with one
  instruction per nanosecond, such as qemu-system-arm -icount shift=0,
  ticks_us() counts thousands of instructions);
- MACs per operator from the model's shapes (host_tools/macs.py).

The target is a command you give (--cmd with --arch, or for `make
bench-device` TFLM_ARMV6M_CMD and / or TFLM_ARMV7EMSP_CMD: each one set is
measured) with {image} and {script} in it; it must print the script's
output. For example MicroPython's qemu port for the mps2-an385 machine,
built with -mcpu=cortex-m0plus and the Thumb-1 native emitter (armv6m),
or for the mps2-an386 built with -mcpu=cortex-m4 -mfloat-abi=hard
(armv7emsp: the DSP and FPU loops), run under qemu-system-arm -icount
shift=0 with the image loaded at the port's ROMFS address. The project
ships no such build (it would be MicroPython's code); tests run it on the
unix port (tests/unix_target.py mounts the image), whose times are not
instructions. Results: bench/device.md and device.json, with the commit
they were measured at; device.json keeps each arch's last figures
(armv6m's at its top level, the others under "arches"), so that one arch
can be measured again alone. The inputs are zeros: the integer float32
code takes shortcuts on zero operands that the FPU does not need (the
first layer's only).
"""

import json
import os
import subprocess
import sys
import tempfile

from . import ROOT, macs

SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))
OUT_DIR = os.path.join(ROOT, "bench")
# (name on the board, path under ../shared/models, or gen:NAME for a
# model made here): issue 16's models, and issue 18's recurrent ones
MODELS = [
    ("person_detect", "person_detect/person_detect.tflite"),
    ("tiny_kws_ref_int8", "tiny_kws_ref_int8/kws_ref_model.tflite"),
    ("tiny_ic_resnet_int8",
     "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite"),
    ("tiny_ad01_int8", "tiny_ad01_int8/ad01_int8.tflite"),
    ("micro_speech_quantized",
     "micro_speech_quantized/micro_speech_quantized.tflite"),
    ("lstm_int8", "gen:lstm_int8"),
    ("svdf_keyword", "gen:svdf_keyword"),
    # float32 (issue 36: the FPU of a Cortex-M4F)
    ("magic_wand", "magic_wand/magic_wand.tflite"),
    ("ad01_float32", "gen:ad01_float32"),
]
# --construction measures these too (no MACs to time): TFLM's audio
# front-end, the shared model whose kernels keep state (in RAM, its tail
# in the model's bytes)
CONSTRUCTION_ONLY = [
    ("audio_preprocessor_int8",
     "audio_preprocessor_int8/audio_preprocessor_int8.tflite"),
]
# The arches bench-device measures with no --cmd: each one whose
# environment variable names a target command. device.json's top level is
# armv6m's (the headline's); other arches go under "arches".
ARCH_ENV = (("armv6m", "TFLM_ARMV6M_CMD"),
            ("armv7emsp", "TFLM_ARMV7EMSP_CMD"))


def _generated(name):
    """The bytes of generated model `name` (no shared model has these
    operators): seeded, the same on every run.
    - lstm_int8: one int8 UNIDIRECTIONAL_SEQUENCE_LSTM (int16 cell state)
      over 49 steps of 10 features with 64 units, the shape of an LSTM
      keyword spotter (ARM's KWS zoo: 49 x 10 MFCC);
    - svdf_keyword: TFLM's keyword benchmark arrangement (QUANTIZE, SVDF
      with int8 state, FULLY_CONNECTED, SVDF with int16 state,
      FULLY_CONNECTED, SOFTMAX int16, QUANTIZE) over 40 features, SVDFs
      of 64 and 32 units;
    - ad01_float32: MLPerf Tiny's anomaly-detection autoencoder (AD01:
      640 -> 128 x 4 -> 8 -> 128 x 4 -> 640, ten dense layers) in float32,
      each hidden layer's batch normalization as a MUL and an ADD by
      per-unit constants and its ReLU as a RELU operator (no shared model
      has the float32 AD01; its int8 one folds both into the
      FULLY_CONNECTED), random weights."""
    import random
    from . import opgen
    from .conformance import gen_recurrent
    rng = random.Random("bench:" + name)
    if name == "lstm_int8":
        ins, y, opts = gen_recurrent.lstm_tensors(rng, 4, (1, 49, 10, 64))
        return opgen.single_op("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y],
                               opts)
    if name == "svdf_keyword":
        return gen_recurrent.keyword_model(rng, 4, (40, 64, 32, 32, 4))
    if name == "ad01_float32":
        return _ad01_float32(rng)
    raise ValueError("no generated model %r" % name)


def _ad01_float32(rng):
    """ad01_float32's bytes (see _generated). Its hidden 128 x 128 layers
    share one weight tensor and its last layer's 128 x 640 weights are
    the first layer's 640 x 128 bytes (one buffer), so that the model
    (about 400 KB instead of 1.06 MB) and the package fit a 1 MiB ROMFS;
    the FPU's instruction counts do not depend on the values."""
    import numpy as np
    from . import opgen
    T = opgen.Tensor
    m = opgen.Model()
    dims = (640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640)
    r = np.random.default_rng(rng.randrange(1 << 30))
    shared = {}
    x = T([1, dims[0]], "float32")
    for k in range(10):
        n_in, n_out = dims[k], dims[k + 1]
        w = shared.get((n_out, n_in))
        if w is None:
            w = T([n_out, n_in], "float32", data=r.standard_normal(
                (n_out, n_in)) / np.sqrt(n_in))
            if n_out == n_in:
                shared[(n_out, n_in)] = w
        b = T([n_out], "float32", data=0.1 * r.standard_normal(n_out))
        y = T([1, n_out], "float32")
        m.add_op("FULLY_CONNECTED", [x, w, b], [y])
        if k < 9:  # batch normalization, then ReLU
            s = T([1, n_out], "float32")
            m.add_op("MUL", [y, T([n_out], "float32", data=0.5 + r.random(
                n_out))], [s])
            t = T([1, n_out], "float32")
            m.add_op("ADD", [s, T([n_out], "float32", data=0.1 * (
                r.standard_normal(n_out)))], [t])
            y = T([1, n_out], "float32")
            m.add_op("RELU", [t], [y])
        x = y
    import flatbuffers
    mt = opgen.parse(m.build())
    sg = mt.subgraphs[0]
    first, last = (sg.tensors[sg.operators[i].inputs[1]]
                   for i in (0, len(sg.operators) - 1))
    mt.buffers[last.buffer].data = None
    last.buffer = first.buffer
    mt.buffers = [opgen._AlignedBufferT(data=b.data) for b in mt.buffers]
    builder = flatbuffers.Builder(1024)
    builder.Finish(mt.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def model_file(rel):
    """The path of a MODELS entry's file: under ../shared/models, or a
    generated model written once to the temporary directory."""
    if not rel.startswith("gen:"):
        return os.path.join(SHARED, rel)
    path = os.path.join(tempfile.gettempdir(), "tflm_bench_%s.tflite"
                        % rel[4:])
    raw = _generated(rel[4:])
    if not os.path.exists(path) or open(path, "rb").read() != raw:
        with open(path, "wb") as f:
            f.write(raw)
    return path

class _Case:
    def __init__(self, k, raw, input_data):
        self.id, self.raw, self.input_data = k, raw, input_data
        self.dev = None


def run(cmd, models, arch="armv6m", timeout=1800):
    """Runs every model on the target through the one device driver
    (case_driver.run_target: host_tools/mp_cases.py with a ROMFS image
    holding the package compiled for arch, the model and zero inputs),
    one model per image and process (each in a fresh heap: what a session
    did before would otherwise decide whether the next arena finds a
    large enough block): two invokes (the second timed), then one
    invoke(profile=True), the inputs zeroed before each. cmd: a string
    with {image} and {script}. Returns one record per model: name, us
    (the timed invoke), ops ([[op index, name, us], ...]) and out (the
    first output's bytes as a list). Raises RuntimeError with the
    target's answer if a model has no result."""
    from . import case_driver
    from .cli_run import model_io
    todo = []
    for k, (name, rel) in enumerate(models):
        path = model_file(rel)
        with open(path, "rb") as f:
            raw = f.read()
        ins, _ = model_io(path)
        todo.append(_Case(4 * k, raw, [bytes(t["nbytes"]) for t in ins]))
    with tempfile.TemporaryDirectory(prefix="tflm_bench_dev_") as work:
        # (path: the model read in place from /rom, as a user's script
        # does; a target silent for 4 x timeout / 4 seconds is a hang)
        case_driver.run_target(todo, work, "bench", cmd, arch, timeout / 4,
                               flags=("repeat=2", "profile=1", "path"),
                               chunk_bytes=0)
    recs = []
    for (name, _), c in zip(models, todo):
        res = c.dev
        if res.get("r") != "ok":
            raise RuntimeError("the target printed no result for %s: %s"
                               % (name, res.get("msg", res)))
        recs.append({"name": name, "us": res["us"][-1], "ops": res["ops"],
                     "out": list(bytes.fromhex(res["out"][0]))})
    return recs


def summarize(recs, models, per_us):
    """Per model: MACs, instructions per invoke and per MAC, and per
    operator type (instructions, MACs, share of the operators' total)."""
    paths = dict(models)
    out = []
    for r in recs:
        per = {i: m for i, _, m in macs.per_op(model_file(
            paths[r["name"]]))}
        kinds = {}
        for i, name, us in r["ops"]:
            k = kinds.setdefault(name, [0, 0])
            k[0] += us * per_us
            k[1] += per[i]
        ops_total = sum(k[0] for k in kinds.values()) or 1
        total_macs = sum(per.values())
        instr = r["us"] * per_us
        out.append({
            "name": r["name"], "macs": total_macs, "instructions": instr,
            "per_mac": instr / total_macs if total_macs else None,
            "ops": {n: {"instructions": k[0], "macs": k[1],
                        "per_mac": k[0] / k[1] if k[1] else None,
                        "share": k[0] / ops_total}
                    for n, k in sorted(kinds.items(),
                                       key=lambda kv: -kv[1][0])},
            "output": r["out"]})
    return out


def commit():
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                              cwd=ROOT, capture_output=True, text=True,
                              timeout=30).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


_GOALS = {
    "armv6m": "Issue 16's goals: person_detect, KWS, ResNet-8 and AD01 <= "
              "15 instructions per MAC, micro_speech <= 20; "
              "DEPTHWISE_CONV_2D <= 20; CONV_2D and FULLY_CONNECTED <= 12.",
    "armv7emsp": "Issue 36's goal: the float32 AD01 <= 6 instructions per "
                 "MAC (the FPU's VMUL and VADD: kernels.FPU).",
}


def markdown(rows, target, rev, arch="armv6m", title=True):
    """One arch's table (with the page's title unless title is False)."""
    lines = (["# Instructions per MAC on Cortex-M", ""] if title else []) + [
        "## %s" % arch,
        "",
        "Measured by `python -m host_tools bench-device` at commit %s on: %s."
        % (rev, target),
        "Instructions per invoke (one plain invoke after a first one); per "
        "operator type, from invoke(profile=True): instructions per MAC and "
        "share of the operators' time. " + _GOALS.get(arch, ""),
        "",
        "| model | MACs | instructions / invoke | per MAC | by operator "
        "(instructions per MAC, share) |",
        "|---|---:|---:|---:|---|"]
    for r in rows:
        by = ", ".join(
            "%s %s (%.0f%%)" % (n, "%.1f" % k["per_mac"] if k["per_mac"]
                                else "-", 100 * k["share"])
            for n, k in r["ops"].items() if k["share"] >= 0.005)
        lines.append("| %s | %s | %.1f M | %.1f | %s |" % (
            r["name"], "{:,}".format(r["macs"]), r["instructions"] / 1e6,
            r["per_mac"] or 0, by))
    return "\n".join(lines) + "\n"


def page(dev):
    """device.md from device.json's dict: armv6m's table, then the other
    arches' (device.json: armv6m at the top level, others under
    "arches")."""
    parts = [markdown(dev["models"], dev["target"], dev["commit"])]
    for arch, d in sorted(dev.get("arches", {}).items()):
        parts.append(markdown(d["models"], d["target"], d["commit"], arch,
                              title=False))
    return "\n".join(parts)


# Construction on the target (--construction): a fresh boot per model and
# way, the image holding the package and that one model (plain, or
# compiled for the arch: host_tools.compile); times `import tflm` and the
# first Interpreter() (kernel imports included), then reads what the
# interpreter held (freed when it goes) and what its kernel modules took
# when imported (interp._imported: their machine code too, unless it runs
# from the image).
CONSTRUCT_SCRIPT = """
import sys
sys.path.insert(0, "/rom")
import gc, time
t0 = time.ticks_us()
import tflm
t1 = time.ticks_us()
import tflm.api  # (it.compiled imports it: before the heap is read)
t2 = time.ticks_us()
it = tflm.Interpreter("/rom/m.tflite")
t3 = time.ticks_us()
c = it.compiled
k = it._imported
gc.collect()
f = gc.mem_free()
it = None
gc.collect()
print("CONSTRUCT", time.ticks_diff(t1, t0), time.ticks_diff(t3, t2),
      gc.mem_free() - f, 1 if c is True else 0, k)
"""


def construction(cmd, models, per_us, arch="armv6m", timeout=1800):
    """[{name, plain: {...}, compiled: {...}}]: per way, import and
    construct (instructions: µs x per_us) and kept (bytes that the
    interpreter held: freed when it goes). Raises RuntimeError when the
    target prints no result."""
    import shlex

    from . import romfs
    from .compile import compile_model
    rows = []
    with tempfile.TemporaryDirectory(prefix="tflm_construct_") as work:
        pkg = romfs.compile_package(arch, code_in_rom=True)
        script = os.path.join(work, "construct.py")
        with open(script, "w") as f:
            f.write(CONSTRUCT_SCRIPT)
        for name, rel in models:
            if rel.startswith("gen:"):
                continue
            with open(model_file(rel), "rb") as f:
                raw = f.read()
            row = {"name": name}
            for way in ("plain", "compiled"):
                data = raw if way == "plain" else compile_model(raw, arch)[0]
                image = os.path.join(work, "%s_%s.img" % (name, way))
                img, _ = romfs.build_image(
                    [(p, d, False) for p, d in pkg]
                    + [("m.tflite", data, True)])
                with open(image, "wb") as f:
                    f.write(img)
                line = cmd.replace("{image}", shlex.quote(image)).replace(
                    "{script}", shlex.quote(script))
                out = subprocess.run(line, shell=True, capture_output=True,
                                     text=True, timeout=timeout).stdout
                got = [ln.split() for ln in out.splitlines()
                       if ln.startswith("CONSTRUCT")]
                if not got:
                    raise RuntimeError("%s (%s): no result:\n%s"
                                       % (name, way, out[-2000:]))
                imp, con, kept, built, mods = map(int, got[-1][1:6])
                if (way == "compiled") != bool(built):
                    raise RuntimeError("%s: the %s model was built %s"
                                       % (name, way, "from its block"
                                          if built else "the plain way"))
                row[way] = {"import": imp * per_us, "construct": con * per_us,
                            "kept": kept, "modules": mods}
            rows.append(row)
    return rows


def construction_markdown(rows, target, rev):
    lines = [
        "# armv6m construction: plain and compiled models",
        "",
        "Measured by `python -m host_tools bench-device --construction` at "
        "commit %s on: %s." % (rev, target),
        "A fresh boot per model and way, package and model in ROMFS: "
        "instructions of the first `tflm.Interpreter()` (kernel imports "
        "included; `import tflm` apart) and the bytes the interpreter "
        "held (freed when it goes: arena and objects); *kernels, "
        "compiled*: the heap its kernel modules took when imported (they "
        "stay; the image runs their machine code in place: "
        "host_tools/romcode.py). "
        "Compiled: `host_tools compile --arch armv6m`, its tail read in "
        "place from the model. Issue 34's goals: compiled person_detect "
        "<= 75 M instructions, micro_speech <= 18 M.",
        "",
        "| model | import tflm | construct, plain | compiled | kept, "
        "plain | compiled | kernels, compiled |",
        "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        p, c = r["plain"], r["compiled"]
        lines.append("| %s | %.1f M | %.1f M | %.1f M | %s | %s | %s |"
                     % (r["name"], p["import"] / 1e6, p["construct"] / 1e6,
                        c["construct"] / 1e6, "{:,}".format(p["kept"]),
                        "{:,}".format(c["kept"]),
                        "{:,}".format(c.get("modules", 0))))
    return "\n".join(lines) + "\n"


def add_parser(sub):
    p = sub.add_parser("bench-device", help="armv6m instructions per MAC "
                       "on an emulated Cortex-M0+ MicroPython you provide")
    p.add_argument("--cmd", dest="target_cmd",
                   default=os.environ.get("TFLM_ARMV6M_CMD"),
                   help="command running {script} with ROMFS {image} on "
                        "the target (default: $TFLM_ARMV6M_CMD)")
    p.add_argument("--per-us", type=float, default=1000.0,
                   help="instructions per ticks_us() microsecond (1000 "
                        "for qemu -icount shift=0)")
    p.add_argument("--target", default=None,
                   help="what the target is, for the report")
    p.add_argument("--arch", default="armv6m",
                   choices=("armv6m", "armv7m", "armv7em", "armv7emsp",
                            "armv7emdp"),
                   help="--cmd's arch: the package's .mpy are built "
                        "for it (armv7em*: thumb_dsp.py's DSP loops, "
                        "armv7emsp / dp: thumb_fpu.py's float32 loops; "
                        "default armv6m); device.json keeps each arch's "
                        "figures")
    p.add_argument("--models", nargs="+",
                   choices=[n for n, _ in MODELS + CONSTRUCTION_ONLY],
                   metavar="NAME", help="subset of: " +
                   " ".join(n for n, _ in MODELS + CONSTRUCTION_ONLY))
    p.add_argument("--out", default=OUT_DIR,
                   help="directory for device.md / device.json ('-': "
                        "print only)")
    p.add_argument("--construction", action="store_true",
                   help="measure construction instead, plain and compiled "
                        "(construction.md / .json)")
    return p


def main(args):
    if args.target_cmd:
        todo = [(args.arch, args.target_cmd)]
    else:
        todo = [(arch, os.environ[env]) for arch, env in ARCH_ENV
                if os.environ.get(env)]
    if not todo:
        print("bench-device needs a target: --cmd (with --arch), or "
              "TFLM_ARMV6M_CMD and / or TFLM_ARMV7EMSP_CMD, a command with "
              "{image} and {script} that runs the script on a MicroPython "
              "of that arch (see host_tools/bench_device.py)",
              file=sys.stderr)
        return 2
    models = [m for m in MODELS if not args.models or m[0] in args.models]
    if args.construction:
        models += [m for m in CONSTRUCTION_ONLY
                   if not args.models or m[0] in args.models]
        cmd = dict(todo).get("armv6m")
        if not cmd:
            print("bench-device --construction measures armv6m: give "
                  "TFLM_ARMV6M_CMD (or --cmd)", file=sys.stderr)
            return 2
        return _main_construction(args, models, cmd)
    path = os.path.join(args.out, "device.json")
    try:
        with open(path) as f:
            dev = json.load(f)
    except (OSError, ValueError):
        dev = {}
    for arch, cmd in todo:
        try:
            recs = run(cmd, models, arch)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            print("error: %s" % e, file=sys.stderr)
            return 1
        rows = summarize(recs, models, args.per_us)
        target = args.target if args.target and len(todo) == 1 else cmd
        print(markdown(rows, target, commit(), arch))
        # (outputs: the first 64 values, a check that a later run computed
        # the same)
        rec = {"commit": commit(), "target": target, "per_us": args.per_us,
               "models": [dict(r, output=r["output"][:64]) for r in rows]}
        if arch == "armv6m":
            dev.update(rec)
        else:
            dev.setdefault("arches", {})[arch] = rec
    if args.out != "-":
        if "models" not in dev:
            print("error: device.json needs armv6m's figures first (its "
                  "top level): run with TFLM_ARMV6M_CMD too",
                  file=sys.stderr)
            return 1
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "device.md"), "w") as f:
            f.write(page(dev))
        with open(path, "w") as f:
            json.dump(dev, f, indent=1)
    return 0


def _main_construction(args, models, cmd):
    try:
        rows = construction(cmd, models, args.per_us)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    target = args.target or cmd
    md = construction_markdown(rows, target, commit())
    print(md)
    if args.out != "-":
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "construction.md"), "w") as f:
            f.write(md)
        with open(os.path.join(args.out, "construction.json"), "w") as f:
            json.dump({"commit": commit(), "target": target,
                       "per_us": args.per_us, "models": rows}, f, indent=1)
    return 0
