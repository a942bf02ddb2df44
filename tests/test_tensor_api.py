"""Bad values given to the tensor helpers raise InvokeError, and leave the
interpreter usable; inf saturates, as quantization clamps."""

import json
import re

from conftest import device_script, run_mp, shared

# MicroPython side: the name of the exception each call raises, or
# 'no error' (every test script below starts with it).
OUTCOMES = device_script("tensor_outcomes.py")

CALLS = [
    "inp.set_float([float('nan')])", "it.predict([float('nan')])",
    "inp.set([1.5])", "inp.set(['a'])", "inp.set([None])", "inp.set([[1]])",
    "inp.set(None)", "inp.set(5)", "inp.set_float(None)",
    "inp.set_float(5.0)", "it.predict(None)", "it.predict(True)",
    "inp.set_float(['a'])", "inp.set({1: 2})", "inp.set('x')",
    "inp.set_float(b'x')", "it.predict('x')", "inp.set([200])",
    "inp.set(b'12')", "it.input(1)", "it.output(-1)",
]


def test_bad_values_raise_invoke_error(tmp_path):
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = OUTCOMES + """
import json, tflm
it = tflm.Interpreter(%r)
inp = it.input(0)
res = outcomes(%r, globals())
inp.set_float([float('inf')])
hi = inp.get()[0]
inp.set_float([-float('inf')])
lo = inp.get()[0]
inp.set([5])
it.invoke()
print(json.dumps({"res": res, "hi": hi, "lo": lo,
                  "out": list(it.output(0).get())}))
""" % (path, CALLS)
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert got["res"] == ["InvokeError"] * len(CALLS)
    assert (got["hi"], got["lo"]) == (127, -128)
    assert len(got["out"]) == 1  # still usable after every bad call


FLOAT_CALLS = [
    "inp.set([None])", "inp.set(['a'])", "inp.set([1j])",
    "inp.set_float([None])", "inp.set_float(['a'])", "it.predict([None])",
]


def test_float_input_bad_values_raise_invoke_error(tmp_path):
    """float32 inputs: non-numbers raise InvokeError as on the int8 path
    (issue 17: TypeError before); nested lists are flattened by predict,
    as the tensor's shape nests them."""
    path = shared("hello_world_float", "hello_world_float.tflite")
    code = OUTCOMES + """
import json, tflm
it = tflm.Interpreter(%r)
inp = it.input(0)
res = outcomes(%r, globals())
a = list(it.predict([[[1.5]]])[0])
b = list(it.predict([1.5])[0])
print(json.dumps({"res": res, "a": a, "b": b}))
""" % (path, FLOAT_CALLS)
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert got["res"] == ["InvokeError"] * len(FLOAT_CALLS)
    assert got["a"] == got["b"] and len(got["a"]) == 1


CONSTRUCT = [
    # (constructor call, exception type, words its message must hold)
    ("tflm.Interpreter(MODEL, arena_size='100')", "TypeError",
     ["arena_size", "str"]),
    ("tflm.Interpreter(MODEL, arena_size=1.5)", "TypeError",
     ["arena_size", "float"]),
    ("tflm.Interpreter(MODEL, arena_size=-1)", "ValueError",
     ["arena_size", "-1"]),
    ("tflm.Interpreter(MODEL, arena_size=100)", "ArenaError",
     ["arena of 100 bytes is too small"]),
    ("tflm.Interpreter(5)", "TypeError", ["model", "int"]),
    ("tflm.Interpreter('no/such/model.tflite')", "OSError",
     ["no/such/model.tflite"]),
    ("tflm.Interpreter(DIR)", "OSError", ["tests'", "directory"]),
    ("tflm.Interpreter(README)", "FormatError",
     ["not a TFLite model", "TFL3"]),
]


def test_constructor_arguments_named_errors(tmp_path):
    """Bad constructor arguments: TypeError / ValueError naming the
    argument, OSError naming the path, FormatError for a file that is not
    a model (issue 17)."""
    import os
    from conftest import ROOT
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = OUTCOMES + """
import json, tflm
MODEL = %r
README = %r
DIR = %r
res = []
for call, _, _ in %r:
    try:
        eval(call)
        res.append(['no error', ''])
    except Exception as e:
        res.append([type(e).__name__, str(e)])
print(json.dumps(res))
""" % (path, os.path.join(ROOT, "README.md"), os.path.join(ROOT, "tests"),
       CONSTRUCT)
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    for (call, kind, words), (name, msg) in zip(CONSTRUCT, got):
        assert name == kind, (call, name, msg)
        for w in words:
            assert w in msg, (call, w, msg)


