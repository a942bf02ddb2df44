"""Board fit: what constructing a model costs a board's heap.

On the MicroPython unix port (any build: TFLM_MICROPYTHON selects a 32-bit
one), with the package compiled to .mpy for that build (as a board imports
it) and the model's kernel modules imported first (package cost, not model
cost), host_tools/mp_board_heap.py constructs the model and reports

- kept: the heap it keeps (growth across construction; the model bytes are
  read into a buffer first, as a buffer in flash or RAM is given);
- head / tail: its arena (activations and scratch / persistent data);
- holes: the free heap that importing the package left outside the
  largest free block (small objects can use it, the arena cannot);
- construction margin: the free heap that construction needs, minus
  kept and holes: a ballast block cuts the free heap down to the holes
  plus one block, as on a board, and sizes are tried upwards in 512-byte
  steps until 8 KB of them in a row succeed;

next to TFLM's arena (the oracle's head + tail, 64-bit host build).
Issue 14's goals: holes + margin <= 8 KB, kept <= TFLM + 4 KB (32-bit).

    python -m host_tools fit MODEL.tflite ...
"""

import json
import os
import tempfile

from . import ROOT, build, device

SCRIPT = os.path.join(ROOT, "host_tools", "mp_board_heap.py")
COST_SCRIPT = os.path.join(ROOT, "host_tools", "mp_package_cost.py")


def modules_file(path, work, name=None):
    """A file listing the modules model `path` imports on the unix port,
    one a line (the unix port from PyPI aborts on an argument over 255
    bytes), written as work/<name> (default: the model's file name +
    '.modules'). Modules that only Thumb ports import (romfs.THUMB_ONLY)
    and those imported on demand (romfs.ON_DEMAND) are left out."""
    from .romfs import ON_DEMAND, THUMB_ONLY
    out = os.path.join(work, name or os.path.basename(path) + ".modules")
    tmp = "%s.%d" % (out, os.getpid())
    with open(tmp, "w") as f:
        f.write("\n".join(sorted(
            rel[:-3].replace("/", ".").replace(".__init__", "")
            for rel in build.needed_modules([path])
            if rel not in THUMB_ONLY and rel not in ON_DEMAND)))
    os.replace(tmp, out)  # whole, for a process reading it meanwhile
    return out


def unix_arch():
    """mpy-cross -march of the unix port in use (x64, or x86 for 32-bit)."""
    import subprocess
    from .romfs import arch_of
    proc = subprocess.run([device.micropython_bin(), "-c",
                           "import sys; print(sys.implementation._mpy)"],
                          capture_output=True, text=True, timeout=60)
    return arch_of(int(proc.stdout))


def package(work):
    """Compile the package for the unix port in use into work/tflm."""
    build.build(unix_arch(), work)
    return work


def fixed_layout():
    """Words that run a command without address space randomization
    (setarch -R), or () where setarch is missing. The GC scans the C
    stack conservatively: with addresses that change from run to run, a
    stale word there keeps a different dead object alive each time, and
    a squeezed heap then fits or fails by chance."""
    import platform
    import shutil
    if shutil.which("setarch") is None:
        return ()
    return ("setarch", platform.machine(), "-R")


def _stage(pkg, path):
    """Copy `path` into pkg under a name of fixed length, next to its
    modules file and mp_board_heap.py; returns the model's name there."""
    import shutil
    import zlib
    name = "m%08x" % zlib.crc32(os.path.abspath(path).encode())
    for src, dst in ((path, name + ".tflite"), (SCRIPT, "board_heap.py")):
        dst = os.path.join(pkg, dst)
        if not os.path.exists(dst):
            tmp = "%s.%d" % (dst, os.getpid())
            shutil.copyfile(src, tmp)
            os.replace(tmp, dst)  # whole, for a process reading it meanwhile
    modules_file(path, pkg, name + ".mod")
    return name


