"""`python -m host_tools deploy --board pico --port /dev/ttyACM0
[--model m.tflite] [--romfs] [--dry-run]`: put tflm (and a model) on a board.

Builds the .mpy package for the board's arch (host_tools.build), then runs
mpremote:

    mpremote connect PORT rm -r :tflm            # stale copy (may be absent)
    mpremote connect PORT cp -r build/<board>/tflm :
    mpremote connect PORT cp MODEL :NAME

With --romfs (boards whose firmware has a ROMFS partition) the package and
the model go into one ROMFS image instead (host_tools.romfs), so the model
is used in place from flash, not read into RAM:

    mpremote connect PORT rm -r :tflm            # would shadow /rom/tflm
    mpremote connect PORT romfs deploy build/<board>/romfs.img
    mpremote connect PORT soft-reset             # mounts the new /rom

With --flash-model (rp2 boards: Pico, Pico 2) the model goes into the
flash between the firmware and the file system instead, as a UF2 file
(host_tools.flash_image) that the user writes with the boot ROM's drive or
picotool: mpremote copies only the package, and the tool prints that one
step. --firmware names the firmware on the board (its .uf2 file, or the
address where it ends), so that a model that does not fit is refused.

--dry-run prints the commands without running them (the build still
happens, so the printed paths exist).
"""

import os
import shlex
import subprocess
import sys

from . import ROOT
from .build import BUILD_DIR, build_target, needed_modules


class Step:
    """One mpremote invocation; may_fail: a failure is not an error."""

    def __init__(self, args, may_fail=False, note=""):
        self.args, self.may_fail, self.note = args, may_fail, note

    def text(self):
        s = " ".join(shlex.quote(a) for a in self.args)
        return s + ("  # " + self.note if self.note else "")


def mpremote_cmd():
    """mpremote next to this Python (the pinned one in .venv), else PATH."""
    cand = os.path.join(os.path.dirname(sys.executable), "mpremote")
    return cand if os.path.exists(cand) else "mpremote"


def _rel(path):
    """An absolute path relative to the repo root when inside it (shorter
    commands; they run with the repo root as working directory)."""
    if not os.path.isabs(path):
        return path
    rel = os.path.relpath(path, ROOT)
    return path if rel.startswith("..") else rel


def plan(board, port, pkg_dir, model=None, name=None, romfs_image=None):
    """The list of Steps. pkg_dir: the built tflm folder; romfs_image: an
    image file holding package and model (then pkg_dir and model are not
    copied to the filesystem)."""
    mp = [_rel(mpremote_cmd()), "connect", port]
    steps = [Step(mp + ["rm", "-r", ":tflm"], may_fail=True,
                  note="remove an old copy (fails harmlessly if absent)")]
    if romfs_image:
        steps.append(Step(mp + ["romfs", "deploy", _rel(romfs_image)]))
        steps.append(Step(mp + ["soft-reset"], note="mount the new /rom"))
        return steps
    steps.append(Step(mp + ["cp", "-r", _rel(pkg_dir), ":"]))
    if model:
        steps.append(Step(mp + ["cp", _rel(model),
                                ":" + (name or os.path.basename(model))]))
    return steps


def build_romfs(board, model, name, out_dir, code_in_rom=True):
    """Writes out_dir/romfs.img (package .mpy + model) with
    host_tools.romfs (code_in_rom: the kernels' machine code runs from the
    image, romcode.py); returns its path. SystemExit if romfs.py is
    absent."""
    try:
        from . import romfs
    except ImportError:
        raise SystemExit("host_tools/romfs.py is not available: deploy "
                         "without --romfs, or build an image and run "
                         "mpremote romfs deploy IMAGE yourself")
    specs = []
    if model:
        specs.append(model + ("=" + name if name else ""))
    image, entries = romfs.build(board["march"], specs,
                                 code_in_rom=code_in_rom)
    if len(image) > board["romfs_bytes"]:
        raise SystemExit("ROMFS image of %d bytes is larger than %s's "
                         "%d byte partition" % (len(image), board["id"],
                                                board["romfs_bytes"]))
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "romfs.img")
    with open(path, "wb") as f:
        f.write(image)
    return path


