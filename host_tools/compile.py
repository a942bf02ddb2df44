"""`python -m host_tools compile MODEL -o OUT [--arch ARCH]`: a model
compiled for a board.

Runs an Interpreter's construction (parse, verify, plan, every kernel's
prepare) on the MicroPython unix port, for the target's word size and
machine code, and writes what it made into the model as TFLite metadata
(Model.metadata "tflm_compiled", its bytes in a Buffer, 16-byte aligned
in the file): the format is described in micropython/tflm/compiled.py.
The result is still a valid .tflite that TFLM runs unchanged. On the
board, Interpreter(OUT) builds from the block: no parser checks, no
planner, no prepare (tflm/compiled.py).

ARCH: the board's native arch (armv6m, armv7m, armv7em, armv7emsp,
armv7emdp: 32-bit, Thumb code; x86: the 32-bit unix port; x64: the
64-bit unix port; xtensa, xtensawin, rv32imc: 32-bit). Default armv6m.
A block is bound to the model's bytes (a hash the board checks) and to
the package's version: compile again after changing either (romfs
and deploy do it when they copy the model).
The model is rewritten with the official flatbuffers object API
(tflite_micro's schema_py_generated), every buffer 16-byte aligned; a
block already in it is replaced.
"""

import json
import os
import struct
import subprocess
import tempfile

from tflite_micro.tensorflow.lite.micro.python import \
    schema_py_generated as s

from . import ROOT
from .dedupe import _AlignedBufferT, _data, _pack, parse
from .unix_port import DeviceError, run_script

NAME = "tflm_compiled"
SCRIPT = os.path.join(ROOT, "host_tools", "mp_compile.py")
PACKAGE = os.path.join(ROOT, "micropython")
THUMB_ARCHES = ("armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp")
# Cortex-M4/M7/M33: the work buffers of the DSP loops are planned
DSP_ARCHES = ("armv7em", "armv7emsp", "armv7emdp")
ARCHES = THUMB_ARCHES + ("x86", "x64", "xtensa", "xtensawin", "rv32imc")


class CompileError(ValueError):
    """The model cannot be compiled (construction failed on the host, or
    a kernel's state holds something a block cannot carry)."""


def target(arch):
    """(word size, thumb) of arch; ValueError for an unknown one."""
    if arch not in ARCHES:
        raise ValueError("unknown arch %r: one of %s" % (arch,
                                                       ", ".join(ARCHES)))
    return (8 if arch == "x64" else 4), (1 if arch in THUMB_ARCHES else 0)


def fnv30(data, start, end, h):
    """tflm.compiled._hash on the host: h folded with data[start:end] a
    little-endian 32-bit word at a time (the last one padded with zero
    bytes), each word's top two bits xored in after the 30-bit product;
    start a multiple of 4."""
    chunk = bytes(data[start:end])
    chunk += bytes(-len(chunk) % 4)
    for (w,) in struct.iter_unpack("<I", chunk):
        h = ((h ^ w) * 0x01000193) & 0x3FFFFFFF ^ w >> 30
    return h


def _with_block(m, nbytes):
    """Model bytes of schema ModelT m with a zeroed block of nbytes."""
    old_bufs, old_md = m.buffers, m.metadata
    bufs = [_AlignedBufferT(data=_data(b)) if _data(b) is not None else b
            for b in (m.buffers or [])]
    bufs.append(_AlignedBufferT(data=bytes(nbytes)))
    m.buffers = bufs
    md = s.MetadataT()
    md.name = NAME
    md.buffer = len(bufs) - 1
    m.metadata = list(m.metadata or []) + [md]
    try:
        return _pack(m)
    finally:
        m.buffers, m.metadata = old_bufs, old_md


def _strip(m):
    """Remove an earlier block (its metadata entry, and its buffer when
    it is the last one and nothing else uses it)."""
    mds = [md for md in (m.metadata or []) if _name(md) == NAME]
    for md in mds:
        m.metadata.remove(md)
        b = md.buffer
        used = any(t.buffer == b for sg in m.subgraphs or []
                   for t in sg.tensors or []) or \
            any(x.buffer == b for x in m.metadata)
        if b == len(m.buffers) - 1 and not used:
            m.buffers.pop()
    if m.metadata == []:
        m.metadata = None


def _name(md):
    n = md.name
    return n.decode() if isinstance(n, bytes) else n


def _run(raw, word, thumb, dsp, tmp):
    path = os.path.join(tmp, "model.tflite")
    out = os.path.join(tmp, "block.bin")
    with open(path, "wb") as f:
        f.write(raw)
    try:
        r = run_script(SCRIPT, [PACKAGE, path, out, str(word), str(thumb),
                                str(dsp)])
    except subprocess.TimeoutExpired:
        raise CompileError("construction on the unix port did not end in "
                           "600 s")
    line = (r.stdout.strip().splitlines() or [""])[-1]
    try:
        res = json.loads(line)
    except ValueError:
        raise DeviceError("compiling on the unix port failed:\n%s%s"
                          % (r.stdout, r.stderr))
    if "error" in res:
        raise CompileError(res["error"])
    with open(out, "rb") as f:
        return res, f.read()


