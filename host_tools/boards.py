"""`python -m host_tools boards`: which models fit which board.

Each boards/<id>/board.json describes a board (mpy-cross arch, heap,
flash, ROMFS) and lists the models of ../shared/models that fit it. This
tool recomputes those lists so that they stay true as the runtime changes:

- arena: the device package's own planner (tflm.planner.plan_model), the
  exact plan the board uses;
- everything else the runtime keeps in RAM (the persistent arena: per-
  channel multipliers, unaligned biases, tables, scratch; state tuples and
  views) and the RAM that imported code takes are measured on the
  MicroPython unix port with gc.mem_alloc(), in a fresh process per model
  that imports just the modules the model needs (build.needed_modules: the
  same set `make deploy ONLY_NEEDED=1` copies). A 64-bit port is scaled to a
  32-bit board (OBJ_FACTOR, CODE_FACTOR: calibrated with a 32-bit x86 build
  of the same unix port, where objects measured 0.52 to 0.63 and code 0.74
  of their 64-bit size); both arena parts are the same on every port and are
  not scaled;
- a model read from the filesystem is also in RAM (Interpreter(path) reads
  the file); one in ROMFS is used in place and costs no RAM.

A model fits when code + runtime + arena (+ file) + reserve <= heap, with
reserve = CONSTRUCTION_MARGIN + FREE_AFTER_LOAD: construction's peak needs
at most 11 KB of free heap beyond what the interpreter keeps (measured per
model, holes that imports leave included, by tests/test_board_heap.py,
which fails any shared model that needs more on a 32-bit build; today
2.2-8.7 KB, the audio preprocessor the most), and 6 KB more stay free
for the user's program. It also
needs its file to fit the board's storage (90% of the filesystem, or the
ROMFS partition) next to the .mpy modules it needs
(`make deploy ... ONLY_NEEDED=1` or `python -m host_tools mpy
--only-for MODEL` build just those). `--write` updates the board.json
files, `--check` exits 1 if a committed list disagrees
(tests/test_board.py runs the same comparison).
"""

import json
import os
import sys
import tempfile

from . import PKG_DIR, ROOT, device, device_script
# board.json reading lives in board_spec (build.py needs it too, and
# this module needs build.py's kernel dependencies)
from .board_spec import (BOARDS_DIR, REQUIRED, get_board,  # noqa: F401
                         load_boards, validate)

MODELS_DIR = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))

KB = 1024
OBJ_FACTOR = 0.65      # 64-bit object bytes -> 32-bit (measured 0.52-0.63)
CODE_FACTOR = 0.75     # 64-bit code RAM -> Thumb (measured 0.74 on x86-32)
# heap beyond what is kept that constructing an interpreter may need
# (tests/test_board_heap.py holds every shared model to it)
CONSTRUCTION_MARGIN = 11 * KB
FREE_AFTER_LOAD = 6 * KB  # and what stays free for the user's program
RUNTIME_ALLOWANCE = 16 * KB  # runtime records of a typical model (budget)
# kernel modules of a typical int8 CNN (for the arena budget)
TYPICAL_KERNELS = ("conv", "depthwise_conv", "fully_connected", "pooling",
                   "softmax", "reshape", "add")
FS_SLACK = 0.9         # usable part of a filesystem partition
ROMFS_OVERHEAD = 1 * KB  # ROMFS record headers and alignment padding
BUDGET_TOLERANCE = 8 * KB  # committed arena budgets may lag this much

# Runs in MicroPython, one process per model (a fresh heap, so that code
# RAM, qstrs included, is the model's own; measure_one counts the qstrs
# each step made by their entries and bytes, not by the pools the unix
# port allocates for them, a step of kilobytes wherever one fills up,
# which a board's pools do elsewhere). argv: pkg_dir and
# a job file: line 1 the kernel modules the model imports (comma-separated,
# each after those it imports), line 2 the model path (or empty). (A file
# because the unix port aborts on an argument over 255 bytes.) Prints one
# JSON line: core, kernel and construction code bytes (the last: the
# modules only construction uses, which an Interpreter drops once built),
# then the interpreter's heap use.
MEASURE = device_script("mp_measure.py")


