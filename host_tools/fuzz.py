"""Seeded mutation fuzzer: any model file gives a TFLMError or runs right.

    python -m host_tools fuzz --n 2000 --seed 1

Takes every shared model (../shared/models, and the demo model
host_tools/data/digits_cnn_int8.tflite), small models weighted more, some
of them also compiled for the unix port (COMPILED_SEEDS: their block's
header re-hashed after an edit, or any byte of them mutated), and
applies seeded mutations: bit flips, byte sets, truncations, corrupted
uoffsets, vector lengths, vtable entries and soffsets, tensor / buffer /
opcode indices, shape dimensions, scales, option fields, and swapped
vector elements. The targets are found by walking each model's FlatBuffer
along the TFLite schema (walk()).

Every mutated model is loaded, prepared and invoked on the MicroPython
unix port, many per process (host_tools/mp_cases.py prints one JSON
line per model; a process that dies or stops answering is restarted after
the failing model). It must either raise a TFLMError or run; when it runs
and TFLM also runs it (in a forked child per model, since TFLM itself
crashes on bad models), the outputs must be byte-identical.

Failures: a crash or hang of MicroPython, any other exception type, an
"internal error" TFLMError (an exception the Interpreter's last line of
defence converted: a missing check), an invoke() that allocates, or
outputs that differ from TFLM's. Each failing model is written to the
corpus folder (tests/fuzz_corpus): a small .json recipe (base model +
byte edits) when the base model is in the repository or the mutant is
larger than CORPUS_MAX_BYTES, else the mutated .tflite itself;
tests/test_fuzz.py replays them.
"""

import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

from tflm.errors import TFLMError
from tflm.flatbuf import FlatBuffer

from . import ROOT, case_driver

SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared", "models"))
DEMO = os.path.join(ROOT, "host_tools", "data", "digits_cnn_int8.tflite")
CORPUS = os.path.join(ROOT, "tests", "fuzz_corpus")
CORPUS_MAX_BYTES = 8 << 10
CASE_TIMEOUT = 30.0  # seconds one model may take on either side
HEAP = "16M"
TFLM_ARENA = 8 << 20

# Seed models (relative to SHARED, or absolute) and their weights: small
# models are cheap to run, so they get most of the mutations.
SEEDS = (
    (DEMO, 10),
    ("add_model_int8/add_model.tflite", 6),
    ("hello_world_int8/hello_world_int8.tflite", 8),
    ("network_tester_model/network_model.tflite", 6),
    ("simple_add/simple_add_model.tflite", 4),
    ("micro_speech_quantized/micro_speech_quantized.tflite", 6),
    ("micro_speech_unalign/model.tflite", 2),
    ("test_conv_model/test_conv_model.tflite", 6),
    ("tiny_kws_ref_int8/kws_ref_model.tflite", 3),
    ("tiny_ic_resnet_int8/pretrainedResnet_quant.tflite", 2),
    ("tiny_ad01_int8/ad01_int8.tflite", 1),
    ("person_detect/person_detect.tflite", 1),
    ("hello_world_float/hello_world_float.tflite", 1),
    ("magic_wand/magic_wand.tflite", 1),
    ("audio_preprocessor_int8/audio_preprocessor_int8.tflite", 1),
    ("malformed/valid_small.tflite", 1),
    ("malformed/int32_max_dim.tflite", 1),
)


# Seed models also given as compiled for the unix port under test
# (host_tools compile: a tflm_compiled block in their metadata), and
# their weights: the generic mutations hit the block too (its hashes
# must catch them), and "block" mutations edit its header words or the
# first words of its object stream and set the hashes again (the loader's
# own checks must catch them: a FormatError, a fallback to the plain
# construction, or the same outputs as TFLM's).
COMPILED_SEEDS = (
    (DEMO, 3),
    ("hello_world_int8/hello_world_int8.tflite", 3),
    ("micro_speech_quantized/micro_speech_quantized.tflite", 3),
    ("audio_preprocessor_int8/audio_preprocessor_int8.tflite", 1),
)


def seed_path(rel):
    return rel if os.path.isabs(rel) else os.path.join(SHARED, rel)


# --- walking the FlatBuffer ---------------------------------------------

