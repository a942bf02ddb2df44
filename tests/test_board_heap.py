"""Construction at a board's heap: every shared model that TFLM runs is
built in a fresh unix-port process whose free heap, after the package (as
.mpy, as on a board) and the model's kernel modules are imported, is cut
down by a ballast block to what the model keeps plus a fixed margin. A construction that scatters small
objects and then asks for a large block fails here, as it would on a
board (the GC heap never moves an object).

Measured per model: kept (heap growth across construction, model bytes
not counted: they are read into a buffer first, as a buffer in flash or
RAM is given) and the free heap before construction that suffices. The
margins below are what construction may need beyond kept, a ratchet that
today's construction meets on this word size; TFLM's own arena (head +
tail, the oracle's 64-bit figures) bounds kept.

TFLM_MICROPYTHON=... runs the same on another build (e.g. 32-bit x86),
with the package compiled for that build's architecture.
"""

import pytest

from conftest import shared, unix_arch
from host_tools import fit
from host_tools.arena import tflm_arena

# model -> construction margin beyond kept (64-bit, 32-bit port) and
# kept beyond TFLM's head + tail (64-bit, 32-bit), in KB: a ratchet a few
# KB above today's figures. Issue 14 asks for 8 and 4 on 32-bit; about 13
# KB of the margin are the holes that importing the package leaves.
MODELS = {
    "person_detect/person_detect.tflite": (35, 26, 16, 9),
    "tiny_kws_ref_int8/kws_ref_model.tflite": (28, 19, 10, 6),
    "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite": (30, 24, 18, 12),
    "tiny_ad01_int8/ad01_int8.tflite": (47, 36, 18, 15),
    "micro_speech_quantized/micro_speech_quantized.tflite": (28, 27, 8, 6),
    "hello_world_int8/hello_world_int8.tflite": (27, 15, 4, 2),
    "network_tester_model/network_model.tflite": (18, 12, 9, 7),
    "simple_add/simple_add_model.tflite": (25, 16, 5, 4),
    "add_model_int8/add_model.tflite": (25, 16, 3, 2),
}


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """The package compiled to .mpy for the unix port under test."""
    return fit.package(str(tmp_path_factory.mktemp("mpy")))


_run = fit.run


@pytest.mark.parametrize("rel", sorted(MODELS))
def test_constructs_at_board_heap(package, rel):
    path = shared(*rel.split("/"))
    big = _run(package, path)
    assert big["ok"], big
    kept = big["kept"]
    wide = unix_arch() == "x64"
    margin = MODELS[rel][0 if wide else 1] * 1024
    r = _run(package, path, kept + margin)
    assert r["free"] <= kept + margin + 64, r  # the squeeze is real
    assert r.get("ok"), "construction needs more than kept + %d KB: %s" % (
        margin // 1024, r)
    # the same construction, so the same kept and arena
    assert (r["kept"], r["head"], r["tail"]) == (kept, big["head"],
                                                 big["tail"]), (r, big)
    assert kept - 1024 <= r["ram"] <= kept + 1024, r  # interp.ram
    tf = tflm_arena(path)
    slack = MODELS[rel][2 if wide else 3] * 1024
    assert kept <= tf["head"] + tf["tail"] + slack, (r, tf)


def test_arena_error_names_phase_and_bytes(package):
    """Too small a heap: ArenaError with the bytes needed and free, never
    a bare MemoryError (the model read from a file here)."""
    path = shared("person_detect", "person_detect.tflite")
    r = _run(package, path, 100 << 10, mode="file")
    assert r["ok"] == 0, r
    assert r["error"].startswith("ArenaError"), r
    assert "reading %s into RAM needs 300568 bytes" % path in r["error"], r


def test_lazy_imports_are_declared():
    """Every kernels/ module that a kernel module imports inside a
    function is in kernels.LAZY, which the interpreter imports before it
    parses the model: imported later, its code would stay in RAM amid
    construction's objects and split the free heap."""
    import ast
    import os
    from conftest import PKG
    from tflm import kernels
    kdir = os.path.join(PKG, "tflm", "kernels")
    missing = []
    for fn in sorted(os.listdir(kdir)):
        if not fn.endswith(".py") or fn == "__init__.py":
            continue
        name = fn[:-3]
        declared = {sub for _, sub in kernels.LAZY.get(name, ())}
        with open(os.path.join(kdir, fn)) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                    subs = ([sub.module] if sub.module else
                            [a.name for a in sub.names])
                    missing += ["%s imports %s" % (name, s) for s in subs
                                if s not in declared]
    assert not missing, missing
    # and every declared module exists
    for name, pairs in kernels.LAZY.items():
        for _, sub in pairs:
            assert os.path.exists(os.path.join(kdir, sub + ".py")), sub
