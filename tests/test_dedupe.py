"""Buffer dedupe (host_tools/dedupe.py): byte-identical constant buffers
merged, 16-byte alignment kept, outputs bit-identical in TFLM and in tflm.

- A model built with duplicated weights and biases (two FULLY_CONNECTED
  and two CONV_2D with the same constants) shrinks; its outputs before
  and after are equal, in TFLM and on the unix port.
- Every shared model: nothing to merge, reported as 0 and the bytes are
  unchanged; the rewriting path itself (force=True) keeps every
  constant's bytes, 16-byte aligned.
"""

import struct

import numpy as np
import pytest

from conftest import ROOT
from host_tools import boards, dedupe, device, opgen
from host_tools.oracle import Reference
from tflm.errors import TFLMError
from tflm.model import Model

T = opgen.Tensor


def dup_model(seed=0):
    """Two FULLY_CONNECTED and two CONV_2D whose weights and biases are
    stored twice (identical bytes in separate buffers)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(-127, 128, (16, 16), dtype=np.int8)
    b = rng.integers(-500, 500, 16, dtype=np.int32)
    m = opgen.Model()
    x = T([1, 16], scale=0.05, zero_point=2)
    h = T([1, 16], scale=0.1, zero_point=-3)
    y = T([1, 16], scale=0.2, zero_point=1)
    m.add_op("FULLY_CONNECTED", [x, T([16, 16], scale=0.01, data=w),
                                 T([16], "int32", scale=0.0005, data=b)],
             [h])
    m.add_op("FULLY_CONNECTED", [h, T([16, 16], scale=0.01, data=w),
                                 T([16], "int32", scale=0.001, data=b)],
             [y])
    f = rng.integers(-127, 128, (4, 3, 3, 4), dtype=np.int8)
    c_in = T([1, 6, 6, 4], scale=0.1)
    c1 = T([1, 6, 6, 4], scale=0.3)
    c2 = T([1, 6, 6, 4], scale=0.7, zero_point=4)
    zero_b = np.zeros(4, np.int32)
    for src, dst in ((c_in, c1), (c1, c2)):
        m.add_op("CONV_2D", [src, T([4, 3, 3, 4], scale=[.01, .02, .03,
                                                          .04], data=f),
                             T([4], "int32", scale=[.001, .002, .003, .004],
                               data=zero_b)],
                 [dst], {"padding": "SAME"})
    return m.build()


def _const_bytes(raw):
    m = Model(raw)
    return [(t.index, bytes(raw[t.const_pos:t.const_pos + t.const_len]))
            for t in m.tensors if t.is_const], m


def test_merges_duplicates_and_keeps_alignment():
    raw = dup_model()
    out, r = dedupe.dedupe(raw)
    # FC weights, FC bias, conv filter, conv bias: one duplicate each
    assert r["merged"] == 4
    assert r["data_bytes"] == 256 + 64 + 144 + 16
    assert r["saved"] == len(raw) - len(out) >= r["data_bytes"]
    a, _ = _const_bytes(raw)
    b, m = _const_bytes(out)
    assert a == b  # every tensor still sees its own bytes
    assert all(t.const_pos % 16 == 0 for t in m.tensors if t.is_const)
    bufs = [t.buffer for t in m.tensors if t.is_const]
    assert len(set(bufs)) == len(bufs) - 4  # tensors share buffers now
    # idempotent: a second pass finds nothing and changes nothing
    again, r2 = dedupe.dedupe(out)
    assert r2["merged"] == 0 and again == out


def test_outputs_bit_identical(tmp_path):
    raw = dup_model(1)
    out, r = dedupe.dedupe(raw)
    assert r["merged"] == 4
    rng = np.random.default_rng(2)
    xs = [[rng.integers(-128, 128, 16, dtype=np.int8),
           rng.integers(-128, 128, 144, dtype=np.int8)] for _ in range(4)]
    ref_in, ref_out = Reference(raw), Reference(out)
    for x in xs:
        a, b = ref_in.run(x), ref_out.run(x)
        assert all(np.array_equal(p, q) for p, q in zip(a, b))
    sets = [[v.tobytes() for v in x] for x in xs]
    got = []
    for name, model in (("in", raw), ("out", out)):
        p = tmp_path / (name + ".tflite")
        p.write_bytes(model)
        res, info = device.run_model(str(p), sets, 2, offset=1)
        assert res is not None, info
        got.append(res)
    assert got[0] == got[1]
    want = [[o.tobytes() for o in ref_in.run(x)] for x in xs]
    assert got[0] == want


def test_shared_models_nothing_to_merge():
    files = boards.model_files()
    if not files:
        pytest.skip("../shared/models is absent")
    for key, path in files.items():
        raw = open(path, "rb").read()
        out, r = dedupe.dedupe(raw)
        assert r["merged"] == 0 and r["saved"] == 0, key
        assert out == raw, key
        try:
            before, _ = _const_bytes(raw)
        except TFLMError:
            continue
        # The rewriting path alone keeps every constant, aligned.
        forced, _ = dedupe.dedupe(raw, force=True)
        after, m = _const_bytes(forced)
        assert after == before, key
        assert all(t.const_pos % 16 == 0 for t in m.tensors
                   if t.is_const), key


def test_cli(tmp_path):
    import subprocess
    import sys
    src, dst = tmp_path / "a.tflite", tmp_path / "b.tflite"
    src.write_bytes(dup_model())
    p = subprocess.run([sys.executable, "-m", "host_tools", "dedupe",
                        str(src), str(dst)], capture_output=True, text=True,
                       cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "merged 4 duplicate buffers" in p.stdout
    assert dst.stat().st_size < src.stat().st_size


def test_refuses_external_buffers():
    from test_external_buffers import externalize
    ext, _ = externalize(dup_model())
    with pytest.raises(ValueError, match="after the flatbuffer"):
        dedupe.dedupe(ext)


def test_malformed_models_give_value_errors(tmp_path):
    """Truncated / corrupted bytes: a ValueError naming what is wrong (the
    CLI prints it and exits 1), never struct.error / TypeError from the
    object API (regression: both came out as tracebacks)."""
    import subprocess
    import sys
    good = dup_model()
    bad = [b"", b"TFL3", good[:len(good) // 2]]
    # A table whose vtable offset points far outside the file (the object
    # API raised TypeError: bad number for type uint32).
    raw = bytearray(good)
    root = struct.unpack_from("<I", raw, 0)[0]
    struct.pack_into("<i", raw, root, 1 << 20)
    bad.append(bytes(raw))
    for raw in bad:
        with pytest.raises(ValueError, match="not a readable"):
            dedupe.dedupe(raw)
    src = tmp_path / "bad.tflite"
    src.write_bytes(bad[2])
    p = subprocess.run([sys.executable, "-m", "host_tools", "dedupe",
                        str(src), str(tmp_path / "out.tflite")],
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 1 and "Traceback" not in p.stderr + p.stdout
    assert "not a readable .tflite model" in p.stdout