def model_files(models_dir=MODELS_DIR):
    """{model key (its folder name): .tflite path} of the shared models
    (the deliberately malformed ones excluded); {} if the folder is absent."""
    out = {}
    if not os.path.isdir(models_dir):
        return out
    for d in sorted(os.listdir(models_dir)):
        if d == "malformed":
            continue
        folder = os.path.join(models_dir, d)
        files = sorted(f for f in os.listdir(folder)
                       if f.endswith(".tflite")) if os.path.isdir(folder) \
            else []
        if files:
            out[d] = os.path.join(folder, files[0])
    return out


def planned_arena(path):
    """Arena bytes from tflm.planner.plan_model (CPython, same plan as the
    board), or None if the model cannot be planned."""
    from tflm.model import Model
    from tflm.planner import plan_model
    try:
        with open(path, "rb") as f:
            return plan_model(Model(f.read()))[0]
    except Exception:  # noqa: BLE001 -- reported by the measurement
        return None


def _kernel_order(names=None):
    """kernels/ modules (all, or names and what they import at module
    level), each after the kernels/ modules it imports. Modules that
    names' kernels import lazily (kernels._LAZY, for tensor types) come
    only when listed in names: build.needed_modules() lists them for a
    model that has tensors of their type."""
    from tflm import kernels
    from .build import _kernel_deps
    from .romfs import HOST_ONLY, ON_DEMAND, THUMB_ONLY, package_sources
    lazy = set()
    if names is None:
        names = _model_kernels(rel for _, rel in package_sources())
    else:
        # (the prepare-time helpers, type *, come with every use)
        lazy = {m for n in names for t, m in kernels.lazy(n)
                if t is not None} - set(names)
    order = []
    for n in sorted(names):
        deps = set()
        _kernel_deps(n, deps, set() if lazy else None)
        for d in sorted(deps, key=_depth):
            path = "tflm/kernels/%s.py" % d
            if d not in order and d not in lazy and \
                    path not in THUMB_ONLY and path not in ON_DEMAND \
                    and path not in HOST_ONLY:
                order.append(d)
    return order


def _depth(name, seen=()):
    """Longest chain of kernels/ imports below module name."""
    from .build import _kernel_deps
    deps = set()
    _kernel_deps(name, deps)
    deps.discard(name)
    if not deps or name in seen:
        return 0
    return 1 + max(_depth(d, seen + (name,)) for d in deps)


def measure_one(modules, path=None):
    """Runs MEASURE in a fresh unix-port process: imports the kernels/
    modules listed (in that order), then builds path's interpreter if
    given. Returns its dict (bits, core, kernels, and total, arena,
    persistent, ops or error). Raises device.DeviceError if it fails."""
    # Every module's __file__ and the paths given become strings on the
    # heap, whose size would then depend on where the repo and the model
    # are: the process sees only fixed-length relative names (a link to
    # the package, a copy of the model, sys.path [''], run with -m).
    import shutil
    with tempfile.TemporaryDirectory(prefix="tflm_measure_") as tmp:
        with open(os.path.join(tmp, "measure.py"), "w") as f:
            f.write(MEASURE)
        os.symlink(os.path.join(PKG_DIR, "tflm"), os.path.join(tmp, "tflm"))
        if path:
            shutil.copyfile(path, os.path.join(tmp, "m.tflite"))
        with open(os.path.join(tmp, "job.txt"), "w") as f:
            f.write(",".join(modules) + "\n" + ("m.tflite" if path else ""))
        proc = device.run_script("measure", ["", "job.txt"], timeout=300,
                                 heap="64M", cwd=tmp, module=True,
                                 env=dict(os.environ, MICROPYPATH=""))
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise device.DeviceError("measurement failed:\n%s%s"
                                 % (proc.stdout[-2000:], proc.stderr[-2000:]))
    r = json.loads(lines[-1])
    _qstr_exact(r, lines)
    return r


# bytes of a qstr's pool entry besides its string: hash and length bytes
QSTR_ENTRY = 2


