"""The user's static arena: Interpreter(model, arena=buf), as TFLM's
MicroInterpreter takes its tensor_arena (issue 34, part 1).

The head and the tail (its bytes and its int32 words) live in the buffer;
outputs equal those of the interpreter that allocates its own arena
(itself compared with TFLM elsewhere, and here with TFLM's figure for
person_detect's sample image); a buffer serves one interpreter at a time;
too small a buffer gives an ArenaError whose byte count is the one that
works. The construction budget at a board's heap is in test_board_heap.py.
"""

import json

import pytest

from conftest import run_mp, shared

MODELS = [
    "person_detect/person_detect.tflite",
    "tiny_kws_ref_int8/kws_ref_model.tflite",
    "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite",
    "micro_speech_quantized/micro_speech_quantized.tflite",
    "audio_preprocessor_int8/audio_preprocessor_int8.tflite",
    "magic_wand/magic_wand.tflite",
    "tiny_ad01_int8/ad01_int8.tflite",
    "hello_world_int8/hello_world_int8.tflite",
    "test_conv_model/test_conv_model.tflite",
]

# Runs each model three ways on seeded random input bytes (an own arena,
# arena=buf, arena=a memoryview of buf at an odd offset), the buffer
# reused from model to model (so never zeros when a model is built on
# it); prints per model whether all outputs agree, and what the built
# interpreter keeps of the arena.
SAME = """
import gc, json, random, sys
buf = bytearray(120000)
import tflm
res = {}
for p in PATHS:
    outs = []
    for mode in range(3):
        a = (None, buf, memoryview(buf)[3:])[mode]
        it = tflm.Interpreter(p, arena=a)
        random.seed(7)
        got = []
        for r in range(2):
            for t in it.inputs:
                d = t.data
                for k in range(len(d)):
                    d[k] = random.getrandbits(8)
            it.invoke()
            got.append([bytes(o.data) for o in it.outputs])
        outs.append(got)
        if mode == 2:
            w = it._words
            res[p] = {"same": outs[0] == outs[1] == outs[2],
                      "words_in_buf": type(w).__name__ == "memoryview"
                      or len(w) == 0,
                      "arena_is_view": type(it.arena).__name__
                      == "memoryview",
                      "need": it.arena_size + it.persistent_size}
        it = None
        gc.collect()
print(json.dumps(res))
"""


def test_outputs_equal_own_arena(tmp_path):
    paths = [shared(*rel.split("/")) for rel in MODELS]
    out = run_mp("PATHS = %r\n" % paths + SAME, tmp_path, heap="16M")
    res = json.loads(out.splitlines()[-1])
    for p in paths:
        assert res[p]["same"], p
        # the tail's words are a view of the buffer (not an array of
        # their own), the arena a view of it
        assert res[p]["words_in_buf"], p
        assert res[p]["arena_is_view"], p


def test_person_detect_sample_on_static_arena(tmp_path):
    """person.bmp gives TFLM's [-113, 113] ([no_person, person]) with the
    arena in a buffer made before the import, which holds it whole: the
    heap the interpreter keeps is far below its arena."""
    path = shared("person_detect", "person_detect.tflite")
    bmp = shared("person_detect", "person.bmp")
    code = """
import gc
buf = bytearray(80000)
import json, tflm
gc.collect()
f0 = gc.mem_free()
it = tflm.Interpreter(%r, arena=buf)
with open(%r, "rb") as f:
    b = f.read()
off = b[10] | b[11] << 8
w = 96
rows = [b[off + w * r:off + w * (r + 1)] for r in range(96)]
it.input(0).data[:] = b"".join(reversed(rows))
it.invoke()
gc.collect()
print(json.dumps({"out": list(it.output(0).get()), "ram": it.ram,
                  "need": it.arena_size + it.persistent_size}))
""" % (path, bmp)
    r = json.loads(run_mp(code, tmp_path, heap="4M").splitlines()[-1])
    assert r["out"] == [-113, 113]
    # the model is read into RAM here (300,568 bytes, a file on the unix
    # port): all that ram holds beyond it is the interpreter's objects
    assert r["ram"] - 300568 < r["need"] // 4, r


