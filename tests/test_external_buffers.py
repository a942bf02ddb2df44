"""Constant data stored after the flatbuffer (Buffer.offset / size).

Newer converters may write a buffer's bytes after the FlatBuffer and put
their place in Buffer.offset / Buffer.size, counted from the start of the
file (valid if offset > 1, schema.fbs). TFLM ignores these fields; tflm
reads such buffers in place (zero-copy), with bounds checks. Custom
options stored the same way (Operator.large_custom_options_offset /
size) reach a Python kernel too.

externalize() rewrites a model into that layout with the official object
API; the rewritten models give the same outputs as the originals (ours on
the unix port, at an odd address and on the 32-bit port with
TFLM_MICROPYTHON; TFLM on the original as the reference).
"""

import numpy as np
import pytest
from flatbuffers import flexbuffers as fx

import flatbuffers
from conftest import device_script, run_mp, shared
from host_tools import boards, device, inputs, opgen
from host_tools.cli_run import model_io
from host_tools.oracle import Reference
from tflite_micro.tensorflow.lite.micro.python import \
    schema_py_generated as s
from tflm import model as tmodel
from tflm.errors import FormatError, ModelError

PLACEHOLDER = 1 << 40  # makes the packer write the field; same layout


def _pack(m):
    b = flatbuffers.Builder(1024)
    b.Finish(m.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def externalize(raw, custom=False, align=16):
    """The model with every non-empty buffer (and, with custom=True,
    every operator's custom_options) moved after the flatbuffer, each
    blob align-byte aligned in the file. Returns (bytes, {buffer index:
    file offset})."""
    m = s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
    blobs = []  # (object, setter) per blob, with its bytes
    for k, b in enumerate(m.buffers):
        if b.data is not None and len(b.data):
            blobs.append((k, b, bytes(np.asarray(b.data, np.uint8))))
            b.data, b.offset, b.size = None, PLACEHOLDER, 0
    if custom:
        for sg in m.subgraphs:
            for op in sg.operators:
                if op.customOptions is not None and len(op.customOptions):
                    data = bytes(np.asarray(op.customOptions, np.uint8))
                    blobs.append((None, op, data))
                    op.customOptions = None
                    op.largeCustomOptionsOffset = PLACEHOLDER
    for _, obj, data in blobs:  # sizes are set now: the layout is final
        if isinstance(obj, s.BufferT):
            obj.size = len(data)
        else:
            obj.largeCustomOptionsSize = len(data)
    head = _pack(m)
    pos, where, tail = len(head), {}, b""
    for k, obj, data in blobs:
        start = (pos + align - 1) // align * align
        tail += bytes(start - pos) + data
        pos = start + len(data)
        if isinstance(obj, s.BufferT):
            obj.offset = start
            where[k] = start
        else:
            obj.largeCustomOptionsOffset = start
    out = _pack(m)
    assert len(out) == len(head)  # only the values changed
    return out + tail, where


def test_every_shared_model_reads_the_same_constants():
    """Each constant tensor sees the same bytes, now at Buffer.offset."""
    files = boards.model_files()
    if not files:
        pytest.skip("../shared/models is absent")
    n = 0
    for key, path in files.items():
        raw = open(path, "rb").read()
        try:
            m0 = tmodel.Model(raw)
        except (FormatError, ModelError):
            continue
        ext, where = externalize(raw)
        m1 = tmodel.Model(ext)
        assert len(m0.tensors) == len(m1.tensors)
        for a, b in zip(m0.tensors, m1.tensors):
            assert a.is_const == b.is_const, (key, a.index)
            if a.is_const:
                assert b.const_pos == where[b.buffer], key
                assert ext[b.const_pos:b.const_pos + b.const_len] == \
                    raw[a.const_pos:a.const_pos + a.const_len], key
                n += 1
    assert n > 100  # the models' weights all moved


def _ext_model(name):
    raw = open(name, "rb").read()
    return externalize(raw)[0]


@pytest.fixture(scope="module")
def small():
    return opgen.single_op(
        "ADD", [opgen.Tensor([1, 8], scale=0.5),
                opgen.Tensor([1, 8], scale=0.25,
                             data=np.arange(8, dtype=np.int8))],
        [opgen.Tensor([1, 8], scale=0.5)])


def _set_buffer(raw, k, offset, size):
    m = s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
    b = m.buffers[k]
    b.data, b.offset, b.size = None, offset, size
    return _pack(m)


def test_bounds_checks(small):
    ext, where = externalize(small)
    (k, pos), = where.items()
    assert tmodel.Model(ext).tensors[1].const_pos == pos
    with pytest.raises(FormatError, match="outside"):
        tmodel.Model(ext[:-1])  # data runs past the end of the file
    for off, size in ((len(ext), 8), (len(ext) - 4, 8), (1 << 63, 8),
                      ((1 << 64) - 1, 8), (pos, (1 << 64) - 1),
                      (pos, 1 << 40)):
        bad = _set_buffer(ext, k, off, size)
        bad += ext[len(bad):]
        with pytest.raises(FormatError, match="outside"):
            tmodel.Model(bad)
    # A size that does not match the shape is refused (as inline data).
    bad = _set_buffer(ext, k, pos, 7)
    with pytest.raises(ModelError, match="constant data"):
        tmodel.Model(bad + ext[len(bad):])
    # offset 0 or 1 means "not stored outside": no constant data
    for off in (0, 1):
        bad = _set_buffer(ext, k, off, 8)
        assert not tmodel.Model(bad + ext[len(bad):]).tensors[1].is_const
    # A data vector, when present, wins (as in TFLite's interpreter).
    m = s.ModelT.InitFromPackedBuf(bytearray(small), 0)
    m.buffers[k].offset, m.buffers[k].size = 5, 8
    both = _pack(m)
    t = tmodel.Model(both).tensors[1]
    assert both[t.const_pos:t.const_pos + 8] == bytes(range(8))


RUN = ["hello_world_int8/hello_world_int8.tflite",
       "micro_speech_quantized/micro_speech_quantized.tflite",
       "test_conv_model/test_conv_model.tflite",
       "tiny_ad01_int8/ad01_int8.tflite"]


@pytest.mark.parametrize("rel", RUN)
def test_outputs_equal_the_original(rel, tmp_path):
    path = shared(rel)
    ins, outs = model_io(path)
    rng = np.random.default_rng(3)
    sets = [[inputs.random_input(t, rng) for t in ins] for _ in range(3)]
    ref = Reference(path)
    want = []
    for data in sets:
        arrs = [np.frombuffer(d, inputs.NP_DTYPES[t["dtype"]])
                for d, t in zip(data, ins)]
        want.append([o.tobytes() for o in ref.run(arrs)])
    ext = tmp_path / "ext.tflite"
    ext.write_bytes(_ext_model(path))
    got, info = device.run_model(str(ext), sets, len(outs), offset=1)
    assert got is not None, info
    assert got == want


CUSTOM = device_script("external_custom.py")


def test_custom_options_stored_outside(tmp_path):
    b = fx.Builder()
    with b.Map():
        b.Key("add")
        b.Int(5)
    opts = bytes(b.Finish())
    raw = opgen.single_op("CUSTOM:AddK", [opgen.Tensor([8])],
                          [opgen.Tensor([8])], custom_options=opts)
    ext, _ = externalize(raw, custom=True)
    m = s.ModelT.InitFromPackedBuf(bytearray(ext), 0)
    op = m.subgraphs[0].operators[0]
    assert op.customOptions is None and op.largeCustomOptionsOffset > 1
    # past the end: refused with a bounds error, no fault
    cut = ext[:-1]
    code = "MODELS = %r\n" % [raw.hex(), ext.hex(), cut.hex()] + CUSTOM
    lines = run_mp(code, tmp_path).strip().splitlines()
    want = bytes((i + 5) & 0xff for i in range(8)).hex() + " 5"
    assert lines[0] == want and lines[1] == want
    assert lines[2].startswith("ERR FormatError") and "outside" in lines[2]


def test_buffer_zero_must_be_empty():
    """Buffer 0 is the schema's empty buffer that activations point to;
    data there (in the vector or after the flatbuffer) is refused at load,
    since TFLM would read it as every activation's constant value."""
    raw = opgen.single_op("ADD", [opgen.Tensor([1, 4], scale=.1),
                                  opgen.Tensor([1, 4], scale=.1)],
                          [opgen.Tensor([1, 4], scale=.2)])
    tmodel.Model(raw)  # the plain model loads
    m = s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
    m.buffers[0].data = np.arange(4, dtype=np.uint8)
    with pytest.raises(ModelError, match="buffer 0 holds 4 bytes"):
        tmodel.Model(_pack(m))
    m.buffers[0].data, m.buffers[0].offset, m.buffers[0].size = None, 8, 4
    with pytest.raises(ModelError, match="buffer 0 holds 4 bytes"):
        tmodel.Model(_pack(m) + bytes(16))