def _qstr_exact(r, lines):
    """In r's core, kernels and construction figures, the qstrs that
    step made at their size (an entry: a pointer and QSTR_ENTRY bytes;
    their string bytes) in place of the pools' growth (qstr_info()'s
    lines after each "QSTR stage" marker)."""
    at, stage = {}, None
    for ln in lines:
        if ln.startswith("QSTR "):
            stage = ln[5:].strip()
        elif stage and ln.startswith("qstr pool:"):
            f = dict(kv.strip().split("=") for kv in ln[10:].split(","))
            at[stage] = (int(f["n_qstr"]), int(f["n_str_data_bytes"]),
                         int(f["n_total_bytes"]))
            stage = None
    entry = r["bits"] // 8 + QSTR_ENTRY
    prev = "start"
    for k in ("core", "kernels", "construction"):
        if prev in at and k in at:
            (n0, s0, t0), (n1, s1, t1) = at[prev], at[k]
            r[k] += (n1 - n0) * entry + (s1 - s0) - (t1 - t0)
        prev = k


def _model_kernels(needed):
    """kernels/ module names in build.needed_modules() paths, but for
    those that only Thumb ports import (romfs.THUMB_ONLY: measured on
    the unix port, the estimate leaves their few hundred bytes out), and
    those imported on demand (romfs.ON_DEMAND)."""
    from .romfs import ON_DEMAND, THUMB_ONLY
    return [p.split("/")[2][:-3] for p in needed
            if p.count("/") == 2 and p.startswith("tflm/kernels/")
            and not p.endswith("__init__.py") and p not in THUMB_ONLY
            and p not in ON_DEMAND]


class Cost:
    """RAM and storage one model needs on a 32-bit board (bytes).

    arena: planned activations; runtime: everything else the interpreter
    keeps (estimated for 32 bits); code: RAM of the imported modules it
    uses, those only construction uses included (the peak; once built,
    the interpreter gives theirs back); file: the .tflite size; error: why
    it cannot run (None if it can).
    """

    def __init__(self, key, path):
        self.key, self.path = key, path
        self.file = os.path.getsize(path)
        self.planned = planned_arena(path)
        self.arena = self.planned
        from .build import needed_modules
        try:
            self.needed = needed_modules([path])
        except Exception:  # noqa: BLE001 - the measurement says why
            self.needed = set()
        r = measure_one(_kernel_order(_model_kernels(self.needed)), path)
        self.error = r.get("error")
        if self.error:
            self.ops = self.runtime = self.code = 0
            self.needed = None
            return
        # The board's own plan is what counts; planned != arena means the
        # planner is not deterministic across Pythons (shown with '*').
        self.arena = r["arena"]
        of, cf = (OBJ_FACTOR, CODE_FACTOR) if r["bits"] == 64 else (1.0,
                                                                    1.0)
        # the persistent arena (multipliers, shifts, biases, scratch) has
        # the same size on every port; the other objects scale
        objects = max(0, r["total"] - r["arena"] - r["persistent"])
        self.ops = r["ops"]
        self.runtime = r["persistent"] + int(objects * of + 0.5)
        self.code = int(cf * (r["core"] + r["kernels"] +
                              r["construction"]) + 0.5)

    def ram(self, in_romfs):
        """Heap bytes needed; the file too unless it is in ROMFS."""
        return self.code + self.runtime + self.arena + \
            (0 if in_romfs else self.file)


def costs(models_dir=MODELS_DIR):
    """(list of Cost for every shared model, code bytes of the core and
    the TYPICAL_KERNELS on a board)."""
    out = [Cost(k, p) for k, p in model_files(models_dir).items()]
    r = measure_one(_kernel_order(TYPICAL_KERNELS))
    cf = CODE_FACTOR if r["bits"] == 64 else 1.0
    return out, int(cf * (r["core"] + r["kernels"] + r["construction"])
                    + 0.5)


_PKG_MPY = {}


def mpy_sizes(arch):
    """{package path 'tflm/x.py': bytes of its .mpy for arch}."""
    if arch not in _PKG_MPY:
        from .romfs import mpy_cross, package_sources
        sizes = {}
        with tempfile.TemporaryDirectory(prefix="tflm_sizes_") as tmp:
            dst = os.path.join(tmp, "m.mpy")
            for src, rel in package_sources():
                # a module that does not compile (tests/test_board.py
                # reports it) only affects the models that need it
                err = mpy_cross(src, rel, arch, dst)
                sizes[rel] = 0 if err else os.path.getsize(dst)
        _PKG_MPY[arch] = sizes
    return _PKG_MPY[arch]