def compile_model(raw, arch="armv6m"):
    """(compiled model bytes, info) for .tflite bytes raw. info: head,
    tail (bytes, words included), arena (head + tail: the bytes arena=
    needs), block (its bytes), arch, tail_read_only (eval writes
    nothing in the tail but the kernels' states: the board reads it in
    place where the model's bytes are word-aligned, and arena= needs the
    head and state only), state (the bytes of those states, copied to
    RAM when the tail is read in place). Raises ValueError
    for bytes that are not a readable model or an unknown arch,
    CompileError when construction fails or the result cannot be
    carried by a block."""
    word, thumb = target(arch)
    dsp = 1 if arch in DSP_ARCHES else 0  # (kernels.PLAN_DSP)
    m = parse(raw)
    _strip(m)
    with tempfile.TemporaryDirectory() as tmp:
        size = 0
        for _ in range(4):  # the block's size does not depend on offsets
            packed = _with_block(m, size)
            res, blob = _run(packed, word, thumb, dsp, tmp)
            if len(blob) == size:
                break
            size = len(blob)
        else:
            raise CompileError("the block's size does not settle")
    from tflm.flatbuf import FlatBuffer
    from tflm.source import metadata
    pos, n = metadata(FlatBuffer(packed), NAME)
    out = bytearray(packed)
    out[pos:pos + n] = blob
    out[pos + 80:pos + 84] = len(out).to_bytes(4, "little")  # header 20
    mh = fnv30(out, 0, pos, 0x2345)
    mh = fnv30(out, pos + n, len(out), mh)
    bh = fnv30(out, pos, pos + 16, 0x2345)
    bh = fnv30(out, pos + 24, pos + n, bh)
    out[pos + 16:pos + 24] = mh.to_bytes(4, "little") + \
        bh.to_bytes(4, "little")
    tail = res["tail"] + 4 * res["words"]
    return bytes(out), {"head": res["head"], "tail": tail,
                        "arena": res["head"] + tail, "block": n,
                        "arch": arch,
                        "tail_read_only": bool(res["tail_read_only"]),
                        "state": res["state"]}


def arena_line(info):
    """"arena: N bytes (head H + tail T)" for compile_model's info: N
    what arena= needs on the board. A tail that eval only reads stays in
    the model's bytes (where they are word-aligned: ROMFS, flash, a file
    read into RAM; else the board builds the plain way): T is then the
    kernels' states alone."""
    tail = info["state"] if info["tail_read_only"] else info["tail"]
    return "arena: %d bytes (head %d + tail %d)" % (
        info["head"] + tail, info["head"], tail)


def compile_file(path, arch, out_dir):
    """(path, note) for deploying model file path to a board of arch:
    out_dir/<its name>, compiled (romfs, flash-image and deploy do this
    unless told not to), or path itself where it cannot be compiled
    (note says why: the board then builds it the plain way). note is
    one line for the user."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        out, info = compile_model(raw, arch)
    except (ValueError, DeviceError) as e:
        return path, "%s not compiled (%s): the board builds it the plain " \
            "way" % (os.path.basename(path), str(e).splitlines()[0])
    os.makedirs(out_dir, exist_ok=True)
    dst = os.path.join(out_dir, os.path.basename(path))
    with open(dst, "wb") as f:
        f.write(out)
    return dst, "%s compiled for %s: %s" % (os.path.basename(path), arch,
                                            arena_line(info))


def compile_specs(specs, arch):
    """The PATH[=NAME] specs with each model (PATH or NAME ending in
    .tflite) compiled for arch (into a temporary folder:
    host_tools.compile.compile_file), each under its own name; other
    files as they are; prints a line per model."""
    import atexit
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="tflm-romfs-")
    atexit.register(shutil.rmtree, tmp, True)
    out = []
    for spec in specs:
        path, _, name = spec.partition("=")
        name = name or os.path.basename(path)
        if not (path.endswith(".tflite") or name.endswith(".tflite")):
            # a .wav, an input file: copied as it is
            out.append(spec)
            continue
        dst, note = compile_file(path, arch, os.path.join(tmp, str(len(out))))
        print(note)
        out.append(dst + "=" + name)
    return out


def add_parser(sub):
    p = sub.add_parser("compile", help="compile a model for a board: "
                       "construction done on the host, stored in the "
                       "model (tflm/compiled.py)")
    p.add_argument("model")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--arch", default="armv6m", choices=ARCHES,
                   help="the board's native arch (default armv6m)")
    return p


def main(args):
    with open(args.model, "rb") as f:
        raw = f.read()
    try:
        out, info = compile_model(raw, args.arch)
    except (ValueError, DeviceError) as e:
        print("error: %s" % e)
        return 1
    with open(args.output, "wb") as f:
        f.write(out)
    print("%s: %d bytes (block %d) for %s" % (args.output, len(out),
                                             info["block"], args.arch))
    print(arena_line(info))
    if info["tail_read_only"] and info["tail"] > info["state"]:
        print("the tail's other %d bytes are read in place from the model's "
              "bytes (ROMFS, flash, a file read into RAM)"
              % (info["tail"] - info["state"]))
    return 0
