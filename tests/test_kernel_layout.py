"""Eval states with named slots (docs/adding-an-operator.md): a kernel
module that names its state slots `_S_X = const(k)` (and the words of a
parameter block `_P_X = const(k)`) reads its state only through those
names, and host code reads them with host_tools.kernel_consts."""

import ast
import os

from conftest import PKG
from host_tools import kernel_consts


def _modules_with_slots():
    root = os.path.join(PKG, "tflm", "kernels")
    out = []
    for fn in sorted(os.listdir(root)):
        if fn.endswith(".py") and kernel_consts("kernels/" + fn, ("S_",)):
            out.append("kernels/" + fn)
    return out


def literal_slots(src, var="st", viper_only=False):
    """[(line, index)] of every `st[<int>]` subscript in src (var: the
    name of the subscripted variable; viper_only: in @micropython.viper
    functions only, where the eval code reads its state)."""
    roots = [ast.parse(src)]
    if viper_only:
        roots = [f for f in ast.walk(roots[0])
                 if isinstance(f, ast.FunctionDef)
                 and any("viper" in ast.unparse(d) for d in f.decorator_list)]
    return [(n.lineno, n.slice.value) for r in roots for n in ast.walk(r)
            if isinstance(n, ast.Subscript)
            and getattr(n.value, "id", "") == var
            and isinstance(n.slice, ast.Constant)]


def test_named_slots_are_used_by_name():
    mods = _modules_with_slots()
    assert "kernels/conv.py" in mods, mods
    bad = []
    for rel in mods:
        slots = kernel_consts(rel, ("S_",))
        # slots number the state tuple from 0, each once
        assert sorted(slots.values()) == list(range(len(slots))), (rel,
                                                                    slots)
        with open(os.path.join(PKG, "tflm", rel)) as f:
            src = f.read()
        bad += ["%s:%d: st[%r]" % (rel, line, k)
                for line, k in literal_slots(src)]
        # and the parameter words, where the module names them (p or
        # prm: the parameter block in the viper code)
        if kernel_consts(rel, ("P_",)):
            bad += ["%s:%d: %s[%r]" % (rel, line, var, k)
                    for var in ("p", "prm")
                    for line, k in literal_slots(src, var, True)]
    assert not bad, bad


def test_the_checks_see_a_literal_slot():
    assert literal_slots("def f(st):\n    return st[1] + st[_S_X]\n") == [
        (2, 1)]
    viper = "@micropython.viper\ndef f(st):\n    p = st[0]\n    return p[2]\n"
    assert literal_slots(viper, "p", True) == [(4, 2)]
    assert literal_slots("def g(p):\n    return p[2]\n", "p", True) == []
    conv = kernel_consts("kernels/conv.py")
    assert conv["S_PARAMS"] == 0 and conv["P_OFF"] == 16, conv
