"""Construction at a board's heap: every shared model that TFLM runs is
built in a fresh unix-port process whose free heap, after the package (as
.mpy, as on a board) and the model's kernel modules are imported, is cut
down by a ballast block to what the model keeps, the holes the imports
left (free blocks outside the largest one, usable by small objects only)
and a fixed margin (host_tools/fit.py). A construction that scatters small
objects and then asks for a large block fails here, as it would on a
board (the GC heap never moves an object).

Issue 14's budget: construction needs at most kept + 8 KB of free heap,
holes included, and keeps at most TFLM's head + tail + 4 KB (32-bit). The
table below is a ratchet 2 KB above today's figures (64-bit unix port
from PyPI, and a 32-bit x86 build via TFLM_MICROPYTHON), and on 32-bit
never above the budget's 4 KB, measured with the address layout fixed
(fit.fixed_layout: the GC scans the C stack conservatively, so with
randomized addresses a squeezed heap fits or fails by chance). It fails
when construction gets worse. On 32-bit today construction needs 2.2-8.7
KB beyond kept (holes included; the audio preprocessor with its 22
operators the most), every model keeps at most 3.5 KB more
than TFLM's head + tail, and person_detect 4.6 KB less than TFLM's
85,264 B; on 64-bit, construction needs 2-8.5 KB beyond kept (AD01 the
most) but for the audio preprocessor's 19 KB. Where small objects land
depends on the length of every string
the process makes, so fit.run gives it none of the host's paths (the
model and its module list are copied next to the package under names of
fixed length, the script runs with -m, sys.path is ['']): the figures
are the same on every machine (CI once failed where the model's path
was 20 characters longer).
"""

import os
import re

import pytest

from conftest import device_script, shared, unix_arch
from host_tools import compile as comp
from host_tools import fit
from host_tools.arena import tflm_arena

KB = 1024
# model -> (margin beyond kept + holes: 64-bit, 32-bit; kept beyond TFLM's
# head + tail: 64-bit, 32-bit), in KB
MODELS = {
    # (a scan of margins 2-21 KB: it builds from 9 KB on, 64-bit, and
    # 5 KB, 32-bit; the sizing pass binds its activations to the
    # model's bytes)
    "person_detect/person_detect.tflite": (10, 6, 6, -1),
    "tiny_kws_ref_int8/kws_ref_model.tflite": (6, 4, 8, 4),
    "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite": (6, 4, 10, 4),
    "tiny_ad01_int8/ad01_int8.tflite": (10, 5, 8, 4),
    "micro_speech_quantized/micro_speech_quantized.tflite": (6, 5, 7, 4),
    "hello_world_int8/hello_world_int8.tflite": (6, 4, 5, 3),
    "hello_world_float/hello_world_float.tflite": (6, 4, 5, 3),
    "network_tester_model/network_model.tflite": (5, 4, 4, 3),
    "simple_add/simple_add_model.tflite": (4, 3, 6, 4),
    "add_model_int8/add_model.tflite": (4, 3, 5, 3),
    "magic_wand/magic_wand.tflite": (5, 3, 6, 4),
    "test_conv_model/test_conv_model.tflite": (6, 4, 8, 4),
    # 64-bit: 19 KB, 32-bit 7 KB (22 operators; each Signal op alone
    # needs 1-2 KB; its SignalRfft has no scratch: kept 1.2 KB less, the
    # same least free heap)
    "audio_preprocessor_int8/audio_preprocessor_int8.tflite": (20, 7, 7,
                                                               3),
}
# the holes that importing the package leaves (64-bit, 32-bit)
HOLES = (6 * KB, 4 * KB)


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """The package compiled to .mpy for the unix port under test."""
    return fit.package(str(tmp_path_factory.mktemp("mpy")))


_run = fit.run


