"""micropython/manifest.py (micropython-lib's convention) names the tflm
package at its real path, with the package's own version: evaluated here
with the manifest functions recording their arguments, as MicroPython's
tools/manifestfile.py calls them (paths relative to the manifest)."""

import os

import conftest  # noqa: F401  (puts micropython/ on sys.path)
import tflm
from conftest import ROOT

MANIFEST = os.path.join(ROOT, "micropython", "manifest.py")


class _Options:
    """tools/manifestfile.py's IncludeOptions: include()'s keywords, else
    the manifest's defaults, else None."""

    def __init__(self, **kwargs):
        self._kwargs, self._defaults = kwargs, {}

    def defaults(self, **kwargs):
        self._defaults = kwargs

    def __getattr__(self, name):
        return self._kwargs.get(name, self._defaults.get(name))


def _evaluate(**options):
    """The manifest's calls, run as manifestfile.py runs it: in its own
    directory, with include()'s keywords as `options`."""
    calls = []

    def record(kind):
        return lambda *a, **kw: calls.append((kind, a, kw))

    env = {k: record(k) for k in ("metadata", "package", "module",
                                  "include", "require", "freeze")}
    env["options"] = _Options(**options)
    cwd = os.getcwd()
    os.chdir(os.path.dirname(MANIFEST))
    try:
        with open(MANIFEST) as f:
            exec(compile(f.read(), MANIFEST, "exec"), env)
    finally:
        os.chdir(cwd)
    return calls


def test_manifest_names_the_package_and_its_version():
    calls = _evaluate()
    meta = [kw for kind, _, kw in calls if kind == "metadata"]
    assert meta and meta[0]["version"] == tflm.__version__
    pkgs = [(a, kw) for kind, a, kw in calls if kind == "package"]
    assert len(pkgs) == 1 and pkgs[0][0] == ("tflm",)
    base = pkgs[0][1].get("base_path", ".")
    path = os.path.join(os.path.dirname(MANIFEST), base, "tflm")
    assert os.path.isfile(os.path.join(path, "__init__.py"))
    assert os.path.isfile(os.path.join(path, "kernels", "__init__.py"))
    # only what the device needs: no host code beside the package
    assert [k for k, _, _ in calls] == ["metadata", "package"]


def test_manifest_leaves_the_thumb_code_out_when_told():
    """include(..., thumb=False), for ports without the Thumb inline
    assembler: every module of the package but kernels/thumb*.py."""
    pkgs = [(a, kw) for kind, a, kw in _evaluate(thumb=False)
            if kind == "package"]
    assert len(pkgs) == 1 and pkgs[0][0] == ("tflm",)
    files = pkgs[0][1]["files"]
    base = os.path.join(os.path.dirname(MANIFEST), "tflm")
    every = sorted(
        os.path.relpath(os.path.join(d, n), base).replace(os.sep, "/")
        for d, _, names in os.walk(base) for n in names if n.endswith(".py"))
    from host_tools.romfs import THUMB_ONLY
    thumb = sorted(p[len("tflm/"):] for p in THUMB_ONLY)
    assert set(thumb) <= set(every) and "kernels/conv.py" in files
    assert files == [f for f in every if f not in thumb]
