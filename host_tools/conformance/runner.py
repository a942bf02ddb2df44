"""Conformance runner: seeded single-op models, ours vs TFLM, bit-exact.

    python -m host_tools conformance [-n N] [--seed S] [--ops A,B]
                                     [--corpus DIR] [--jobs J] [--replay]
                                     [--case I [--size K]] [--no-save]
                                     [--list]
    make conformance N=200 SEED=3 OPS=CONV_2D,ADD JOBS=2

-n is the number of cases PER OP (default 20); case i of op gets the size
budget 1 + i % 4 and the rng random.Random(f"{seed}:{op}:{i}"), so a case
is reproducible from (op, seed, i). For every case:

1. the op's generator (cases.discover: every gen_*.py of this package)
   builds the model and maybe its inputs; missing inputs are random by
   dtype (cases.input_bytes);
2. TFLM's reference interpreter runs it (oracle_worker.py: a CPython
   worker process, restarted after the case if TFLM aborts); a model
   TFLM rejects is "invalid" (a generator bug: printed with its model);
3. our runtime runs it on the MicroPython unix port, many models per
   process (host_tools/mp_cases.py, invoke under heap_lock);
4. outputs are compared byte for byte (float32 as bit patterns).

Outcome per case: pass; fail (different bytes, a crash / hang / non-
TFLMError exception / heap allocation in invoke, or a TFLMError on a model
TFLM runs); unsupported (our runtime has no kernel for it:
UnsupportedOpError, or a PrepareError whose message says "support", unless
the op's module lists it in STRICT); invalid (TFLM rejected the model, the
generator raised, or a small target's heap could not hold the outputs as
hex once invoke() ran).

A failing case is shrunk: the same (op, seed, i) is generated again with
each smaller size budget, and the smallest size that still fails is kept.
It is printed (op, seed, i, size, reason, tensors and options) and saved
to the corpus folder (tests/conformance_corpus unless --corpus) as
<op>_<seed>_<i>.tflite and .json (inputs and TFLM's outputs as hex,
reason, description); tests/test_conformance.py replays the corpus
(--replay here does the same). The exit status is 1 if any case failed.
--jobs J runs J TFLM workers and J MicroPython processes at once.
--case I [--size K] reruns one case of each op given (the "rerun:" line
printed with a failure). --ops ADD also runs 'ADD@gen_binary', the name
an op gets when a second module generates it.

Speed (2 shared cores): about 300 cases in 6 s with --jobs 2.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from .. import ROOT, case_driver
from . import cases as cases_mod

CORPUS = os.path.join(ROOT, "tests", "conformance_corpus")
CASE_TIMEOUT = 60.0  # seconds one case may take on either side
DEFAULT_N = 20


def _workdir():
    """A fresh temporary folder, in RAM (/dev/shm) where there is one:
    every case writes a few small files."""
    shm = "/dev/shm"
    root = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    return tempfile.mkdtemp(prefix="tflm_conf_", dir=root)


class Case:
    """One model to check. key: (op, seed, i, size); model / inputs: file
    paths once generated; ref / dev: result dicts of the TFLM worker and of
    driver.py; status / reason: set by classify()."""

    def __init__(self, cid, generator, seed, i, size):
        self.id, self.generator = cid, generator
        self.op = generator.op
        self.seed, self.i, self.size = seed, i, size
        self.model = None
        self.inputs = []
        self.ref = None
        self.dev = None
        self.status = None
        self.reason = ""
        self.strict = generator.strict
        self.ulp = getattr(generator, "ulp", 0)

    @property
    def raw(self):
        """The model bytes (None if it was never written)."""
        if self.model is None or not os.path.exists(self.model):
            return None
        with open(self.model, "rb") as f:
            return f.read()

    @property
    def input_data(self):
        """The input bytes, one bytes object per model input."""
        out = []
        for p in self.inputs:
            with open(p, "rb") as f:
                out.append(f.read())
        return out

    def tag(self):
        return "%s seed=%s i=%d size=%d" % (self.op, self.seed, self.i,
                                             self.size)


# --- running cases ----------------------------------------------------------

def set_files(case, raw, ins, work):
    """Write model bytes and input bytes of a case under work (for cases
    not made by a generator: the corpus)."""
    case.model = os.path.join(work, "%d.tflite" % case.id)
    with open(case.model, "wb") as f:
        f.write(raw)
    case.inputs = []
    for k, data in enumerate(ins):
        p = os.path.join(work, "%d.in%d" % (case.id, k))
        with open(p, "wb") as f:
            f.write(data)
        case.inputs.append(p)


def run_oracle(todo, work, tag, gen_dirs=(), timeout=CASE_TIMEOUT):
    """Generate (cases without a model yet) and run TFLM, in worker
    processes (oracle_worker.py); sets case.ref, case.model, case.inputs.
    A worker that aborts or hangs makes that case "invalid"."""
    log = os.path.join(work, tag + "_tflm.log")

    def start(pos):
        proc = subprocess.Popen(
            [sys.executable, "-m", "host_tools.conformance.oracle_worker",
             log] + [str(d) for d in gen_dirs],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
        return proc, [_request(c, work) for c in todo[pos:]]

    case_driver.serve(todo, start, "ref", timeout, "TFLM worker")
    for c in todo:
        if c.ref.get("model"):
            c.model, c.inputs = c.ref["model"], c.ref["inputs"]
        elif c.model is None:
            c.model = os.path.join(work, "%d.tflite" % c.id)  # if written
        if c.ref["r"] in ("crash", "hang"):
            said = _log_of(log, c.id)
            c.ref = {"id": c.id, "r": "invalid",
                     "msg": "TFLM %s (%s)%s" % (
                         "aborted" if c.ref["r"] == "crash" else "hung",
                         c.ref["msg"], "; TFLM says: " + said
                         if said else "")}


def _log_of(log, cid):
    """What the TFLM worker printed during case cid (see oracle_worker)."""
    try:
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    mark = "\n@@case %d\n" % cid
    k = text.rfind(mark)
    if k < 0:
        return ""
    return text[k + len(mark):].split("\n@@case ")[0].strip()[-600:]


def _request(c, work):
    """The worker's JSON request for a case: run its files, or generate."""
    if c.model is not None:
        return json.dumps({"id": c.id, "model": c.model,
                           "inputs": c.inputs})
    return json.dumps({"id": c.id, "op": c.op, "seed": c.seed, "i": c.i,
                       "size": c.size, "dir": work})


