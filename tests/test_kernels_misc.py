"""FULLY_CONNECTED, pooling, ADD, SOFTMAX, QUANTIZE, DEQUANTIZE vs TFLM.

Each case is a one-operator .tflite model built here with TFLM's own schema
bindings, with seeded random shapes, data, scales (extreme ones included),
zero points and activations. The TFLM reference interpreter (the oracle)
runs it on CPython; the MicroPython unix port runs tflm on the same model
and inputs in one process, invoking under micropython.heap_lock(); outputs
must be bit-identical (float outputs compared as float32 bit patterns).
Real models that use these kernels are checked the same way at the end.
"""

import flatbuffers
import numpy as np
import pytest

from conftest import run_mp, shared
from host_tools import device
from mp_batch import run_on_device
from host_tools.oracle import Reference
from tflite_micro.tensorflow.lite.micro.python import \
    schema_py_generated as S

TYPES = {"float32": 0, "int32": 2, "uint8": 3, "int64": 4, "int16": 7,
         "int8": 9}
NP = {"float32": np.float32, "int32": np.int32, "uint8": np.uint8,
      "int64": np.int64, "int16": np.int16, "int8": np.int8}

# BuiltinOperator and BuiltinOptions codes (schema.fbs).
ADD, AVG, FC, MAXP, SOFTMAX, QUANTIZE, DEQUANTIZE = 0, 1, 9, 17, 25, 114, 6
OPT_POOL, OPT_FC, OPT_SOFTMAX, OPT_ADD = 5, 8, 9, 11


def tensor(shape, dtype, scale=None, zp=0, data=None, qdim=0):
    """A tensor description for build(); scale may be a list."""
    if scale is not None and not isinstance(scale, (list, tuple)):
        scale = [scale]
    if scale is not None and not isinstance(zp, (list, tuple)):
        zp = [zp] * len(scale)
    return dict(shape=list(shape), dtype=dtype, scale=scale, zp=zp,
                data=data, qdim=qdim)


def build(code, tensors, op_in, op_out, opt_type=0, opts=None):
    """Serialize a one-operator model. Graph inputs are the op inputs that
    have no data; the graph output is the op output."""
    m = S.ModelT()
    m.version = 3
    oc = S.OperatorCodeT()
    oc.builtinCode = code
    oc.deprecatedBuiltinCode = min(code, 127)
    oc.version = 1
    m.operatorCodes = [oc]
    m.buffers = [S.BufferT()]
    sg = S.SubGraphT()
    sg.tensors = []
    for i, t in enumerate(tensors):
        T = S.TensorT()
        T.shape = t["shape"]
        T.type = TYPES[t["dtype"]]
        T.name = "t%d" % i
        T.buffer = 0
        if t["scale"] is not None:
            q = S.QuantizationParametersT()
            q.scale = [float(s) for s in t["scale"]]
            q.zeroPoint = [int(z) for z in t["zp"]]
            q.quantizedDimension = t["qdim"]
            T.quantization = q
        if t["data"] is not None:
            b = S.BufferT()
            raw = np.ascontiguousarray(t["data"]).tobytes()
            b.data = np.frombuffer(raw, np.uint8)
            m.buffers.append(b)
            T.buffer = len(m.buffers) - 1
        sg.tensors.append(T)
    op = S.OperatorT()
    op.opcodeIndex = 0
    op.inputs = list(op_in)
    op.outputs = list(op_out)
    if opts is not None:
        op.builtinOptionsType = opt_type
        op.builtinOptions = opts
    sg.operators = [op]
    sg.inputs = [i for i in op_in if i >= 0 and tensors[i]["data"] is None]
    sg.outputs = list(op_out)
    m.subgraphs = [sg]
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


# --- running many models in one MicroPython process ----------------------

def run_cases(cases, tmp_path, sets=1, scratch=None):
    """cases: list of (model_bytes, make_inputs(rng, set_index)), or
    (model_bytes, None) for models that tflm must reject and that TFLM
    would abort on (not run on the oracle).

    Feeds `sets` random input sets per model to TFLM and to tflm (all
    models in one process: mp_batch.run_on_device); asserts equal outputs.
    scratch: override the interpreter's scratch length. Returns the list
    of per-case error strings of models that tflm rejected (None when it
    ran), for tests that expect rejections.
    """
    rng = np.random.default_rng(1234)
    expected, jobs = [], []
    for model, make_inputs in cases:
        ins_sets = []
        if make_inputs is None:  # TFLM aborts the process on these
            expected.append(("reject", "TFLM aborts"))
        else:
            try:
                ref = Reference(model)
            except RuntimeError as e:
                expected.append(("reject", str(e)))
            else:
                outs = []
                for j in range(sets):
                    ins = make_inputs(rng, j)
                    ins_sets.append(ins)
                    outs.append([np.ascontiguousarray(o).tobytes()
                                 for o in ref.run(ins)])
                expected.append(("ok", outs))
        jobs.append((model, ins_sets))
    errors = []
    results = run_on_device(jobs, tmp_path, scratch)
    for k, ((kind, outs), (st, got)) in enumerate(zip(expected, results)):
        if st != "OK":
            errors.append(got)
            assert kind == "reject", "case %d rejected by tflm: %s" % (k,
                                                                       got)
            continue
        errors.append(None)
        assert kind == "ok", "TFLM rejects case %d (%s) but tflm ran it" % (
            k, outs)
        for j, want in enumerate(outs):
            for i, w in enumerate(want):
                if got[j][i] != w:
                    g = np.frombuffer(got[j][i], np.int8)
                    e = np.frombuffer(w, np.int8)
                    bad = np.nonzero(g != e)[0][:10] if len(g) == len(e) \
                        else "len"
                    raise AssertionError("case %d set %d output %d differs "
                                         "at %s" % (k, j, i, bad))
    return errors


# --- random parameters ----------------------------------------------------

def rscale(rng, lo=-10.0, hi=2.0):
    """A float32 scale 2**u, u uniform in [lo, hi), with a random mantissa."""
    return float(np.float32(2.0 ** rng.uniform(lo, hi)))


def rzp(rng):
    """A zero point: often 0 or -128, else uniform int8."""
    r = rng.random()
    if r < 0.2:
        return 0
    if r < 0.3:
        return -128
    if r < 0.35:
        return 127
    return int(rng.integers(-128, 128))


def i8(rng, shape):
    return rng.integers(-128, 128, size=shape, dtype=np.int8)


def inputs_i8(*shapes):
    return lambda rng, j: [i8(rng, s) for s in shapes]


def split_shape(rng, n, rank):
    """A random shape of the given rank with n elements."""
    dims = []
    for _ in range(rank - 1):
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d = int(rng.choice(divs))
        dims.append(d)
        n //= d
    return dims + [n]


# --- FULLY_CONNECTED ------------------------------------------------------