@pytest.mark.parametrize("rel", sorted(MODELS))
def test_constructs_at_board_heap(package, rel):
    path = shared(*rel.split("/"))
    w = 0 if unix_arch() == "x64" else 1
    big = _run(package, path)
    assert big["ok"], big
    kept, holes = big["kept"], big["holes"]
    assert holes <= HOLES[w], big
    # and with more free heap too (a heap that never moves objects can
    # fail at one size and work at a smaller one)
    for extra in (0, 2 * KB, 6 * KB):
        target = kept + holes + MODELS[rel][w] * KB + extra
        r = _run(package, path, target)
        assert r["free"] <= target + 64, r  # the squeeze is real
        assert r.get("ok"), "construction needs more than kept %d + holes " \
            "%d + %d bytes: %s" % (kept, holes, target - kept - holes, r)
        # the same construction, so the same arena and kept (but for an
        # object of one or two GC blocks that a stale word on the C stack
        # may keep alive in one of the runs: where it lands moves with
        # the process's allocations, e.g. the script's own)
        assert (r["head"], r["tail"]) == (big["head"], big["tail"]), \
            (r, big)
        assert abs(r["kept"] - kept) <= 64, (r, big)
    assert kept - KB <= big["ram"] <= kept + KB, big  # interp.ram
    tf = tflm_arena(path)
    slack = MODELS[rel][2 + w] * KB
    assert kept <= tf["head"] + tf["tail"] + slack, (big, tf)


# With the static arena (Interpreter(model, arena=buf), buf made before
# any import, as a board's boot script makes it): model -> what
# construction needs beyond what it keeps besides the buffer and the
# holes, 64-bit / 32-bit, in KB, a ratchet about 2 KB above today's. It
# is the parse and plan of the whole model (the tensors, the planner's
# buffers), the sizing pass's objects and the largest op's prepare: the
# arena itself needs no free block of its own, and the sizing pass uses
# the buffer for its throw-away activations.
STATIC = {
    "person_detect/person_detect.tflite": (48, 25),
    "tiny_kws_ref_int8/kws_ref_model.tflite": (18, 9),
    "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite": (22, 12),
    "tiny_ad01_int8/ad01_int8.tflite": (10, 6),
    "micro_speech_quantized/micro_speech_quantized.tflite": (5, 4),
    "hello_world_int8/hello_world_int8.tflite": (6, 4),
    "hello_world_float/hello_world_float.tflite": (5, 4),
    "network_tester_model/network_model.tflite": (5, 4),
    "simple_add/simple_add_model.tflite": (4, 3),
    "add_model_int8/add_model.tflite": (4, 3),
    "magic_wand/magic_wand.tflite": (5, 3),
    "test_conv_model/test_conv_model.tflite": (10, 7),
    "audio_preprocessor_int8/audio_preprocessor_int8.tflite": (23, 12),
}


@pytest.mark.parametrize("rel", sorted(STATIC))
def test_constructs_on_static_arena_at_board_heap(package, rel):
    """arena= made first: the interpreter keeps what it keeps without it
    less its arena (which is in the buffer, head and tail alike), and
    builds with the free heap besides the buffer cut to kept + holes +
    STATIC's margin (and more)."""
    path = shared(*rel.split("/"))
    w = 0 if unix_arch() == "x64" else 1
    plain = _run(package, path)
    assert plain["ok"], plain
    need = plain["need"]
    big = _run(package, path, arena=need + 15)
    assert big["ok"], big
    assert (big["head"], big["tail"]) == (plain["head"], plain["tail"])
    kept, holes = big["kept"], big["holes"]
    assert kept <= plain["kept"] - need + 512, (big, plain)
    assert kept - KB <= big["ram"] <= kept + KB, big  # interp.ram
    for extra in (0, 2 * KB, 6 * KB):
        target = kept + holes + STATIC[rel][w] * KB + extra
        r = _run(package, path, target, arena=need + 15)
        assert r["free"] <= target + 64, r  # the squeeze is real
        assert r.get("ok"), "construction on arena= needs more than " \
            "kept %d + holes %d + %d bytes: %s" % (
                kept, holes, target - kept - holes, r)
        # the same construction (a stale word on the C stack may keep one
        # or two more GC blocks alive in one of the runs, where the heap's
        # layout puts them; on a heap too full for them the inputs and
        # outputs keep reading their fields from the model:
        # Interpreter.__init__)
        assert r["kept"] <= kept + 64, (r, big)


def test_boards_tool_assumes_the_tested_margin():
    """host_tools/boards.py reserves CONSTRUCTION_MARGIN above what a
    model keeps for construction: no 32-bit margin this file allows
    (holes plus the model's margin) may exceed it."""
    from host_tools import boards
    worst = HOLES[1] + max(m[1] for m in MODELS.values()) * KB
    assert worst <= boards.CONSTRUCTION_MARGIN, worst


