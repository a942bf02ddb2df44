"""Host tools for tflm (CPython): run models on the MicroPython unix port,
compare with the TFLM reference interpreter, inspect and plan models."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG_DIR = os.path.join(ROOT, "micropython")
if PKG_DIR not in sys.path:
    sys.path.insert(0, PKG_DIR)


def device_script(name):
    """The text of host_tools/<name>, a script that runs in MicroPython
    (the mp_*.py files: they are files, linted with the rest, and the
    tools write or pass them to the unix port or a target)."""
    with open(os.path.join(ROOT, "host_tools", name)) as f:
        return f.read()


def kernel_consts(rel, prefixes=("S_", "P_")):
    """{NAME: value} of the module-private constants `_NAME = const(v)`
    of device module micropython/tflm/<rel> whose NAME starts with one of
    prefixes: a kernel's named state slots (_S_*) and parameter words
    (_P_*), for host code that reads an eval state (see
    docs/adding-an-operator.md)."""
    import ast
    with open(os.path.join(PKG_DIR, "tflm", rel)) as f:
        tree = ast.parse(f.read())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and getattr(node.value.func, "id", "") == "const":
            name = node.targets[0].id.lstrip("_")
            if name.startswith(tuple(prefixes)):
                out[name] = ast.literal_eval(node.value.args[0])
    return out