# Field kinds per table type (schema.fbs field indices). "tables:T" is a
# vector of T tables, "ints:role" an int32 vector, "vec:n" a vector of
# n-byte elements, "s:w:role" a scalar of w bytes.
SCHEMA = {
    "Model": {0: "s:4:version", 1: "tables:OperatorCode",
              2: "tables:SubGraph", 3: "string", 4: "tables:Buffer",
              5: "ints:int", 6: "tables:Metadata"},
    "OperatorCode": {0: "s:1:code", 1: "string", 2: "s:4:version",
                     3: "s:4:code"},
    "SubGraph": {0: "tables:Tensor", 1: "ints:index", 2: "ints:index",
                 3: "tables:Operator", 4: "string"},
    "Tensor": {0: "ints:shape", 1: "s:1:type", 2: "s:4:index",
               3: "string", 4: "table:Quantization", 5: "s:1:bool",
               6: "table:Options", 7: "ints:shape"},
    "Quantization": {0: "vec:4", 1: "vec:4", 2: "floats", 3: "vec:8",
                     6: "s:4:qdim"},
    "Operator": {0: "s:4:index", 1: "ints:index", 2: "ints:index",
                 3: "s:1:opttype", 4: "table:Options", 5: "vec:1",
                 6: "s:1:format", 8: "ints:index"},
    "Buffer": {0: "vec:1", 1: "s:8:offset", 2: "s:8:size"},
    "Metadata": {0: "string", 1: "s:4:index"},
}


class Layout:
    """Positions of a model's structural fields, found by walk()."""

    def __init__(self, size):
        self.size = size
        self.uoffsets = []   # positions of uoffset_t values
        self.lengths = []    # positions of vector length words
        self.soffsets = []   # table starts (soffset to the vtable)
        self.vtable = []     # positions of uint16 vtable entries
        self.indices = []    # int32 tensor / buffer / opcode indices
        self.shapes = []     # int32 shape dimensions
        self.scalars = []    # (pos, width) of other scalar fields
        self.floats = []     # float32 scales
        self.options = []    # fields of builtin options tables
        self.vectors = []    # (start, n, elem_size, of_tables) to swap
        self.n_tensors = 0

    def structural(self):
        """Every recorded position (for position-biased bit flips)."""
        return (self.uoffsets + self.lengths + self.soffsets + self.vtable
                + self.indices + self.shapes + self.floats + self.options
                + [p for p, _ in self.scalars])


def walk(raw):
    """Layout of a valid model (parts that fail to parse are skipped)."""
    fb = FlatBuffer(raw)
    lay = Layout(len(raw))
    lay.uoffsets.append(0)
    seen = set()
    try:
        _walk_table(fb, fb.root(), "Model", lay, seen)
    except TFLMError:
        pass
    return lay


def _walk_table(fb, t, kind, lay, seen):
    if t.pos in seen:
        return
    seen.add(t.pos)
    lay.soffsets.append(t.pos)
    lay.vtable.extend(range(t.vt, t.vt + t.vlen, 2))
    spec = SCHEMA.get(kind)
    nfields = (t.vlen - 4) // 2
    for i in range(nfields):
        p = t.field(i, 0)
        if not p:
            continue
        f = spec.get(i) if spec else None
        if f is None:
            lay.options.append(p)
            continue
        try:
            _walk_field(fb, t, i, p, f, lay, seen)
        except TFLMError:
            pass


def _walk_field(fb, t, i, p, f, lay, seen):
    if f.startswith("s:"):
        _, w, role = f.split(":")
        if role == "index":
            lay.indices.append(p)
        else:
            lay.scalars.append((p, int(w)))
        return
    lay.uoffsets.append(p)
    if f.startswith("table:"):
        sub = t.table(i)
        _walk_table(fb, sub, f[6:], lay, seen)
        return
    size = {"string": 1, "floats": 4}.get(f, 4)
    if f.startswith("vec:"):
        size = int(f[4:])
    start, n = t.vector(i, size)
    lay.lengths.append(start - 4)
    if f.startswith("tables:"):
        lay.vectors.append((start, n, 4, True))
        for k in range(n):
            lay.uoffsets.append(start + 4 * k)
            _walk_table(fb, t.table_at(start, k), f[7:], lay, seen)
    elif f.startswith("ints:"):
        lay.vectors.append((start, n, 4, False))
        dest = {"index": lay.indices, "shape": lay.shapes}.get(f[5:])
        if dest is not None:
            dest.extend(start + 4 * k for k in range(n))
    elif f == "floats":
        lay.floats.extend(start + 4 * k for k in range(n))
    if f == "tables:Tensor":
        lay.n_tensors = max(lay.n_tensors, n)


