"""`python -m host_tools dedupe IN OUT`: merge byte-identical constant
buffers.

Several tensors may share one Buffer (schema.fbs allows it), so constant
buffers whose bytes are identical (the same weights or biases stored
twice, zero-point tables, ...) can be stored once: every tensor of every
subgraph, and every Model.metadata entry, that used a duplicate is
pointed at the first copy and the duplicates are dropped. The model is
rewritten with the official flatbuffers object API (tflite_micro's
schema_py_generated), every buffer's data 16-byte aligned in the file as
schema.fbs asks (force_align: 16). Buffers without data (activations) are
left alone, and so are buffers of variable tensors (TFLM gives those
their own memory). A model with nothing to merge is written unchanged,
byte for byte.

Models that store buffers after the flatbuffer (Buffer.offset / size)
are refused (ValueError): rewrite them inline first. So are bytes that
are not a readable model (truncated, corrupted): they are read first by
tflm's own bounds-checked reader, whose error the ValueError carries.
"""

import struct

import flatbuffers
import numpy as np
from tflite_micro.tensorflow.lite.micro.python import \
    schema_py_generated as s

ALIGN = 16


class _AlignedBufferT(s.BufferT):
    """BufferT whose data vector starts on an ALIGN-byte boundary (the
    generated Pack ignores force_align)."""

    def Pack(self, builder):
        data = None
        if self.data is not None:
            raw = self.data if isinstance(self.data, bytes) else \
                bytes(np.asarray(self.data, np.uint8))
            builder.StartVector(1, len(raw), ALIGN)
            builder.head -= len(raw)
            builder.Bytes[builder.head:builder.head + len(raw)] = raw
            data = builder.EndVector()
        s.BufferStart(builder)
        if data is not None:
            s.BufferAddData(builder, data)
        return s.BufferEnd(builder)


def _data(b):
    """The bytes of a BufferT, or None if it has no data."""
    if b is None or b.data is None or len(b.data) == 0:
        return None
    return bytes(np.asarray(b.data, np.uint8))


def plan(model_t):
    """{duplicate buffer index: index of the first identical buffer}.

    model_t: a schema ModelT. Raises ValueError for buffers stored after
    the flatbuffer."""
    pinned = set()  # buffers of variable tensors: never merged
    for sg in model_t.subgraphs or []:
        for t in sg.tensors or []:
            if t.isVariable:
                pinned.add(t.buffer)
    first, dup = {}, {}
    for k, b in enumerate(model_t.buffers or []):
        if b is not None and b.offset > 1:
            raise ValueError("buffer %d is stored after the flatbuffer "
                             "(Buffer.offset): not supported by dedupe" % k)
        raw = _data(b)
        if k == 0 or raw is None or k in pinned:
            continue
        if raw in first:
            dup[k] = first[raw]
        else:
            first[raw] = k
    return dup


def parse(raw):
    """The schema ModelT of .tflite bytes. Raises ValueError if they are
    not a readable model: every table and vector is first read by
    tflm.flatbuf (inspect_tool.dump), which checks each offset and
    length against the file (the generated object API would raise
    struct.error / TypeError, or loop on an absurd vector length)."""
    from tflm.errors import TFLMError

    from .inspect_tool import dump
    try:
        dump(raw, names=False, max_vector=0)
    except TFLMError as e:
        raise ValueError("not a readable .tflite model: %s" % e)
    try:
        return s.ModelT.InitFromPackedBuf(bytearray(raw), 0)
    except (struct.error, TypeError, IndexError, OverflowError) as e:
        raise ValueError("not a readable .tflite model: %s: %s"
                         % (type(e).__name__, e))


def _pack(model_t):
    b = flatbuffers.Builder(1024)
    b.Finish(model_t.Pack(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def dedupe(raw, force=False):
    """(new model bytes, report) for .tflite bytes.

    report: dict with merged (duplicate buffers dropped), data_bytes
    (their bytes), file_bytes_in / file_bytes_out / saved (file sizes,
    saved = in - out) and groups ({kept buffer: [dropped buffers]}).
    With nothing to merge, the bytes are returned unchanged (force=True
    rewrites them anyway: a test of the rewriting itself). Raises
    ValueError for bytes that are not a readable model (parse) and for
    buffers stored after the flatbuffer.
    """
    m = parse(raw)
    dup = plan(m)
    groups = {}
    for d, k in sorted(dup.items()):
        groups.setdefault(k, []).append(d)
    report = {"merged": len(dup),
              "data_bytes": sum(len(_data(m.buffers[d])) for d in dup),
              "file_bytes_in": len(raw), "groups": groups}
    if not dup and not force:
        report.update(file_bytes_out=len(raw), saved=0)
        return bytes(raw), report
    new_index, kept = {}, []
    for k, b in enumerate(m.buffers or []):
        if k in dup:
            continue
        new_index[k] = len(kept)
        raw_k = _data(b)
        kept.append(_AlignedBufferT(data=raw_k) if raw_k is not None
                    else b)
    remap = {k: new_index[dup.get(k, k)] for k in range(len(m.buffers
                                                            or []))}
    for sg in m.subgraphs or []:
        for t in sg.tensors or []:
            t.buffer = remap.get(t.buffer, t.buffer)
    for md in m.metadata or []:
        md.buffer = remap.get(md.buffer, md.buffer)
    if m.metadataBuffer is not None:
        m.metadataBuffer = [remap.get(int(x), int(x))
                            for x in m.metadataBuffer]
    m.buffers = kept
    out = _pack(m)
    report.update(file_bytes_out=len(out), saved=len(raw) - len(out))
    return out, report


def add_parser(sub):
    p = sub.add_parser("dedupe", help="merge byte-identical constant "
                       "buffers of a model (saves flash)")
    p.add_argument("input")
    p.add_argument("output")
    return p


def main(args):
    with open(args.input, "rb") as f:
        raw = f.read()
    try:
        out, r = dedupe(raw)
    except ValueError as e:
        print("dedupe: %s" % e)
        return 1
    with open(args.output, "wb") as f:
        f.write(out)
    if not r["merged"]:
        print("nothing to merge: 0 bytes saved (%s is a copy of %s)"
              % (args.output, args.input))
        return 0
    for k, ds in sorted(r["groups"].items()):
        print("buffer %d also replaces %s" % (k, ", ".join(str(d)
                                                            for d in ds)))
    print("merged %d duplicate buffers (%d bytes of data); file %d -> %d "
          "bytes: %d bytes saved" % (r["merged"], r["data_bytes"],
                                     r["file_bytes_in"],
                                     r["file_bytes_out"], r["saved"]))
    return 0