def test_arena_error_names_phase_and_bytes(package):
    """Too small a heap: ArenaError with the bytes needed and free, never
    a bare MemoryError (the model read from a file here)."""
    path = shared("person_detect", "person_detect.tflite")
    r = _run(package, path, 100 << 10, mode="file")
    assert r["ok"] == 0, r
    assert r["error"].startswith("ArenaError"), r
    # fit.run copies the model into the package's directory
    assert re.search(r"reading m\w+\.tflite into RAM needs 300568 bytes: "
                     r"\d+ bytes free", r["error"]), r


def test_lazy_imports_are_declared():
    """Every kernels/ module that a kernel module imports inside a
    function is in kernels.lazy(), which the interpreter imports before it
    parses the model: imported later, its code would stay in RAM amid
    construction's objects and split the free heap (and the prepare-time
    helpers among them, dropped once an interpreter is built, would count
    as kept). conv_util is exempt: allocator.build imports it for every
    model. requant_neg is exempt too: the 16x8 kernels import it only
    when a filter channel's scale is negative (no tensor type tells that
    before the model is parsed), so that other models never hold it;
    compiled_prep is imported only where kernels.COMPILING (the host's
    compile), never on a board (romfs.HOST_ONLY)."""
    import ast
    import os
    from conftest import PKG
    from tflm import kernels
    from tflm.interpreter import CONSTRUCTION
    helpers = {"conv_util", "requant_neg", "compiled_prep"}
    assert "tflm.kernels.conv_util" in CONSTRUCTION
    kdir = os.path.join(PKG, "tflm", "kernels")
    missing = []
    for fn in sorted(os.listdir(kdir)):
        if not fn.endswith(".py") or fn == "__init__.py":
            continue
        name = fn[:-3]
        declared = {sub for _, sub in kernels.lazy(name)} | helpers
        with open(os.path.join(kdir, fn)) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef):
                continue
            for sub in ast.walk(node):
                if isinstance(sub, ast.ImportFrom) and sub.level == 1:
                    # (a name of the package itself, check_int8, is
                    # no module)
                    subs = ([sub.module] if sub.module else
                            [a.name for a in sub.names if os.path.exists(
                                os.path.join(kdir, a.name + ".py"))])
                    missing += ["%s imports %s" % (name, s) for s in subs
                                if s not in declared]
    assert not missing, missing
    # and every declared module exists
    for word in kernels._LAZY.split():
        name, t, sub = word.split(":")
        assert t in "fihHs*" and kernels.lazy(name), word
        for m in (name, sub):
            assert os.path.exists(os.path.join(kdir, m + ".py")), m


# Package cost ratchet (issue 14 asks for <= 24 KB on armv6m, import tflm
# plus person_detect's kernels). On the emulated Cortex-M0, once an
# interpreter is built: 23.3 KB (31.2 before the parser was dropped after
# construction, 24.9 before AVERAGE_POOL_2D's and SOFTMAX's loops became
# machine code), 12.7 KB of it the kernels' armv6m machine code (on the
# unix port: with the viper twins of the Thumb modules, mac.py,
# mac_dw.py, softmax_loops.py, pool_loops.py, which a Cortex-M board
# replaces with the machine code of thumb.py, thumb_dw.py,
# thumb_softmax.py, thumb_pool.py; the Thumb code is counted in place of
# the viper). GC heap, 64-bit / 32-bit unix port, about 2% above today's:
# import tflm + kernels (the split between the two moves with qstr pools,
# which double as they fill), and at rest (what is left once an
# interpreter is built: it drops the construction modules and the
# parser, interpreter.PARSE); armv6m machine code: (tflm, kernels).
# construction: what the construction modules take while imported, the
# qstr pools they grew left out (the
# emulated M0 showed that they are most of what construction needs
# beyond what is kept: ResNet-8 needs 11.7 KB more than it keeps there),
# 64-bit / 32-bit, about 2% above today's (construct.py and source.py,
# which pick the compiled or the plain construction, among them; the
# negative scales in quant.py, LOG_SOFTMAX's helpers in lut_math.py,
# the hint of source.arena_oom's "not in one block" message, the
# planner's overlap of a CONV_2D's or pool's input and output).
PACKAGE_COST = {
    "person_detect/person_detect.tflite": {
        # (the kernel registry grows with each operator added; armv6m:
        # 13.0 KB, the negative per-channel scales' code not among it:
        # kernels/requant_neg.py is imported on demand, nor the drivers
        # of the Cortex-M4 paths, conv_dsp.py and dw_dsp.py, which only
        # DSP builds carry)
        "x64": 31200, "x86": 17900, "armv6m": (208, 13300),
        # at rest: what is left beyond the qstr pools that the kernels
        # and the construction modules added (test_package_cost)
        "at_rest": {"x64": 22800, "x86": 13250},
        "construction": {"x64": 21400, "x86": 11700}},
}


