"""micropython/manifest.py (micropython-lib's convention) names the tflm
package at its real path, with the package's own version: evaluated here
with the manifest functions recording their arguments, as MicroPython's
tools/manifestfile.py calls them (paths relative to the manifest)."""

import os

import conftest  # noqa: F401  (puts micropython/ on sys.path)
import tflm
from conftest import ROOT

MANIFEST = os.path.join(ROOT, "micropython", "manifest.py")


def _evaluate():
    calls = []

    def record(kind):
        return lambda *a, **kw: calls.append((kind, a, kw))

    env = {k: record(k) for k in ("metadata", "package", "module",
                                  "include", "require", "freeze")}
    with open(MANIFEST) as f:
        exec(compile(f.read(), MANIFEST, "exec"), env)
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
