"""`python -m host_tools mpy --board pico` (or `--arch armv6m`): the
package precompiled with mpy-cross into build/<board or arch>/tflm/.

A .mpy file imports without compiling on the board (less RAM and time at
import). Native and viper code in it is for one architecture: a board loads
.mpy files of its own arch and of the lower ones of its family, so one
armv6m build runs on every Cortex-M board (ARMv6-M code is valid Thumb
everywhere); armv7emsp / armv7emdp builds use Thumb-2 instructions and run
only on Cortex-M4/M7 (and M33) boards.

`python -m host_tools package-json` writes package.json, the file
`mpremote mip install github:OWNER/REPO` reads (micropython-lib's
convention: "urls" maps each destination on the board to a source path
relative to package.json).
"""

import json
import os
import re
import shutil
import sys

from . import PKG_DIR, ROOT
from .romfs import ARCHES, compile_package, package_sources

BUILD_DIR = os.path.join(ROOT, "build")
PACKAGE_JSON = os.path.join(ROOT, "package.json")


def target(board=None, arch=None):
    """(arch, name of the build folder) for a board id or an arch."""
    if board:
        from .board_spec import get_board
        b = get_board(board)
        if arch and arch != b["march"]:
            raise SystemExit("board %s is %s, not %s" % (board, b["march"],
                                                         arch))
        return b["march"], board
    if not arch:
        raise SystemExit("give --board or --arch")
    if arch not in ARCHES:
        raise SystemExit("unknown arch %s (one of %s)"
                         % (arch, ", ".join(sorted(ARCHES))))
    return arch, arch


def kernel_modules():
    """{BuiltinOperator code: kernel module name} for every operator the
    device package supports (its op resolver table, kernels._KERNELS,
    which the device reads one code at a time)."""
    from tflm import kernels
    return {int(w.split(":")[0]): w.split(":")[1]
            for w in kernels._KERNELS.split()}


def _kernel_deps(name, seen, types=None, walked=None):
    """Adds kernel module name and the kernels/ modules it imports
    (`from . import x, y`, `from .x import y`) to seen, transitively. An
    import inside a function that kernels._LAZY declares for a tensor
    type is followed only when `types` (a set of TensorType codes and
    flags, Model.used_codes; None: all) holds that type (always for type
    *). walked ({module: the types it was walked with}, shared by the
    calls for one set of models): a module reached again with types it
    was not walked with is walked again for them (ADD's chunked eval,
    for a small SUB after a large ADD)."""
    from tflm import kernels
    if walked is None:
        walked = {}
    done = walked.get(name, False)
    if done is None or (done is not False and types is not None
                        and types <= done):
        return
    walked[name] = None if types is None else set(types) | (done or set())
    seen.add(name)
    path = os.path.join(PKG_DIR, "tflm", "kernels", name + ".py")
    with open(path) as f:
        src = f.read()
    lazy = kernels.lazy(name)
    for ind, mod, group, what in re.findall(
            r"^([ \t]*)from \.(\w*)[ \t]+import[ \t]+"
            r"(?:\(([^)]*)\)|([\w \t,]+))", src, re.M):
        if mod:
            deps = [mod]
        else:  # from . import a, b as c
            deps = [w.split()[0] for w in (group or what).split(",")
                    if w.strip()]
        for dep in deps:
            if ind and types is not None and \
                    any(m == dep for _, m in lazy) and \
                    not any(m == dep and (t is None or t in types)
                            for t, m in lazy):
                continue
            if os.path.exists(os.path.join(PKG_DIR, "tflm", "kernels",
                                           dep + ".py")):
                _kernel_deps(dep, seen, types, walked)


# imported only by a model with a CUSTOM operator (tflm.register_op)
CUSTOM_OP_MODULES = ("custom.py", "flexbuffers.py")


def needed_modules(model_paths, flash=False):
    """Package paths ('tflm/kernels/conv.py', ...) that running these
    models imports: every module outside kernels/ (custom.py and
    flexbuffers.py only for a model with a custom operator, audio.py only
    for one with TFLM's Signal operators (the audio front-end), whose
    helpers it holds, flashimage.py only with flash=True: models in an
    rp2 flash image; romcode.py never: an image that links has it in
    kernels/__init__.py),
    kernels/__init__.py, and the kernel modules of their operators
    (kernels are imported only when a model uses them). Unsupported
    operators are ignored here."""
    from tflm import kernels
    from tflm.model import Model

    from . import romcode
    names = set()
    custom = audio = False
    mods = {}  # kernel module: the types of its operators' tensors
    for path in model_paths:
        with open(path, "rb") as f:
            m = Model(f.read())
        for op in m.operators:
            mod = kernels.module_name(op.code) if op.custom_code is None \
                else kernels.custom_module_name(op.custom_code)
            custom = custom or op.custom_code is not None
            audio = audio or (op.custom_code is not None and mod is not None)
            if mod:
                # what the interpreter preloads (kernels.preload): the
                # lazy modules for the types of these operators' tensors,
                # their inputs' + 64, and Model.SMALL_FLAG
                custom_op = op.custom_code is not None
                mods.setdefault(mod, set()).update(m.used_codes(
                    custom_op, op.custom_code if custom_op else op.code))
    walked = {}
    for mod, types in mods.items():
        _kernel_deps(mod, names, types, walked)
    out = set()
    for _, rel in package_sources():
        parts = rel.split("/")
        if parts[-1] in CUSTOM_OP_MODULES and not custom:
            continue
        if parts[-1] == "flashimage.py" and not flash:
            continue
        if rel == "tflm/audio.py" and not audio:
            continue
        if rel == romcode.BOARD_SIDE:  # (only inside a linking image)
            continue
        if len(parts) < 3 or parts[-1] == "__init__.py" or \
                parts[-1][:-3] in names:
            out.add(rel)
    return out


