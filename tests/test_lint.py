"""`make lint` (ruff with ruff.toml: pyflakes' checks, pycodestyle's errors
and line length) passes on the whole tree."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT


def test_ruff_finds_nothing():
    ruff = os.path.join(os.path.dirname(sys.executable), "ruff")
    if not os.path.exists(ruff):
        ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (requirements.txt pins it)")
    proc = subprocess.run([ruff, "check", "--no-cache", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def import_graph(package_dir, package):
    """{module: set of modules of the same package it imports} for every
    .py file under package_dir (imports inside functions included: a
    cycle there is still two modules that cannot be read one at a time)."""
    import ast
    mods = {}
    for dirpath, _, files in os.walk(package_dir):
        for fn in files:
            if fn.endswith(".py"):
                path = os.path.join(dirpath, fn)
                rel = os.path.relpath(path, os.path.dirname(package_dir))
                name = rel[:-3].replace(os.sep, ".")
                mods[name[:-9] if name.endswith(".__init__") else name] = path
    graph = {}
    for name, path in mods.items():
        pkg = name if path.endswith("__init__.py") else name.rsplit(".", 1)[0]
        deps = set()
        with open(path) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")
                    parts = parts[:len(parts) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                deps |= {m for m in [base] + [base + "." + a.name
                                              for a in node.names]
                         if m in mods}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in mods}
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph):
    """The import cycles of graph: strongly connected components of more
    than one module (Tarjan), each sorted."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_host_tools_have_no_import_cycle():
    """Each host tool can be read (and changed) after the ones it uses:
    no two modules of host_tools import each other, directly or through
    others (boards.py and build.py once did)."""
    graph = import_graph(os.path.join(ROOT, "host_tools"), "host_tools")
    assert graph["host_tools.boards"] >= {"host_tools.build",
                                          "host_tools.board_spec"}
    assert cycles(graph) == []
    # the check itself sees a cycle
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c"]]