def run(pkg, path, target=0, mode="bytes", heap=4 << 20, arena=None):
    """Construct `path` with `target` bytes of free heap (0: all of a
    `heap`-byte heap). mode 'bytes': the model is read into a buffer
    first; 'file': Interpreter(path) reads it. arena: bytes of an arena=
    buffer made first, before any import (None: no arena=). Returns the
    record that mp_board_heap.py prints: free, ok, kept, head, tail, ram,
    need (head + tail: the arena= bytes a word-aligned buffer needs), or
    error.

    Where small objects land depends on the lengths of every string the
    process makes: the script runs as a module (`-m`) in pkg, with the
    model and its modules file copied there under fixed-length names and
    sys.path just [''] (MICROPYPATH empty), so that the result is the
    same wherever the package, the model and $HOME are."""
    name = _stage(pkg, path)
    env = dict(os.environ, MICROPYPATH="")
    proc = device.run_script(
        "board_heap", ["", name + ".tflite", mode, name + ".mod",
                       str(target)] + ([] if arena is None else [str(arena)]),
        timeout=300, heap=str(heap), prefix=fixed_layout(), cwd=pkg,
        env=env, module=True)
    lines = proc.stdout.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        return {"ok": 0, "free": -1, "error": "process failed: %s%s" % (
            proc.stdout[-1000:], proc.stderr[-1000:])}
    return json.loads(lines[-1])


STEP = 512     # bytes between the free-heap sizes tried
SURE = 8192    # margin above the last failure that must all succeed


def measure(pkg, path, static=False):
    """{'kept', 'head', 'tail', 'holes', 'margin', 'error'} for one model:
    margin is what construction needs beyond kept + holes (the free heap
    that imports left outside the largest block, usable by small objects
    only), in STEP bytes: construction succeeds with every free heap
    from kept + holes + margin up to SURE bytes more. Success is not
    monotonic in the free heap (where the ballast ends moves where small
    objects land), so this scans upwards rather than bisecting. 'error':
    the message at the largest margin that failed, or None.
    static: with an arena= buffer of the bytes the model needs (+ 15 for
    its alignment) made before any import, as a board's boot script
    makes it (kept and holes are then the heap besides it); 'arena': its
    bytes."""
    big = run(pkg, path)
    if not big.get("ok"):
        raise RuntimeError("%s does not load: %s" % (path, big.get("error")))
    arena = big["need"] + 15 if static else None
    if static:
        big = run(pkg, path, arena=arena)
        if not big.get("ok"):
            raise RuntimeError("%s does not load on arena=: %s"
                               % (path, big.get("error")))
    kept, holes = big["kept"], big["holes"]
    margin, err, m = -STEP, None, -STEP
    while m < margin + SURE and m < (1 << 20):
        m += STEP
        r = run(pkg, path, kept + holes + m, arena=arena)
        if not r.get("ok"):
            margin, err = m, r.get("error")
    return {"kept": kept, "head": big["head"], "tail": big["tail"],
            "holes": holes, "margin": margin + STEP, "error": err,
            "arena": arena}


def rom_image(work):
    """A ROMFS image of the package compiled for the unix port in use
    (work/tflm.img); returns its path."""
    from . import romfs
    path = os.path.join(work, "tflm.img")
    image, _ = romfs.build(unix_arch())
    with open(path, "wb") as f:
        f.write(image)
    return path