def test_one_interpreter_per_buffer(tmp_path):
    """Building a second interpreter on a buffer stops the first (its
    bytes are the second's now): invoke() raises InvokeError; building
    it again makes it work, with the outputs it had."""
    a = shared("hello_world_int8", "hello_world_int8.tflite")
    b = shared("micro_speech_quantized", "micro_speech_quantized.tflite")
    code = """
buf = bytearray(20000)
import json, tflm
ia = tflm.Interpreter(%r, arena=buf)
ia.input(0).set([17])
ia.invoke()
first = list(ia.output(0).get())
ib = tflm.Interpreter(%r, arena=buf)
ib.invoke()
try:
    ia.invoke()
    stale = "no error"
except tflm.InvokeError as e:
    stale = str(e)
ia = tflm.Interpreter(%r, arena=memoryview(buf)[16:])
ia.input(0).set([17])
ia.invoke()
try:
    ib.invoke()
    stale_b = "no error"
except tflm.InvokeError as e:
    stale_b = "InvokeError"
print(json.dumps({"first": first, "again": list(ia.output(0).get()),
                  "stale": stale, "stale_b": stale_b}))
""" % (a, b, a)
    r = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert "another Interpreter was built on this one's arena" in r["stale"]
    assert r["stale_b"] == "InvokeError"
    assert r["again"] == r["first"]


def test_too_small_names_the_bytes_that_work(tmp_path):
    """ArenaError names the bytes the model needs (the alignment skip of
    an odd start included); a buffer of exactly that many works, one
    byte less does not."""
    path = shared("tiny_kws_ref_int8", "kws_ref_model.tflite")
    code = """
import json, re, tflm
buf = bytearray(40000)
out = {}
for start in (0, 5):
    try:
        tflm.Interpreter(%r, arena=memoryview(buf)[start:start + 1000])
        out[start] = ["no error"]
        continue
    except tflm.ArenaError as e:
        msg = str(e)
    need = int(re.search(r"needs (\\d+)", msg).group(1))
    res = [msg, need]
    for n in (need - 1, need):
        try:
            tflm.Interpreter(%r, arena=memoryview(buf)[start:start + n])
            res.append("ok")
        except tflm.ArenaError as e:
            res.append("ArenaError")
    out[start] = res
print(json.dumps(out))
""" % (path, path)
    r = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    for start in ("0", "5"):
        msg, need, less, exact = r[start]
        assert msg.startswith("arena= buffer of 1000 bytes is too small: "
                              "the model needs %d (" % need), msg
        assert (less, exact) == ("ArenaError", "ok"), r[start]
    # a bytearray's bytes start at a GC block (16-byte aligned): from
    # byte 5 on, 11 bytes are skipped
    assert r["5"][1] == r["0"][1] + 11, r
    assert "11 of them to align its start" in r["5"][0], r
    assert "align" not in r["0"][0], r


@pytest.mark.parametrize("arg, kind", [
    ("b'\\\\x00' * 4096", "TypeError"),
    ("array.array('i', range(2048))", "TypeError"),
    ("4096", "TypeError"),
    ("memoryview(b'\\\\x00' * 4096)", "TypeError"),
    ("b''", "TypeError"),
    ("array.array('b', bytes(4096))", "TypeError"),
])
def test_arena_must_be_writable_bytes(tmp_path, arg, kind):
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = """
import array, tflm
try:
    tflm.Interpreter(%r, arena=%s)
    print("no error")
except Exception as e:
    print(type(e).__name__, e)
""" % (path, arg)
    out = run_mp(code, tmp_path).strip().splitlines()[-1]
    assert out.startswith(kind), out
    assert "arena must be a writable buffer of bytes" in out, out


def test_custom_ops_and_unsupported_on_static_arena(tmp_path):
    """Python custom operators (tflm.register_op) run on arena= as on an
    own arena (the kernels are found after the plan there); a model with
    an operator nobody registered is refused with the same
    UnsupportedOpError, naming it, before anything is imported."""
    from test_custom_ops import KERNELS, _models, T
    from host_tools import opgen
    cases = _models()
    m = opgen.Model()
    m.add_op("CUSTOM:NotThere", [T([4])], [T([4])])
    m.add_op("CUSTOM:Negate", [1], [T([4])])
    unreg = m.build()
    code = "buf = bytearray(8000)\n" + KERNELS + """
import json, tflm
CASES = %r
res = []
for raw, ins in CASES:
    outs = []
    for a in (None, buf):
        it = tflm.Interpreter(bytes.fromhex(raw), arena=a)
        for t, x in zip(it.inputs, ins):
            t.data[:] = bytes.fromhex(x)
        it.invoke()
        outs.append([bytes(o.data).hex() for o in it.outputs])
        it = None
    res.append(outs)
msgs = []
for a in (None, buf):
    try:
        tflm.Interpreter(bytes.fromhex(%r), arena=a)
        msgs.append("no error")
    except tflm.UnsupportedOpError as e:
        msgs.append(str(e))
print(json.dumps([res, msgs]))
""" % ([(c[1].hex(), [x.tobytes().hex() for x in c[2]]) for c in cases],
       unreg.hex())
    res, msgs = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    for (name, _, _, want, _), (own, static) in zip(cases, res):
        assert own == static, name
        assert own == [w.reshape(-1).astype("int8").tobytes().hex()
                       for w in want], name
    assert msgs[0] == msgs[1] and "op 0 (NotThere)" in msgs[1], msgs