def test_resized_model_buffer_is_refused_at_invoke(tmp_path):
    """A bytearray model that grows after load may have moved: invoke()
    raises InvokeError instead of reading freed memory (issue 17), and
    allocates nothing on the normal path (heap_lock)."""
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = """
import json, micropython, tflm
with open(%r, 'rb') as f:
    raw = bytearray(f.read())
it = tflm.Interpreter(raw)
micropython.heap_lock()
it.invoke()
micropython.heap_unlock()
raw.extend(bytes(4096))
try:
    it.invoke()
    res = 'no error'
except tflm.InvokeError as e:
    res = str(e)
print(json.dumps(res))
""" % path
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert "bytearray changed size" in got and "-> " in got, got


def test_signed_view_in_place_without_allocation(tmp_path):
    """Tensor.view(): int8 values signed, in place (a write shows in data
    as its byte), read and written under heap_lock (issue 17)."""
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = """
import json, micropython, tflm
it = tflm.Interpreter(%r)
inp, out = it.input(0), it.output(0)

def loop(v, n):
    micropython.heap_lock()
    v[0] = -5
    s = 0
    for i in range(n):
        s += v[i]
    micropython.heap_unlock()
    return s

vi = inp.view()
s = loop(vi, inp.size)
raw = inp.data[0]
got_in = list(inp.get())
it.invoke()
vo = out.view()
f = type(tflm.Interpreter(%r).input(0).view()[0]).__name__
print(json.dumps({"s": s, "raw": raw, "in": got_in,
                  "out": vo[0], "out_get": out.get()[0], "f": f}))
""" % (path, shared("hello_world_float", "hello_world_float.tflite"))
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert got["s"] == -5 and got["raw"] == 251 and got["in"] == [-5]
    assert got["out"] == got["out_get"]  # signed, as get() gives it
    assert got["f"] == "float"


def test_openmv_and_tflite_interfaces(tmp_path):
    """Model-level attributes as OpenMV's ml.Model names them, and the
    TFLite / tflite_micro methods, agree with TFLM's own details and
    outputs; labels come from the .txt next to the model (issue 17)."""
    import shutil
    import numpy as np
    from host_tools.oracle import Reference
    src = shared("person_detect", "person_detect.tflite")
    path = str(tmp_path / "pd.tflite")
    shutil.copy(src, path)
    (tmp_path / "pd.txt").write_text("no person\nperson\n")
    code = OUTCOMES + """
import json, tflm
it = tflm.Interpreter(%r)
it.allocate_tensors()
x = bytes(range(256)) * 36
it.set_input(x)
it.invoke()
idx = it.get_output_details()[0]['index']
r = {"ishape": it.input_shape, "idtype": it.input_dtype,
     "iscale": it.input_scale, "izp": it.input_zero_point,
     "oshape": it.output_shape, "odtype": it.output_dtype,
     "oscale": it.output_scale, "ozp": it.output_zero_point,
     "idet": it.get_input_details(), "odet": it.get_output_details(),
     "out": list(it.get_output(0)), "tensor": list(it.get_tensor(idx)),
     "labels": it.labels, "top": it.top(2)}
try:
    it.get_tensor(0)
    r["bad"] = "no error"
except tflm.InvokeError as e:
    r["bad"] = str(e)
print(json.dumps(r))
""" % path
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    ref = Reference(src)
    di, do = ref.input_details(0), ref.interp.get_output_details(0)
    assert got["ishape"] == [list(di["shape"])]
    assert got["oshape"] == [list(do["shape"])]
    assert got["idtype"] == got["odtype"] == ["b"]
    qi, qo = di["quantization_parameters"], do["quantization_parameters"]
    assert got["iscale"] == [float(qi["scales"][0])]
    assert got["izp"] == [int(qi["zero_points"][0])]
    assert got["oscale"] == [float(qo["scales"][0])]
    assert got["ozp"] == [int(qo["zero_points"][0])]
    assert got["idet"][0]["shape"] == list(di["shape"])
    assert got["idet"][0]["dtype"] == "int8"
    assert got["idet"][0]["quantization"] == [got["iscale"][0],
                                               got["izp"][0]]
    x = np.frombuffer(bytes(range(256)) * 36, dtype=np.int8)
    want = [int(v) for v in ref.run([x])[0].flatten()]
    assert got["out"] == got["tensor"] == want
    assert got["labels"] == ["no person", "person"]
    scores = [(v - got["ozp"][0]) * got["oscale"][0] for v in want]
    best = max(range(2), key=lambda i: scores[i])
    assert got["top"][0][0] == got["labels"][best]
    assert abs(got["top"][0][1] - scores[best]) < 1e-6
    assert "not an input or output" in got["bad"]