def build(arch, out_dir, only=None):
    """Compiles micropython/tflm/**/*.py for arch into out_dir/tflm/
    (replacing it); only: a set of package paths from needed_modules()
    to compile just those. Returns the list of written paths. Raises
    RuntimeError with mpy-cross's messages if a module does not compile."""
    files = compile_package(arch)
    if only is not None:
        files = [(rel, d) for rel, d in files if rel[:-4] + ".py" in only]
    dest = os.path.join(out_dir, "tflm")
    if os.path.isdir(dest):
        shutil.rmtree(dest)
    written = []
    for rel, data in files:
        path = os.path.join(out_dir, *rel.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        written.append(path)
    return written


def build_target(board=None, arch=None, build_dir=BUILD_DIR, only=None):
    """Builds for a board or arch; returns (arch, out_dir, paths)."""
    arch, name = target(board, arch)
    out_dir = os.path.join(build_dir, name)
    return arch, out_dir, build(arch, out_dir, only)


def package_json():
    """The package.json dict for mip: every .py of micropython/tflm
    installed as tflm/... (source paths relative to the repo root)."""
    urls = []
    for src, rel in package_sources():
        urls.append([rel, os.path.relpath(src, ROOT).replace(os.sep, "/")])
    from tflm import __version__
    return {"urls": urls, "deps": [], "version": __version__}


def package_json_text():
    """package.json as text, one [destination, source] pair a line (the
    layout of the examples in MicroPython's docs/reference/packages.rst)."""
    d = package_json()
    urls = ",\n".join("    " + json.dumps(u) for u in d["urls"])
    return ('{\n  "urls": [\n%s\n  ],\n  "deps": %s,\n  "version": %s\n}\n'
            % (urls, json.dumps(d["deps"]), json.dumps(d["version"])))


def add_parsers(sub):
    """The `mpy` and `package-json` subcommands (argparse subparsers)."""
    p = sub.add_parser("mpy", help="compile the package to .mpy into "
                                   "build/<board or arch>/tflm")
    p.add_argument("--board", help="board id (boards/<id>/board.json)")
    p.add_argument("--arch", help="mpy-cross -march (instead of --board): "
                                  + ", ".join(sorted(ARCHES)))
    p.add_argument("--build-dir", default=BUILD_DIR)
    p.add_argument("--only-for", action="append", default=[],
                   metavar="MODEL",
                   help="compile only the modules these models need "
                        "(repeatable; saves flash on small boards)")
    j = sub.add_parser("package-json", help="write package.json (mip)")
    j.add_argument("--check", action="store_true",
                   help="exit 1 if package.json is out of date")


def main_mpy(args):
    """`python -m host_tools mpy`: compile, print the folder and size;
    returns the exit status (1 if a module does not compile)."""
    try:
        only = needed_modules(args.only_for) if args.only_for else None
        args.build_dir = os.path.abspath(args.build_dir)
        arch, out_dir, paths = build_target(args.board, args.arch,
                                            args.build_dir, only)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    size = sum(os.path.getsize(p) for p in paths)
    print("%s: %d .mpy files, %d bytes, -march=%s"
          % (os.path.join(os.path.relpath(out_dir, ROOT), "tflm"),
             len(paths), size, arch))
    return 0


def main_package_json(args):
    """`python -m host_tools package-json [--check]`: write package.json
    (or compare it); returns the exit status."""
    text = package_json_text()
    if args.check:
        try:
            with open(PACKAGE_JSON) as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same:
            print("package.json is out of date: run python -m host_tools "
                  "package-json", file=sys.stderr)
            return 1
        return 0
    with open(PACKAGE_JSON, "w") as f:
        f.write(text)
    print("wrote package.json (%d files)" % len(package_json()["urls"]))
    return 0


__all__ = ["build", "build_target", "needed_modules", "package_json"]