def test_run_tool_names_the_bytes_for_arena(tmp_path):
    """`python -m host_tools run MODEL` ends with the bytes an arena=
    bytearray needs: a buffer of that many builds, one byte less does
    not."""
    import re
    import subprocess
    import sys
    from conftest import ROOT
    path = shared("micro_speech_quantized", "micro_speech_quantized.tflite")
    out = subprocess.run([sys.executable, "-m", "host_tools", "run", path],
                         cwd=ROOT, capture_output=True, text=True,
                         timeout=300).stdout
    n = int(re.search(r"arena=bytearray\((\d+)\) holds it", out).group(1))
    code = """
import tflm
res = []
for k in (%d, %d):
    try:
        tflm.Interpreter(%r, arena=bytearray(k))
        res.append("ok")
    except tflm.ArenaError:
        res.append("ArenaError")
print(res)
""" % (n - 1, n, path)
    assert run_mp(code, tmp_path).strip().splitlines()[-1] == \
        "['ArenaError', 'ok']"


def test_a_taken_buffer_stops_every_writer(tmp_path):
    """Once another interpreter took the buffer, the earlier one's
    input(), reset(), predict, tensors and its tensors' set() and view()
    raise the InvokeError too (their bytes are the new owner's now:
    writing them would corrupt its kernels' blocks); invoke() raises it
    under heap_lock (it is made beforehand); print() says so. A
    bytearray that changed size stops its interpreter. Failed builds on
    empty buffers leave no owner entries behind."""
    a = shared("simple_add", "simple_add_model.tflite")
    b = shared("tiny_kws_ref_int8", "kws_ref_model.tflite")
    h = shared("hello_world_int8", "hello_world_int8.tflite")
    code = """
import json, micropython
buf = bytearray(60000)
import tflm
from tflm import interpreter
a = tflm.Interpreter(%r, arena=buf)
inp = a.input(1)
b = tflm.Interpreter(%r, arena=buf)
out = []
for f in (lambda: a.input(1), lambda: inp.set(bytes([7]) * 16384),
          lambda: inp.set_float([0.5] * 16384), lambda: a.reset(),
          lambda: inp.view(), lambda: a.predict([0]), lambda: a.tensors):
    try:
        f()
        out.append("no error")
    except tflm.InvokeError as e:
        out.append("InvokeError")
b.invoke()
def locked():
    r = None
    micropython.heap_lock()
    try:
        a.invoke()
    except Exception as e:
        r = e
    micropython.heap_unlock()
    return type(r).__name__
out.append(locked())
out.append(repr(a))
c = tflm.Interpreter(%r, arena=buf)
c.invoke()
buf.extend(bytes(16))
try:
    c.invoke()
    out.append("no error")
except tflm.InvokeError:
    out.append("InvokeError")
n = len(interpreter._OWNERS)
for i in range(20):
    try:
        tflm.Interpreter(%r, arena=bytearray(0))
    except tflm.ArenaError:
        pass
out.append(len(interpreter._OWNERS) - n)
print(json.dumps(out))
""" % (a, b, h, h)
    r = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert r[:7] == ["InvokeError"] * 7, r
    assert r[7] == "InvokeError", r  # under heap_lock
    assert r[8].startswith("<Interpreter (another Interpreter was built "
                           "on this one's arena= buffer"), r
    assert r[9] == "InvokeError", r  # the bytearray was resized
    assert r[10] == 0, r


def test_object_addresses_of_every_heap(tmp_path):
    """static_arena._object_address gives an object's address where id()
    does not: a 32-bit port's id() of an object between 2**30 and 2**31
    (the 32-bit unix port's heap lies there) loses bit 31. Checked by
    what lies there: every memoryview starts with the same type pointer,
    and the words view that _as_words makes in place reads the bytes."""
    code = """
import json, sys, uctypes
from tflm.static_arena import _object_address, words_in_place
views = [memoryview(bytearray(16 * k + 4)) for k in range(1, 40)]
w = 8 if sys.maxsize > 0x7FFFFFFF else 4
heads = set(uctypes.bytes_at(_object_address(v), w) for v in views)
raw = bytearray(range(1, 33))
k = -uctypes.addressof(raw) % 4
wv = words_in_place(memoryview(raw)[k:k + 16], 4)
print(json.dumps([len(heads), wv is not None and wv[0] ==
                  int.from_bytes(raw[k:k + 4], "little"),
                  min(id(v) for v in views) < 0]))
"""
    heads, words, negative = json.loads(
        run_mp(code, tmp_path, heap="128K").splitlines()[-1])
    # (a small heap: the 32-bit unix port mallocs it below 2**31)
    assert heads == 1 and words, (heads, words, negative)