def test_reset_keeps_what_is_not_state(tmp_path):
    """reset() zeroes variable (state) tensors only, as TFLM's
    MicroInterpreter::Reset. No operator this runtime supports keeps state
    (the verifier refuses variables: ModelError), so for a loaded model it
    must change nothing: an input set before reset() is still used."""
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = OUTCOMES + """
import json, tflm
it = tflm.Interpreter(%r)
it.set_input([40])
it.invoke()
a = list(it.get_output())
it.set_input([40])
it.reset()
it.invoke()
print(json.dumps([a, list(it.get_output())]))
""" % path
    a, b = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert a == b and a != [0]


def test_view_and_index_checks(tmp_path):
    """Tensor.view() checks indices (uctypes alone reads outside the
    tensor for a negative one) and written values, refuses writes to a
    constant; the TFLite-style methods take int indices only, top(k)
    k >= 1 (found by a fresh-eyes review)."""
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = OUTCOMES + """
import json, tflm
it = tflm.Interpreter(%r)
it.predict([1.0])
v = it.output(0).view()
const = [t for t in it.tensors if t.is_const][0].view()
res = [len(v), list(v), v[-1] == v[0]]
res += outcomes(("v[-2]", "v[1]", "v[-10**9]", "v[0] = 200", "v[0] = -129",
                 "const[0] = 1", "it.get_tensor(0.0)", "it.get_tensor(False)",
                 "it.get_output('0')", "it.set_input([1], 1.5)",
                 "it.top(0)", "it.top(None)", "it.get_output(1)", "v[:1]",
                 "v[0.0]"), globals())
print(json.dumps(res))
""" % path
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert got[0] == 1 and len(got[1]) == 1 and got[2] is True
    assert got[3:] == ["IndexError"] * 3 + ["InvokeError"] * 3 + [
        "TypeError"] * 4 + ["ValueError", "TypeError", "InvokeError"] + [
        "TypeError"] * 2


def test_predict_into_caller_buffers(tmp_path):
    """predict(x, out=...) fills the caller's buffers (issue 17): the same
    values as predict(x), the same objects returned, no block of the
    output's size allocated for raw values, and a wrong out named."""
    path = shared("tiny_kws_ref_int8", "kws_ref_model.tflite")
    code = OUTCOMES + """
import gc, json, tflm
from array import array
it = tflm.Interpreter(%r)
x = bytes(range(256)) * (it.input(0).nbytes // 256) + bytes(
    it.input(0).nbytes %% 256)
n = it.output(0).size
want_f = list(it.predict(x)[0])
want_b = list(it.predict(x, dequantize=False)[0])
of = array('f', bytes(4 * n))
ob = array('b', bytes(n))
ba = bytearray(n)
r = {"f": it.predict(x, out=of)[0] is of and list(of) == want_f,
     "b": it.predict(x, dequantize=False, out=[ob])[0] is ob,
     "bv": list(ob) == want_b,
     "ba": bytes(it.predict(x, dequantize=False, out=ba)[0]) ==
           bytes(ob)}
t = max([u for u in it.tensors if not u.is_const and u.dtype == 'int8'],
        key=lambda u: u.nbytes)  # a large activation
big = array('b', bytes(t.nbytes))
gc.collect()
a0 = gc.mem_alloc()
t.get(big)
r["alloc"] = gc.mem_alloc() - a0
r["size"] = t.nbytes
r["same"] = list(big) == list(t.get())
r["bad"] = outcomes(("it.predict(x, out=array('f', bytes(8)))",
                     "it.predict(x, out=[of, of])",
                     "it.predict(x, out=array('b', bytes(n)))",
                     "it.predict(x, dequantize=False, out=of)",
                     "it.predict(x, dequantize=False, out=bytes(n))",
                     "it.predict(x, out=5)", "it.predict(x, out=[[0.0] * n])",
                     "it.output(0).get(array('b', bytes(n + 1)))",
                     # memoryviews: item type and writability uncheckable
                     "it.output(0).get(memoryview(bytes(n)))",
                     "it.output(0).get(memoryview(array('f', bytes(n))))"),
                    globals())
r["none"] = it.predict(x, dequantize=False, out=[None])[0] == ob
print(json.dumps(r))
""" % path
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert got["f"] and got["b"] and got["bv"] and got["ba"], got
    # a large tensor is not copied to a new block
    assert got["size"] >= 4096 and got["alloc"] < 1024 and got["same"], got
    assert got["bad"] == ["InvokeError"] * 10, got
    assert got["none"], got  # a None entry: a new buffer for that output