# --- mutations ------------------------------------------------------------

U32 = 0xFFFFFFFF
KINDS = (("bitflip", 12), ("byte", 8), ("truncate", 4), ("offset", 14),
         ("length", 12), ("index", 14), ("shape", 8), ("swap", 8),
         ("vtable", 6), ("soffset", 3), ("scalar", 5), ("float", 4),
         ("option", 6))


def _u32(v):
    return (v & U32).to_bytes(4, "little")


def _read32(raw, p):
    return int.from_bytes(raw[p:p + 4], "little")


def _pick(rng, seq):
    return seq[rng.randrange(len(seq))] if seq else None


def mutate(raw, lay, rng):
    """(edits, truncate, description) of one random mutation: edits is a
    list of (position, bytes) applied in order, then the file is cut to
    truncate bytes (None: not cut)."""
    kinds = [k for k, w in KINDS for _ in range(w)]
    for _ in range(20):
        kind = rng.choice(kinds)
        m = _MUTATORS[kind](raw, lay, rng)
        if m is not None:
            edits, trunc, what = m
            return edits, trunc, "%s %s" % (kind, what)
    return [], len(raw) // 2, "truncate (fallback)"


def _m_bitflip(raw, lay, rng):
    p = _position(raw, lay, rng)
    bit = rng.randrange(8)
    return [(p, bytes([raw[p] ^ (1 << bit)]))], None, "@%d bit %d" % (p, bit)


def _m_byte(raw, lay, rng):
    p = _position(raw, lay, rng)
    v = rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)))
    return [(p, bytes([v]))], None, "@%d = %d" % (p, v)


def _position(raw, lay, rng):
    """A byte position: near a structural field 60% of the time."""
    s = lay.structural()
    if s and rng.random() < 0.6:
        return min(len(raw) - 1, _pick(rng, s) + rng.randrange(4))
    return rng.randrange(len(raw))


def _m_truncate(raw, lay, rng):
    n = rng.choice((rng.randrange(len(raw)), rng.randrange(64),
                    len(raw) - 1 - rng.randrange(min(64, len(raw) - 1))))
    return [], n, "to %d bytes" % n


def _m_offset(raw, lay, rng):
    p = _pick(rng, lay.uoffsets)
    if p is None:
        return None
    old = _read32(raw, p)
    target = _pick(rng, lay.soffsets + lay.lengths) or 0
    v = rng.choice((0, 1, 4, U32, 0x7FFFFFFF, 0x80000000, len(raw),
                    len(raw) - p, len(raw) - p - 2, old + 4, old - 4,
                    old + rng.randrange(-64, 65), rng.randrange(len(raw)),
                    target - p))
    return [(p, _u32(v))], None, "@%d %d -> %d" % (p, old, v & U32)


def _m_length(raw, lay, rng):
    p = _pick(rng, lay.lengths)
    if p is None:
        return None
    n = _read32(raw, p)
    v = rng.choice((0, 1, n + 1, n - 1, 2 * n + 1, n + 1000, 1 << 24,
                    (1 << 24) + 1, 0x7FFFFFFF, U32, len(raw) // 4,
                    len(raw)))
    return [(p, _u32(v))], None, "@%d %d -> %d" % (p, n, v & U32)


def _m_index(raw, lay, rng):
    p = _pick(rng, lay.indices)
    if p is None:
        return None
    n = lay.n_tensors
    old = _read32(raw, p)
    v = rng.choice((-1, -2, n, n - 1, n + 1, 0, old + 1, old - 1,
                    rng.randrange(max(n, 1)), 0x7FFFFFFF, -0x80000000))
    return [(p, _u32(v))], None, "@%d %d -> %d" % (p, old, v)


def _m_shape(raw, lay, rng):
    p = _pick(rng, lay.shapes)
    if p is None:
        return None
    old = _read32(raw, p)
    v = rng.choice((0, 1, -1, 2, old + 1, old - 1, 2 * old, old * 16,
                    1 << 24, (1 << 24) + 1, 0x7FFFFFFF, 0x40000001,
                    -0x80000000))
    return [(p, _u32(v))], None, "@%d %d -> %d" % (p, old, v)


