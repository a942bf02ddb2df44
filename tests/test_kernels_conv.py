"""CONV_2D and DEPTHWISE_CONV_2D int8 kernels against TFLM.

Random single-operator models are built with tflite_micro's model_editor,
run by TFLM's reference interpreter (the oracle) and by a numpy model of
TFLM's integer arithmetic (reference_integer_ops::ConvPerChannel /
DepthwiseConvPerChannel), and by our kernels in the MicroPython unix port
(one subprocess for all cases). Model bytes are placed at an odd address
so that constant data is misaligned. Real models (network_tester_model)
are checked against their golden output.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# $TFLM_MICROPYTHON selects another build (e.g. 32-bit), as in host_tools.
MP = os.environ.get("TFLM_MICROPYTHON") or os.path.join(
    os.path.dirname(sys.executable), "micropython")
MODELS = os.path.join(os.path.dirname(ROOT), "shared", "models")
if not os.path.isdir(MODELS):
    MODELS = "/work/shared/models"

sys.path.insert(0, os.path.join(ROOT, "micropython"))
from tflm import quant  # noqa: E402
from conftest import device_script  # noqa: E402

tfm = pytest.importorskip("tflite_micro")
from tflite_micro.tensorflow.lite.micro.compression import (  # noqa: E402
    model_editor as me)
from tflite_micro.tensorflow.lite.micro.python import (  # noqa: E402
    schema_py_generated as sch)

CONV, DW = 3, 4

# ---------------------------------------------------------------------------
# MicroPython side: load each model, prepare the op with a fake
# interpreter context, run it, write the output. One process, all cases.
RUNNER = device_script("conv_runner.py")


def run_micropython(tmp_path, lines):
    script = tmp_path / "runner.py"
    script.write_text("ROOT = %r\n" % ROOT + RUNNER)
    manifest = tmp_path / "manifest.txt"
    manifest.write_text("\n".join(lines) + "\n")
    r = subprocess.run([MP, "-X", "heapsize=8M", str(script), str(manifest)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().endswith("DONE"), r.stdout + r.stderr
    assert "NONDETERMINISTIC" not in r.stdout, r.stdout
    return r.stdout


# ---------------------------------------------------------------------------
# numpy model of TFLM's integer arithmetic.

def wrap32(v):
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def mbqm(x, m, s):
    """MultiplyByQuantizedMultiplier (double rounding), vectorised; x int64
    holding int32 values, m, s broadcast along the last axis."""
    m = np.asarray(m, np.int64)
    s = np.asarray(s, np.int64)
    left = np.maximum(s, 0)
    right = np.maximum(-s, 0)
    x = wrap32(x << left)
    ab = x * m
    t = ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    q = np.where(t >= 0, t >> 31, -((-t) >> 31))
    mask = (np.int64(1) << right) - 1
    rem = q & mask
    thr = (mask >> 1) + (q < 0)
    return (q >> right) + (rem > thr)


def out_size(padding, n, k, s, d):
    eff = (k - 1) * d + 1
    if padding == 0:
        return (n + s - 1) // s
    num = n + s - eff
    return num // s if num >= 0 else -((-num) // s)


def pad_before(s, d, n, k, o):
    total = (o - 1) * s + (k - 1) * d + 1 - n
    return max(total, 0) // 2


def ref_op(c):
    """Expected int8 output of case c (dict), TFLM integer semantics."""
    x = c["x"].astype(np.int64) - c["in_zp"]
    w = c["w"].astype(np.int64)
    B, H, W, C = x.shape
    sh, sw, dh, dwf = c["sh"], c["sw"], c["dh"], c["dw"]
    if c["kind"] == CONV:
        OC, KH, KW, CIN = w.shape
    else:
        _, KH, KW, OC = w.shape
    OH = out_size(c["padding"], H, KH, sh, dh)
    OW = out_size(c["padding"], W, KW, sw, dwf)
    ph = pad_before(sh, dh, H, KH, OH)
    pw = pad_before(sw, dwf, W, KW, OW)
    acc = np.zeros((B, OH, OW, OC), np.int64)
    for oy in range(OH):
        for ox in range(OW):
            for ky in range(KH):
                iy = oy * sh - ph + ky * dh
                if not 0 <= iy < H:
                    continue
                for kx in range(KW):
                    ix = ox * sw - pw + kx * dwf
                    if not 0 <= ix < W:
                        continue
                    v = x[:, iy, ix, :]
                    if c["kind"] == CONV:
                        g = C // CIN
                        fpg = OC // g
                        for gi in range(g):
                            acc[:, oy, ox, gi * fpg:(gi + 1) * fpg] += (
                                v[:, gi * CIN:(gi + 1) * CIN]
                                @ w[gi * fpg:(gi + 1) * fpg, ky, kx, :].T)
                    else:
                        dm = OC // C
                        acc[:, oy, ox, :] += (np.repeat(v, dm, axis=1)
                                              * w[0, ky, kx, :])
    if c["bias"] is not None:
        acc += c["bias"].astype(np.int64)
    acc = wrap32(acc)
    y = mbqm(acc, c["mults"], c["shifts"]) + c["out_zp"]
    return np.clip(y, c["lo"], c["hi"]).astype(np.int8)


# ---------------------------------------------------------------------------
# Random cases and their .tflite models.

def f32(v):
    return float(np.float32(v))


def random_case(rng, kind, geo=None):
    """A random valid conv / depthwise case (dict). geo: (B, H, W, KH, KW,
    sh, sw, dh, dw, padding) instead of random ones."""
    while geo is not None:
        B, H, W, KH, KW, sh, sw, dh, dwf, padding = geo
        OH = out_size(padding, H, KH, sh, dh)
        OW = out_size(padding, W, KW, sw, dwf)
        break
    while geo is None:
        B = int(rng.choice([1, 1, 1, 2]))
        H = int(rng.integers(1, 10))
        W = int(rng.integers(1, 10))
        KH = int(rng.integers(1, 5))
        KW = int(rng.integers(1, 5))
        if kind == CONV and rng.integers(0, 4) == 0:
            KH = KW = 1  # the matrix-product path
        sh, sw = (int(v) for v in rng.integers(1, 4, 2))
        dh, dwf = (int(v) for v in rng.choice([1, 1, 2], 2))
        padding = int(rng.integers(0, 2))
        OH = out_size(padding, H, KH, sh, dh)
        OW = out_size(padding, W, KW, sw, dwf)
        if OH >= 1 and OW >= 1:
            break
    if kind == CONV:
        CIN = int(rng.choice([1, 2, 3, 4, 8, 16]))
        groups = int(rng.choice([1, 1, 1, 1, 2, 3]))
        C = CIN * groups
        OC = groups * int(rng.integers(1, 6))
        if KH == KW == 1 and rng.integers(0, 2):
            CIN, groups, C = 64, 1, 64  # long rows, unrolled loops
            OC = int(rng.integers(1, 9))
        wshape = (OC, KH, KW, CIN)
        qdim = 0
        K = KH * KW * CIN
    else:
        C = int(rng.choice([1, 2, 3, 5, 8, 16]))
        dm = int(rng.choice([1, 1, 2, 3]))
        OC = C * dm
        wshape = (1, KH, KW, OC)
        qdim = 3
        K = KH * KW
    act = int(rng.integers(0, 4))
    zps = [-128, 127, 0, int(rng.integers(-128, 128))]
    in_zp = int(rng.choice(zps))
    out_zp = int(rng.choice(zps if act == 0 else zps + [-128, -100]))
    out_scale = f32(2.0 ** rng.uniform(-7, -1))
    per_channel = bool(rng.integers(0, 2)) and OC > 1
    nsc = OC if per_channel else 1
    f_scales = [f32(2.0 ** rng.uniform(-9, -3)) for _ in range(nsc)]
    # Input scale so that outputs spread over int8, sometimes extreme.
    spread = 2.0 ** rng.uniform(-3, 3)
    if rng.integers(0, 10) == 0:
        spread = 2.0 ** float(rng.choice([-20, -12, 12]))
    in_scale = f32(out_scale * 40 / (max(f_scales) * 10000 * np.sqrt(K))
                   * spread)
    x = rng.integers(-128, 128, (B, H, W, C)).astype(np.int8)
    w = rng.integers(-127, 128, wshape).astype(np.int8)
    if rng.integers(0, 8) == 0:
        w[...] = rng.choice([-127, 127])  # saturating weights
    bias = None
    if rng.integers(0, 4):
        # About the accumulator's spread; sometimes near the int32 limits.
        lim = int(5000 * np.sqrt(K)) + 1
        if rng.integers(0, 10) == 0:
            lim = 1 << 30
        bias = rng.integers(-lim, lim, OC).astype(np.int32)
    c = dict(kind=kind, x=x, w=w, bias=bias, in_zp=in_zp, out_zp=out_zp,
             in_scale=in_scale, f_scales=f_scales, out_scale=out_scale,
             qdim=qdim, sh=sh, sw=sw, dh=dh, dw=dwf, padding=padding,
             act=act, out_shape=(B, OH, OW, OC),
             dm=(OC // C if kind == DW else 0))
    ms = [quant.conv_multiplier(in_scale, f_scales[i % nsc], out_scale)
          for i in range(OC)]
    c["mults"] = [m for m, _ in ms]
    c["shifts"] = [s for _, s in ms]
    c["lo"], c["hi"] = quant.activation_range(act, out_scale, out_zp)
    return c


def build_model(c):
    """A one-operator .tflite model (bytes) for case c."""
    i8, i32 = sch.TensorType.INT8, sch.TensorType.INT32
    inp = me.Tensor(shape=c["x"].shape, dtype=i8, name="input",
                    quantization=me.Quantization([c["in_scale"]],
                                                 [c["in_zp"]]))
    nsc = len(c["f_scales"])
    filt = me.Tensor(shape=c["w"].shape, dtype=i8, data=c["w"],
                     name="filter",
                     quantization=me.Quantization(list(c["f_scales"]),
                                                  [0] * nsc, axis=c["qdim"]))
    bias = None
    if c["bias"] is not None:
        bias = me.Tensor(shape=c["bias"].shape, dtype=i32,
                         data=c["bias"].astype("<i4"), name="bias")
    out = me.Tensor(shape=c["out_shape"], dtype=i8, name="output",
                    quantization=me.Quantization([c["out_scale"]],
                                                 [c["out_zp"]]))
    if c["kind"] == CONV:
        opts = sch.Conv2DOptionsT()
        opts.padding, opts.strideW, opts.strideH = (c["padding"], c["sw"],
                                                    c["sh"])
        opts.fusedActivationFunction = c["act"]
        opts.dilationWFactor, opts.dilationHFactor = c["dw"], c["dh"]
        code, otype = (sch.BuiltinOperator.CONV_2D,
                       sch.BuiltinOptions.Conv2DOptions)
    else:
        opts = sch.DepthwiseConv2DOptionsT()
        opts.padding, opts.strideW, opts.strideH = (c["padding"], c["sw"],
                                                    c["sh"])
        opts.depthMultiplier = c["dm"]
        opts.fusedActivationFunction = c["act"]
        opts.dilationWFactor, opts.dilationHFactor = c["dw"], c["dh"]
        code, otype = (sch.BuiltinOperator.DEPTHWISE_CONV_2D,
                       sch.BuiltinOptions.DepthwiseConv2DOptions)
    op = me.Operator(opcode=code, inputs=[inp, filt, bias], outputs=[out])
    op._fb.builtinOptionsType = otype
    op._fb.builtinOptions = opts
    sg = me.Subgraph(tensors=[t for t in (inp, filt, bias, out) if t],
                     operators=[op], inputs=[inp], outputs=[out])
    return bytes(me.Model(subgraphs=[sg]).build())


def run_tflm(model_bytes, x):
    from tflite_micro.python.tflite_micro import runtime
    it = runtime.Interpreter.from_bytes(model_bytes, arena_size=1 << 20)
    it.set_input(x, 0)
    it.invoke()
    return it.get_output(0)


def make_cases(seed, n_conv, n_dw):
    rng = np.random.default_rng(seed)
    return ([random_case(rng, CONV) for _ in range(n_conv)]
            + [random_case(rng, DW) for _ in range(n_dw)])


def test_random_against_tflm_and_numpy(tmp_path):
    cases = make_cases(20240611, 120, 120)
    lines = []
    for k, c in enumerate(cases):
        mb = build_model(c)
        c["ref"] = ref_op(c)
        # The numpy model must agree with TFLM itself. (TFLM's depthwise
        # prepare crashes on an omitted bias: those cases use numpy only.)
        if c["kind"] == CONV or c["bias"] is not None:
            tflm_out = run_tflm(mb, c["x"])
            assert np.array_equal(tflm_out, c["ref"]), (k, c["kind"])
        mpath = tmp_path / ("m%d.tflite" % k)
        mpath.write_bytes(mb)
        ipath = tmp_path / ("i%d.bin" % k)
        ipath.write_bytes(c["x"].tobytes())
        lines.append("c%d %s 0 %s %s %d" % (k, mpath, ipath,
                                            tmp_path / ("o%d.bin" % k),
                                            1 + k % 3))
    out = run_micropython(tmp_path, lines)
    # Every specialised eval path ran.
    paths = set((c["kind"], ln.split()[3]) for c, ln in zip(
        cases, (ln for ln in out.splitlines() if ln.startswith("TIME"))))
    assert paths == {(CONV, "_eval_1x1"), (CONV, "_eval_any"),
                     (DW, "_eval_k3"), (DW, "_eval_any")}, paths
    bad = []
    for k, c in enumerate(cases):
        got = np.frombuffer((tmp_path / ("o%d.bin" % k)).read_bytes(),
                            np.int8).reshape(c["out_shape"])
        if not np.array_equal(got, c["ref"]):
            bad.append((k, c["kind"], c["x"].shape, c["w"].shape,
                        int((got != c["ref"]).sum())))
    assert not bad, bad


def test_depthwise_plane_tiles(tmp_path):
    """DEPTHWISE_CONV_2D copies the input plane of each channel in tiles
    of at most 2 KB (depthwise_conv._tile): wide and tall inputs take
    several tiles, in columns and in rows, with padding at every edge and
    dilation; bit-exact with TFLM."""
    rng = np.random.default_rng(5)
    geos = [(1, 4, 1500, 3, 3, 1, 1, 1, 1, 0),   # column tiles
            (1, 70, 60, 3, 3, 2, 1, 1, 1, 0),    # row tiles, stride 2
            (2, 40, 90, 5, 4, 1, 2, 2, 1, 0),    # generic, dilation
            (1, 9, 700, 10, 8, 2, 2, 1, 1, 0),   # micro_speech-like
            (1, 30, 30, 3, 3, 1, 1, 1, 3, 1)]    # 3x3, dilated across
    lines = []
    cases = []
    for k, g in enumerate(geos):
        c = random_case(rng, DW, g)
        while c["bias"] is None:
            c = random_case(rng, DW, g)
        cases.append(c)
        tflm_out = run_tflm(build_model(c), c["x"])
        assert np.array_equal(tflm_out, ref_op(c)), k
        c["ref"] = tflm_out
        mpath = tmp_path / ("t%d.tflite" % k)
        mpath.write_bytes(build_model(c))
        ipath = tmp_path / ("t%d.bin" % k)
        ipath.write_bytes(c["x"].tobytes())
        lines.append("t%d %s 0 %s %s 1" % (k, mpath, ipath,
                                           tmp_path / ("u%d.bin" % k)))
    run_micropython(tmp_path, lines)
    for k, c in enumerate(cases):
        got = np.frombuffer((tmp_path / ("u%d.bin" % k)).read_bytes(),
                            np.int8).reshape(c["out_shape"])
        assert np.array_equal(got, c["ref"]), k


def test_zero_point_sum_wraps_as_int32(tmp_path):
    """MBQM(acc) + output zero point is an int32 sum in TFLM, which wraps:
    with a multiplier within 100 of 2**31 and shift 12, acc = 2**19 gives
    MBQM near -2**31, and adding zero point -100 wraps to a large
    positive value (clamped to 127), where an unwrapped sum clamps to
    -128 (64-bit ports; found by a reviewer). CONV_2D and
    DEPTHWISE_CONV_2D, against TFLM."""
    in_s, f_s = f32(0.9066351056098938), f32(0.9563778042793274)
    out_s = f32(0.8670856952667236 / 4096)
    x = np.array([127, 126, 0, -128], np.int8).reshape(1, 1, 4, 1)
    lines, cases = [], []
    for kind in (CONV, DW):
        for out_zp in (-100, -5, 0):
            c = dict(kind=kind, x=x, w=np.full((1, 1, 1, 1), 127, np.int8),
                     bias=np.array([(1 << 19) - 16129], np.int32),
                     in_zp=0, out_zp=out_zp, in_scale=in_s, f_scales=[f_s],
                     out_scale=out_s, qdim=0 if kind == CONV else 3,
                     sh=1, sw=1, dh=1, dw=1, padding=1, act=0,
                     out_shape=(1, 1, 4, 1), dm=0 if kind == CONV else 1)
            mb = build_model(c)
            c["ref"] = run_tflm(mb, x)
            k = len(cases)
            cases.append(c)
            (tmp_path / ("z%d.tflite" % k)).write_bytes(mb)
            (tmp_path / ("z%d.bin" % k)).write_bytes(x.tobytes())
            lines.append("z%d %s 0 %s %s 0" % (
                k, tmp_path / ("z%d.tflite" % k), tmp_path / ("z%d.bin" % k),
                tmp_path / ("y%d.bin" % k)))
    # the case is the one described: TFLM's wrapped sum clamps to 127
    assert cases[0]["ref"].ravel()[0] == 127, cases[0]["ref"]
    run_micropython(tmp_path, lines)
    for k, c in enumerate(cases):
        got = np.frombuffer((tmp_path / ("y%d.bin" % k)).read_bytes(),
                            np.int8).reshape(c["out_shape"])
        assert np.array_equal(got, c["ref"]), (k, got, c["ref"])


def test_prepare_rejects(tmp_path):
    rng = np.random.default_rng(7)
    lines = []
    for kind in (CONV, DW):
        c = random_case(rng, kind)
        # (a CONV_2D with a 1x1 filter and one group: the one that reads
        # ctx.scratch, see "scratch" below)
        while c["bias"] is None or len(c["f_scales"]) < 3 or (
                kind == CONV and (c["w"].shape[1:3] != (1, 1)
                                  or c["w"].shape[3] != c["x"].shape[3])):
            c = random_case(rng, kind)
        mpath = tmp_path / ("bad%d.tflite" % kind)
        mpath.write_bytes(build_model(c))
        whats = ["outshape", "intype", "rank", "nscales", "bias", "stride",
                 "padding", "act"]
        # DEPTHWISE_CONV_2D and the other CONV_2D ask for a work buffer,
        # not ctx.scratch
        whats.append("dm" if kind == DW else "scratch")
        for what in whats:
            lines.append("bad %s_%d %s %s" % (what, kind, mpath, what))
    out = run_micropython(tmp_path, lines)
    for line in out.splitlines()[:-1]:
        assert line.startswith("REJECTED"), line
    assert out.count("REJECTED") == len(lines), out


def test_network_tester_golden(tmp_path):
    d = os.path.join(MODELS, "network_tester_model")
    if not os.path.isdir(d):
        pytest.skip("no shared models")
    x = np.load(os.path.join(d, "input.npy")).astype(np.uint8)
    want = np.load(os.path.join(d, "expected_output.npy")).astype(np.uint8)
    ipath = tmp_path / "in.bin"
    ipath.write_bytes(x.tobytes())
    opath = tmp_path / "out.bin"
    run_micropython(tmp_path, ["nt %s 0 %s %s 1" % (
        os.path.join(d, "network_model.tflite"), ipath, opath)])
    got = np.frombuffer(opath.read_bytes(), np.uint8)
    assert np.array_equal(got, want.reshape(-1))


def _bmp_gray(path):
    """Pixels of an 8-bit palette BMP as a top-down uint8 array."""
    b = open(path, "rb").read()
    off = int.from_bytes(b[10:14], "little")
    hsize = int.from_bytes(b[14:18], "little")
    w = int.from_bytes(b[18:22], "little", signed=True)
    h = int.from_bytes(b[22:26], "little", signed=True)
    pal = np.frombuffer(b[14 + hsize:off], np.uint8).reshape(-1, 4)
    stride = (w + 3) & ~3
    rows = np.frombuffer(b[off:off + stride * abs(h)], np.uint8)
    img = pal[rows.reshape(abs(h), stride)[:, :w], 0]
    return img[::-1] if h > 0 else img


def _real_inputs():
    """(model path, int8/float input array) for the shared real models."""
    d = MODELS
    rng = np.random.default_rng(3)
    pd = _bmp_gray(os.path.join(d, "person_detect", "person.bmp"))
    return [
        ("person_detect/person_detect.tflite",
         pd.view(np.int8).reshape(1, 96, 96, 1)),  # raw bytes, as upstream
        ("tiny_kws_ref_int8/kws_ref_model.tflite",
         np.load(os.path.join(d, "tiny_kws_ref_int8", "input.npy"))
         .astype(np.int8).reshape(1, 49, 10, 1)),
        ("tiny_ic_resnet_int8/pretrainedResnet_quant.tflite",
         (np.load(os.path.join(d, "tiny_ic_resnet_int8", "input.npy"))
          .astype(np.int16) - 128).astype(np.int8).reshape(1, 32, 32, 3)),
        ("micro_speech_quantized/micro_speech_quantized.tflite",
         np.load(os.path.join(d, "micro_speech_quantized", "yes_features.npy"))
         .astype(np.int8).reshape(1, 1960)),
        ("micro_speech_unalign/model.tflite",
         np.load(os.path.join(d, "micro_speech_quantized", "no_features.npy"))
         .astype(np.int8).reshape(1, 1960)),
        ("network_tester_model/network_model.tflite",
         np.load(os.path.join(d, "network_tester_model", "input.npy"))
         .astype(np.uint8).view(np.int8).reshape(1, 8, 8, 16)),
        ("test_conv_model/test_conv_model.tflite",
         rng.uniform(-1, 1, (1, 16, 16, 1)).astype(np.float32)),
    ]


def test_real_models_per_layer(tmp_path):
    """Every int8 CONV_2D / DEPTHWISE_CONV_2D of the real models, fed
    TFLM's own intermediate input tensor, must reproduce TFLM's output."""
    if not os.path.isdir(MODELS):
        pytest.skip("no shared models")
    from tflite_micro.python.tflite_micro import runtime
    from tflm import model as tmodel
    lines, expect = [], {}
    for rel, x in _real_inputs():
        path = os.path.join(MODELS, rel)
        mb = open(path, "rb").read()
        it = runtime.Interpreter.from_bytes(
            mb, arena_size=1 << 22,
            intrepreter_config=runtime.InterpreterConfig.kPreserveAllTensors)
        it.set_input(x, 0)
        it.invoke()
        m = tmodel.Model(mb)
        for k, op in enumerate(m.operators):
            if op.code not in (CONV, DW):
                continue
            if m.tensors[op.inputs[0]].dtype != "int8":
                continue
            name = "%s#%d" % (rel.split("/")[0], k)
            ipath = tmp_path / ("%s.in" % name)
            xin = it.GetTensor(op.inputs[0], 0)["tensor_data"]
            ipath.write_bytes(np.ascontiguousarray(xin).tobytes())
            expect[name] = it.GetTensor(op.outputs[0], 0)["tensor_data"]
            lines.append("%s %s %d %s %s %d" % (name, path, k, ipath,
                                                tmp_path / ("%s.out" % name),
                                                k % 4))
    assert len(lines) == 51  # 28 + 9 + 9 + 1 + 1 + 1 + 2
    out = run_micropython(tmp_path, lines)
    times = dict((ln.split()[1], int(ln.split()[2]))
                 for ln in out.splitlines() if ln.startswith("TIME"))
    bad = []
    for name, want in expect.items():
        got = np.frombuffer((tmp_path / ("%s.out" % name)).read_bytes(),
                            np.int8)
        if not np.array_equal(got, want.reshape(-1)):
            bad.append((name, int((got != want.reshape(-1)).sum())))
    assert not bad, bad
    pd = sum(v for n, v in times.items() if n.startswith("person_detect"))
    print("person_detect conv layers: %.1f ms" % (pd / 1000))
    for n in sorted(times, key=lambda n: -times[n])[:40]:
        print("  %s %.2f ms" % (n, times[n] / 1000))


NEAR = device_script("conv_near.py")


def test_buffers_far_from_the_arena_are_refused_on_64_bit(tmp_path):
    """The blocks of mac.py, and the pairs of CONV_2D's and
    DEPTHWISE_CONV_2D's parameter blocks (context.pairs), hold addresses
    as int32 offsets on a 64-bit port: a constant more than 2 GB from the
    arena (a model outside the GC heap, or a heap over 2 GB) is a
    PrepareError, never a wild read. A 32-bit port checks nothing (its
    addresses are 32-bit; the offsets are exact mod 2**32)."""
    script = tmp_path / "near.py"
    script.write_text(NEAR)
    r = subprocess.run([MP, str(script), os.path.join(ROOT, "micropython")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    bits64 = subprocess.run(
        [MP, "-c", "import sys; print(sys.maxsize > 2**32)"],
        capture_output=True, text=True, timeout=60).stdout.strip() == "True"
    far = "PrepareError True" if bits64 else "ok"
    assert r.stdout.split("\n")[:5] == [
        "0 ok", "1048576 ok", "1879048192 ok", "2046820352 " + far,
        "-2046820352 " + far], r.stdout
    # the packed states' pairs (context.pairs): the same bound
    far = "ValueError True" if bits64 else "ok True"
    assert r.stdout.split("\n")[5:10] == [
        "PAIRS 0 ok True", "PAIRS 1048576 ok True",
        "PAIRS 1879048192 ok True", "PAIRS 2046820352 " + far,
        "PAIRS -2046820352 " + far], r.stdout
