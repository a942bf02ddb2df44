"""boards/<id>/board.json: reading and checking the board descriptions.

One file per board (boards/README.md lists the fields): its mpy-cross
arch, heap, flash, filesystem and ROMFS sizes, the arena budget and the
shared models that fit it. host_tools.boards computes the model lists;
build.py and deploy.py read a board's arch from here.
"""

import json
import os

from . import ROOT

BOARDS_DIR = os.path.join(ROOT, "boards")

REQUIRED = {"id": str, "name": str, "mcu": str, "cpu": str,
            "micropython_board": str, "march": str, "mpy_arch_number": int,
            "ram_bytes": int, "heap_bytes": int, "flash_bytes": int,
            "filesystem_bytes": int, "romfs": bool, "romfs_bytes": int,
            "arena_budget_bytes": int, "fits": dict, "sources": list}


def load_boards(boards_dir=BOARDS_DIR):
    """Every boards/<id>/board.json as a dict, sorted by id."""
    out = []
    for name in sorted(os.listdir(boards_dir)):
        path = os.path.join(boards_dir, name, "board.json")
        if os.path.exists(path):
            with open(path) as f:
                out.append(json.load(f))
    return out


def get_board(board_id, boards_dir=BOARDS_DIR):
    """The board.json dict of one board; SystemExit naming the known ids."""
    for b in load_boards(boards_dir):
        if b["id"] == board_id:
            return b
    raise SystemExit("unknown board %r (known: %s)" % (
        board_id, ", ".join(b["id"] for b in load_boards(boards_dir))))


def validate(board, folder=None):
    """List of problems with a board.json dict (empty if it is valid)."""
    errs = []
    for key, typ in REQUIRED.items():
        if not isinstance(board.get(key), typ):
            errs.append("%s: missing or not %s" % (key, typ.__name__))
    if errs:
        return errs
    if folder is not None and board["id"] != folder:
        errs.append("id %r differs from its folder %r" % (board["id"], folder))
    from .romfs import ARCHES, MPY_ARCH_NAMES
    if board["march"] not in ARCHES:
        errs.append("march %r is not an mpy-cross arch" % board["march"])
    elif MPY_ARCH_NAMES[board["mpy_arch_number"]] != board["march"]:
        errs.append("mpy_arch_number %d is %s, not march %s" % (
            board["mpy_arch_number"],
            MPY_ARCH_NAMES[board["mpy_arch_number"]], board["march"]))
    if not 0 < board["heap_bytes"] < board["ram_bytes"]:
        errs.append("heap_bytes must be below ram_bytes")
    if board["romfs"] != (board["romfs_bytes"] > 0):
        errs.append("romfs and romfs_bytes disagree")
    want = {"filesystem", "romfs"} if board["romfs"] else {"filesystem"}
    if set(board["fits"]) != want:
        errs.append("fits must have keys %s" % sorted(want))
    return errs