def run_device(todo, work, tag, timeout=CASE_TIMEOUT):
    """Our results (case.dev), many cases per MicroPython process
    (case_driver.run_unix)."""
    case_driver.run_unix(todo, work, tag, lambda c: c.model, timeout)


# Set by --target-cmd: run our side on a MicroPython target (run_target)
TARGET = {"cmd": None, "arch": "armv6m"}
def run_target(todo, work, tag, cmd, arch, timeout=CASE_TIMEOUT):
    """Our results (case.dev) from a MicroPython target instead of the
    unix port (case_driver.run_target): cmd has {image} and {script}, as
    bench-device's."""
    case_driver.run_target(todo, work, tag, cmd, arch, timeout)


def run_cases(todo, work, jobs=1, gen_dirs=()):
    """Generate, run both sides and classify every case: J shards, each
    a TFLM worker then a MicroPython process."""
    jobs = max(1, min(jobs, len(todo)))
    shards = [todo[k::jobs] for k in range(jobs)]

    def shard(k):
        part = shards[k]
        tag = "s%d_%d" % (k, part[0].id)
        run_oracle(part, work, tag, gen_dirs)
        ok = [c for c in part if c.ref["r"] == "ok"]
        if ok and TARGET["cmd"]:
            run_target(ok, work, tag, TARGET["cmd"], TARGET["arch"])
        elif ok:
            run_device(ok, work, tag)

    threads = [threading.Thread(target=shard, args=(k,))
               for k in range(jobs) if shards[k]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in todo:
        classify(c)


# --- judging ---------------------------------------------------------------

UNSUPPORTED_RE = re.compile(r"support|no kernel", re.I)


def classify(case):
    """Set case.status ('pass', 'fail', 'unsupported', 'invalid') and
    case.reason from case.ref and case.dev."""
    ref, dev = case.ref, case.dev
    if ref is None or ref["r"] != "ok":
        case.status = "invalid"
        case.reason = ref["msg"] if ref else "not run"
        return
    if dev is None:
        case.status, case.reason = "fail", "our runtime gave no result"
        return
    r = dev["r"]
    if r == "ok":
        diff = compare(ref, dev, case.ulp)
        case.status = "pass" if diff is None else "fail"
        case.reason = diff or ""
        return
    msg = "%s: %s" % (dev.get("cls", r), dev.get("msg", ""))
    if r == "bug" and dev.get("cls") == "MemoryError" and \
            dev.get("stage") == "output":
        # invoke() ran; the device script's own hex of the outputs did
        # not fit a small target's heap: nothing to judge
        case.status = "invalid"
        case.reason = "the target's heap could not hold the outputs as " \
            "hex (the harness, after invoke()): %s" % msg
        return
    if r == "err" and not case.strict and dev.get("stage") == "build" and (
            dev.get("cls") == "UnsupportedOpError"
            or (dev.get("cls") == "PrepareError"
                and UNSUPPORTED_RE.search(dev.get("msg", "")))):
        case.status, case.reason = "unsupported", msg
        return
    case.status = "fail"
    if r == "err":
        case.reason = "ours rejected a model TFLM runs (%s): %s" % (
            dev.get("stage"), msg)
    elif r == "bug":
        case.reason = "ours raised %s at %s" % (msg, dev.get("stage"))
    else:
        case.reason = "ours: %s" % dev.get("msg", r)


def ulp_apart(a, b):
    """Elementwise ulps between float32 arrays a and b (int64; the
    distance of their bit patterns in the order of the reals), with a
    huge distance where one is NaN, infinite or zero and the other not
    the same bits."""
    ia = a.view(np.int32).astype(np.int64)
    ib = b.view(np.int32).astype(np.int64)
    ka = np.where(ia < 0, -(ia & 0x7FFFFFFF), ia)
    kb = np.where(ib < 0, -(ib & 0x7FFFFFFF), ib)
    d = np.abs(ka - kb)
    special = ~np.isfinite(a) | ~np.isfinite(b) | (a == 0) | (b == 0)
    return np.where(special & (ia != ib), 1 << 40, np.where(special, 0, d))


def compare(ref, dev, ulp=0):
    """None if every output matches byte for byte (float32 outputs: within
    ulp ulps, ulp_apart), else a description of the first difference
    (elements that differ, first index, values)."""
    ro, do = ref["out"], dev["out"]
    if len(ro) != len(do):
        return "ours has %d outputs, TFLM %d" % (len(do), len(ro))
    for j, (a, b) in enumerate(zip(ro, do)):
        if a == b:
            continue
        dt = ref["dt"][j]
        ba, bb = bytes.fromhex(a), bytes.fromhex(b)
        if len(ba) != len(bb):
            return "output %d: ours %d bytes, TFLM %d (%s)" % (
                j, len(bb), len(ba), dt)
        try:
            ta, tb = np.frombuffer(ba, dt), np.frombuffer(bb, dt)
        except (TypeError, ValueError):
            ta, tb = np.frombuffer(ba, np.uint8), np.frombuffer(bb, np.uint8)
        if ta.dtype == bool or ta.dtype.kind not in "iuf":
            bad = np.nonzero(ta != tb)[0]
        elif ulp and ta.dtype == np.float32:
            bad = np.nonzero(ulp_apart(ta, tb) > ulp)[0]
            if not bad.size:
                continue
        else:  # bit patterns: -0.0 != 0.0, NaNs by payload
            u = "u%d" % ta.itemsize
            bad = np.nonzero(ta.view(u) != tb.view(u))[0]
        k = int(bad[0])
        extra = ""
        if ta.dtype.kind in "iu":
            d = np.abs(ta.astype(np.int64) - tb.astype(np.int64))
            extra = ", max |diff| %d" % int(d.max())
        return ("output %d (%s): %d of %d elements differ%s; first at %d: "
                "ours %r, TFLM %r" % (j, dt, len(bad), ta.size, extra, k,
                                      tb[k].item(), ta[k].item()))
    if dev.get("dt") and ref.get("dt") and dev["dt"] != ref["dt"]:
        return "output dtypes: ours %s, TFLM %s" % (dev["dt"], ref["dt"])
    return None


# --- shrinking and the corpus -------------------------------------------

def shrink(failed, work, jobs, next_id, gen_dirs=()):
    """Replace each failing case by the smallest size that still fails
    (same op, seed and i). Returns the list of (possibly smaller) cases."""
    cand = []
    for c in failed:
        for s in range(1, c.size):
            cand.append(Case(next_id, c.generator, c.seed, c.i, s))
            next_id += 1
    if cand:
        run_cases(cand, work, jobs, gen_dirs)
    out = []
    for c in failed:
        smaller = [d for d in cand if (d.op, d.i) == (c.op, c.i)
                   and d.status == "fail"]
        out.append(min(smaller, key=lambda d: d.size) if smaller else c)
    return out


def corpus_name(case):
    """'<op>_<seed>_<i>' (characters other than [A-Za-z0-9_] become _)."""
    return "%s_%s_%d" % (re.sub(r"[^A-Za-z0-9_]", "_", case.op), case.seed,
                         case.i)


def save(case, corpus):
    """Write the case to the corpus folder; returns the .tflite path."""
    os.makedirs(corpus, exist_ok=True)
    base = os.path.join(corpus, corpus_name(case))
    with open(base + ".tflite", "wb") as f:
        f.write(case.raw)
    rec = {"op": case.op, "seed": case.seed, "i": case.i,
           "size": case.size, "module": case.generator.module,
           "reason": case.reason,
           "description": cases_mod.describe(case.raw),
           "inputs": [d.hex() for d in case.input_data],
           "expected": case.ref.get("out"),
           "expected_dtypes": case.ref.get("dt")}
    with open(base + ".json", "w") as f:
        json.dump(rec, f, indent=1)
        f.write("\n")
    return base + ".tflite"


def corpus_entries(corpus):
    """Sorted names (without extension) of the corpus entries."""
    if not os.path.isdir(corpus):
        return []
    return sorted(n[:-5] for n in os.listdir(corpus)
                  if n.endswith(".json")
                  and os.path.exists(os.path.join(corpus, n[:-5] +
                                                  ".tflite")))


def replay(corpus=CORPUS, jobs=1, names=None):
    """Run every corpus entry (or those named) again: TFLM fresh vs ours.
    Returns the list of classified Cases (strict: any non-match fails)."""
    names = corpus_entries(corpus) if names is None else names
    work = _workdir()
    try:
        todo = []
        for k, name in enumerate(names):
            with open(os.path.join(corpus, name + ".json")) as f:
                rec = json.load(f)
            with open(os.path.join(corpus, name + ".tflite"), "rb") as f:
                raw = f.read()
            gen = cases_mod.Generator(rec["op"], None,
                                      rec.get("module", "?"), True)
            c = Case(k, gen, rec["seed"], rec["i"], rec["size"])
            c.name, c.record = name, rec
            set_files(c, raw, [bytes.fromhex(h) for h in rec["inputs"]],
                      work)
            todo.append(c)
        if todo:
            run_cases(todo, work, jobs)
        for c in todo:
            old = c.record.get("expected")
            if c.ref and c.ref.get("r") == "ok" and old is not None \
                    and old != c.ref["out"]:
                c.reason += " (note: TFLM's outputs changed since saved)"
        return todo
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- the whole run ------------------------------------------------------

STATUSES = ("pass", "fail", "unsupported", "invalid")


def select(generators, ops):
    """The generators named in ops (a list; None: all); 'ADD' also
    picks 'ADD@gen_binary'. Raises KeyError for an unknown name."""
    if not ops:
        return dict(generators)
    picked = {k: g for k, g in generators.items()
              if k in ops or k.split("@")[0] in ops}
    missing = [o for o in ops if o not in picked
               and not any(k.split("@")[0] == o for k in picked)]
    if missing:
        raise KeyError("no generator for %s (known: %s)"
                       % (", ".join(missing), ", ".join(sorted(generators))))
    return picked


def run(n=DEFAULT_N, seed=1, ops=None, corpus=CORPUS, jobs=2, save_=True,
        gen_dirs=(), out=sys.stdout, shrink_=True, case=None, size=None):
    """Run n cases per op (ops: names, None for all; gen_dirs: folders
    with more gen_*.py modules). Returns (exit status, {op: {status:
    count}}, [failing Cases after shrinking]). Prints a summary line per
    op, every failure (saved to corpus when save_) and the first invalid /
    unsupported message per op. case / size: run only case i = case of
    each op (with that size budget, default its own)."""
    t0 = time.time()
    errors = []
    generators = cases_mod.discover(gen_dirs, errors=errors)
    for e in errors:
        out.write("warning: generator module failed to import: %s\n"
                  % e.strip().splitlines()[-1])
    gens = select(generators, ops)
    todo = []
    for op in sorted(gens):
        for i in (range(n) if case is None else [case]):
            todo.append(Case(len(todo), gens[op], seed, i,
                             size or cases_mod.size_of(i)))
    work = _workdir()
    try:
        run_cases(todo, work, jobs, gen_dirs)
        failed = [c for c in todo if c.status == "fail"]
        small = shrink(failed, work, jobs, len(todo), gen_dirs) if (
            failed and shrink_) else failed
        counts = report(todo, small, out)
        for c in small:
            if save_:
                path = save(c, corpus)
                rel = os.path.relpath(path)
                out.write("saved %s\n" % (path if rel.startswith("..")
                                           else rel))
        out.write("%d cases, %d ops, %.1f s (seed %s, jobs %d)\n"
                  % (len(todo), len(gens), time.time() - t0, seed, jobs))
        return (1 if failed else 0), counts, small
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(todo, small, out):
    """Print the per-op table and the details; returns the counts."""
    counts, first = {}, {}
    for c in todo:
        counts.setdefault(c.op, {s: 0 for s in STATUSES})[c.status] += 1
        if c.status in ("invalid", "unsupported"):
            first.setdefault((c.op, c.status), c)
    w = max([len(op) for op in counts] + [2])
    out.write("%-*s %6s %6s %6s %6s %8s\n" % (w, "op", "cases", "pass",
                                              "fail", "unsup", "invalid"))
    for op in sorted(counts):
        k = counts[op]
        out.write("%-*s %6d %6d %6d %6d %8d\n" % (
            w, op, sum(k.values()), k["pass"], k["fail"], k["unsupported"],
            k["invalid"]))
    for (op, st), c in sorted(first.items()):
        out.write("\n%s %s (first of %d): %s\n" % (
            op, st, counts[op][st], c.tag()))
        out.write("  %s\n" % c.reason[:600])
        if st == "invalid" and c.raw is not None:
            out.write(_indent(cases_mod.describe(c.raw)) + "\n")
    target = ""
    if TARGET["cmd"]:
        import shlex
        target = " --target-cmd %s --target-arch %s" % (
            shlex.quote(TARGET["cmd"]), TARGET["arch"])
    for c in small:
        out.write("\nFAIL %s\n  %s\n%s\n  rerun: python -m host_tools "
                  "conformance --ops %s --seed %s --case %d --size %d%s\n" % (
                      c.tag(), c.reason[:800],
                      _indent(cases_mod.describe(c.raw)), c.op, c.seed,
                      c.i, c.size, target))
    return counts


def _indent(text, pre="    "):
    return "\n".join(pre + line for line in text.splitlines())


# --- command line -----------------------------------------------------------

def add_parser(sub):
    """Add the `conformance` subcommand to host_tools' argparse."""
    p = sub.add_parser(
        "conformance",
        help="seeded single-op models: ours vs TFLM, bit-exact",
        description=__doc__.split("\n\n")[0])
    p.add_argument("-n", "--n", type=int, default=DEFAULT_N,
                   help="cases per op (default %d)" % DEFAULT_N)
    p.add_argument("--seed", default="1",
                   help="seed of the run (any string; default 1)")
    p.add_argument("--ops", default="",
                   help="comma-separated op names (default: all)")
    p.add_argument("--corpus", default=CORPUS,
                   help="where failing cases are saved (default "
                        "tests/conformance_corpus)")
    p.add_argument("--jobs", "-j", type=int, default=2,
                   help="TFLM workers and MicroPython processes at once")
    p.add_argument("--no-save", action="store_true",
                   help="do not write failing cases to the corpus")
    p.add_argument("--replay", action="store_true",
                   help="run the corpus entries instead of new cases")
    p.add_argument("--case", type=int, default=None,
                   help="run only case I of each op (reproduce a failure)")
    p.add_argument("--size", type=int, default=None,
                   help="size budget 1..4 for --case (default: its own)")
    p.add_argument("--list", action="store_true",
                   help="list the ops that have generators")
    p.add_argument("--target-cmd", default=None, metavar="CMD",
                   help="run our side on a MicroPython target instead of "
                        "the unix port: a command with {image} (a ROMFS "
                        "image: the package and the cases) and {script}, "
                        "as bench-device's --cmd (for example "
                        "$TFLM_ARMV6M_CMD)")
    p.add_argument("--target-arch", default="armv6m",
                   help="mpy-cross -march of the target (default armv6m)")
    return p


def main(args):
    """Run the `conformance` subcommand; returns the exit status (0 ok,
    1 a failure, 2 an unknown op)."""
    if args.list:
        errors = []
        gens = cases_mod.discover(errors=errors)
        for op in sorted(gens):
            print("%-28s %s%s" % (op, gens[op].module,
                                  " (strict)" if gens[op].strict else ""))
        for e in errors:
            print("import failed: %s" % e.strip().splitlines()[-1])
        return 0
    TARGET["cmd"], TARGET["arch"] = args.target_cmd, args.target_arch
    if args.replay:  # (on the target too, with --target-cmd)
        done = replay(args.corpus, args.jobs)
        bad = [c for c in done if c.status != "pass"]
        for c in done:
            print("%-40s %s %s" % (c.name, c.status, c.reason[:300]))
        print("%d corpus entries, %d not passing" % (len(done), len(bad)))
        return 1 if bad else 0
    ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    try:
        status, _, _ = run(args.n, args.seed, ops or None, args.corpus,
                           args.jobs, not args.no_save, case=args.case,
                           size=args.size)
    except KeyError as e:
        print("error: %s" % e.args[0], file=sys.stderr)
        return 2
    return status