def test_labels_argument(tmp_path):
    """Interpreter(labels=...) overrides the sibling .txt: a list, or a
    text file's lines (a UTF-8 byte-order mark dropped); top(k) uses
    them; a bad labels argument is a
    TypeError, an unreadable file an OSError naming it (issue 17)."""
    import shutil
    src = shared("person_detect", "person_detect.tflite")
    path = str(tmp_path / "pd.tflite")
    shutil.copy(src, path)
    (tmp_path / "pd.txt").write_text("sibling 0\nsibling 1\n")
    (tmp_path / "mine.txt").write_text("a\nb\n\n")
    (tmp_path / "bom.txt").write_bytes("\ufeffa\r\nb\r\n".encode())
    (tmp_path / "three.txt").write_text("a\nb\nc\n")
    (tmp_path / "bin.txt").write_bytes(bytes(range(128, 256)))
    missing = str(tmp_path / "missing.txt")
    extra = ("tflm.Interpreter(%r, labels=['a'])" % path,
             "tflm.Interpreter(%r, labels=%r)" % (
                 path, str(tmp_path / "three.txt")),
             "tflm.Interpreter(%r, labels=[1, 2])" % path,
             "tflm.Interpreter(%r, labels=[['a'], 'b'])" % path,
             "tflm.Interpreter(%r, labels=%r)" % (
                 path, str(tmp_path / "bin.txt")))
    code = OUTCOMES + """
import json, tflm
r = {}
it = tflm.Interpreter(%r, labels=('x', 'y'))
it.input(0).data[:] = bytes(range(256)) * 36
it.invoke()
r["list"] = it.labels
r["top"] = it.top(1)[0][0]
it.labels = ['only one']  # set after construction: top() checks it
r["short"] = outcomes(("it.top(1)",), globals())
it.labels = ('x', 'y')
v = it.output(0).view()
r["best"] = sorted(range(2), key=lambda i: (-v[i], i))[0]
r["sibling"] = tflm.Interpreter(%r).labels
r["file"] = tflm.Interpreter(%r, labels=%r).labels
r["bom"] = tflm.Interpreter(%r, labels=%r).labels
r["bad"] = outcomes(("tflm.Interpreter(%r, labels=5)",
                     "tflm.Interpreter(%r, labels=%r)"), globals())
r["counts"] = outcomes(%r, globals())
try:
    tflm.Interpreter(%r, labels=%r)
except OSError as e:
    r["msg"] = str(e)
print(json.dumps(r))
""" % (path, path, path, str(tmp_path / "mine.txt"), path,
       str(tmp_path / "bom.txt"), path, path, missing, extra, path, missing)
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert got["list"] == ["x", "y"]
    assert got["top"] == ["x", "y"][got["best"]]
    assert got["short"] == ["ValueError"], got
    assert got["sibling"] == ["sibling 0", "sibling 1"]
    assert got["file"] == ["a", "b"]
    assert got["bom"] == ["a", "b"], got  # a byte-order mark is no label
    assert got["bad"] == ["TypeError", "OSError"], got
    # as many labels as classes, strings, UTF-8 text
    assert got["counts"] == ["ValueError", "ValueError", "TypeError",
                             "TypeError", "ValueError"], got
    assert "missing.txt" in got["msg"], got