def fc_case(rng, per_channel=False, bias=True, act=0, keep=False,
            units=None, depth=None):
    units = units or int(rng.integers(1, 24))
    depth = depth or int(rng.integers(1, 40))
    batches = int(rng.integers(1, 4))
    if keep:
        in_shape = split_shape(rng, batches, int(rng.integers(1, 3))) + [depth]
        out_shape = in_shape[:-1] + [units]
    else:
        in_shape = split_shape(rng, batches * depth, int(rng.integers(1, 5)))
        out_shape = [batches, units]
    s_in = rscale(rng, -8, 0)
    w = i8(rng, (units, depth))
    if per_channel:
        s_w = [rscale(rng, -12, -2) for _ in range(units)]
    else:
        s_w = rscale(rng, -12, -2)
    # Output scale near the accumulator's spread (a few cases saturate).
    s_out = float(np.float32(s_in * np.mean(s_w) * 80 * np.sqrt(depth)
                             * 2.0 ** rng.uniform(-3, 3)))
    ts = [tensor(in_shape, "int8", s_in, rzp(rng)),
          tensor((units, depth), "int8", s_w, 0, w),
          None,
          tensor(out_shape, "int8", s_out, rzp(rng))]
    op_in = [0, 1, 2]
    if bias:
        sb = [float(np.float32(s_in) * np.float32(s)) for s in
              (s_w if per_channel else [s_w])]
        b = rng.integers(-(1 << 16), 1 << 16, size=units, dtype=np.int32)
        if rng.random() < 0.1:
            b = rng.integers(-(1 << 31), (1 << 31) - 1, size=units,
                             dtype=np.int64).astype(np.int32)
        ts[2] = tensor([units], "int32", sb, 0, b)
    else:
        op_in = [0, 1, -1]
        ts[2] = tensor([1], "int8")  # unused placeholder
    opts = S.FullyConnectedOptionsT()
    opts.fusedActivationFunction = act
    opts.keepNumDims = keep
    model = build(FC, ts, op_in, [3], OPT_FC, opts)
    return model, inputs_i8(in_shape)


def test_fully_connected(tmp_path):
    rng = np.random.default_rng(1)
    cases = []
    for k in range(48):
        cases.append(fc_case(rng, per_channel=k % 3 == 1, bias=k % 5 != 4,
                             act=k % 4, keep=k % 7 == 3))
    errs = run_cases(cases, tmp_path, sets=3)
    assert errs == [None] * len(cases)


def fc16_case(rng, bias="int64", depth=None, units=None, per_channel=False,
              out_exp=0, big=False, act=0, bias_type=None):
    """FULLY_CONNECTED 16x8: int16 input / output, int8 weights, bias
    int64 / int32 / None (bias_type: the options' quantized_bias_type
    then), output scale 2**out_exp times the accumulator's spread, big:
    full-range inputs and weights, biases at the type's extremes."""
    units = units or int(rng.integers(1, 20))
    depth = depth or int(rng.integers(1, 60))
    batches = int(rng.integers(1, 4))
    s_in = rscale(rng, -14, -6)
    if big:
        w = rng.choice(np.array([-128, -127, 127], np.int8), (units, depth))
    else:
        w = i8(rng, (units, depth))
    s_w = [rscale(rng, -12, -2) for _ in range(units)] if per_channel \
        else rscale(rng, -12, -2)
    s_out = float(np.float32(s_in * np.mean(s_w) * 4000 * np.sqrt(depth)
                             * 2.0 ** out_exp))
    ts = [tensor((batches, depth), "int16", s_in, 0),
          tensor((units, depth), "int8", s_w, 0, w),
          None,
          tensor((batches, units), "int16", s_out, 0)]
    op_in = [0, 1, 2]
    sb = [float(np.float32(s_in) * np.float32(s)) for s in
          (s_w if per_channel else [s_w])]
    if bias == "int64":
        lim = (1 << 62) if big else (1 << 40)
        b = rng.integers(-lim, lim, size=units, dtype=np.int64)
        if big:
            b[0] = -(1 << 63)
            b[-1] = (1 << 63) - 1
        ts[2] = tensor([units], "int64", sb, 0, b)
    elif bias == "int32":
        lim = (1 << 31) if big else (1 << 20)
        b = rng.integers(-lim, lim, size=units, dtype=np.int64)
        ts[2] = tensor([units], "int32", sb, 0, b.astype(np.int32))
    else:
        op_in = [0, 1, -1]
        ts[2] = tensor([1], "int8")  # unused placeholder
    opts = S.FullyConnectedOptionsT()
    opts.fusedActivationFunction = act
    if bias_type is not None:
        opts.quantizedBiasType = TYPES[bias_type]
    model = build(FC, ts, op_in, [3], OPT_FC, opts)
    if big:
        def make(r, j):
            return [r.choice(np.array([-32768, -32767, 32767], np.int16),
                             (batches, depth))]
        return model, make
    return model, lambda r, j: [r.integers(-32768, 32768, (batches, depth),
                                           dtype=np.int16)]


def test_fully_connected_16x8(tmp_path):
    """int16 activations, int8 weights: int64 accumulation (int64 bias,
    or none by default) and int32 accumulation (int32 bias, or none with
    quantized_bias_type INT32), per-tensor and per-unit scales, total
    shifts from 1 to 46, sums past int32 (which wrap in the int32
    accumulator as in C) and int64 biases at the type's ends (the
    product with the reduced multiplier wraps in int64 as in C), against
    TFLM."""
    rng = np.random.default_rng(16)
    cases = []
    for k in range(36):
        cases.append(fc16_case(
            rng, bias=("int64", "int32", None)[k % 3],
            per_channel=k % 4 == 1, out_exp=(-3, 0, 3, -20, 12)[k % 5],
            act=k % 4, bias_type=("int32" if k % 6 == 2 else None)))
    for k in range(8):  # full-range values, deep rows
        cases.append(fc16_case(rng, bias=("int64", "int32")[k % 2],
                               depth=int(rng.integers(500, 3000)), units=3,
                               out_exp=(-24, 0, 8, 16)[k % 4], big=True))
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_fully_connected_16x8_refusals(tmp_path):
    """An int16 input needs int8 weights and an int16 output, and an int32
    or int64 bias: anything else is refused at load, as TFLM refuses it."""
    rng = np.random.default_rng(17)
    cases = []
    for mutate in ("weights_int16", "output_int8", "bias_int16"):
        model, make = fc16_case(rng, bias="int32", units=4, depth=8)
        m = S.ModelT.InitFromPackedBuf(model, 0)
        t = m.subgraphs[0].tensors
        if mutate == "weights_int16":
            t[1].type = TYPES["int16"]
            m.buffers[t[1].buffer].data = np.zeros(64, np.uint8)
        elif mutate == "output_int8":
            t[3].type = TYPES["int8"]
        else:
            t[2].type = TYPES["int16"]
            m.buffers[t[2].buffer].data = np.zeros(8, np.uint8)
        b = flatbuffers.Builder(1024)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        cases.append((bytes(b.Output()), None))
    errs = run_cases(cases, tmp_path)
    assert all(e and "FULLY_CONNECTED" in e for e in errs), errs


# --- AVERAGE_POOL_2D / MAX_POOL_2D ----------------------------------------