def fit_note(board, model, in_romfs, storage=True):
    """(fits, one line): does the model fit the board (host_tools.boards,
    measured on the unix port), or why not; falls back to comparing the
    planned arena with arena_budget_bytes if the unix port cannot run
    (fits is then None: unknown). storage=False: a flash image model,
    whose storage flash_image checks."""
    from . import boards
    try:
        return boards.explain(board, boards.model_cost(model), in_romfs,
                              storage)
    except Exception:  # noqa: BLE001 -- no unix port: a coarser check
        pass
    from tflm.model import Model
    from tflm.planner import plan_model
    with open(model, "rb") as f:
        raw = f.read()
    try:
        arena = plan_model(Model(raw))[0]
    except Exception as e:  # noqa: BLE001 -- the board will say it too
        return None, "warning: %s cannot be planned: %s" % (model, e)
    return None, "arena %d%s bytes; %s's arena budget is %d" % (
        arena, "" if in_romfs else " + file %d" % len(raw), board["id"],
        board["arena_budget_bytes"])


def run(steps, dry_run):
    """Prints each command; runs it unless dry_run. Returns 0 or the exit
    code of the first failing step that must not fail."""
    for s in steps:
        print(s.text())
        if dry_run:
            continue
        rc = subprocess.call(s.args, cwd=ROOT)
        if rc and not s.may_fail:
            print("failed (exit %d): %s" % (rc, s.text()), file=sys.stderr)
            return rc
    return 0


def add_parser(sub):
    p = sub.add_parser("deploy", help="copy the .mpy package (and a model) "
                                      "onto a board with mpremote")
    p.add_argument("--board", required=True, help="board id (boards/<id>)")
    p.add_argument("--port", default="auto",
                   help="mpremote device: /dev/ttyACM0, COM3, auto")
    p.add_argument("--model", help=".tflite file to copy too")
    p.add_argument("--name", help="file name on the board (default: the "
                                  "model's own)")
    p.add_argument("--only-needed", action="store_true",
                   help="copy only the modules the model needs (small "
                        "filesystems; other models may then lack kernels)")
    p.add_argument("--romfs", action="store_true",
                   help="package and model into the board's ROMFS partition")
    p.add_argument("--dry-run", action="store_true",
                   help="print the mpremote commands, do not run them")
    p.add_argument("--force", action="store_true",
                   help="copy a model even if it does not fit the board")
    p.add_argument("--flash-model", help="rp2: .tflite file to put in "
                   "flash after the firmware, as a UF2 file to write")
    p.add_argument("--firmware", help="with --flash-model: the firmware's "
                   ".uf2 file, or the address where it ends (0x...)")
    p.add_argument("--code-in-ram", action="store_true",
                   help="with --romfs: the kernels' machine code is copied "
                        "to RAM at import, as from a filesystem (default: "
                        "it runs in place from the image)")
    p.add_argument("--no-compile", dest="compile", action="store_false",
                   help="copy the model as it is (default: compiled for "
                        "the board, host_tools compile)")
    p.add_argument("--build-dir", default=BUILD_DIR)
    return p


