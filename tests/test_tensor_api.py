"""Bad values given to the tensor helpers raise InvokeError, and leave the
interpreter usable; inf saturates, as quantization clamps."""

import json

from conftest import run_mp, shared

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
    code = """
import json, tflm
it = tflm.Interpreter(%r)
inp = it.input(0)
res = []
for call in %r:
    try:
        exec(call)
        res.append('no error')
    except tflm.InvokeError:
        res.append('InvokeError')
    except Exception as e:
        res.append(type(e).__name__)
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
    code = """
import json, tflm
it = tflm.Interpreter(%r)
inp = it.input(0)
res = []
for call in %r:
    try:
        exec(call)
        res.append('no error')
    except tflm.InvokeError:
        res.append('InvokeError')
    except Exception as e:
        res.append(type(e).__name__)
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
    code = """
import json, tflm
MODEL = %r
README = %r
res = []
for call, _, _ in %r:
    try:
        eval(call)
        res.append(['no error', ''])
    except Exception as e:
        res.append([type(e).__name__, str(e)])
print(json.dumps(res))
""" % (path, os.path.join(ROOT, "README.md"), CONSTRUCT)
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