def package_cost(image, path, work, native_arch="armv6m"):
    """What the package costs a board's heap before model `path` is
    constructed, in bytes:

    - 'tflm', 'kernels': the GC heap that `import tflm` keeps, then the
      kernel modules the model uses, measured on the unix port in use
      with the package imported from ROMFS `image` (rom_image(); bytecode
      stays in the image; function objects, module dicts and qstrs are
      made in RAM, as on a board). The unix port keeps machine code
      outside its GC heap, so these leave it out;
    - 'construction': what the modules that only construction uses
      (tflm.interpreter.CONSTRUCTION) take on top, while an Interpreter
      is being built (it drops them once built);
    - 'at_rest': what is left of all that once an Interpreter is built:
      it drops the construction modules and the parser
      (tflm.interpreter.PARSE), which `import tflm` imported (machine
      code not counted either);
    - 'tflm_native', 'kernels_native': the RAM that a board of
      `native_arch` spends on the machine code of the same modules
      (mpy_native.native_ram of their .mpy for that arch); for a Thumb
      arch, the machine code modules (romfs.THUMB_ONLY) the model needs in
      place of their viper twins (their few objects are not measured).

    Raises RuntimeError if MicroPython fails."""
    from . import mpy_native, romfs
    mods = modules_file(path, work)
    proc = device.run_script(COST_SCRIPT, [image, mods], timeout=300)
    lines = proc.stdout.strip().splitlines()
    if not lines or not lines[-1].startswith("{"):
        raise RuntimeError("package cost: %s%s" % (proc.stdout[-1000:],
                                                   proc.stderr[-1000:]))
    r = json.loads(lines[-1])
    # the qstr pools' bytes after the kernels and at rest (qstr_info()'s
    # n_total_bytes after each "qstr: STAGE" line), where the port says
    r["qstr"] = {}
    stage = None
    for line in lines[:-1]:
        if line.startswith("qstr: "):
            stage = line[6:].strip()
        elif stage and "n_total_bytes=" in line:
            r["qstr"][stage] = int(line.rsplit("n_total_bytes=", 1)[1])
            stage = None
    if native_arch not in _NATIVE:
        _NATIVE[native_arch] = {
            rel[:-4].replace("/", ".").replace(".__init__", ""):
            mpy_native.native_ram(data)
            for rel, data in romfs.compile_package(native_arch)}
    ram = _NATIVE[native_arch]
    r["tflm_native"] = sum(ram[m] for m in r["after_tflm"])
    # the modules the unix port imported, as native_arch imports them:
    # a Thumb arch takes the machine code (THUMB_ONLY) for the viper
    # twins (VIPER_TWINS)
    need = build.needed_modules([path])
    swap = [rel[:-3].replace("/", ".") for rel in need
            if not romfs.for_arch(rel, "x64")
            and romfs.for_arch(rel, native_arch)]
    kept = [m for m in r["after_kernels"]
            if romfs.for_arch(m.replace(".", "/") + ".py", native_arch)]
    r["kernels_native"] = sum(ram[m] for m in kept + swap) - \
        r["tflm_native"]
    return r


_NATIVE = {}  # arch -> {module name: native code RAM}


def add_parser(sub):
    f = sub.add_parser(
        "fit", help="heap a model's construction needs on the unix port "
                    "(board fit)",
        description="Columns, in bytes: kept (heap the interpreter keeps, "
                    "model bytes not counted), head / tail (its arena), "
                    "holes (free heap outside the largest block after the "
                    "imports), margin (what construction needs beyond "
                    "kept + holes), TFLM h+t (TFLM's arena, 64-bit). "
                    "TFLM_MICROPYTHON=path/to/micropython measures another "
                    "build, e.g. a 32-bit one.")
    f.add_argument("models", nargs="+", metavar="MODEL.tflite")
    f.add_argument("--static", action="store_true",
                   help="also measure with the arena in an arena= buffer "
                        "made before `import tflm` (kept and margin: the "
                        "heap besides it)")


def main(args):
    from .arena import tflm_arena
    with tempfile.TemporaryDirectory() as work:
        pkg = package(work)
        print("%-36s %8s %8s %8s %7s %7s %9s" % (
            "model", "kept", "head", "tail", "holes", "margin", "TFLM h+t"))
        for path in args.models:
            try:
                r = measure(pkg, path)
            except RuntimeError as e:
                why = str(e).split(": ", 1)[-1][:100]
                print("%-36s does not load: %s" % (
                    os.path.basename(path)[:36], why))
                continue
            tf = tflm_arena(path)
            print("%-36s %8d %8d %8d %7d %7d %9d" % (
                os.path.basename(path)[:36], r["kept"], r["head"],
                r["tail"], r["holes"], r["margin"],
                tf.get("head", 0) + tf.get("tail", 0)))
            if args.static:
                s = measure(pkg, path, static=True)
                print("%-36s %8d %8s %8s %7d %7d" % (
                    "  arena=bytearray(%d)" % (s["head"] + s["tail"]),
                    s["kept"], "", "", s["holes"], s["margin"]))
    return 0