@pytest.mark.parametrize("rel", sorted(PACKAGE_COST))
def test_package_cost(tmp_path, rel):
    """What importing the package (from ROMFS, bytecode in place) and the
    model's kernel modules keeps of the heap, and the machine code a
    Cortex-M0 board copies to RAM for them, within the ratchet; none of
    the modules that only construction uses is imported by then (an
    interpreter imports them for its construction, then drops them), and
    they take RAM of their own while imported; once built, what is left
    (at rest) is below what was imported, the parser gone."""
    from tflm.interpreter import CONSTRUCTION
    arch = unix_arch()
    if arch not in ("x64", "x86"):
        pytest.skip("no ratchet for a %s build" % arch)
    image = fit.rom_image(str(tmp_path))
    r = fit.package_cost(image, shared(rel), str(tmp_path))
    # the kernel modules are imported after tflm, each once
    assert set(r["after_tflm"]) < set(r["after_kernels"]), r
    assert "tflm.kernels.conv" in r["after_kernels"], r
    assert not set(CONSTRUCTION) & set(r["after_kernels"]), r
    assert r["construction"] > 2000, r
    budget = PACKAGE_COST[rel]
    assert r["tflm"] + r["kernels"] <= budget[arch], r
    # a built interpreter drops the parser: at rest, less than imported.
    # The names and short strings of the modules imported after the
    # kernels (the construction modules) stay interned when they are
    # dropped, in qstr pools that grow in steps of a kilobyte or more
    # (a name or two more can start a new, larger pool): left out here
    # and of the construction figure, where the port tells them
    # (micropython.qstr_info)
    q = r["qstr"]
    grown = q["at_rest"] - q["kernels"] if len(q) == 2 else 0
    assert 0 <= grown, r
    assert r["construction"] - grown <= budget["construction"][arch], r
    assert r["at_rest"] - grown <= budget["at_rest"][arch], r
    assert r["at_rest"] - grown < r["tflm"] + r["kernels"] - 2000, r
    assert not {"tflm.model", "tflm.flatbuf", "tflm.kernels"} & set(
        r["at_rest_modules"]), r
    assert r["tflm_native"] <= budget["armv6m"][0] and \
        r["kernels_native"] <= budget["armv6m"][1], r
    # machine code is counted from the .mpy files: conv's is most of it
    assert r["kernels_native"] > 4000, r