def _split_heap(hole):
    """MicroPython source that fills the free heap with hole-byte
    blocks and frees every other one (the last one stays: the free heap
    after it is another hole), so that no free block is larger than
    hole bytes (a board's heap after a program's objects)."""
    return """gc.collect()
blocks = []
try:
    while True:
        blocks.append(bytearray(%d))
except MemoryError:
    pass
for k in range(0, len(blocks) - 1, 2):
    blocks[k] = None
gc.collect()""" % hole


def test_a_split_heap_names_the_static_arena(tmp_path):
    """A heap with more than enough free bytes but no block the arena
    fits (small objects kept amid it, as a board's program leaves it):
    ArenaError "not in one block" says what avoids it (the arena made
    first, passed as arena=; for a plain model, compiling it too), and
    the bytearray made before the heap was split builds the same model,
    plain and compiled. (KWS: a 16.9 KB head, in 16 KB holes.)"""
    from host_tools import compile as comp
    from conftest import unix_arch
    path = shared("tiny_kws_ref_int8", "kws_ref_model.tflite")
    with open(path, "rb") as f:
        raw = f.read()
    compiled = tmp_path / "kws_c.tflite"
    out, info = comp.compile_model(raw, unix_arch())
    compiled.write_bytes(out)
    code = """
import gc, json
models = [open(p, "rb").read() for p in (%r, %r)]
arena = bytearray(24000)  # first, as at boot
import tflm
# (compiled on this port from their source, as no board does: the
# parser needs more than the holes below; api for it.compiled)
import tflm.compiled, tflm.api
%s
out = []
for data in models:
    try:
        tflm.Interpreter(data)
        out.append("built")
    except tflm.ArenaError as e:
        out.append(str(e))
    try:
        it = tflm.Interpreter(data, arena=arena)
        it.invoke()
        out.append(["built", it.compiled is True])
    except Exception as e:
        out.append(repr(e))
    it = None
print(json.dumps(out))
""" % (path, str(compiled), _split_heap(16000))
    plain, plain_arena, comp_msg, comp_arena = json.loads(
        run_mp(code, tmp_path, heap="512K").splitlines()[-1])
    hint = ("but not in one block (make the arena first at boot and pass "
            "it as arena=: docs/memory.md%s)")
    # plain: head and tail; compiled: the head (as compile reports it:
    # the tail read in place)
    import re
    n = int(re.match(r"allocating the (\d+)-byte arena", plain).group(1))
    assert plain.endswith(hint % "; a model compiled on the host needs "
                          "less"), plain
    assert comp_msg.startswith("allocating the %d-byte arena"
                               % info["head"]), comp_msg
    assert 16000 < info["head"] < n <= 24000
    assert comp_msg.endswith(hint % ""), comp_msg
    assert plain_arena == ["built", False], plain_arena
    assert comp_arena == ["built", True], comp_arena


def test_a_split_heap_hint_for_the_largest_tensor(tmp_path):
    """Holes smaller than the plain construction's largest tensor, where
    the model's bytes are fewer (its sizing pass then allocates a buffer
    that large first): that ArenaError "not in one block" says what
    avoids it too, as the arena's does. (simple_add: 976 bytes, its
    largest tensor 16,384, in 4 KB holes.)"""
    path = shared("simple_add", "simple_add_model.tflite")
    code = """
import gc, json
data = open(%r, "rb").read()
import tflm
tflm.Interpreter(data)  # (the kernels' modules imported, kept; the
from tflm.interpreter import CONSTRUCTION  # construction's imported
for name in CONSTRUCTION:  # before, kept: the unix port compiles .py
    __import__(name)  # files, bigger than the holes below)
import tflm.api
%s
try:
    tflm.Interpreter(data)
    print(json.dumps("built"))
except tflm.ArenaError as e:
    print(json.dumps(str(e)))
""" % (path, _split_heap(4000))
    msg = json.loads(run_mp(code, tmp_path, heap="512K").splitlines()[-1])
    assert msg.startswith("allocating the arena (its largest tensor "
                          "alone) needs 16384 bytes"), msg
    assert msg.endswith("but not in one block (make the arena first at "
                        "boot and pass it as arena=: docs/memory.md; a "
                        "model compiled on the host needs less)"), msg
