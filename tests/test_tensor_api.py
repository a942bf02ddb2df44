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