def test_unload_returns_kernel_modules_to_the_heap(tmp_path):
    """tflm.unload() drops the modules interpreters imported: the heap
    they took comes back, a model built again runs the same, a live
    interpreter keeps working, custom op registrations stay."""
    kws = shared("tiny_kws_ref_int8", "kws_ref_model.tflite")
    ad01 = shared("tiny_ad01_int8", "ad01_int8.tflite")
    code = """
import gc, json, micropython, sys, tflm
tflm.register_op('MY_OP', lambda op, ins, outs, o: None, lambda st: None)
gc.collect()
micropython.qstr_info()
base = gc.mem_free()

def go(it):
    t = it.input(0)
    t.data[:] = bytes(range(256)) * (t.nbytes // 256) + bytes(t.nbytes %% 256)
    it.invoke()
    return bytes(it.output(0).data)

def scrub(n):  # overwrite stale words that the deep calls left on the
    a = b = c = d = e = f = 0  # C stack: the GC scans it conservatively
    if n:
        scrub(n - 1)

it = tflm.Interpreter(%r)
o1 = go(it)
it = None
scrub(40)
gc.collect()
r = {"imported": base - gc.mem_free()}
names = tflm.unload()
scrub(40)
gc.collect()
r["after"] = base - gc.mem_free()
micropython.qstr_info()
r["dropped"] = sorted(names)
r["left"] = sorted(k for k in sys.modules if k.startswith('tflm.kernels.'))
r["custom"] = 'tflm.custom' in sys.modules
it = tflm.Interpreter(%r)
r["same"] = go(it) == o1
tflm.unload()
r["live"] = go(it) == o1
it2 = tflm.Interpreter(%r)
go(it2)
r["both"] = go(it) == o1
print(json.dumps(r))
""" % (kws, kws, ad01)
    out = run_mp(code, tmp_path)
    got = json.loads(out.splitlines()[-1])
    assert "tflm.kernels.conv" in got["dropped"], got
    assert "tflm.fixedpoint" in got["dropped"], got
    assert got["left"] == [] and got["custom"], got
    # the kernels' code is a heap of its own (8.5 KB on a 32-bit port)
    assert got["imported"] > 6000, got
    # what stays is the names the modules interned (qstrs, their text
    # too when the package runs from .py sources) and little else
    q = [int(v) for v in re.findall(r"n_total_bytes=(\d+)", out)]
    assert len(q) == 2, out
    assert got["after"] - (q[1] - q[0]) < got["imported"] // 4, (got, q)
    assert got["same"] and got["live"] and got["both"], got


def test_top_without_outputs(tmp_path):
    """top(k) on a model without outputs raises InvokeError, as output(0)
    does (it raised IndexError)."""
    from host_tools import opgen
    T = opgen.Tensor
    m = opgen.Model()
    x = m.add_tensor(T([4], "int8", 0.1, 0))
    y = m.add_tensor(T([4], "int8", 0.1, 0))
    m.add_op("RELU", [x], [y])
    m.inputs, m.outputs = [x], []
    path = tmp_path / "no_out.tflite"
    path.write_bytes(m.build())
    out = run_mp("""
import tflm
it = tflm.Interpreter(%r)
for f in (lambda: it.top(1), lambda: it.output(0)):
    try:
        f()
    except tflm.InvokeError:
        print('InvokeError')
""" % str(path), tmp_path)
    assert out.split() == ["InvokeError", "InvokeError"], out


def test_view_imports_only_view_module(tmp_path):
    """Tensor.view() imports tflm/view.py alone (the allocation-free read
    that a board with little RAM left after a large model can still
    afford); get() then imports tflm.values too, and both read the same
    values as the tensor's raw bytes."""
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    code = """
import json, sys, tflm
it = tflm.Interpreter(%r)
it.input(0).data[0] = 37
it.invoke()
o = it.output(0)
r = {"before": "tflm.view" in sys.modules or "tflm.values" in sys.modules}
v = o.view()
r["view"] = [v[i] for i in range(len(v))]
r["after_view"] = sorted(k for k in sys.modules if k in ("tflm.view",
                                                         "tflm.values"))
r["get"] = list(o.get())
r["after_get"] = sorted(k for k in sys.modules if k in ("tflm.view",
                                                        "tflm.values"))
r["raw"] = list(bytes(o.data))
print(json.dumps(r))
""" % path
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert got["before"] is False, got
    assert got["after_view"] == ["tflm.view"], got
    assert got["after_get"] == ["tflm.values", "tflm.view"], got
    want = [b - 256 if b > 127 else b for b in got["raw"]]
    assert got["view"] == got["get"] == want, got
