"""On the board: .mpy builds, the REPL API (predict, print, ulab), deploy
commands, package.json for mip, and the boards/*/board.json files.

The MicroPython unix port stands in for a board: it imports the .mpy
build exactly as a board imports its armv6m / armv7emsp build."""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, SHARED, device_script, shared, unix_arch
from host_tools import boards, build, device, inputs, romfs
from host_tools.cli_run import model_io
from host_tools.oracle import Reference

INT8_MODELS = [
    "add_model_int8/add_model.tflite",
    "hello_world_int8/hello_world_int8.tflite",
    "micro_speech_quantized/micro_speech_quantized.tflite",
    "micro_speech_unalign/model.tflite",
    "network_tester_model/network_model.tflite",
    "person_detect/person_detect.tflite",
    "simple_add/simple_add_model.tflite",
    "test_conv_model/test_conv_model.tflite",
    "tiny_ad01_int8/ad01_int8.tflite",
    "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite",
    "tiny_kws_ref_int8/kws_ref_model.tflite",
]
N_SETS = 2
MPY_ARCH = {"x64": 2, "armv6m": 4, "armv7emsp": 7, "armv7emdp": 8}


@pytest.fixture(scope="module")
def unix_build(tmp_path_factory):
    """build/<arch>-like folder holding tflm/*.mpy compiled for the unix
    port (no .py files: imports must come from the .mpy)."""
    out = tmp_path_factory.mktemp("mpy_unix")
    build.build(unix_arch(), str(out))
    return out