def main(args):
    from .boards import get_board
    board = get_board(args.board)
    if args.romfs and not board["romfs"]:
        print("%s has no ROMFS partition: deploy without ROMFS=1 "
              "(--romfs).\n%s" % (board["id"], board.get("romfs_note", "")),
              file=sys.stderr)
        return 2
    if args.model:
        if not os.path.exists(args.model):
            print("no such model file: %s" % args.model, file=sys.stderr)
            return 2
        args.model = os.path.abspath(args.model)
    if args.flash_model:
        err = _check_flash_args(args)
        if err:
            print(err, file=sys.stderr)
            return 2
        from .flash_image import FlashImageError, board_layout
        try:
            board_layout(board)
        except FlashImageError as e:
            print("error: %s: nothing copied" % e, file=sys.stderr)
            return 3
        args.model = os.path.abspath(args.flash_model)
    if args.only_needed and not args.model:
        print("--only-needed needs --model", file=sys.stderr)
        return 2
    only = needed_modules([args.model], flash=bool(args.flash_model)) \
        if args.only_needed else None
    args.build_dir = os.path.abspath(args.build_dir)
    try:
        arch, out_dir, paths = build_target(args.board, None, args.build_dir,
                                            only)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    if args.model and getattr(args, "compile", False):
        from .compile import compile_file
        args.name = args.name or (os.path.basename(args.model)
                                  if not args.flash_model else None)
        args.source_model = args.model
        args.model, note = compile_file(args.model, arch,
                                        os.path.join(out_dir, "compiled"))
        print("# " + note)
    image = None
    if args.romfs:
        image = build_romfs(board, args.model, args.name, out_dir,
                            not getattr(args, "code_in_ram", False))
    pkg_dir = os.path.join(out_dir, "tflm")
    print("# %s (%s): %d .mpy files for -march=%s%s" % (
        board["name"], board["id"], len(paths), arch,
        ", ROMFS image %s" % _rel(image) if image else ""))
    if args.model:
        ok, note = fit_note(board, args.model, bool(image or
                                                    args.flash_model),
                            storage=not args.flash_model)
        print("# " + note)
        if ok is False and not args.force:
            print("%s does not fit %s: nothing copied (--force / FORCE=1 "
                  "copies it anyway)" % (os.path.basename(args.model),
                                         board["id"]), file=sys.stderr)
            return 3
    uf2 = None
    if args.flash_model:
        uf2 = build_flash_uf2(board, args, out_dir)
        if uf2 is None:
            return 3
    steps = plan(board, args.port, pkg_dir, None if uf2 else args.model,
                 args.name, image)
    rc = run(steps, args.dry_run)
    if rc == 0 and uf2:
        name = args.name or _flash_name(args.model)
        print("# now write the model: hold BOOTSEL while plugging the board "
              "in and copy %s onto its RPI-RP2 (Pico) or RP2350 (Pico 2) "
              "drive, or run "
              "`picotool load -x %s`; files on the board are not touched"
              % (_rel(uf2), _rel(uf2)))
        print("# then at the REPL:  import tflm; interp = "
              "tflm.Interpreter(tflm.flash_model(%r)); print(interp)" % name)
    elif rc == 0 and args.model:
        name = args.name or os.path.basename(args.model)
        where = "/rom/" + name if image else name
        print("# then at the REPL:  import tflm; interp = "
              "tflm.Interpreter(%r); print(interp)" % where)
    return rc


def _flash_name(path):
    name = os.path.basename(path)
    return name[:-7] if name.endswith(".tflite") else name


def _check_flash_args(args):
    """None, or why --flash-model cannot be used with these arguments."""
    if args.model or args.romfs:
        return "--flash-model (FLASH_MODEL=) replaces --model and --romfs"
    if not os.path.exists(args.flash_model):
        return "no such model file: %s" % args.flash_model
    if not args.firmware:
        return ("--flash-model needs --firmware (FIRMWARE=): the firmware "
                ".uf2 file on the board, or where it ends: on the board, "
                "import tflm.flashimage as f; hex(f.layout()[0])")
    return None


def build_flash_uf2(board, args, out_dir):
    """Writes out_dir/models.uf2 holding args.model (host_tools.flash_image);
    returns its path, or None after printing why it cannot (no gap on this
    board, or the model does not fit the firmware's gap)."""
    from . import flash_image as fx
    try:
        fw = args.firmware
        # the firmware's .uf2 file, else its end address (0x... or decimal)
        if os.path.exists(fw):
            fw_end = fx.firmware_end(fw, board)
        else:
            try:
                fw_end = fx.address(fw)
            except ValueError:
                raise ValueError("no firmware file %r (FIRMWARE= is the "
                                 "firmware's .uf2 file, or the address "
                                 "where it ends)" % fw)
        name = args.name or _flash_name(args.model)
        with open(args.model, "rb") as f:
            raw = f.read()
        try:
            data, note = fx.build(board, [(name, raw)], fw_end)
        except fx.FlashImageError as e:
            plain = getattr(args, "source_model", None)
            if not plain or plain == args.model:
                raise
            # the compiled model (its block: the tail's bytes and the
            # steps) does not fit where the plain one may
            print("# the compiled model does not fit (%s): the plain one "
                  "instead" % e)
            with open(plain, "rb") as f:
                data, note = fx.build(board, [(name, f.read())], fw_end)
    except (fx.FlashImageError, OSError, ValueError) as e:
        print("error: %s: nothing copied" % e, file=sys.stderr)
        return None
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "models.uf2")
    with open(path, "wb") as f:
        f.write(data)
    print("# flash image %s: %s" % (_rel(path), note))
    return path