def package_mpy_bytes(arch, only=None):
    """Flash bytes of the .mpy package for arch (only: the package paths
    a model needs, see build.needed_modules; None: all of it)."""
    from .romfs import for_arch
    return sum(n for rel, n in mpy_sizes(arch).items()
               if (only is None or rel in only) and for_arch(rel, arch))


def reserve(board):
    """Heap bytes a model must leave free: construction's margin above
    what it keeps, plus what the user's program gets once it is loaded
    (the same on every board: the margin is measured, not a share of the
    heap)."""
    return CONSTRUCTION_MARGIN + FREE_AFTER_LOAD


def arena_budget(board, code_all):
    """Largest arena to plan for: heap - reserve - code - RUNTIME_ALLOWANCE,
    rounded down to 4 KB (subtract the model file too when it is read
    from the filesystem). code_all: RAM of the core modules plus the
    kernels of a typical CNN (TYPICAL_KERNELS; kernels are imported only
    when a model uses them)."""
    b = board["heap_bytes"] - reserve(board) - code_all - RUNTIME_ALLOWANCE
    return max(0, b // (4 * KB) * 4 * KB)


def fits(board, cost, in_romfs, storage=True):
    """True if the model runs on the board (RAM, and storage unless
    storage=False: a model in a flash image, which host_tools.flash_image
    checks against the firmware's gap)."""
    if cost.error:
        return False
    if cost.ram(in_romfs) + reserve(board) > board["heap_bytes"]:
        return False
    if not storage:
        return True
    pkg = package_mpy_bytes(board["march"], cost.needed)
    if in_romfs:
        return cost.file + pkg + ROMFS_OVERHEAD <= board["romfs_bytes"]
    return cost.file + pkg <= FS_SLACK * board["filesystem_bytes"]


def model_cost(path):
    """The Cost of one model file (measured on the unix port)."""
    return Cost(os.path.basename(path), path)


def explain(board, cost, in_romfs, storage=True):
    """(fits, one line saying why) for a Cost on a board (in_romfs: the
    model is read in place; storage=False: its storage is checked
    elsewhere, see fits())."""
    if cost.error:
        return False, "cannot run: " + cost.error
    ram = cost.ram(in_romfs)
    usable = board["heap_bytes"] - reserve(board)
    parts = "code %s + runtime %s + arena %s%s = %s" % (
        _k(cost.code), _k(cost.runtime), _k(cost.arena),
        "" if in_romfs else " + file %s" % _k(cost.file), _k(ram))
    ok = fits(board, cost, in_romfs, storage)
    if ram > usable:
        why = "more than the %s of heap a program can use" % _k(usable)
    elif not ok:
        why = "RAM is fine but the file does not fit the %s" % (
            "ROMFS partition" if in_romfs else "filesystem")
    else:
        why = "within the %s of heap a program can use" % _k(usable)
    return ok, "%s %s on %s: %s, %s" % (
        cost.key, "fits" if ok else "does NOT fit", board["id"], parts, why)


def judge(board, model_costs, code_all):
    """{'fits': {...}, 'arena_budget_bytes': n}: what board.json should
    say according to this tool."""
    modes = ["filesystem"] + (["romfs"] if board["romfs"] else [])
    return {"fits": {m: [c.key for c in model_costs
                         if fits(board, c, m == "romfs")] for m in modes},
            "arena_budget_bytes": arena_budget(board, code_all)}


def disagreements(boards, model_costs, code_all):
    """Lines naming every board.json value that differs from judge()."""
    out = []
    for b in boards:
        want = judge(b, model_costs, code_all)
        for key, val in want.items():
            have = b.get(key)
            if key == "arena_budget_bytes" and isinstance(have, int) and \
                    abs(have - val) <= BUDGET_TOLERANCE:
                continue  # the package's code size moves a little
            if have != val:
                out.append("%s: %s is %s, the tool says %s"
                           % (b["id"], key, json.dumps(b.get(key)),
                              json.dumps(val)))
    return out


def _k(n):
    return "%dK" % ((n + KB - 1) // KB)


def table(boards, model_costs, code_all):
    """The report printed by `python -m host_tools boards`."""
    lines = ["Boards (heap = MicroPython GC heap; budget = arena to plan for "
             "with the model in ROMFS, minus the file size when it is read "
             "from the filesystem):", ""]
    lines.append("%-14s %-12s %-9s %6s %6s %6s %7s  %s" % (
        "board", "mcu", "march", "heap", "resv", "budget", "flashFS",
        "romfs"))
    for b in boards:
        lines.append("%-14s %-12s %-9s %6s %6s %6s %7s  %s" % (
            b["id"], b["mcu"], b["march"], _k(b["heap_bytes"]),
            _k(reserve(b)), _k(arena_budget(b, code_all)),
            _k(b["filesystem_bytes"]),
            _k(b["romfs_bytes"]) if b["romfs"] else "no"))
    lines += ["", "Models (bytes on a 32-bit board; RAM = code + runtime + "
              "arena [+ file if read from the filesystem]):", ""]
    head = "%-24s %4s %7s %7s %6s %7s  " % ("model", "ops", "arena",
                                            "runtime", "code", "file")
    lines.append(head + " ".join("%-13s" % b["id"] for b in boards))
    for c in model_costs:
        arena = "-" if c.arena is None else "%d%s" % (
            c.arena, "*" if c.planned != c.arena and not c.error else "")
        row = "%-24s %4s %7s %7s %6s %7s  " % (
            c.key, c.ops or "-", arena,
            c.runtime or "-", c.code or "-", c.file)
        if c.error:
            lines.append(row + "unsupported: " + c.error[:60])
            continue
        cells = []
        for b in boards:
            s = "fs" if fits(b, c, False) else "--"
            if b["romfs"]:
                s += " rom" if fits(b, c, True) else " ---"
            cells.append("%-13s" % s)
        lines.append(row + " ".join(cells))
    lines += ["", "fs: fits when read from the flash filesystem; rom: fits "
              "from ROMFS; --: does not fit. Reserve: %s construction "
              "margin + %s free after load." % (_k(CONSTRUCTION_MARGIN),
                                                _k(FREE_AFTER_LOAD))]
    odd = ["%s (CPython %s, MicroPython %s)" % (c.key, c.planned, c.arena)
           for c in model_costs if not c.error and c.planned != c.arena]
    if odd:
        lines.append("* tflm.planner plans differently under CPython and "
                     "MicroPython: " + ", ".join(odd) + "; the table uses "
                     "MicroPython's plan (the board's)")
    return "\n".join(lines)


def write(boards, model_costs, code_all, boards_dir=BOARDS_DIR):
    """Rewrites the fits lists and arena budgets of every board.json."""
    for b in boards:
        b.update(judge(b, model_costs, code_all))
        path = os.path.join(boards_dir, b["id"], "board.json")
        with open(path, "w") as f:
            json.dump(b, f, indent=2)
            f.write("\n")


def add_parser(sub):
    p = sub.add_parser("boards", help="table of boards and the shared "
                                      "models that fit them")
    p.add_argument("--write", action="store_true",
                   help="update the fits lists in boards/*/board.json")
    p.add_argument("--check", action="store_true",
                   help="exit 1 if a board.json disagrees with the table")
    p.add_argument("--models", default=MODELS_DIR,
                   help="folder of models (default ../shared/models)")
    return p


def main(args):
    boards = load_boards()
    for b in boards:
        errs = validate(b, b.get("id"))
        if errs:
            print("%s: %s" % (b.get("id"), "; ".join(errs)), file=sys.stderr)
            return 1
    if not model_files(args.models):
        print("no models in %s" % args.models, file=sys.stderr)
        return 1
    model_costs, code_all = costs(args.models)
    print(table(boards, model_costs, code_all))
    if args.write:
        write(boards, model_costs, code_all)
        print("\nupdated %d board.json files" % len(boards))
        return 0
    bad = disagreements(boards, model_costs, code_all)
    if bad:
        print("\n" + "\n".join(bad), file=sys.stderr)
        if args.check:
            print("run: python -m host_tools boards --write", file=sys.stderr)
            return 1
    return 0
