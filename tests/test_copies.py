"""Hand-specialised copies in the device package stay identical.

The float32 engines (kernels/f32.py, f32_math.py) write each operation
out in every loop that uses it: viper has no inline functions, and a call
per element would box float32 bit patterns above 2**30 on a 32-bit port.
Each copy is marked

    # >>> NAME [VAR ...]
    ...
    # <<< NAME

and all copies of one NAME must be the same code once the VARs (the names
this copy gives its result, e.g. `pr` or `acc`) are renamed in order,
comments and blank lines dropped and viper's `: int` annotations ignored
(a variable is annotated where it is first assigned in its function).
"""

import io
import os
import re
import tokenize

from conftest import PKG

_BEGIN = re.compile(r"\s*# >>> (\S+)((?: \w+)*)\s*$")
_END = re.compile(r"\s*# <<< (\S+)\s*$")


def blocks(src, where="<src>"):
    """[(NAME, where, [VAR, ...], code text)] of every marked block in
    src, nested ones included (their text stays in the outer block).
    Raises AssertionError for an unclosed or mismatched marker."""
    out, stack = [], []
    lines = src.split("\n")
    for i, line in enumerate(lines):
        m = _BEGIN.match(line)
        if m:
            stack.append((m.group(1), m.group(2).split(), i))
            continue
        m = _END.match(line)
        if m:
            assert stack, "%s:%d: <<< %s without >>>" % (where, i + 1,
                                                         m.group(1))
            name, names, start = stack.pop()
            assert name == m.group(1), "%s:%d: <<< %s closes >>> %s" % (
                where, i + 1, m.group(1), name)
            out.append((name, "%s:%d" % (where, start + 1), names,
                        "\n".join(lines[start + 1:i])))
    assert not stack, "%s: unclosed >>> %s" % (where, stack[-1][0])
    return out


def tokens(code, names):
    """The code's tokens (strings) with names[k] replaced by '$k',
    comments, layout and `: int` annotations dropped."""
    lines = code.split("\n")
    pad = min(len(s) - len(s.lstrip()) for s in lines if s.strip())
    text = "\n".join(s[pad:] for s in lines) + "\n"
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
            tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    toks = [t.string for t in tokenize.generate_tokens(
        io.StringIO(text).readline) if t.type not in skip]
    out, k = [], 0
    while k < len(toks):
        if toks[k:k + 3] == [":", "int", "="] and out \
                and re.match(r"[A-Za-z_$]", out[-1][0]):
            k += 2  # `x: int = ...` reads as `x = ...`
            continue
        t = toks[k]
        out.append("$%d" % names.index(t) if t in names else t)
        k += 1
    return out


def package_blocks():
    found = []
    root = os.path.join(PKG, "tflm")
    for dirpath, _, files in os.walk(root):
        for fn in sorted(files):
            if fn.endswith(".py"):
                path = os.path.join(dirpath, fn)
                with open(path) as f:
                    found += blocks(f.read(), os.path.relpath(path, root))
    return found


def test_marked_copies_are_identical():
    by_name = {}
    for name, where, names, code in package_blocks():
        by_name.setdefault(name, []).append((where, tokens(code, names)))
    # the float32 engines: the product and the sum in dot and vec, and
    # the rounding of every operation that rounds to float32
    assert len(by_name.get("fmul", ())) >= 2, by_name.keys()
    assert len(by_name.get("fadd", ())) >= 2, by_name.keys()
    assert len(by_name.get("round", ())) >= 6, by_name.keys()
    wrong = []
    for name, copies in by_name.items():
        assert len(copies) >= 2, "%s is marked once: %s" % (name, copies)
        first_where, first = copies[0]
        for where, toks in copies[1:]:
            if toks != first:
                k = next((i for i, (a, b) in enumerate(zip(first, toks))
                          if a != b), min(len(first), len(toks)))
                wrong.append("%s at %s differs from %s near token %d: %s "
                              "vs %s" % (name, where, first_where, k,
                                         " ".join(toks[k:k + 8]),
                                         " ".join(first[k:k + 8])))
    assert not wrong, wrong


def test_a_changed_copy_is_caught():
    """The comparison sees a one-character change, a renamed variable
    that the marker does not declare, and an unbalanced marker."""
    src = ("# >>> r acc\nif g > 32:\n    acc += 1\n# <<< r\n"
           "# >>> r pr\nif g > 32:  # a comment\n    pr: int = pr + 1\n"
           "# <<< r\n")
    (_, _, n1, c1), (_, _, n2, c2) = blocks(src)
    assert tokens(c1, n1) == ["if", "g", ">", "32", ":", "$0", "+=", "1"]
    assert tokens(c2, n2)[:5] == tokens(c1, n1)[:5]
    assert tokens("if g > 33:\n    acc += 1", ["acc"]) != tokens(c1, n1)
    assert tokens("if g > 32:\n    acc += 1", ["pr"]) != tokens(c1, n1)
    for bad in ("# >>> r\nx = 1\n", "x = 1\n# <<< r\n",
                "# >>> r\nx = 1\n# <<< s\n"):
        try:
            blocks(bad)
        except AssertionError:
            continue
        raise AssertionError("not caught: %r" % bad)