def test_construction_modules_are_not_imported_at_a_module_top():
    """No module that lives on imports a CONSTRUCTION module at its top
    (module level, in any if / try there): it would keep that module
    alive after the interpreter drops it from sys.modules. Imports inside
    functions are fine (prepare runs during construction). Nor does it
    bind at its top what a PARSE module defines (a function or class
    would keep that module's globals alive) but upper-case constants
    (kernels.THUMB), nor a PARSE module itself unless it deletes the
    name there (interpreter.py's placement imports)."""
    import ast
    import os
    from conftest import PKG
    from tflm.interpreter import CONSTRUCTION, PARSE
    bad = []
    modules = {os.path.relpath(os.path.join(r, f), PKG)[:-3]
               .replace(os.sep, ".").replace(".__init__", "")
               for r, _, fs in os.walk(os.path.join(PKG, "tflm"))
               for f in fs if f.endswith(".py")}
    for root, _, names in os.walk(os.path.join(PKG, "tflm")):
        for fn in sorted(names):
            if not fn.endswith(".py"):
                continue
            path = os.path.join(root, fn)
            mod = os.path.relpath(path, PKG)[:-3].replace(os.sep, ".")
            pkg = mod.rsplit(".", 1)[0]
            if mod.endswith(".__init__"):
                mod = pkg = mod[:-9]
            if mod in CONSTRUCTION or mod in PARSE:
                continue
            with open(path) as f:
                tree = ast.parse(f.read())
            deleted = {t.id for node in tree.body
                       if isinstance(node, ast.Delete)
                       for t in node.targets if isinstance(t, ast.Name)}
            todo = list(tree.body)
            while todo:
                node = todo.pop()
                if isinstance(node, (ast.If, ast.Try)):
                    todo += node.body + node.orelse + getattr(
                        node, "finalbody", []) + [
                        x for h in getattr(node, "handlers", [])
                        for x in h.body]
                    continue
                if isinstance(node, ast.ImportFrom):
                    base = pkg.split(".")
                    if node.level > 1:
                        base = base[:1 - node.level]
                    base = ".".join(base + ([node.module] if node.module
                                            else []))
                    if node.level == 0:
                        base = node.module
                    got = [base] + [base + "." + a.name for a in node.names]
                    bad += ["%s: %s from %s" % (mod, a.name, base)
                            for a in node.names if base in PARSE
                            and not a.name.isupper()
                            and base + "." + a.name not in modules
                            and base + "." + a.name not in PARSE
                            and (a.asname or a.name) not in deleted]
                    bad += ["%s: %s.%s" % (mod, base, a.name)
                            for a in node.names
                            if base + "." + a.name in PARSE
                            and (a.asname or a.name) not in deleted]
                elif isinstance(node, ast.Import):
                    got = [a.name for a in node.names]
                else:
                    continue
                bad += ["%s: %s" % (mod, g) for g in got
                        if g in CONSTRUCTION]
    assert not bad, bad


DROP_SCRIPT = device_script("board_heap_drop.py")


def test_construction_modules_are_dropped(package, tmp_path):
    """Interpreter() imports what only construction uses and drops what it
    imported once built, or when construction fails: their RAM goes back
    to the heap; a module imported before construction stays, and the
    outputs are the same either way."""
    from host_tools import device
    from tflm.interpreter import CONSTRUCTION
    script = tmp_path / "d.py"
    script.write_text(DROP_SCRIPT)
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    proc = device.run_script(str(script), [package, path], timeout=120)
    lines = proc.stdout.splitlines()
    assert len(lines) == 5, proc.stdout + proc.stderr
    assert lines[0] == "import []" and lines[1] == "built []", lines
    assert int(lines[2].split()[1]) > 2000, lines  # they were gone
    assert lines[3] == "kept %r True" % list(CONSTRUCTION), lines
    # the allocator stayed (imported before); the others came and went
    assert lines[4] == "error FormatError ['tflm.allocator']", lines


PARSER_SCRIPT = device_script("board_heap_parser.py")


def test_parser_is_dropped(package, tmp_path):
    """`import tflm` imports the parser (interpreter.PARSE: model.py,
    flatbuf.py, the kernels package); a built interpreter drops it and
    gives its RAM back: its inputs and outputs own the fields they read
    from the model (equal to what the host's parser reads), and
    Interpreter.model / tensors parse the model again without keeping
    the parser (nor verify) imported, even when that parse fails (a
    bytearray model changed under the interpreter)."""
    from host_tools import device
    from tflm.model import Model
    script = tmp_path / "p.py"
    script.write_text(PARSER_SCRIPT)
    path = shared("micro_speech_quantized", "micro_speech_quantized.tflite")
    mods = fit.modules_file(path, str(tmp_path))
    proc = device.run_script(str(script), [package, path, mods],
                             timeout=120)
    lines = proc.stdout.splitlines()
    assert len(lines) == 6, proc.stdout + proc.stderr
    assert lines[0] == "import ['tflm.model', 'tflm.flatbuf', " \
        "'tflm.kernels']", lines
    word, held, freed = lines[1].rsplit(" ", 2)
    assert (word, held) == ("built", "[]"), lines
    # the heap construction gave back beyond what it kept: the parser's
    assert int(freed) > 2000, lines
    with open(path, "rb") as f:
        m = Model(f.read())
    t = m.tensor(m.inputs[0])
    want = (t.name, t.scale, t.zero_point, t.scales, t.zero_points,
            t.quantized_dimension, t.buffer, t.is_variable, True)
    got = eval(lines[2][len("input "):])
    assert got[0] == want[0] and got[2:] == want[2:] and \
        abs(got[1] - want[1]) <= 1e-6 * want[1], (got, want)
    assert lines[3] == "model 3 %d True []" % len(m.operators), lines
    assert lines[4] == "tensors %d []" % m.n_tensors, lines
    assert lines[5] == "bad model FormatError []", lines