def _m_swap(raw, lay, rng):
    vecs = [v for v in lay.vectors if v[1] >= 2]
    if not vecs:
        return None
    start, n, size, tables = _pick(rng, vecs)
    i, j = rng.sample(range(n), 2)
    pi, pj = start + size * i, start + size * j
    a, b = _read32(raw, pi), _read32(raw, pj)
    if tables:  # keep each uoffset pointing at the other's target
        a, b = (pj + b - pi) & U32, (pi + a - pj) & U32
        return ([(pi, _u32(a)), (pj, _u32(b))], None,
                "tables @%d [%d] <-> [%d]" % (start, i, j))
    return ([(pi, _u32(b)), (pj, _u32(a))], None,
            "ints @%d [%d] <-> [%d]" % (start, i, j))


def _m_vtable(raw, lay, rng):
    p = _pick(rng, lay.vtable)
    if p is None:
        return None
    old = raw[p] | raw[p + 1] << 8
    v = rng.choice((0, 1, 2, 3, 4, old + 1, old + 2, old - 2, old + 4,
                    0xFFFF, 0x8000, rng.randrange(0x10000)))
    v &= 0xFFFF
    return [(p, v.to_bytes(2, "little"))], None, "@%d %d -> %d" % (p, old, v)


def _m_soffset(raw, lay, rng):
    p = _pick(rng, lay.soffsets)
    if p is None:
        return None
    old = _read32(raw, p)
    v = rng.choice((0, 4, -4, old + 2, old - 2, old + 4, old - 4, p,
                    p + 1, -len(raw), 0x7FFFFFFF, -0x80000000))
    return [(p, _u32(v))], None, "@%d soffset %d -> %d" % (p, old, v)


def _m_scalar(raw, lay, rng):
    if not lay.scalars:
        return None
    p, w = _pick(rng, lay.scalars)
    v = rng.choice((0, 1, 2, 3, 4, 5, 6, 9, 10, 17, 127, -1, -128,
                    0x7FFFFFFF, rng.randrange(256)))
    return ([(p, (v & ((1 << 8 * w) - 1)).to_bytes(w, "little"))], None,
            "@%d (%d bytes) = %d" % (p, w, v))


def _m_float(raw, lay, rng):
    p = _pick(rng, lay.floats)
    if p is None:
        return None
    v = rng.choice((0x00000000, 0x80000000, 0x7F800000, 0xFF800000,
                    0x7FC00000, 0x00000001, 0x7F7FFFFF, 0x3F800000,
                    0xBF800000, 0x3B800000, _read32(raw, p) ^ (1 << 30),
                    _read32(raw, p) + 1))
    return [(p, _u32(v))], None, "@%d = 0x%08x" % (p, v)


def _m_option(raw, lay, rng):
    p = _pick(rng, lay.options)
    if p is None:
        return None
    if rng.random() < 0.5:
        v = rng.choice((0, 1, 2, 3, 4, 5, 6, 0x7F, 0x80, 0xFF))
        return [(p, bytes([v]))], None, "@%d byte = %d" % (p, v)
    v = rng.choice((0, 1, 2, 3, -1, 100, 0x7FFFFFFF, -0x80000000, 1 << 20))
    return [(p, _u32(v))], None, "@%d int = %d" % (p, v)


_MUTATORS = {
    "bitflip": _m_bitflip, "byte": _m_byte, "truncate": _m_truncate,
    "offset": _m_offset, "length": _m_length, "index": _m_index,
    "shape": _m_shape, "swap": _m_swap, "vtable": _m_vtable,
    "soffset": _m_soffset, "scalar": _m_scalar, "float": _m_float,
    "option": _m_option,
}


def apply(raw, edits, truncate=None):
    """The mutated bytes: edits [(pos, bytes)], then cut to truncate."""
    b = bytearray(raw)
    for p, data in edits:
        p = int(p)
        if 0 <= p < len(b):
            b[p:p + len(data)] = data[:len(b) - p]
    if truncate is not None:
        del b[int(truncate):]
    return bytes(b)


def mutations(raw, lay, rng):
    """One to three mutations combined: (edits, truncate, description)."""
    edits, trunc, descs = [], None, []
    for _ in range(rng.choice((1, 1, 1, 1, 2, 3))):
        e, t, d = mutate(raw, lay, rng)
        edits += e
        descs.append(d)
        if t is not None:
            trunc = t if trunc is None else min(trunc, t)
    return edits, trunc, "; ".join(descs)


# --- running cases ----------------------------------------------------------