def run_in(cwd, code, timeout=120, extra_path=()):
    """Runs MicroPython source with cwd as the working directory (the
    board's filesystem root: sys.path[0] is ''); returns stdout."""
    script = os.path.join(str(cwd), "main_test.py")
    with open(script, "w") as f:
        f.write("import sys\n")
        for p in extra_path:
            f.write("sys.path.insert(0, %r)\n" % str(p))
        f.write(code)
    proc = subprocess.run([device.micropython_bin(), "-X", "heapsize=32M",
                           script], cwd=str(cwd), capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def mpy_header(path):
    with open(path, "rb") as f:
        return f.read(4)


# ---------------------------------------------------------------- .mpy


@pytest.mark.parametrize("arch", ["armv6m", "armv7emsp"])
def test_mpy_compiles_for_cortex_m(arch, tmp_path):
    paths = build.build(arch, str(tmp_path))
    # every module but the viper twins of the Thumb machine code (and
    # thumb_dsp.py but on a DSP arch, thumb_fpu.py but on an FPU arch)
    sources = [rel for _, rel in build.package_sources()
               if romfs.for_arch(rel, arch)]
    assert "tflm/kernels/thumb.py" in sources
    assert ("tflm/kernels/thumb_dsp.py" in sources) == (arch != "armv6m")
    assert ("tflm/kernels/thumb_fpu.py" in sources) == (arch != "armv6m")
    assert "tflm/kernels/thumb_dw.py" in sources
    assert "tflm/kernels/mac.py" not in sources
    assert sorted(os.path.relpath(p, str(tmp_path)).replace(os.sep, "/")
                  for p in paths) == sorted(s[:-3] + ".mpy" for s in sources)
    arches = set()
    for p in paths:
        h = mpy_header(p)
        assert h[0:1] == b"M" and h[1] == 6, p  # .mpy version 6
        arches.add(h[2] >> 2)
    # viper modules carry the arch; bytecode-only modules carry none (0)
    assert arches == {0, MPY_ARCH[arch]}


def test_make_mpy_board_uses_board_arch(tmp_path):
    arch, out_dir, paths = build.build_target("pico", None, str(tmp_path))
    assert arch == "armv6m" and out_dir == os.path.join(str(tmp_path), "pico")
    assert os.path.exists(os.path.join(out_dir, "tflm", "interpreter.mpy"))
    with pytest.raises(SystemExit):
        build.target("no_such_board")


def test_only_needed_modules():
    need = build.needed_modules([shared("hello_world_int8",
                                        "hello_world_int8.tflite")])
    assert "tflm/kernels/fully_connected.py" in need
    assert "tflm/interpreter.py" in need and "tflm/kernels/__init__.py" in need
    assert "tflm/kernels/conv.py" not in need
    need = build.needed_modules([shared("person_detect",
                                        "person_detect.tflite")])
    assert {"tflm/kernels/conv.py", "tflm/kernels/conv_util.py",
            "tflm/kernels/depthwise_conv.py"} <= need


def test_only_needed_build_runs(tmp_path):
    """A pruned build (ONLY_NEEDED) still runs its model."""
    model = shared("hello_world_int8", "hello_world_int8.tflite")
    build.build(unix_arch(), str(tmp_path),
                build.needed_modules([model]))
    assert not os.path.exists(tmp_path / "tflm" / "kernels" / "conv.mpy")
    shutil.copy(model, str(tmp_path / "m.tflite"))
    out = run_in(tmp_path, "import tflm\n"
                           "i = tflm.Interpreter('m.tflite')\n"
                           "print(len(i.predict([0.0])[0]))\n")
    assert out.strip() == "1"


def _binary_model(ops):
    from host_tools import opgen

    def q(shape):
        return opgen.Tensor(shape, "int8", scale=0.05, zero_point=0)
    m = opgen.Model()
    for name, shapes in ops:
        m.add_op(name, [q(s) for s in shapes[:2]], [q(shapes[2])])
    return m.build()


@pytest.mark.parametrize("ops", [
    # ADD walks add.py with its own types first (a large ADD: no chunked
    # eval); the small SUB must still bring add_chunks.py
    [("ADD", ([1, 16, 16, 4],) * 3), ("SUB", ([1, 4],) * 3)],
    # `from . import add, broadcast`: every name of the import counts
    [("SQUARED_DIFFERENCE", ([1, 16, 16, 4],) * 3)],
], ids=["large ADD, small SUB", "SQUARED_DIFFERENCE"])
def test_only_needed_modules_follow_every_operator(tmp_path, ops):
    """A pruned build (build.needed_modules, `deploy --only-needed`,
    `mpy --only-for`) holds what each operator of the model imports,
    whatever the order of the operators (found by a review: these two
    failed with ImportError)."""
    model = tmp_path / "m.tflite"
    model.write_bytes(_binary_model(ops))
    build.build(unix_arch(), str(tmp_path), build.needed_modules([str(model)]))
    out = run_in(tmp_path, "import tflm\n"
                           "i = tflm.Interpreter('m.tflite')\n"
                           "i.invoke()\nprint('ok')\n")
    assert out.strip() == "ok", out


# The device side of the bit-exact test: argv = model in_dir n_sets;
# reads in_<set>_<input>.bin, writes out_<set>_<output>.bin.
BITEXACT = device_script("board_bitexact.py")


@pytest.mark.parametrize("rel", INT8_MODELS)
def test_unix_mpy_bit_exact_with_tflm(rel, unix_build, tmp_path):
    path = shared(rel)
    ins, outs = model_io(path)
    rng = np.random.default_rng(4)
    sets = [[inputs.random_input(t, rng) for t in ins]
            for _ in range(N_SETS)]
    for k, data in enumerate(sets):
        for i, d in enumerate(data):
            (tmp_path / ("in_%d_%d.bin" % (k, i))).write_bytes(d)
    script = tmp_path / "bitexact.py"
    script.write_text("import sys\nsys.path.insert(0, %r)\n"
                      % str(unix_build) + BITEXACT)
    proc = device.run_script(str(script), [path, str(tmp_path),
                                           str(N_SETS)], timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ref = Reference(path)
    for k, data in enumerate(sets):
        arrs = [np.frombuffer(d, inputs.NP_DTYPES[t["dtype"]])
                for d, t in zip(data, ins)]
        want = [o.tobytes() for o in ref.run(arrs)]
        got = [(tmp_path / ("out_%d_%d.bin" % (k, j))).read_bytes()
               for j in range(len(outs))]
        assert got == want, (rel, k)


# ------------------------------------------------------- REPL, end to end


def board_dir(tmp_path, unix_build, models):
    """A folder laid out like a board's filesystem after `make deploy`:
    tflm/ (.mpy only) and the model files."""
    root = tmp_path / "board"
    shutil.copytree(str(unix_build / "tflm"), str(root / "tflm"))
    for src, name in models:
        shutil.copy(src, str(root / name))
    return root


# What a user types at the REPL (README.md, docs/api.md).
REPL = """
import tflm
interp = tflm.Interpreter('hello_world_int8.tflite')
print(interp)
y = interp.predict([1.5])
print(y[0][0])
print(interp.predict(1.5)[0][0] == y[0][0])
interp = tflm.Interpreter('micro_speech.tflite')
out = interp.predict(yes)
scores = list(out[0])
print(scores.index(max(scores)))
raw = interp.predict(yes, dequantize=False)[0]
print(bytes(raw) == bytes(interp.outputs[0].data))
print(interp.input(0).shape, interp.arena_size)
"""


def test_repl_session_end_to_end(unix_build, tmp_path):
    hello = shared("hello_world_int8", "hello_world_int8.tflite")
    speech = shared("micro_speech_quantized", "micro_speech_quantized.tflite")
    yes = np.load(shared("micro_speech_quantized", "yes_features.npy"))
    root = board_dir(tmp_path, unix_build, [(hello, "hello_world_int8.tflite"),
                                           (speech, "micro_speech.tflite")])
    (root / "yes.bin").write_bytes(yes.astype(np.int8).tobytes())
    code = "yes = open('yes.bin', 'rb').read()\n" + REPL
    out = run_in(root, code).splitlines()
    summary = "\n".join(out[:4])
    assert out[0].startswith("<Interpreter: 3 operators (FULLY_CONNECTED x3)")
    # 32 activation bytes (TFLM's head) + the FULLY_CONNECTED scratch
    # (one word per unit: 16), input buffer (16 words) and mac.dots'
    # block (10 words) planned into the head, 16-byte aligned
    m = re.search(r"  arena (\d+) bytes \(208 head \+ (\d+) tail\), "
                  r"model 2704 bytes read into RAM", summary)
    assert m and int(m.group(1)) == 208 + int(m.group(2)), summary
    assert out[2].startswith("  input 0 'serving_default_dense_input:0' "
                             "int8 (1, 1) scale 0.02448")
    assert out[2].endswith(" zero_point -128")
    assert out[3].startswith("  output 0 'StatefulPartitionedCall:0' int8 "
                             "(1, 1) scale 0.00829") and out[3].endswith(">")
    # hello world: the TFLM output for x = 1.5, dequantized
    ref = Reference(hello)
    d_in, d_out = ref.input_details(0), ref.interp.get_output_details(0)
    s_in, z_in = d_in["quantization_parameters"]["scales"][0], \
        d_in["quantization_parameters"]["zero_points"][0]
    q = int(np.clip(np.round(1.5 / s_in) + z_in, -128, 127))
    y = ref.run([np.array([q], np.int8)])[0].astype(np.float32)
    s_out, z_out = d_out["quantization_parameters"]["scales"][0], \
        d_out["quantization_parameters"]["zero_points"][0]
    assert abs(float(out[4]) - (y[0, 0] - z_out) * s_out) < 1e-6
    assert out[5] == "True"       # predict(1.5) is predict([1.5])
    assert out[6] == "2"          # 'yes' of [silence, unknown, yes, no]
    assert out[7] == "True"
    # TFLM's head is 5968 bytes of activations; ours adds the scratch
    # buffers planned into it (FULLY_CONNECTED's input chunk, 2 KB)
    shape, head = out[8].rsplit(" ", 1)
    assert shape == "(1, 1960)" and 5968 <= int(head) <= 5968 + 2304, out


def test_predict_argument_forms(unix_build, tmp_path):
    add = shared("simple_add", "simple_add_model.tflite")
    root = board_dir(tmp_path, unix_build, [(add, "add.tflite")])
    out = run_in(root, r"""
from array import array
import tflm
it = tflm.Interpreter('add.tflite')
n = 128 * 128
a = it.predict((bytes(n), bytearray(n)), dequantize=False)[0]
b = it.predict([array('b', bytes(n)), [0] * n], dequantize=False)[0]
c = it.predict([[0.0] * n, array('f', [0.0] * n)], dequantize=False)[0]
print(len(a), a == b)
for bad in (bytes(n), [bytes(n)], [bytes(n), bytes(n - 1)],
            [bytes(n), array('h', [0] * n)]):
    try:
        it.predict(bad)
        print('accepted')
    except tflm.InvokeError as e:
        print('InvokeError')
print(it.predict([bytes(n), bytes(n)])[0][:2])
""").splitlines()
    assert out[0] == "16384 True"
    assert out[1:5] == ["InvokeError"] * 4
    assert out[5].startswith("array('f'")


FAKE_ULAB = {
    "ulab/__init__.py": "",
    "ulab/numpy.py": r'''
# A stand-in for ulab.numpy: just what tflm uses (array, dtypes, tobytes).
from array import array as _array
int8, uint8, int16, float = ord('b'), ord('B'), ord('h'), ord('f')


MAX_DIMS = 2  # ULAB_MAX_DIMS of many firmware builds


class ndarray:
    def __init__(self, values, dtype):
        self.dtype = dtype  # an int typecode, as ulab without dtype objects
        self._a = _array(chr(dtype), values)
        self.shape = (len(self._a),)

    def flatten(self):
        return ndarray(self._a, self.dtype)

    def reshape(self, shape):
        n = 1
        for d in shape:
            n *= d
        if len(shape) > MAX_DIMS:
            raise ValueError("maximum number of dimensions is %d" % MAX_DIMS)
        if n != len(self._a):
            raise ValueError("cannot reshape array")
        b = ndarray(self._a, self.dtype)
        b.shape = tuple(shape)
        return b

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        return iter(self._a)

    def __getitem__(self, i):
        return self._a[i]

    def tobytes(self):
        return bytes(self._a)


def array(values, dtype=float):
    return ndarray(values, dtype)
''',
}

ULAB = device_script("board_ulab.py")


def test_ulab_ndarrays(unix_build, tmp_path):
    hello = shared("hello_world_int8", "hello_world_int8.tflite")
    root = board_dir(tmp_path, unix_build, [(hello, "hello.tflite")])
    lib = tmp_path / "fake_ulab"
    for rel, text in FAKE_ULAB.items():
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text(text)
    out = run_in(root, ULAB, extra_path=[lib]).splitlines()
    assert out == ["[5]", "ndarray 1", "ndarray True", "True",
                   "InvokeError"]


SHAPED = device_script("board_shaped.py")


def test_ulab_outputs_are_shaped_like_the_tensor(unix_build, tmp_path):
    """With ulab, predict() and dequantize() give ndarrays shaped like the
    output tensor (OpenMV's ml.Model), leading 1s dropped where ulab holds
    fewer dimensions, flat where it still has too many (the stand-in
    holds 2, as many firmware builds; checked against ulab 6.12 built
    with 2 and 4 dimensions)."""
    from host_tools import opgen
    T = opgen.Tensor
    models = [(shared("hello_world_int8", "hello_world_int8.tflite"),
               "hello.tflite")]
    for name, shape in (("r3", [1, 6, 5]), ("f3", [2, 3, 4]), ("r1", [7])):
        path = tmp_path / (name + ".tflite")
        path.write_bytes(opgen.single_op(
            "RELU", [T(shape, "int8", 0.5, -3)], [T(shape, "int8", 0.5, -3)]))
        models.append((str(path), name + ".tflite"))
    root = board_dir(tmp_path, unix_build, models)
    lib = tmp_path / "fake_ulab"
    for rel, text in FAKE_ULAB.items():
        (lib / rel).parent.mkdir(parents=True, exist_ok=True)
        (lib / rel).write_text(text)
    out = run_in(root, SHAPED, extra_path=[lib]).splitlines()
    # top(k) ranks the flat values (index 4 holds the largest, 2.0)
    assert out == ["r3 (1, 6, 5) (6, 5) (6, 5) 6 4 True", "refused",
                   "f3 (2, 3, 4) (24,) (24,) 24 4 True", "refused",
                   "r1 (7,) (7,) (7,) 7 4 True", "refused",
                   "hello (1, 1) (1, 1) (1, 1) 1 0 True", "refused"], out


def test_without_ulab_dequantize_gives_array(unix_build, tmp_path):
    hello = shared("hello_world_int8", "hello_world_int8.tflite")
    root = board_dir(tmp_path, unix_build, [(hello, "hello.tflite")])
    out = run_in(root, r"""
import tflm
try:
    import ulab
    print('ulab present')
except ImportError:
    pass
it = tflm.Interpreter('hello.tflite')
y = it.predict([0.5])[0]
print(type(y).__name__, repr(y[:0]), type(it.outputs[0].dequantize()).__name__)
""").splitlines()
    assert out == ["array array('f') array"]


def test_print_unbuilt_interpreter(tmp_path):
    """repr never raises, even on an object whose construction failed."""
    out = run_in(tmp_path, r"""
sys.path.insert(0, %r)
import tflm
class Half(tflm.Interpreter):
    def __init__(self):
        self._steps = None
print(repr(Half()))
""" % os.path.join(ROOT, "micropython"))
    assert out.strip() == "<Interpreter (not built)>"


# -------------------------------------------------------------- deploy


def dry_run(*argv):
    """stdout of `python -m host_tools deploy ... --dry-run`."""
    proc = subprocess.run([sys.executable, "-m", "host_tools", "deploy"]
                          + list(argv) + ["--dry-run"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    return proc


def mpremote_lines(stdout):
    return [ln.split("  #")[0].split() for ln in stdout.splitlines()
            if not ln.startswith("#")]


def test_deploy_dry_run_filesystem(tmp_path):
    model = shared("hello_world_int8", "hello_world_int8.tflite")
    proc = dry_run("--board", "pico", "--port", "/dev/ttyACM0", "--model",
                   model, "--build-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    cmds = mpremote_lines(proc.stdout)
    mp = cmds[0][0]
    assert os.path.basename(mp) == "mpremote"
    pkg = os.path.join(str(tmp_path), "pico", "tflm")
    # the model copied is the one compiled for the Pico (armv6m: 32-bit
    # words, Thumb code), under its own name
    compiled = os.path.join(str(tmp_path), "pico", "compiled",
                            "hello_world_int8.tflite")
    assert cmds == [
        [mp, "connect", "/dev/ttyACM0", "rm", "-r", ":tflm"],
        [mp, "connect", "/dev/ttyACM0", "cp", "-r", pkg, ":"],
        [mp, "connect", "/dev/ttyACM0", "cp", compiled,
         ":hello_world_int8.tflite"]]
    assert _block_target(compiled) == (4, 1)
    assert "hello_world_int8.tflite compiled for armv6m" in proc.stdout
    proc = dry_run("--board", "pico", "--port", "/dev/ttyACM0", "--model",
                   model, "--build-dir", str(tmp_path), "--no-compile")
    assert proc.returncode == 0, proc.stderr
    assert os.path.exists(os.path.join(pkg, "interpreter.mpy"))
    assert "-march=armv6m" in proc.stdout
    assert "tflm.Interpreter('hello_world_int8.tflite')" in proc.stdout
    assert mpremote_lines(proc.stdout)[-1][-2:] == [
        model, ":hello_world_int8.tflite"]


def _block_target(path):
    """(word size, thumb) of the compiled block in a model file, or None
    without one."""
    import struct

    from tflm.flatbuf import FlatBuffer
    from tflm.source import metadata
    with open(path, "rb") as f:
        raw = f.read()
    at = metadata(FlatBuffer(raw), "tflm_compiled")
    if at is None:
        return None
    return struct.unpack_from("<ii", raw, at[0] + 8)


def test_deploy_dry_run_romfs(tmp_path):
    model = shared("person_detect", "person_detect.tflite")
    proc = dry_run("--board", "pybd_sf6", "--port", "COM3", "--model",
                   model, "--romfs", "--build-dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    cmds = mpremote_lines(proc.stdout)
    mp = cmds[0][0]
    img = os.path.join(str(tmp_path), "pybd_sf6", "romfs.img")
    assert cmds == [[mp, "connect", "COM3", "rm", "-r", ":tflm"],
                    [mp, "connect", "COM3", "romfs", "deploy", img],
                    [mp, "connect", "COM3", "soft-reset"]]
    with open(img, "rb") as f:
        assert f.read(3) == b"\xd2\xcd\x31"  # a ROMFS image
    # the model in it is compiled for the board (its bytes end the
    # image's model entry: the same as compile_model's for armv7emdp)
    from host_tools import compile as comp
    with open(model, "rb") as f:
        want = comp.compile_model(f.read(), "armv7emdp")[0]
    with open(img, "rb") as f:
        assert want in f.read()
    assert "/rom/person_detect.tflite" in proc.stdout
    assert "-march=armv7emdp" in proc.stdout


def test_deploy_refuses_a_model_that_does_not_fit(tmp_path):
    """person_detect read from a pyboard v1.1's filesystem (100 KB heap)
    does not fit: non-zero exit, nothing copied; --force copies it."""
    model = shared("person_detect", "person_detect.tflite")
    args = ("--board", "pybv11", "--port", "COM3", "--model", model,
            "--build-dir", str(tmp_path))
    proc = dry_run(*args)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "does not fit pybv11: nothing copied" in proc.stderr
    assert mpremote_lines(proc.stdout) == []
    proc = dry_run(*(args + ("--force",)))
    assert proc.returncode == 0, proc.stderr
    assert mpremote_lines(proc.stdout)[-1][-1] == ":person_detect.tflite"


def test_deploy_romfs_refused_without_partition(tmp_path):
    proc = dry_run("--board", "pico", "--romfs", "--build-dir",
                   str(tmp_path))
    assert proc.returncode == 2 and "no ROMFS" in proc.stderr


# make, printing only, without rebuilding the venv or naming directories
MAKE_N = ["make", "-n", "--no-print-directory", "-o", ".venv/.installed"]


def test_make_deploy_passes_arguments():
    """`make deploy BOARD=.. PORT=.. MODEL=.. DRY_RUN=1` runs the tool with
    those arguments (make -n: print only)."""
    if not shutil.which("make"):
        pytest.skip("no make")
    proc = subprocess.run(MAKE_N + ["deploy",
                           "BOARD=pico", "PORT=/dev/ttyACM0", "MODEL=m.tflite",
                           "DRY_RUN=1", "ONLY_NEEDED=1"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    # (nested in `make test`, make may add its own lines: keep ours)
    line = [x for x in proc.stdout.splitlines() if "host_tools" in x][-1]
    line = line.split()
    assert line[1:4] == ["-m", "host_tools", "deploy"]
    assert line[4:] == ["--board", "pico", "--port", "/dev/ttyACM0",
                        "--model", "m.tflite", "--only-needed", "--dry-run"]
    proc = subprocess.run(MAKE_N + ["deploy",
                           "BOARD=pico"], cwd=ROOT, capture_output=True,
                          text=True)
    assert "--model" not in proc.stdout  # the Makefile's default MODEL
    proc = subprocess.run(MAKE_N + ["mpy",
                           "ARCH=armv6m"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.stdout.split()[1:] == ["-m", "host_tools", "mpy", "--arch",
                                       "armv6m"]


# ------------------------------------------------------ package.json (mip)


def test_package_json_is_current():
    with open(os.path.join(ROOT, "package.json")) as f:
        text = f.read()
    assert text == build.package_json_text(), \
        "package.json is out of date: run python -m host_tools package-json"
    urls = json.loads(text)["urls"]
    for dest, src in urls:
        assert os.path.exists(os.path.join(ROOT, src)), src
        assert dest == src[len("micropython/"):]


class DirTransport:
    """The part of mpremote's transport that mip installs use, writing
    into a local folder (stands in for a board's filesystem)."""

    def __init__(self, root):
        self.root = root

    def _p(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def fs_exists(self, path):
        return os.path.exists(self._p(path))

    def fs_mkdir(self, path):
        os.mkdir(self._p(path))

    def fs_writefile(self, path, data, progress_callback=None):
        with open(self._p(path), "wb") as f:
            f.write(data)


def test_mip_install_from_package_json(tmp_path, capsys):
    """mpremote's own mip code installs what package.json lists (from the
    local checkout, as `mpremote mip install github:OWNER/tflm` does from
    GitHub) into /lib, and the unix port runs a model from there."""
    from mpremote import mip
    board = tmp_path / "board"
    board.mkdir()
    mip._install_package(DirTransport(str(board)),
                         os.path.join(ROOT, "package.json"),
                         mip._PACKAGE_INDEX, "/lib", None, False)
    assert (board / "lib" / "tflm" / "kernels" / "conv.py").exists()
    model = shared("hello_world_int8", "hello_world_int8.tflite")
    shutil.copy(model, str(board / "m.tflite"))
    out = run_in(board, "sys.path.insert(0, 'lib')\nimport tflm\n"
                        "print(tflm.__file__)\n"
                        "print(len(tflm.Interpreter('m.tflite')"
                        ".predict([0.5])[0]))\n").split()
    assert out == ["lib/tflm/__init__.py", "1"]
    assert mip._rewrite_url("github:OWNER/tflm/package.json") == \
        "https://raw.githubusercontent.com/OWNER/tflm/HEAD/package.json"


# -------------------------------------------------------- boards/*.json


def test_board_json_files_validate():
    found = boards.load_boards()
    assert {b["id"] for b in found} == {"pico", "pico2", "nucleo_f446re",
                                        "pybv11", "pybd_sf6"}
    for b in found:
        assert boards.validate(b, b["id"]) == [], b["id"]
        readme = os.path.join(boards.BOARDS_DIR, b["id"], "README.md")
        assert os.path.exists(readme), readme
    by_id = {b["id"]: b for b in found}
    assert by_id["pico"]["march"] == "armv6m"
    assert by_id["pybd_sf6"]["romfs"] and by_id["pybd_sf6"]["march"] == \
        "armv7emdp"


def test_board_fits_lists_agree_with_the_tool():
    if not os.path.isdir(SHARED):
        pytest.skip("shared models missing")
    found = boards.load_boards()
    costs, code_all = boards.costs()
    bad = boards.disagreements(found, costs, code_all)
    assert bad == [], "\n".join(bad) + \
        "\nrun: python -m host_tools boards --write"
    keys = {c.key for c in costs if not c.error}
    for b in found:
        for lst in b["fits"].values():
            assert set(lst) <= keys


def test_fits_judgement_rules():
    """The rule itself, on made-up costs: RAM and storage both count, and
    ROMFS takes the file out of RAM."""
    board = {"id": "b", "heap_bytes": 200 * 1024, "march": "armv6m",
             "filesystem_bytes": 1 << 20, "romfs": True,
             "romfs_bytes": 1 << 20}

    class C:
        error = None
        needed = None

        def __init__(self, ram_wo_file, file):
            self.r, self.file = ram_wo_file, file

        def ram(self, in_romfs):
            return self.r + (0 if in_romfs else self.file)

    resv = boards.reserve(board)
    assert resv == 17 * 1024  # construction margin 11 KB + 6 KB free
    free = board["heap_bytes"] - resv
    assert boards.fits(board, C(free - 1000, 1000), False)
    assert not boards.fits(board, C(free - 999, 1000), False)
    assert boards.fits(board, C(free - 999, 1000), True)
    assert not boards.fits(board, C(1000, 2 << 20), True)  # partition