OOM_SCRIPT = device_script("board_heap_oom.py")


def test_out_of_memory_is_always_an_arena_error(package, tmp_path):
    """Construction on a heap cut down by a ballast block, from almost
    nothing up to enough, with the construction modules imported by the
    interpreter itself: every failure is an ArenaError (never a bare
    MemoryError from importing them, or from converting one), one where
    the model's objects did not fit says what needs less (arena=, a
    compiled model), and a large enough heap builds."""
    from host_tools import device
    script = tmp_path / "oom.py"
    script.write_text(OOM_SCRIPT)
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    proc = device.run_script(str(script), [package, path], timeout=300,
                             heap="200k")
    seen = dict(eval(proc.stdout.strip().splitlines()[-1]))
    hinted = seen.pop("hint", 0)
    assert seen.pop("no hint", 0) == 0 and hinted >= 1, seen
    assert set(seen) == {"ArenaError", "ok"}, proc.stdout + proc.stderr
    assert seen["ArenaError"] >= 5 and seen["ok"] >= 3, seen


def test_out_of_memory_names_what_needs_the_ram():
    """errors.out_of_memory says the package's code needs the RAM where
    construction was loading code (its modules, the kernels, a compiled
    model's kernels), and the model where it was making the model's
    objects."""
    from tflm.errors import ArenaError, out_of_memory
    for stage in ("loading the construction modules", "importing kernels",
                  "loading the compiled model's code"):
        e = out_of_memory(stage)
        assert isinstance(e, ArenaError) and "the package's code" in str(e)
        assert str(e).startswith("out of memory while %s: " % stage)
    e = out_of_memory("preparing op 3 (CONV_2D)")
    assert "the model needs more RAM than is free" in str(e)
    assert "package" not in str(e) and "arena=" not in str(e)
    # a plain construction's: what needs less follows (source.arena_hint)
    from tflm.source import arena_hint
    e = out_of_memory("preparing op 3 (CONV_2D)", arena_hint)
    assert str(e).endswith(arena_hint()) and "compiled" in str(e)
    e = out_of_memory("importing kernels", arena_hint)
    assert "arena=: docs/memory.md" not in str(e)

    def no_room():
        raise MemoryError

    # no room for the hint: the message without it, not a bare one
    e = out_of_memory("preparing op 3 (CONV_2D)", no_room)
    assert str(e) == str(out_of_memory("preparing op 3 (CONV_2D)"))
    assert "the model needs more RAM than is free" in str(e)

    class Tight(str):  # no room for the message: the stage alone
        def __contains__(self, s):
            raise MemoryError

    e = out_of_memory(Tight("importing kernels"))
    assert isinstance(e, ArenaError)
    assert str(e) == "out of memory while importing kernels", str(e)
    # the package already in ROMFS (.mpy): only the heap can give more
    from tflm import errors
    here = errors.__file__
    try:
        errors.__file__ = "/rom/tflm/errors.mpy"
        e = out_of_memory("importing kernels")
    finally:
        errors.__file__ = here
    assert "; a smaller arena= buffer and a compiled model" in str(e)
    assert "make mpy" not in str(e)
    # once built (print(interp), interp.attribute): the remedy is the
    # order of the imports (a compiled ResNet-8 on a pyboard-class heap
    # leaves 30 KB free, none of it a 640-byte block)
    for stage in ("importing tflm.api (interp.attribute)",
                  "importing tflm.repl (print(interp))"):
        e = out_of_memory(stage)
        assert "import tflm.api and tflm.repl right after tflm" in str(e)


API_SCRIPT = device_script("board_heap_api.py")


def test_attributes_on_a_full_heap_are_an_arena_error(package, tmp_path):
    """On a heap left with only holes too small for tflm/api.py or
    tflm/repl.py, a built interpreter's lazily imported attributes
    (interp.compiled) and print(interp) raise ArenaError, not a bare
    MemoryError; with room again both work."""
    from host_tools import device
    script = tmp_path / "api.py"
    script.write_text(API_SCRIPT)
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    proc = device.run_script(str(script), [package, path], timeout=300,
                             heap="200k")
    out = eval(proc.stdout.strip().splitlines()[-1])
    assert out == ["ArenaError", "ArenaError", True], \
        proc.stdout + proc.stderr


