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
    assert conv["S_X"] == 0 and conv["P_OFF"] == 16, conv


def test_dsp_drivers_share_their_kernels_layout():
    """conv_dsp.py, dw_dsp.py and fc_dsp.py (the Cortex-M4 drivers that
    DSP builds use in place of conv.py's _conv_any, depthwise_conv.py's
    _dwp and fully_connected.py's _fc) read the same state slots and
    parameter words as their kernel, and
    the same blocks (module-private constants: each module has its own
    copy), and differ from the kernel's driver only by the DSP path."""
    import re
    for dsp, base, fn in (("kernels/conv_dsp.py", "kernels/conv.py",
                           "_conv_any"),
                          ("kernels/dw_dsp.py", "kernels/depthwise_conv.py",
                           "_dwp"),
                          ("kernels/fc_dsp.py", "kernels/fully_connected.py",
                           "_fc")):
        names = ("S_", "P_", "QP", "DBLK", "DREL", "DWB", "PLB", "A",
                 "NPAIRS")
        mine = kernel_consts(dsp, names)
        theirs = kernel_consts(base, names)
        assert mine and all(theirs[k] == v for k, v in mine.items()), dsp
        # every line of the kernel's driver that reads the state or the
        # parameters, writes a block word or calls a loop is in the DSP
        # one (which adds its path: a fix to the shared code must go to
        # both)
        srcs = []
        for rel in (base, dsp):
            with open(os.path.join(PKG, "tflm", rel)) as f:
                srcs.append(f.read())
        body = srcs[0][srcs[0].index("def %s(st):" % fn):]
        body = body[body.index('"""', body.index('"""') + 3) + 3:]
        body = body[:body.index("\n\n\n")] if "\n\n\n" in body else body
        code = [ln.strip() for ln in body.splitlines()
                if re.search(r"\bst\[|\bp\[_P|\bblk\[|\bq\[|\bpq\[|"
                             r"requant_i8b|\(win|\(wk|\brel\(st|\(st, ",
                             ln)]
        assert len(code) > (20 if fn == "_fc" else 40), (base, len(code))
        dsp_code = set(re.sub(r"\s+#.*", "", ln.strip())
                       for ln in srcs[1].splitlines())
        # (conv_dsp's gather replaces the viper one: its offset and sum,
        # and sums whole filter rows, the cut taps zero, in one dots
        # call: the row loop's block words)
        gather = ("off: int = (p[_P_OFF] ^ S) - S",
                  "blk[6] = 0 - s * 128", "blk[0] = va - r0",
                  "blk[1] = va + 4 * (rowlen & ~7) - r0",
                  "blk[2] = va + 4 * rowlen - r0",
                  "blk[3] = wk + r * wrow - r0",
                  "blk[5] = sp + 4 * (pb + k) - r0", "blk[6] = 0")
        # (fc_dsp's gather and rq replace the viper gather's sum and
        # requant_i8b per chunk of units)
        fc = ("blk[6] = 0 - s * 128",
              "requant_i8b(0, 0, 0, acc, n, n, mults[2 * kc],",
              "requant_i8b(0, 0, 0, acc, n, n if per_channel else 1, mults,")
        missing = [ln for ln in code
                   if re.sub(r"\s+#.*", "", ln) not in dsp_code
                   and not (fn == "_conv_any" and ln in gather)
                   and not (fn == "_fc" and ln in fc)]
        assert not missing, (dsp, missing[:5])


def test_add_table_work_words_hold_add_lut_block():
    """add.LUT_WORDS, the work words every build plans for the ADD / SUB
    table kernels' second buffer, are every word of thumb_dsp.add_lut's
    block: those its machine code reads and add_dsp.add_lut writes (a
    compiled model planned on the host runs add_lut on a DSP board)."""
    import re
    kern = os.path.join(PKG, "tflm", "kernels")

    def src(name):
        with open(os.path.join(kern, name)) as f:
            return f.read()

    def body(text, fn):
        text = text[text.index("def %s(" % fn):]
        return text[:text.index("\n\n\n")] if "\n\n\n" in text else text
    words = int(re.search(r"^LUT_WORDS = const\((\d+)\)", src("add.py"),
                          re.M).group(1))
    read = [int(k) // 4 for k in re.findall(
        r"\[r0, (\d+)\]", body(src("thumb_dsp.py"), "add_lut"))]
    written = [int(k) for k in re.findall(
        r"blk\[(\d+)\] =", body(src("add_dsp.py"), "add_lut"))]
    assert read and written
    assert words == max(read) + 1 == max(written) + 1 \
        == len(set(written)), (words, read, written)