class Case:
    """One model to run: id, path, base input paths, provenance."""

    def __init__(self, cid, path, inputs, base, edits, trunc, what):
        self.id, self.path, self.inputs = cid, path, inputs
        self.base, self.edits, self.trunc, self.what = (base, edits, trunc,
                                                        what)
        self.dev = None   # result dict from mp_cases.py
        self.ref = None   # result dict from the TFLM worker


def run_device(cases, work, tag="dev", timeout=CASE_TIMEOUT):
    """Run cases through host_tools/mp_cases.py with its bad API calls
    (case_driver.run_unix); sets case.dev for each: a crash, or a silent
    stretch longer than timeout, marks the case it happened on ('crash' /
    'hang') and the driver restarts after it."""
    case_driver.run_unix(cases, work, tag, lambda c: c.path, timeout,
                         api=True)


def run_tflm(cases, timeout=CASE_TIMEOUT):
    """Run cases through the TFLM worker (a fork per case); sets case.ref.

    Each case passes the inputs our run used ('src' of its dev result).
    The worker survives TFLM crashes (they kill only the child); should it
    die anyway, it is restarted on the cases left, the first of which is
    marked 'lost'.
    """
    by_id = {c.id: c for c in cases}
    left = list(cases)
    while left:
        proc = subprocess.Popen([sys.executable, "-m", "host_tools.fuzz",
                                 "--tflm-worker", str(timeout)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True,
                                cwd=ROOT)
        threading.Thread(target=_feed, args=(proc, left),
                         daemon=True).start()
        for line in proc.stdout:
            try:
                res = json.loads(line)
            except ValueError:
                continue
            by_id[res["id"]].ref = res
        proc.wait()
        proc.stdout.close()
        left = [c for c in left if c.ref is None]
        if left:
            left[0].ref = {"r": "lost", "msg": "TFLM worker exited %s"
                           % proc.returncode}
            left = left[1:]


def _feed(proc, cases):
    try:
        for c in cases:
            proc.stdin.write(json.dumps({
                "id": c.id, "model": c.path, "inputs": c.inputs,
                "src": c.dev.get("src", ""),
                "n_out": len(c.dev.get("out", ()))}) + "\n")
            proc.stdin.flush()
        proc.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def fill(n, boolean=False):
    """The driver's fill pattern: byte j = (37 * j + 11) & 255 (its low
    bit for a bool tensor: TFLM's wrapper turns any non-zero byte into
    1, ours keeps the byte)."""
    mask = 1 if boolean else 255
    return bytes((37 * j + 11) & mask for j in range(n))


def tflm_worker(timeout):
    """`python -m host_tools.fuzz --tflm-worker T`: read JSON cases on
    stdin, run each in a forked child (TFLM may crash), print one JSON
    line per case: r = ok (out: hex list), err, crash or hang."""
    import select
    import signal
    from tflite_micro.python.tflite_micro import runtime  # noqa: F401
    for line in sys.stdin:
        case = json.loads(line)
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            os.close(rfd)
            try:
                res = _tflm_case(case)
            except BaseException as e:  # noqa: B902 - reported
                res = {"r": "err", "msg": "%s: %s" % (type(e).__name__, e)}
            os.write(wfd, json.dumps(res).encode())
            os._exit(0)
        os.close(wfd)
        chunks, deadline = [], time.time() + timeout
        while True:
            left = deadline - time.time()
            if left <= 0 or not select.select([rfd], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                res = {"r": "hang"}
                break
            b = os.read(rfd, 1 << 16)
            if not b:
                res = None
                break
            chunks.append(b)
        os.close(rfd)
        _, status = os.waitpid(pid, 0)
        if res is None:
            if chunks:
                res = json.loads(b"".join(chunks))
            else:
                res = {"r": "crash", "msg": "status %d" % status}
        res["id"] = case["id"]
        print(json.dumps(res), flush=True)


def _tflm_case(case):
    import numpy as np
    from tflite_micro.python.tflite_micro import _runtime, runtime
    with open(case["model"], "rb") as f:
        raw = f.read()
    it = runtime.Interpreter.__new__(runtime.Interpreter)
    it._interpreter = _runtime.InterpreterWrapper(
        raw, [], TFLM_ARENA, 0,
        _runtime.PythonInterpreterConfig.kAllocationRecording, 0)
    for i, src in enumerate(case["src"]):
        d = it.get_input_details(i)
        dt = np.dtype(d["dtype"])
        n = int(np.prod(d["shape"])) * dt.itemsize
        if src == "b":
            with open(case["inputs"][i], "rb") as f:
                data = f.read()
            if len(data) != n:
                return {"r": "insize", "msg": "input %d: TFLM needs %d "
                        "bytes, ours %d" % (i, n, len(data))}
        else:
            data = fill(n, dt == np.bool_)
        it.set_input(np.frombuffer(data, dt).reshape(d["shape"]), i)
    it.invoke()
    out = [np.ascontiguousarray(it.get_output(j)).tobytes().hex()
           for j in range(case["n_out"])]
    return {"r": "ok", "out": out}


# --- the campaign -----------------------------------------------------------

def same_outputs(d, ref):
    """Our outputs (driver result d) equal TFLM's byte for byte, except
    that any two float32 NaNs are equal (their payloads come from the
    host's float unit)."""
    if len(d["out"]) != len(ref["out"]):
        return False
    for ours, theirs, dt in zip(d["out"], ref["out"], d.get("dt", ())):
        if ours == theirs:
            continue
        if dt != "float32" or len(ours) != len(theirs):
            return False
        import numpy as np
        a = np.frombuffer(bytes.fromhex(ours), "<f4")
        b = np.frombuffer(bytes.fromhex(theirs), "<f4")
        nan = np.isnan(a)
        if not (np.array_equal(nan, np.isnan(b))
                and a[~nan].tobytes() == b[~nan].tobytes()):
            return False
    return len(d.get("dt", ())) == len(d["out"]) or d["out"] == ref["out"]


def verdict(c):
    """None if the case passed, else a short reason."""
    d = c.dev or {"r": "lost"}
    if d["r"] in ("bug", "crash", "hang", "lost"):
        return "%s %s: %s" % (d["r"], d.get("cls", ""), d.get("msg", ""))
    if d["r"] == "err":
        if "internal error" in d.get("msg", ""):
            return "internal %s: %s" % (d["cls"], d["msg"])
        return None
    ref = c.ref or {}
    if ref.get("r") == "ok" and not same_outputs(d, ref):
        return "mismatch: outputs differ from TFLM's"
    if ref.get("r") == "insize":
        return "mismatch: %s" % ref["msg"]
    return None


def base_inputs(path, work, rng, tag):
    """Seeded random input files for a seed model (our reader's view)."""
    from tflm.model import Model
    from .cli_run import tensor_info
    from .inputs import random_input
    import numpy as np
    with open(path, "rb") as f:
        raw = f.read()
    try:
        m = Model(raw)
    except TFLMError:
        return []
    files = []
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    for i in m.inputs:
        info = tensor_info(m.tensors[i])
        p = os.path.join(work, "base_%d_%d.bin" % (tag, i))
        try:
            data = random_input(info, nrng)
        except (KeyError, ValueError):
            data = fill(info["nbytes"])
        with open(p, "wb") as f:
            f.write(data)
        files.append(p)
    return files


def _compiled_seeds(seeds, work):
    """[(path, weight)] of the seeds compiled for the unix port's arch
    (written into work); none where compiling fails."""
    from .compile import compile_file
    from .romfs import arch_of
    from .unix_port import micropython_bin
    try:
        proc = subprocess.run([micropython_bin(), "-c", "import sys; print("
                               "sys.implementation._mpy)"],
                              capture_output=True, text=True, timeout=60)
        arch = arch_of(int(proc.stdout))
    except (OSError, ValueError, subprocess.SubprocessError):
        return []
    out = []
    for k, (rel, w) in enumerate(seeds):
        p = seed_path(rel)
        if not os.path.exists(p):
            continue
        dst, _ = compile_file(p, arch, os.path.join(work, "compiled%d" % k))
        if dst != p:
            out.append((dst, w))
            COMPILED_FROM[dst] = (p, arch)
    return out


# compiled seed path -> (its source model, arch): save() writes recipes
# of their mutants against the source (load_corpus_file compiles it again:
# the compiler's output is deterministic)
COMPILED_FROM = {}


def block_of(raw):
    """(position, bytes) of a tflm_compiled block in model bytes, or
    None."""
    from tflm.source import metadata
    try:
        return metadata(FlatBuffer(bytes(raw)), "tflm_compiled")
    except TFLMError:
        return None


def rehash(raw, pos, n):
    """[(position, bytes)]: the block's two hashes for bytes raw
    (host_tools.compile: the model outside the block, the block but its
    hash words)."""
    from .compile import fnv30
    mh = fnv30(raw, 0, pos, 0x2345)
    mh = fnv30(raw, pos + n, len(raw), mh)
    bh = fnv30(raw, pos, pos + 16, 0x2345)
    bh = fnv30(raw, pos + 24, pos + n, bh)
    return [(pos + 16, mh.to_bytes(4, "little") + bh.to_bytes(4, "little"))]


def _m_block(raw, rng):
    """A header word of the block (or the object stream's first words)
    set to a telling value, the hashes set again: (edits, None, what),
    or None for a model without a block."""
    at = block_of(raw)
    if at is None:
        return None
    pos, n = at
    stream = int.from_bytes(raw[pos + 68:pos + 72], "little")
    nt = int.from_bytes(raw[pos + 40:pos + 44], "little")
    words = list(range(20)) + [(stream + 4 * (nt + j)) // 4
                               for j in range(3)]
    k = rng.choice(words)
    if 4 * k + 4 > n or k in (4, 5):
        return None
    old = int.from_bytes(raw[pos + 4 * k:pos + 4 * k + 4], "little",
                         signed=True)
    v = rng.choice((0, 1, 2, -1, old + 1, old - 1, old + 4, old - 4,
                    2 * old, n, n + 4, 99, 0x7FFFFFFF, -0x80000000))
    edit = (pos + 4 * k, _u32(v))
    b = bytearray(raw)
    b[edit[0]:edit[0] + 4] = edit[1]
    return [edit] + rehash(b, pos, n), None, "block word %d %d -> %d" % (
        k, old, v)


def make_cases(n, seed, work, seeds=SEEDS, compiled=COMPILED_SEEDS):
    """n mutated models spread over the seed models (and the compiled
    ones: _compiled_seeds) by weight."""
    rng = random.Random(seed)
    avail = [(seed_path(r), w) for r, w in seeds
             if os.path.exists(seed_path(r))]
    avail += _compiled_seeds(compiled, work)
    bases = {}
    for tag, (p, _) in enumerate(avail):
        with open(p, "rb") as f:
            raw = f.read()
        bases[p] = (raw, walk(raw), base_inputs(p, work, rng, tag))
    pool = [p for p, w in avail for _ in range(w)]
    cases = []
    for k in range(n):
        p = rng.choice(pool)
        raw, lay, ins = bases[p]
        m = _m_block(raw, rng) if rng.random() < 0.5 else None
        if m is not None:
            edits, trunc, what = m
        else:
            edits, trunc, what = mutations(raw, lay, rng)
        path = os.path.join(work, "m%05d.tflite" % k)
        with open(path, "wb") as f:
            f.write(apply(raw, edits, trunc))
        cases.append(Case(k, path, ins, p, edits, trunc, what))
    return cases


def run_cases(cases, work, jobs=2, log=None):
    """Run cases on the unix port (jobs processes), then under TFLM the
    ones that ran; returns the list of (case, reason) failures."""
    shards = [cases[i::jobs] for i in range(jobs)]
    threads = [threading.Thread(target=run_device,
                                args=(s, work, "dev%d" % i))
               for i, s in enumerate(shards) if s]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ran = [c for c in cases if c.dev and c.dev["r"] == "ok"]
    shards = [ran[i::jobs] for i in range(jobs)]
    threads = [threading.Thread(target=run_tflm, args=(s,))
               for s in shards if s]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return [(c, v) for c in cases for v in [verdict(c)] if v]


def save(c, corpus, reason):
    """Write a failing case to the corpus; returns the file name."""
    os.makedirs(corpus, exist_ok=True)
    stem = "%s_%d" % (os.path.splitext(os.path.basename(c.base))[0], c.id)
    with open(c.path, "rb") as f:
        raw = f.read()
    # Mutants of shared or repo models are stored as recipes (base + byte
    # edits): copies of ../shared files are never committed.
    base, arch = COMPILED_FROM.get(c.base, (c.base, None))
    in_repo = base.startswith(ROOT + os.sep)
    in_shared = base.startswith(SHARED)
    if len(raw) <= CORPUS_MAX_BYTES and not in_repo and not in_shared:
        name = stem + ".tflite"
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(raw)
    else:
        rel = os.path.relpath(base, SHARED) if in_shared else \
            os.path.relpath(base, ROOT)
        name = stem + ".json"
        with open(os.path.join(corpus, name), "w") as f:
            json.dump({"base": rel, "in_shared": in_shared,
                       "compiled": arch,
                       "edits": [[p, d.hex()] for p, d in c.edits],
                       "truncate": c.trunc, "what": c.what,
                       "reason": reason[:300]}, f, indent=1)
    return name


def load_corpus_file(path):
    """Bytes of a corpus entry (.tflite, or a .json recipe); None when a
    recipe's base model is missing."""
    if path.endswith(".tflite"):
        with open(path, "rb") as f:
            return f.read()
    with open(path) as f:
        r = json.load(f)
    base = os.path.join(SHARED if r["in_shared"] else ROOT, r["base"])
    if not os.path.exists(base):
        return None
    with open(base, "rb") as f:
        raw = f.read()
    if r.get("compiled"):  # a mutant of the model compiled for that arch
        from .compile import compile_model
        raw = compile_model(raw, r["compiled"])[0]
    return apply(raw, [(p, bytes.fromhex(d)) for p, d in r["edits"]],
                 r["truncate"])


def replay(paths, jobs=2, out=None):
    """Run corpus entries (.tflite / .json) with fill-pattern inputs;
    returns (failures, cases). Recipes whose base model is missing are
    skipped."""
    with tempfile.TemporaryDirectory(prefix="tflm_replay_") as work:
        cases = []
        for k, p in enumerate(sorted(paths)):
            raw = load_corpus_file(p)
            if raw is None:
                continue
            path = os.path.join(work, "r%05d.tflite" % k)
            with open(path, "wb") as f:
                f.write(raw)
            cases.append(Case(k, path, [], p, [], None, "replay"))
        failures = run_cases(cases, work, jobs)
    for c, reason in failures:
        if out is not None:
            print("FAIL %s: %s" % (c.base, reason[:500]), file=out)
    return failures, cases


def summarize(cases):
    """Counts of outcomes: ours (ok / error class / failure), TFLM's."""
    from collections import Counter
    ours, theirs = Counter(), Counter()
    for c in cases:
        d = c.dev or {"r": "lost"}
        ours[d.get("cls", d["r"]) if d["r"] == "err" else d["r"]] += 1
        if c.ref is not None:
            theirs[c.ref["r"]] += 1
    return ours, theirs


def campaign(n, seed, jobs=2, corpus=None, seeds=SEEDS, out=sys.stdout):
    """Generate, run and check n mutations; returns (failures, cases)."""
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="tflm_fuzz_") as work:
        cases = make_cases(n, seed, work, seeds)
        t1 = time.time()
        failures = run_cases(cases, work, jobs)
        for c, reason in failures:
            name = save(c, corpus, reason) if corpus else ""
            print("FAIL case %d (%s: %s): %s %s"
                  % (c.id, os.path.basename(c.base), c.what, reason[:500],
                     name), file=out)
    ours, theirs = summarize(cases)
    print("fuzz: %d mutations, seed %d: %d failures; generate %.1fs, run "
          "%.1fs" % (n, seed, len(failures), t1 - t0, time.time() - t1),
          file=out)
    print("  tflm: %s" % ", ".join("%s %d" % kv for kv in
                                   sorted(ours.items())), file=out)
    print("  TFLM on the ones that ran: %s"
          % ", ".join("%s %d" % kv for kv in sorted(theirs.items())),
          file=out)
    return failures, cases


def add_parser(sub):
    """The `fuzz` subcommand of python -m host_tools."""
    f = sub.add_parser("fuzz", help="mutation fuzzing: bad models must "
                       "give TFLMError or run like TFLM")
    f.add_argument("--n", type=int, default=2000, help="mutations to run")
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--jobs", type=int, default=2)
    f.add_argument("--corpus", default=CORPUS,
                   help="where failing models are written ('' for none)")
    f.add_argument("--replay", nargs="+", metavar="FILE",
                   help="run these corpus files (.tflite / .json) instead")
    return f


def main(args):
    if args.replay:
        failures, cases = replay(args.replay, args.jobs, sys.stdout)
        for c in cases:
            print("%s: %s / TFLM %s" % (c.base, c.dev, (c.ref or {}).get(
                "r")))
        return 1 if failures else 0
    failures, _ = campaign(args.n, args.seed, args.jobs, args.corpus or None)
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--tflm-worker"]:
        tflm_worker(float(sys.argv[2]))
    else:
        import argparse
        p = argparse.ArgumentParser(prog="python -m host_tools.fuzz")
        sub = p.add_subparsers(dest="cmd", required=True)
        add_parser(sub)
        sys.exit(main(p.parse_args(["fuzz"] + sys.argv[1:])))