ARENA_QSTR_SCRIPT = device_script("board_heap_qstr_arena.py")


def test_compiled_construction_makes_no_qstr_after_the_arena(package,
                                                             tmp_path):
    """A compiled model's construction makes no qstr once the arena is
    allocated: a new qstr's bytes may take a block of their own for good
    (MicroPython's qstr chunks), which above the arena splits the free
    heap the next model needs after unload() (on an emulated
    pyboard-class M0 a compiled keyword spotter left a 43 KB largest
    block, not 72 KB: tensor.own read _LAZY's names with getattr, each a
    str of a constant tuple in the .mpy, not yet a qstr). (The plain
    construction: test_construction_makes_no_qstr.)"""
    from host_tools import device
    script = tmp_path / "qstrs.py"
    script.write_text(ARENA_QSTR_SCRIPT)
    paths = []
    for rel in ("tiny_kws_ref_int8/kws_ref_model.tflite",
                "micro_speech_quantized/micro_speech_quantized.tflite"):
        src = shared(*rel.split("/"))
        with open(src, "rb") as f:
            out, _ = comp.compile_model(f.read(), unix_arch())
        p = tmp_path / ("c_" + os.path.basename(src))
        p.write_bytes(out)
        paths.append(str(p))
    proc = device.run_script(str(script), [package] + paths, timeout=300)
    counts, built = [], []
    for line in proc.stdout.splitlines():
        if line.startswith("MARK built"):
            built.append(line.endswith("True"))
        m = re.search(r"n_qstr=(\d+)", line)
        if m:
            counts.append(int(m.group(1)))
    assert built == [True, True], proc.stdout + proc.stderr
    assert len(counts) == 4 and counts[0] == counts[1] and \
        counts[2] == counts[3], proc.stdout


SIZING_QSTR_SCRIPT = device_script("board_heap_qstr_sizing.py")


@pytest.mark.parametrize("rel", sorted(MODELS))
def test_sizing_pass_makes_no_qstr(package, tmp_path, rel):
    """A plain construction interns no new string from the construction
    modules' import (right after the kernels' code) to the arena's
    allocation: a module first imported by the sizing pass (quant, which
    most kernels' prepare imports) interns its names then, and a new qstr
    chunk or pool is a block for good amid the pass's objects, which
    splits the free heap the arena needs (on an emulated pyboard-class M0
    an untuned 64x64x3 CNN had 66 KB free for its 53 KB arena, but not in
    one block). CUSTOM ops' modules (custom, flexbuffers: the audio
    front-end) are left out: they are not construction modules, and
    imported before the pass they cost a board's heap more."""
    import re
    from host_tools import device
    if rel.startswith("audio_preprocessor"):
        pytest.skip("CUSTOM ops: custom.py and flexbuffers.py")
    script = tmp_path / "s.py"
    script.write_text(SIZING_QSTR_SCRIPT)
    proc = device.run_script(str(script), [package, shared(
        *rel.split("/"))], timeout=120)
    out = proc.stdout
    assert "MARK built True" in out, out + proc.stderr
    marks = re.findall(r"MARK (\w+)\s+qstr pool: n_pool=\d+, n_qstr=(\d+)",
                       out)
    assert [m for m, _ in marks] == ["helpers", "arena"], out
    assert marks[0][1] == marks[1][1], out


HELPERS_SCRIPT = device_script("board_heap_helpers.py")