def pool_case(rng, code, act=0, padding=None, dtype="int8"):
    n = int(rng.integers(1, 3))
    h, w = int(rng.integers(1, 12)), int(rng.integers(1, 12))
    c = int(rng.integers(1, 10))
    fh, fw = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if padding is None:
        padding = int(rng.integers(0, 2))
    if padding == 1:  # VALID needs the filter to fit
        fh, fw = min(fh, h), min(fw, w)
        oh, ow = (h - fh) // sh + 1, (w - fw) // sw + 1
    else:
        oh, ow = -(-h // sh), -(-w // sw)
    s, zp = rscale(rng, -8, 0), rzp(rng)
    if dtype == "int16":
        s = rscale(rng, -14, -6)
        zp = int(rng.choice([0, -32768, 32767, int(rng.integers(-999,
                                                                999))]))
    ts = [tensor((n, h, w, c), dtype, s, zp),
          tensor((n, oh, ow, c), dtype, s, zp)]
    opts = S.Pool2DOptionsT()
    opts.padding = padding
    opts.strideW, opts.strideH = sw, sh
    opts.filterWidth, opts.filterHeight = fw, fh
    opts.fusedActivationFunction = act
    model = build(code, ts, [0], [1], OPT_POOL, opts)
    if dtype == "int16":  # full range, the extremes often
        return model, lambda rng, j: [rng.choice(np.array(
            [-32768, -32767, 32767, 0, int(rng.integers(-32768, 32768))],
            np.int16), (n, h, w, c)) if j else rng.integers(
                -32768, 32768, (n, h, w, c), dtype=np.int16)]
    return model, inputs_i8((n, h, w, c))


def test_pooling_int16(tmp_path):
    """16x8 models' AVERAGE_POOL_2D / MAX_POOL_2D (pool16.py): int16 in
    and out, every fused activation, full-range and extreme values."""
    rng = np.random.default_rng(12)
    cases = [pool_case(rng, AVG if k % 2 else MAXP, act=(k // 2) % 4,
                       dtype="int16") for k in range(32)]
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_pooling(tmp_path):
    rng = np.random.default_rng(2)
    cases = [pool_case(rng, AVG if k % 2 else MAXP, act=(k // 2) % 4)
             for k in range(64)]
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


# --- ADD --------------------------------------------------------------------

def bcast_shapes(rng):
    """Two input shapes that broadcast (NumPy rules), and the result."""
    rank = int(rng.integers(0, 7))
    out = [int(rng.integers(1, 8)) for _ in range(rank)]
    a, b = list(out), list(out)
    for i in range(rank):
        r = rng.random()
        if r < 0.25:
            a[i] = 1
        elif r < 0.5:
            b[i] = 1
    a = a[int(rng.integers(0, rank + 1)):] if rng.random() < 0.3 else a
    b = b[int(rng.integers(0, rank + 1)):] if rng.random() < 0.3 else b
    return a, b, list(np.broadcast_shapes(tuple(a), tuple(b)))


def add_case(rng, act=0, same=False, extreme=False):
    if same:
        a = b = o = split_shape(rng, int(rng.integers(1, 300)),
                                int(rng.integers(1, 5)))
    else:
        a, b, o = bcast_shapes(rng)
    s1 = rscale(rng, -10, 2)
    s2 = s1 * 2.0 ** rng.uniform(-6, 6)
    so = max(s1, s2) * 2.0 ** rng.uniform(-2, 3)
    if extreme:  # tiny or exact-power-of-two ratios
        s2 = [s1, s1 * 2 ** -20, s1 * 0.5][int(rng.integers(0, 3))]
        so = max(s1, s2) * [2.0 ** -18, 1.0, 2.0 ** 10][int(rng.integers(0,
                                                                    3))]
    ts = [tensor(a, "int8", s1, rzp(rng)), tensor(b, "int8", s2, rzp(rng)),
          tensor(o, "int8", so, rzp(rng))]
    opts = S.AddOptionsT()
    opts.fusedActivationFunction = act
    return build(ADD, ts, [0, 1], [2], OPT_ADD, opts), inputs_i8(a, b)


def test_add(tmp_path):
    rng = np.random.default_rng(3)
    cases = [add_case(rng, act=k % 4, same=k % 3 == 0, extreme=k % 5 == 4)
             for k in range(72)]
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


# --- SOFTMAX --------------------------------------------------------------

def softmax_case(rng, beta=1.0, scale=None):
    rank = int(rng.integers(1, 4))
    depth = int(rng.integers(1, 120))
    shape = split_shape(rng, int(rng.integers(1, 5)), rank - 1) + [depth] \
        if rank > 1 else [depth]
    if scale is None:
        scale = rscale(rng, -8, -1)
    ts = [tensor(shape, "int8", scale, rzp(rng)),
          tensor(shape, "int8", 1.0 / 256, -128)]
    opts = S.SoftmaxOptionsT()
    opts.beta = beta

    def inputs(rng, j):
        if j == 0:
            return [i8(rng, shape)]
        if j == 1:  # few distinct values: many ties with the max
            return [(i8(rng, shape) // 64 * 64).astype(np.int8)]
        # values within a narrow band: large, varied sums of exps
        lo = int(rng.integers(-128, 100))
        w = int(rng.integers(1, 28))
        return [rng.integers(lo, lo + w, size=shape).astype(np.int8)]
    return build(SOFTMAX, ts, [0], [1], OPT_SOFTMAX, opts), inputs


def test_softmax(tmp_path):
    rng = np.random.default_rng(4)
    cases = []
    for k in range(40):
        beta = 1.0 if k % 2 else float(np.float32(2.0 ** rng.uniform(-3, 3)))
        scale = None
        if k % 10 == 3:
            scale = 2.0 ** -25  # tiny: every diff within range, exp ~ 1
        elif k % 10 == 7:
            scale = 100.0  # huge: multiplier capped at 2**31 - 1
        cases.append(softmax_case(rng, beta, scale))
    errs = run_cases(cases, tmp_path, sets=3)
    assert errs == [None] * len(cases)


def ref_srdhm(a, b):
    """gemmlowp SaturatingRoundingDoublingHighMul (int32), written from
    fixedpoint.h: (a * b + nudge) / 2**31 with C's truncating division."""
    if a == b == -(1 << 31):
        return (1 << 31) - 1
    t = a * b + ((1 << 30) if a * b >= 0 else 1 - (1 << 30))
    q = abs(t) >> 31
    return q if t >= 0 else -q


def ref_get_reciprocal(x):
    """common.h GetReciprocal(x, 12, &num_bits_over_unit) -> (raw, nbou)."""
    def sat(v, e):
        thr = (1 << (31 - e)) - 1
        return (1 << 31) - 1 if v > thr else -(1 << 31) if v < -thr \
            else v << e
    clz = 32 - int(x).bit_length()
    a = ((x << clz) - (1 << 31))
    hd = (a + (1 << 31) - 1 + 1) // 2  # RoundingHalfSum(a, One), a >= 0
    r = 1515870810 + ref_srdhm(hd, -1010580540)
    for _ in range(3):
        u = (1 << 29) - ref_srdhm(hd, r)
        r = r + sat(ref_srdhm(r, u), 2)
    return sat(r, 1), 12 - clz


@pytest.mark.parametrize("bits", [8, 16])
def test_softmax_reciprocal(tmp_path, bits):
    """The viper GetReciprocal equals a plain reference on many sums, with
    the exponent for an int8 or an int16 output (31 - bits)."""
    rng = np.random.default_rng(5)
    sums = [1 << 19, (1 << 19) + 1, (1 << 28) - 1, (1 << 20), (1 << 27)]
    sums += [int(v) for v in rng.integers(1 << 19, 1 << 28, 3000)]
    sums += [int(2 ** v) for v in rng.uniform(19, 28, 1000)]
    path = tmp_path / "sums.bin"
    path.write_bytes(np.array(sums, np.int32).tobytes())
    run_mp(
        "from array import array\n"
        "from tflm.kernels import softmax\n"
        "a = array('i', open(%r, 'rb').read())\n"
        "st = array('i', [0, 0, 1515870810, -1010580540, %d])\n"
        "m = array('i', [0]); s = array('i', [0])\n"
        "res = array('i', bytes(8 * len(a)))\n"
        "for i in range(len(a)):\n"
        "    st[0] = a[i]\n"
        "    softmax.loop.reciprocal(st, m, s)\n"
        "    res[2 * i] = m[0]; res[2 * i + 1] = s[0]\n"
        "open(%r, 'wb').write(res)\n" % (str(path), 12 + 31 - bits,
                                         str(tmp_path / "o")),
        tmp_path)
    got = np.frombuffer((tmp_path / "o").read_bytes(), np.int32)
    for i, x in enumerate(sums):
        raw, nbou = ref_get_reciprocal(x)
        assert (got[2 * i], got[2 * i + 1]) == (raw, -(nbou + 31 - bits)), x


# --- SOFTMAX int16 -> int16 -----------------------------------------------

def softmax16_case(rng, beta=1.0, scale=None, depth=None, out_scale=None,
                   lim=None):
    """SOFTMAX int16 -> int16 (softmax16.py): zero points 0, output scale
    1/32768 (or out_scale); inputs within +-lim (random 2**k), the
    extremes now and then."""
    rank = int(rng.integers(1, 4))
    if depth is None:
        depth = int(rng.integers(1, 120))
    shape = split_shape(rng, int(rng.integers(1, 5)), rank - 1) + [depth] \
        if rank > 1 else [depth]
    if scale is None:
        scale = rscale(rng, -20, 0)
    ts = [tensor(shape, "int16", scale, 0),
          tensor(shape, "int16", out_scale or 1.0 / 32768, 0)]
    opts = S.SoftmaxOptionsT()
    opts.beta = beta

    def inputs(rng, j):
        k = lim or 1 << int(rng.integers(1, 16))
        x = rng.integers(-k, k, size=shape, endpoint=True)
        if j == 1:  # the extremes
            x = rng.choice(np.array([-32768, -32767, 0, 32766, 32767]),
                           size=shape)
        return [np.clip(x, -32768, 32767).astype(np.int16)]
    return build(SOFTMAX, ts, [0], [1], OPT_SOFTMAX, opts), inputs


def test_softmax_int16(tmp_path):
    """int16 SOFTMAX bit-exact with TFLM: betas (0 too), input scales from
    tiny (every difference within the table) to large (left shifts that
    wrap as C's int32 does), output scales within TFLM's 0.1%, rows of one
    value and of 20000 (sums near 2**30)."""
    rng = np.random.default_rng(16)
    cases = []
    for k in range(30):
        beta = 1.0 if k % 2 else float(np.float32(2.0 ** rng.uniform(-3, 3)))
        kw = {}
        if k % 10 == 3:
            kw["scale"] = 2.0 ** -30
        elif k % 10 == 7:
            kw["scale"] = 40.0
        elif k % 10 == 5:
            kw["out_scale"] = float(np.float32(1.0009 / 32768))
        cases.append(softmax16_case(rng, beta, **kw))
    cases.append(softmax16_case(rng, 0.0))
    cases.append(softmax16_case(rng, 1.0, depth=1))
    cases.append(softmax16_case(rng, 1.0, 1e-4, depth=20000, lim=64))
    errs = run_cases(cases, tmp_path, sets=3)
    assert errs == [None] * len(cases)


def _lut16_f32(fn, in_scale, in_zp):
    """LUTPopulateInt16<float> (kernels/internal/common.h) in numpy
    float32, out scale 2 / 65535, zero point 0."""
    f = np.float32
    rng_ = 65535
    in_scale, out_scale = f(in_scale) / f(rng_), f(2.0) / f(rng_)
    in_min = in_scale * f(-32768 - in_zp)
    in_max = in_scale * f(32767 - in_zp)
    out_min, out_max = out_scale * f(-32768), out_scale * f(32767)
    step = (in_max - in_min) / f(512)
    half = step / f(2)
    inv = f(65536) / (out_max - out_min)

    def rnd(v):  # TfLiteRound: half away from zero
        return f(np.sign(v) * np.floor(np.abs(v) + f(0.5)))
    lut = []
    for i in range(512):
        val = fn(in_min + f(i) * step)
        mid = fn(in_min + f(i) * step + half)
        nxt = fn(in_min + f(i + 1) * step)
        sample = rnd(val * inv)
        interp = rnd((nxt * inv + rnd(val * inv)) / f(2))
        bias = rnd((interp - rnd(mid * inv)) / f(2))
        lut.append(int(min(max(sample - bias, f(-32768)), f(32767))))
    lut.append(int(min(max(rnd(fn(in_max) * inv), f(-32768)), f(32767))))
    return lut


def test_softmax_int16_tables():
    """softmax16_prep's stored tables are InitializeLutForInt16's:
    LUTPopulate<int16_t> in float32 (exp taken in double and rounded to
    float32: the same tables as glibc's expf gives)."""
    from tflm.kernels import softmax16_prep as sp
    f = np.float32
    exp = _lut16_f32(lambda v: f(np.exp(np.float64(v))), 10.0, 32767)
    inv = _lut16_f32(lambda v: f(1) / (f(1) + v), 1.0, -32768)
    assert list(np.frombuffer(sp._EXP, "<i2")) == exp
    assert list(np.frombuffer(sp._INV, "<i2")) == inv


def test_softmax_int16_hand(tmp_path):
    """Worked cases: a row of equal values gives 32768 / depth (rounded by
    the tables: 16384, 8192 within 1 of it), TFLM agreeing; and a
    reference of SoftmaxInt16 in Python over the stored tables."""
    from tflm.kernels import softmax16_prep as sp
    exp = np.frombuffer(sp._EXP, "<i2").astype(np.int64)
    inv = np.frombuffer(sp._INV, "<i2").astype(np.int64)

    def lut(t, v):
        i = 256 + (v >> 7)
        sl = ((int(t[i + 1] - t[i]) + 32768) & 0xFFFF) - 32768
        return int(t[i]) + ((sl * (v & 127) + 64) >> 7)

    def ref(row):  # reference_ops::SoftmaxInt16, one row, at a scale
        # (10 / 65535 with beta 1) whose multiplier (2**30, shift 1) maps
        # x - max to itself exactly
        mx = max(row)
        es = [lut(exp, min(max(x - mx + 32767, -32768), 32767))
              for x in row]
        s = sum(es)
        h = 32 - s.bit_length()
        sh = ((s << (h - 1)) + (1 << 13)) >> 14
        r = lut(inv, min(max(sh - 98304, -32768), 32767))
        return [min(max((e * r + (1 << (30 - h))) >> (31 - h), 0), 32767)
                for e in es]
    assert ref([5, 5]) == [16384, 16384]
    assert ref([0, 0, 0, 0]) == [8192] * 4
    rows = [[0, -6553, -13107, -65535 // 2], [100, 90, -32768, 32767]]
    want = [ref(r) for r in rows]
    assert want[0][0] > want[0][1] > want[0][2] > want[0][3] >= 0
    opts = S.SoftmaxOptionsT()
    opts.beta = 1.0
    scale = float(np.float32(10.0 / 65535))
    model = build(SOFTMAX, [tensor([2, 4], "int16", scale, 0),
                            tensor([2, 4], "int16", 1.0 / 32768, 0)],
                  [0], [1], OPT_SOFTMAX, opts)
    x = np.array(rows, np.int16)
    got = Reference(model).run([x])[0].reshape(-1).tolist()
    assert got == want[0] + want[1]
    assert run_cases([(model, lambda rng, j: [x])], tmp_path) == [None]


def test_softmax_int16_refusals(tmp_path):
    """What TFLM's CalculateSoftmaxParams rejects for an int16 input
    (zero points, output scale, an int8 output), and what it would
    overflow on (run on neither: TFLM computes garbage there)."""
    sm = S.SoftmaxOptionsT()
    sm.beta = 1.0
    h = lambda shape, s=1e-3, zp=0: tensor(shape, "int16", s, zp)  # noqa
    cases = [
        (build(SOFTMAX, [h([1, 4], 1e-3, 3), h([1, 4], 1 / 32768)], [0],
               [1], OPT_SOFTMAX, sm), ("tensor 0", "zero point 0"), True),
        (build(SOFTMAX, [h([1, 4]), h([1, 4], 1 / 32768, 1)], [0], [1],
               OPT_SOFTMAX, sm), ("tensor 1", "1/32768"), True),
        (build(SOFTMAX, [h([1, 4]), h([1, 4], 1.002 / 32768)], [0], [1],
               OPT_SOFTMAX, sm), ("tensor 1", "1/32768"), True),
        (build(SOFTMAX, [h([1, 4]), tensor([1, 4], "int8", 1 / 256, -128)],
               [0], [1], OPT_SOFTMAX, sm), ("tensor 1", "int8"), True),
        (build(SOFTMAX, [h([1, 70000]), h([1, 70000], 1 / 32768)], [0],
               [1], OPT_SOFTMAX, sm), ("65536",), False),
        (build(SOFTMAX, [h([1, 4], 1e6), h([1, 4], 1 / 32768)], [0], [1],
               OPT_SOFTMAX, sm), ("too large",), False),
    ]
    for model, _, tflm_rejects in cases:
        if tflm_rejects:
            with pytest.raises(RuntimeError):
                Reference(model)
    errs = run_cases([(m, None) for m, _, _ in cases], tmp_path)
    for err, (_, words, _) in zip(errs, cases):
        assert err.startswith("PrepareError op 0 (SOFTMAX)"), err
        for w in words:
            assert w in err, (w, err)


# --- QUANTIZE / DEQUANTIZE ------------------------------------------------

def f32_edges(rng, scale, zp, n):
    """float32 inputs around QUANTIZE's rounding thresholds and specials."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _f32_edges(rng, np.float32(scale), n)


def _f32_edges(rng, s, n):
    j = rng.integers(-300, 300, n).astype(np.float32)
    c = (j - np.float32(0.5)) * s
    around = [np.nextafter(c, np.float32(np.inf)),
              np.nextafter(c, np.float32(-np.inf)), c,
              (j - np.float32(0.5)) * np.float64(s)]  # exact half, as f32
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan,
                         1e-45, -1e-45, 3.4e38, -3.4e38,
                         2.0 ** 31 * s, -(2.0 ** 31) * s,
                         2.0 ** 31 * s * 0.99999994, -(2.0 ** 31) * s
                         * 0.99999994], np.float32)
    wide = (rng.standard_normal(n) * 100 * s).astype(np.float32)
    bits = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    anyf = bits.view(np.float32)
    x = np.concatenate([a.astype(np.float32) for a in around]
                       + [specials, wide, anyf])
    return x


def quantize_case(rng, extreme=False):
    n = 300
    scale = rscale(rng, -12, 4)
    if extreme:
        scale = float(np.float32([1e-38, 1e-30, 1e30, 3e38, 2.0 ** -20,
                                  1.0][int(rng.integers(0, 6))]))
    zp = rzp(rng)
    size = len(f32_edges(rng, scale, zp, n))
    ts = [tensor([size], "float32"), tensor([size], "int8", scale, zp)]
    model = build(QUANTIZE, ts, [0], [1])
    return model, lambda rng, j: [f32_edges(rng, scale, zp, n)]


def requantize_case(rng, tin, tout):
    s_in = rscale(rng, -10, 2)
    s_out = s_in * 2.0 ** rng.uniform(-8, 8)
    zin = rzp(rng) + (128 if tin == "uint8" else 0)
    zout = rzp(rng) + (128 if tout == "uint8" else 0)
    shape = split_shape(rng, int(rng.integers(1, 300)), 2)
    ts = [tensor(shape, tin, s_in, zin), tensor(shape, tout, s_out, zout)]
    model = build(QUANTIZE, ts, [0], [1])
    return model, lambda rng, j: [rng.integers(0, 256, shape).astype(
        np.uint8).view(NP[tin])]


def dequantize_case(rng, tin, extreme=False):
    scale = rscale(rng, -12, 4)
    if extreme:
        scale = float(np.float32([1e-45, 1e-40, 1e-38, 1e36, 3.4e38,
                                  1.0][int(rng.integers(0, 6))]))
    zp = rzp(rng) + (128 if tin == "uint8" else 0)
    if extreme and rng.random() < 0.5:
        # the ends of the type's range (beyond them the verifier rejects
        # the model: test_verifier.py zero_point_int8_kernel)
        lo = 0 if tin == "uint8" else -128
        zp = lo + 255 * int(rng.integers(0, 2))
    shape = split_shape(rng, int(rng.integers(1, 300)), 3)
    ts = [tensor(shape, tin, scale, zp), tensor(shape, "float32")]
    model = build(DEQUANTIZE, ts, [0], [1])
    return model, lambda rng, j: [rng.integers(0, 256, shape).astype(
        np.uint8).view(NP[tin])]


def dequantize16_case(rng, extreme=False, every=False):
    """DEQUANTIZE int16 -> float32: any scale (extreme: subnormal, tiny,
    huge: the product rounds to subnormals or overflows), zero points
    across int16; every: all 65536 inputs."""
    scale = rscale(rng, -16, 4)
    if extreme:
        scale = float(np.float32([1e-45, 1e-40, 1.1754942e-38, 1e-38,
                                  1e34, 3.4e38][int(rng.integers(0, 6))]))
    zp = int(rng.choice([0, -32768, 32767, int(rng.integers(-32768,
                                                            32768))]))
    shape = [65536] if every else split_shape(
        rng, int(rng.integers(1, 300)), 3)
    ts = [tensor(shape, "int16", scale, zp), tensor(shape, "float32")]
    model = build(DEQUANTIZE, ts, [0], [1])
    if every:
        return model, lambda rng, j: [np.arange(-32768, 32768,
                                                dtype=np.int16)]
    return model, lambda rng, j: [rng.integers(-32768, 32768, shape,
                                               dtype=np.int16)]


def test_dequantize_int16(tmp_path):
    """int16 DEQUANTIZE computes each value (no table): bit-exact with
    TFLM across scales, zero points and every int16 input."""
    rng = np.random.default_rng(17)
    cases = [dequantize16_case(rng, extreme=k % 3 == 2) for k in range(24)]
    cases += [dequantize16_case(rng, every=True) for _ in range(2)]
    cases += [dequantize16_case(rng, extreme=True, every=True)
              for _ in range(2)]
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_quantize(tmp_path):
    rng = np.random.default_rng(6)
    cases = [quantize_case(rng, extreme=k % 3 == 2) for k in range(24)]
    for k in range(24):
        tin, tout = [("int8", "int8"), ("int8", "uint8"),
                     ("uint8", "int8")][k % 3]
        cases.append(requantize_case(rng, tin, tout))
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_dequantize(tmp_path):
    rng = np.random.default_rng(7)
    cases = [dequantize_case(rng, "int8" if k % 2 else "uint8",
                             extreme=k % 4 > 1) for k in range(24)]
    errs = run_cases(cases, tmp_path, sets=1)
    assert errs == [None] * len(cases)


# --- real models ------------------------------------------------------------

REAL = [
    ("hello_world_int8", "hello_world_int8.tflite"),
    ("add_model_int8", "add_model.tflite"),
    ("simple_add", "simple_add_model.tflite"),
    ("tiny_ad01_int8", "ad01_int8.tflite"),
    ("test_conv_model", "test_conv_model.tflite"),
    ("micro_speech_quantized", "micro_speech_quantized.tflite"),
    ("tiny_kws_ref_int8", "kws_ref_model.tflite"),
    ("tiny_ic_resnet_int8", "pretrainedResnet_quant.tflite"),
]


def random_input(rng, d):
    """Random data for an input of the oracle's details d."""
    shape, dtype = d["shape"], d["dtype"]
    if dtype == np.float32:
        x = rng.standard_normal(shape).astype(np.float32) * 2
        x.flat[:4] = [0.0, -0.0, 1e6, -1e6][:x.size]
        return x
    return rng.integers(-128, 128, size=shape).astype(dtype)


@pytest.mark.parametrize("folder,name", REAL)
def test_real_model(folder, name):
    """Whole models that use these kernels, bit-exact with TFLM, invoked
    under heap_lock()."""
    path = shared(folder, name)
    ref = Reference(path)
    rng = np.random.default_rng(8)
    sets = []
    for k in range(3):
        sets.append([random_input(rng, ref.input_details(i))
                     for i in range(ref.n_in)])
    if folder == "micro_speech_quantized":
        sets.append([np.load(shared(folder, "yes_features.npy"))])
        sets.append([np.load(shared(folder, "no_features.npy"))])
    want = [ref.run(s) for s in sets]
    raw = [[np.ascontiguousarray(x, dtype=ref.input_details(i)["dtype"])
            .tobytes() for i, x in enumerate(s)] for s in sets]
    got, info = device.run_model(path, raw, ref.n_out)
    assert got is not None, info
    for k, (g, w) in enumerate(zip(got, want)):
        for j, o in enumerate(w):
            assert g[j] == np.ascontiguousarray(o).tobytes(), (k, j)


# --- prepare errors -------------------------------------------------------

def test_prepare_errors(tmp_path):
    """Models these kernels must refuse, with the op and tensor named.
    Several make TFLM itself abort (TFLITE_CHECK), so the oracle is not
    run on them."""
    q = lambda shape, s=0.1, zp=0: tensor(shape, "int8", s, zp)  # noqa
    cases = []

    def add(model, *words):
        cases.append(((model, None), words))

    sm = S.SoftmaxOptionsT()
    sm.beta = 1.0
    add(build(SOFTMAX, [q([1, 4]), q([1, 4], 1.0 / 128, -128)], [0], [1],
              OPT_SOFTMAX, sm), "SOFTMAX", "tensor 1", "1/256")
    tiny = S.SoftmaxOptionsT()
    tiny.beta = 1e-9
    add(build(SOFTMAX, [q([1, 4]), q([1, 4], 1.0 / 256, -128)], [0], [1],
              OPT_SOFTMAX, tiny), "SOFTMAX", "too small")
    fc = S.FullyConnectedOptionsT()
    fc.weightsFormat = 1
    w = tensor([3, 4], "int8", 0.1, 0, np.ones((3, 4), np.int8))
    add(build(FC, [q([1, 4]), w, q([1, 3])], [0, 1, -1], [2], OPT_FC, fc),
        "FULLY_CONNECTED", "weights_format")
    # 4 scales along dimension 1 (well-formed, so the model verifier
    # passes it), but FULLY_CONNECTED needs one per unit (3).
    wpc = tensor([3, 4], "int8", [0.1, 0.2, 0.3, 0.4], 0,
                 np.ones((3, 4), np.int8), qdim=1)
    add(build(FC, [q([1, 4]), wpc, q([1, 3])], [0, 1, -1], [2]),
        "FULLY_CONNECTED", "tensor 1", "scales")
    add(build(FC, [q([1, 4]), w, q([1, 5])], [0, 1, -1], [2]),
        "FULLY_CONNECTED", "tensor 2", "shape")
    po = S.Pool2DOptionsT()
    po.strideW = po.strideH = po.filterWidth = po.filterHeight = 2
    add(build(MAXP, [q([1, 4, 4, 2]), q([1, 2, 2, 2], 0.1, 3)], [0], [1],
              OPT_POOL, po), "MAX_POOL_2D", "tensor 1", "zero point")
    add(build(AVG, [q([1, 4, 4, 2]), q([1, 3, 2, 2])], [0], [1], OPT_POOL,
              po), "AVERAGE_POOL_2D", "tensor 1", "shape")
    p0 = S.Pool2DOptionsT()
    add(build(AVG, [q([1, 4, 4, 2]), q([1, 4, 4, 2])], [0], [1], OPT_POOL,
              p0), "AVERAGE_POOL_2D", "stride")
    add(build(ADD, [q([2, 3]), q([4, 3]), q([4, 3])], [0, 1], [2]),
        "ADD", "tensor 2", "broadcast")
    add(build(ADD, [q([2, 3]), q([2, 3]), q([2, 3], 1e-9)], [0, 1], [2]),
        "ADD", "output multiplier")
    add(build(QUANTIZE, [tensor([4], "float32"),
                         tensor([4], "int16", 0.1, 0)], [0], [1]),
        "QUANTIZE", "float32 -> int16")
    add(build(DEQUANTIZE, [tensor([4], "int32", 0.1, 0),
                           tensor([4], "float32")], [0], [1]),
        "DEQUANTIZE", "tensor 0", "int32")
    errs = run_cases([c for c, _ in cases], tmp_path)
    for err, (_, words) in zip(errs, cases):
        assert err is not None
        assert err.startswith("PrepareError op 0 (%s)" % words[0]), err
        for w in words[1:]:
            assert w in err, (w, err)


def test_f32_bits():
    """dequantize.f32_bits rounds like numpy's double -> float32 cast
    (ties to even, subnormals, overflow to infinity)."""
    from tflm.kernels.dequantize import f32_bits
    rng = np.random.default_rng(9)
    for _ in range(4000):
        m = int(rng.integers(1, 1 << 53))
        e = int(rng.integers(-210, 80))
        if rng.random() < 0.3:  # exact ties at float32 precision
            m = (int(rng.integers(1 << 23, 1 << 24)) << 1 | 1) << 28
        with np.errstate(over="ignore"):
            want = np.float32(m * 2.0 ** e)  # exact double, one rounding
        neg = bool(rng.random() < 0.5)
        bits = int(want.view(np.uint32)) | (0x80000000 if neg else 0)
        assert f32_bits(m, e, neg) == bits, (m, e)


def test_small_scratch(tmp_path):
    """With a 5-word scratch array every kernel works in chunks."""
    rng = np.random.default_rng(10)
    cases = [fc_case(rng, per_channel=k % 2 == 0, act=k % 4)
             for k in range(8)]
    cases += [pool_case(rng, AVG if k % 2 else MAXP) for k in range(8)]
    cases += [add_case(rng, same=k % 2 == 0) for k in range(8)]
    cases += [softmax_case(rng) for k in range(8)]
    errs = run_cases(cases, tmp_path, sets=2, scratch=5)
    assert errs == [None] * len(cases)


# --- CONV_2D 16x8 ---------------------------------------------------------

def conv16_case(rng, bias="int64", groups=1, big=False, out_exp=0,
                padding="SAME", dil=1, cin=None, bias_type=None, zp=0):
    """CONV_2D 16x8 through opgen: int16 input / output, int8 filter,
    bias int64 / int32 / None; big: full-range values and biases at the
    type's ends, deep input channels (the int32 sum wraps)."""
    from host_tools import opgen
    T = opgen.Tensor
    cin = cin or int(rng.integers(1, 6))
    c = cin * groups
    oc = groups * int(rng.integers(1, 4))
    h, w = int(rng.integers(3, 8)), int(rng.integers(3, 8))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    s = int(rng.integers(1, 3))
    if padding == "SAME":
        oh, ow = -(-h // s), -(-w // s)
    else:
        kh, kw = min(kh, (h - 1) // dil + 1), min(kw, (w - 1) // dil + 1)
        oh = (h - dil * (kh - 1) - 1) // s + 1
        ow = (w - dil * (kw - 1) - 1) // s + 1
    s_in = rscale(rng, -14, -6)
    fs = [rscale(rng, -12, -2) for _ in range(oc)]
    fshape = (oc, kh, kw, cin)
    f = (rng.choice(np.array([-128, 127], np.int8), fshape) if big
         else i8(rng, fshape))
    s_out = float(np.float32(s_in * np.mean(fs) * 4000
                             * np.sqrt(kh * kw * cin) * 2.0 ** out_exp))
    ins = [T([1, h, w, c], "int16", scale=s_in, zero_point=zp),
           T(list(fshape), "int8", scale=fs, zero_point=0, data=f,
             quantized_dimension=0)]
    bs = [float(np.float32(s_in) * np.float32(x)) for x in fs]
    if bias == "int64":
        lim = (1 << 62) if big else (1 << 40)
        b = rng.integers(-lim, lim, size=oc, dtype=np.int64)
        if big:
            b[0], b[-1] = -(1 << 63), (1 << 63) - 1
        ins.append(T([oc], "int64", scale=bs, zero_point=0, data=b))
    elif bias == "int32":
        lim = (1 << 31) if big else (1 << 20)
        ins.append(T([oc], "int32", scale=bs, zero_point=0,
                     data=rng.integers(-lim, lim, size=oc).astype(np.int32)))
    else:
        ins.append(-1)
    opts = {"padding": padding, "stride_h": s, "stride_w": s,
            "dilation_h_factor": dil, "dilation_w_factor": dil,
            "activation": int(rng.integers(0, 4))}
    if bias_type:
        opts["quantized_bias_type"] = bias_type
    y = T([1, oh, ow, oc], "int16", scale=s_out, zero_point=zp)
    model = opgen.single_op("CONV_2D", ins, [y], opts)
    if big:
        def make(r, j):
            return [r.choice(np.array([-32768, 32767], np.int16),
                             (1, h, w, c))]
        return model, make
    return model, lambda r, j: [r.integers(-32768, 32768, (1, h, w, c),
                                           dtype=np.int16)]


def test_conv_16x8(tmp_path):
    """CONV_2D with int16 activations against TFLM: int64 and int32
    accumulation (by bias type, or quantized_bias_type without one),
    groups, dilation, SAME / VALID, output scales far off the sums'
    spread, and full-range values with deep channels (the int32 sum
    wraps as in C) or int64 biases at the type's ends."""
    rng = np.random.default_rng(26)
    cases = []
    for k in range(24):
        cases.append(conv16_case(
            rng, bias=("int64", "int32", None)[k % 3], groups=1 + k % 2,
            out_exp=(-3, 0, 3, -18, 10)[k % 5],
            padding=("SAME", "VALID")[k % 4 // 2], dil=1 + k % 3 // 2,
            bias_type="int32" if k % 6 == 2 else None))
    for k in range(6):
        cases.append(conv16_case(rng, bias=("int64", "int32")[k % 2],
                                 big=True, cin=int(rng.integers(300, 700)),
                                 out_exp=(-20, 0, 14)[k % 3]))
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_conv_16x8_refuses_a_zero_point(tmp_path):
    """TFLM's 16x8 CONV_2D leaves zero points out of its arithmetic: an
    int16 input or output with another zero point is refused here rather
    than computed as if it were 0."""
    rng = np.random.default_rng(27)
    model, _ = conv16_case(rng, zp=5)
    errs = run_cases([(model, None)], tmp_path)
    assert errs[0] and "zero point 5" in errs[0], errs


# --- DEPTHWISE_CONV_2D 16x8 -----------------------------------------------

def dw16_case(rng, bias=True, big=False, dm=1, k=None, out_exp=0, dil=1,
              bias_type="int64"):
    """DEPTHWISE_CONV_2D 16x8 through opgen: int16 input / output, int8
    filter [1, k, k, C * dm], an int64 bias (or none); big: full-range
    values, biases at the type's ends, filters of up to 12x12 taps (more
    than one 64-tap chunk)."""
    from host_tools import opgen
    T = opgen.Tensor
    c = int(rng.integers(1, 5))
    oc = c * dm
    k = k or int(rng.integers(1, 4))
    h = w = k * dil + int(rng.integers(0, 4))
    s_in = rscale(rng, -14, -6)
    fs = [rscale(rng, -12, -2) for _ in range(oc)]
    fshape = (1, k, k, oc)
    f = (rng.choice(np.array([-128, 127], np.int8), fshape) if big
         else i8(rng, fshape))
    s_out = float(np.float32(s_in * np.mean(fs) * 4000 * k
                             * 2.0 ** out_exp))
    ins = [T([1, h, w, c], "int16", scale=s_in, zero_point=0),
           T(list(fshape), "int8", scale=fs, zero_point=0, data=f,
             quantized_dimension=3)]
    if bias:
        lim = (1 << 62) if big else (1 << 40)
        b = rng.integers(-lim, lim, size=oc, dtype=np.int64)
        if big:
            b[0], b[-1] = -(1 << 63), (1 << 63) - 1
        bs = [float(np.float32(s_in) * np.float32(x)) for x in fs]
        if bias_type == "int32":
            b = b.astype(np.int32)
        ins.append(T([oc], bias_type, scale=bs, zero_point=0, data=b))
    opts = {"padding": "SAME", "stride_h": 1, "stride_w": 1,
            "dilation_h_factor": dil, "dilation_w_factor": dil,
            "depth_multiplier": dm, "activation": int(rng.integers(0, 4))}
    y = T([1, h, w, oc], "int16", scale=s_out, zero_point=0)
    model = opgen.single_op("DEPTHWISE_CONV_2D", ins, [y], opts)
    if big:
        return model, lambda r, j: [r.choice(
            np.array([-32768, 32767], np.int16), (1, h, w, c))]
    return model, lambda r, j: [r.integers(-32768, 32768, (1, h, w, c),
                                           dtype=np.int16)]


def test_depthwise_16x8(tmp_path):
    """DEPTHWISE_CONV_2D with int16 activations against TFLM (int64
    accumulation always): depth multipliers, dilation, output scales far
    off the sums' spread, full-range values with 12x12 filters and int64
    biases at the type's ends."""
    rng = np.random.default_rng(36)
    cases = []
    for j in range(18):
        cases.append(dw16_case(rng, bias=j % 5 != 4, dm=1 + j % 3,
                               out_exp=(-3, 0, 3, -18, 10)[j % 5],
                               dil=1 + j % 4 // 3))
    for j in range(4):
        cases.append(dw16_case(rng, big=True, k=(9, 12)[j % 2],
                               out_exp=(-20, 0, 14, 4)[j]))
    errs = run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)


def test_depthwise_16x8_refuses_an_int32_bias(tmp_path):
    """TFLM's 16x8 DEPTHWISE_CONV_2D reads its bias as int64 whatever its
    type (past the end of an int32 one): refused here."""
    rng = np.random.default_rng(37)
    model, _ = dw16_case(rng, bias_type="int32")
    errs = run_cases([(model, None)], tmp_path)
    assert errs[0] and "int64" in errs[0], errs


def test_dequantize_per_channel(tmp_path):
    """Tensor.dequantize() of a per-channel tensor uses each value's own
    channel scale along quantized_dimension (CONV_2D weights: dimension
    0; DEPTHWISE_CONV_2D weights: 3), into a new array or into out; it
    used the first scale for every value."""
    import json
    rng = np.random.default_rng(46)
    models, want = [], []
    for model, _ in (conv16_case(rng, bias=None), dw16_case(rng, dm=2),
                     fc_case(rng, per_channel=True)):
        m = S.ModelT.InitFromPackedBuf(model, 0)
        t = m.subgraphs[0].tensors[1]
        w = np.frombuffer(bytes(m.buffers[t.buffer].data), np.int8)
        w = w.reshape(t.shape).astype(np.float64)
        sc = np.array(t.quantization.scale, np.float32)
        shape = [1] * len(t.shape)
        shape[t.quantization.quantizedDimension] = len(sc)
        want.append((w * sc.reshape(shape)).astype(np.float32).ravel())
        models.append(model.hex())
    out = run_mp("""
import json, tflm
from array import array
res = []
for h in %r:
    it = tflm.Interpreter(bytes.fromhex(h))
    w = it.tensors[1]
    a = w.dequantize()
    b = w.dequantize(out=array('f', range(w.size)))
    res.append([list(a), list(b)])
print(json.dumps(res))
""" % models, tmp_path)
    got = json.loads(out.strip().splitlines()[-1])
    for (a, b), w in zip(got, want):
        assert np.array_equal(np.float32(a), w)
        assert np.array_equal(np.float32(b), w)


def test_softmax_int16_variant_only_for_int16_inputs(tmp_path):
    """kernels._LAZY's `softmax_prep:H:softmax16_prep`: the int16 SOFTMAX
    variant (and its eval module, which would stay in RAM) is imported for
    an int16 input, not for int8 -> int16 (16x8 keyword models), on the
    device (Model.used_codes marks input types + 64) and in what
    `deploy --only-needed` copies (build.needed_modules)."""
    from host_tools.build import needed_modules
    from conftest import run_mp
    rng = np.random.default_rng(5)
    m16, _ = softmax16_case(rng)
    ts = [tensor([1, 8], "int8", 0.1, 0), tensor([1, 8], "int16",
                                                  1.0 / 65536, -32768)]
    opts = S.SoftmaxOptionsT()
    opts.beta = 1.0
    m8 = build(SOFTMAX, ts, [0], [1], OPT_SOFTMAX, opts)
    got = []
    for name, raw in (("in16", m16), ("in8", m8)):
        path = tmp_path / (name + ".tflite")
        path.write_bytes(raw)
        got.append(sorted(m for m in needed_modules([str(path)])
                          if "softmax16" in m))
        code = ("import sys, tflm\nit = tflm.Interpreter(%r)\n"
                "print('tflm.kernels.softmax16' in sys.modules)\n"
                % str(path))
        got.append(run_mp(code, tmp_path).strip().splitlines()[-1])
    assert got == [["tflm/kernels/softmax16.py",
                    "tflm/kernels/softmax16_prep.py"], "True", [], "False"]


def test_add_chunked_eval_only_when_needed(tmp_path):
    """kernels._LAZY's `add:s:add_chunks`: an int8 ADD whose output has
    add.LUT_MIN elements or more and inputs of its shape takes the
    one-pass table path, so its model neither imports nor keeps the
    chunked eval (add_chunks.py) with rescale's and broadcast's loops
    (4.8 KB of RAM on the Cortex-M0: ResNet-8's residual ADDs); a small
    ADD does, on the device (Model.used_codes' SMALL_FLAG) and in what
    `deploy --only-needed` copies (build.needed_modules). broadcast_prep
    goes once the interpreter is built (interpreter.CONSTRUCTION)."""
    from host_tools.build import needed_modules
    from tflm import kernels, model
    from tflm.kernels import add
    assert model.SMALL == add.LUT_MIN
    assert kernels._SMALL == model.SMALL_FLAG
    chunk_mods = ("add_chunks", "broadcast", "rescale")
    got = []
    for folder, name in (("simple_add", "simple_add_model.tflite"),
                         ("add_model_int8", "add_model.tflite")):
        path = shared(folder, name)
        got.append(sorted(m.split("/")[-1][:-3] for m in needed_modules(
            [path]) if m.split("/")[-1][:-3] in chunk_mods))
        code = ("import sys, tflm\nit = tflm.Interpreter(%r)\nit.invoke()\n"
                "print(sorted(k[13:] for k in sys.modules if k[13:] in %r))"
                % (path, chunk_mods + ("broadcast_prep",)))
        got.append(run_mp(code, tmp_path).strip().splitlines()[-1])
    assert got == [[], "[]", list(sorted(chunk_mods)),
                   str(sorted(chunk_mods))], got


def test_fc_rows_sums(tmp_path):
    """fc_rows.rows, the LSTM's and SVDF's matmuls: TFLM's integer
    FullyConnected sum (sum_d (w + weights_offset) * (x + input_offset)
    (+ bias), int32 wrap) for several rows, depths around mac.dots's
    8-value unroll, unit counts, zero and non-zero offsets, with and
    without bias, x from an offset at an odd address; under heap_lock,
    nothing past the output written. (The device LSTM / SVDF tests
    cover it inside the kernels; this pins its own contract.)"""
    import json
    import random
    rng = random.Random(31)
    cases = []
    for k in range(24):
        rows, depth, units = rng.randint(1, 3), rng.choice(
            [0, 1, 7, 8, 9, 16, 23, rng.randint(1, 70)]), rng.randint(1, 9)
        x0 = rng.randint(0, 5)
        x = [rng.randint(-128, 127) for _ in range(x0 + rows * depth + 2)]
        w = [rng.randint(-128, 127) for _ in range(units * depth)]
        bias = [rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(units)]
        xo = rng.choice([0, 128, -127, rng.randint(-128, 127)])
        wo = rng.choice([0, 0, 20, -20, 128])
        has_b = k % 2
        cases.append((rows, depth, units, x0, x, w, bias, xo, wo, has_b))
    code = """
import json, micropython
from array import array
from tflm.kernels import fc_rows, WORD
for rows, depth, units, x0, x, w, bias, xo, wo, has_b in json.loads(%r):
    xb = bytearray(1 + len(x))
    for i, v in enumerate(x):
        xb[1 + i] = v & 0xFF
    xv = memoryview(xb)[1:]
    wb = bytes([v & 0xFF for v in w])
    b = array('i', bias)
    out = array('i', [-7] * (rows * units + 1))
    fc = array('i', [x0, rows, depth, units, xo, has_b, wo, WORD // 8])
    win = array('i', [0] * (10 + depth))
    dots, rows_fn = fc_rows.dots, fc_rows.rows
    micropython.heap_lock()
    rows_fn(xv, wb, b, out, fc, win, dots)
    micropython.heap_unlock()
    print(json.dumps(list(out)))
""" % json.dumps(cases)
    got = [json.loads(line) for line in
           run_mp(code, tmp_path).strip().splitlines()]
    for (rows, depth, units, x0, x, w, bias, xo, wo, has_b), out in zip(
            cases, got):
        want = []
        for r in range(rows):
            for u in range(units):
                s = sum((w[u * depth + d] + wo) * (x[x0 + r * depth + d] + xo)
                        for d in range(depth))
                if has_b:
                    s += bias[u]
                want.append((s + 2 ** 31) % 2 ** 32 - 2 ** 31)
        assert out == want + [-7], (rows, depth, units, xo, wo, has_b)
    assert len(got) == len(cases)