def test_helpers_are_dropped_before_the_arena(package, tmp_path):
    """The kernels' prepare-time helpers (quant, conv_util, gemmlowp, the
    *_prep modules), which the sizing pass uses, are
    dropped before the arena is allocated, with verify and planner: only
    the modules the real pass itself runs in (allocator, context, source,
    construct) are imported then, so that the helpers' blocks do not split
    the free heap the arena needs (on an emulated pyboard-class M0,
    ResNet-8 after the keyword spotter and unload() failed with 62,304
    bytes free for its 54,820-byte arena, not in one block). The real pass
    imports them again, and drops them before the first operator of each
    kernel: at the keyword spotter's SOFTMAX (its last operator) the
    AVERAGE_POOL_2D's helper is gone, which the sizing pass held. With
    arena= no block is allocated: they stay until the real pass. The
    outputs are the same either way."""
    from host_tools import device
    from tflm import allocator
    from tflm.interpreter import CONSTRUCTION
    # allocator's _drop bits follow CONSTRUCTION's order
    assert CONSTRUCTION[4] == "tflm.context" and allocator._CONTEXT == 16
    assert allocator._HELPERS == sum(1 << k for k in range(3, 14))
    assert allocator._NATIVE == sum(1 << CONSTRUCTION.index(
        "tflm.kernels." + n) for n in ("conv_util", "decode_prep"))
    assert CONSTRUCTION[14:] == ("tflm.static_arena", "tflm.compiled",
                                 "tflm.source", "tflm.construct",
                                 "tflm.graphs", "tflm.compiled_regions")
    script = tmp_path / "h.py"
    script.write_text(HELPERS_SCRIPT)
    path = shared("tiny_kws_ref_int8", "kws_ref_model.tflite")
    out = {}
    for mode in ("heap", "arena"):
        proc = device.run_script(str(script), [package, path, mode,
                                               str(64 << 10)], timeout=120)
        lines = proc.stdout.splitlines()
        assert len(lines) == 3, proc.stdout + proc.stderr
        out[mode] = (eval(lines[0]), lines[2])
        sizing, real = eval(lines[1])
        pool = "tflm.kernels.pooling_prep"
        assert pool in sizing and pool not in real, (mode, sizing, real)
    (seen,), _ = out["heap"]
    assert seen == ["tflm.allocator", "tflm.context", "tflm.source",
                    "tflm.construct"], seen
    (seen,), _ = out["arena"]
    helpers = {"tflm.quant", "tflm.kernels.conv_util",
               "tflm.kernels.gemmlowp", "tflm.kernels.softmax_prep",
               "tflm.kernels.pooling_prep", "tflm.kernels.reshape_prep"}
    assert helpers <= set(seen) <= set(CONSTRUCTION), seen
    assert "tflm.verify" not in seen and "tflm.planner" not in seen, seen
    assert out["heap"][1] == out["arena"][1]


QSTR_SCRIPT = device_script("board_heap_qstr.py")


@pytest.mark.parametrize("rel", sorted(MODELS))
def test_construction_makes_no_qstr(package, tmp_path, rel):
    """Constructing and invoking a model, its modules imported, interns
    no new string: a qstr made then (e.g. by indexing one character of a
    str) can start a new qstr pool, kilobytes that land amid the arena's
    neighbours (it did: KWS kept 7 KB more on 64-bit)."""
    import re
    from host_tools import device
    path = shared(*rel.split("/"))
    script = tmp_path / "q.py"
    script.write_text(QSTR_SCRIPT)
    mods = fit.modules_file(path, str(tmp_path))
    proc = device.run_script(str(script), [package, path, mods],
                             timeout=120)
    counts = re.findall(r"n_qstr=(\d+)", proc.stdout)
    assert len(counts) == 2, proc.stdout + proc.stderr
    assert counts[0] == counts[1], proc.stdout


HIGH_SCRIPT = device_script("board_heap_high.py")


@pytest.mark.parametrize("how", ["high", "plain"])
def test_sizing_buffer_lies_high(package, tmp_path, how):
    """The sizing pass's buffer (as large as the largest activation) is
    made high in the heap (allocator._high), so that what the pass keeps
    lands below it and, once it is dropped, the free heap above is one
    block for the arena. With a plain bytearray (how="plain") the kept
    objects land above the buffer and split the heap: the check sees it
    (an emulated Cortex-M0+ once had 137 KB free for an 88 KB arena, but
    not in one block, because one small tuple lay amid it)."""
    from host_tools import device
    script = tmp_path / "high.py"
    script.write_text(HIGH_SCRIPT)
    proc = device.run_script(str(script), [package, how], timeout=120,
                             heap="200k")
    below, n, fits = proc.stdout.split()
    if how == "high":
        assert (int(below), fits) == (int(n), "True"), proc.stdout
    else:
        assert (int(below), fits) == (0, "False"), proc.stdout
