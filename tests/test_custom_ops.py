"""Custom operators in Python (tflm.register_op) and the FlexBuffers reader.

- tflm.flexbuffers.loads decodes what the flatbuffers package's FlexBuffers
  builder writes (maps, vectors, typed and fixed vectors, ints of every
  width, floats, strings, bools, blobs, null) exactly as its own reader
  (flexbuffers.Loads) does, at any byte address; corrupted buffers raise
  only FormatError (CPython and the unix port).
- Models with CUSTOM operators whose options are FlexBuffers maps run with
  Python kernels registered with tflm.register_op; outputs equal a NumPy
  reference of the same function (after a builtin ADD, TFLM's own output
  of the ADD feeds the reference). A viper kernel runs under heap_lock.
- An unregistered custom operator is named in the UnsupportedOpError; a
  prepare that raises becomes a PrepareError naming the operator.
"""

import json
import random

import numpy as np
import pytest
from flatbuffers import flexbuffers as fx

from conftest import device_script, run_mp
from host_tools import opgen
from host_tools.oracle import Reference
from tflm import flexbuffers
from tflm.errors import FormatError

T = opgen.Tensor


def canon(v):
    """JSON-able canonical form (dict -> sorted [k, v] pairs, bytes ->
    hex) so that CPython and MicroPython results compare as text."""
    if isinstance(v, dict):
        return {"map": [[k, canon(v[k])] for k in sorted(v)]}
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return {"blob": bytes(v).hex()}
    if isinstance(v, float):
        return {"f": repr(float(v))}
    return v


def _rand_value(rng, depth):
    k = rng.randrange(9 if depth < 3 else 6)
    if k == 0:
        return rng.choice([0, 1, -1, 127, -128, 300, -40000, 1 << 31,
                           -(1 << 40), (1 << 62) + 5])
    if k == 1:
        return rng.choice([0.5, -2.25, 1e10, 3.0, -0.0])
    if k == 2:
        return "".join(rng.choice("abcxyz_é") for _ in range(rng.randrange(6)))
    if k == 3:
        return rng.choice([True, False])
    if k == 4:
        return None
    if k == 5:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(5)))
    if k == 6:
        return [_rand_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    if k == 7:
        return [rng.randrange(-300, 300) for _ in range(rng.randrange(1, 6))]
    return {"k%d" % i: _rand_value(rng, depth + 1)
            for i in range(rng.randrange(5))}


def _build(b, v):
    """Write v with the builder, using typed vectors for int lists."""
    if isinstance(v, dict):
        with b.Map():
            for k in v:
                b.Key(k)
                _build(b, v[k])
    elif isinstance(v, list):
        if v and all(type(x) is int for x in v) and len(v) in (2, 3, 4):
            b.FixedTypedVectorFromElements(v, fx.Type.INT)
        elif v and all(type(x) is int for x in v):
            b.TypedVectorFromElements(v)
        else:
            with b.Vector():
                for x in v:
                    _build(b, x)
    elif isinstance(v, bool):
        b.Bool(v)
    elif isinstance(v, int):
        b.Int(v)
    elif isinstance(v, float):
        b.Float(v)
    elif isinstance(v, str):
        b.String(v)
    elif isinstance(v, bytes):
        b.Blob(v)
    else:
        b.Null()


def flex(v):
    b = fx.Builder()
    _build(b, v)
    return bytes(b.Finish())


def samples(n=60, seed=1):
    rng = random.Random(seed)
    out = [flex({"a": 1}), flex([1, 2, 3]), flex(7), flex("s"),
           flex({"x": [1.5, "y", None, True, b"\x00\xff"]}),
           flex([[1, 2], [3, 4, 5], [6, 7, 8, 9]]),
           fx.Dumps({"v": [1.0, 2.0], "ks": ["a", "b"]})]
    b = fx.Builder()
    b.FixedTypedVectorFromElements([1.5, 2.5, 3.5], fx.Type.FLOAT)
    out.append(bytes(b.Finish()))
    b = fx.Builder()
    b.TypedVectorFromElements([True, False, True], fx.Type.BOOL)
    out.append(bytes(b.Finish()))
    b = fx.Builder()
    b.TypedVectorFromElements(["key", "k2"], fx.Type.KEY)
    out.append(bytes(b.Finish()))
    b = fx.Builder()
    b.IndirectInt(-5)
    out.append(bytes(b.Finish()))
    b = fx.Builder()
    b.IndirectFloat(0.75)
    out.append(bytes(b.Finish()))
    b = fx.Builder()
    with b.Map():
        b.Key("u")
        b.UInt(1 << 63)
    out.append(bytes(b.Finish()))
    for _ in range(n):
        out.append(flex({"root": _rand_value(rng, 0)}))
    return out


def test_loads_matches_reference_reader():
    for raw in samples():
        want = canon(fx.Loads(raw))
        assert canon(flexbuffers.loads(raw)) == want
        for shift in (1, 3):  # any address: a view at an odd offset
            buf = memoryview(bytearray(b"\xee" * shift + raw))[shift:]
            assert canon(flexbuffers.loads(buf)) == want


def mutants(seed=2, per=12):
    rng = random.Random(seed)
    out = []
    for raw in samples(20, seed):
        for _ in range(per):
            b = bytearray(raw)
            if rng.random() < 0.3:
                b = b[rng.randrange(len(b)):]
            for _ in range(rng.randrange(1, 4)):
                if b:
                    b[rng.randrange(len(b))] = rng.randrange(256)
            out.append(bytes(b))
    return out


def test_loads_rejects_corruption_cleanly():
    n_err = 0
    for raw in mutants():
        try:
            flexbuffers.loads(raw)
        except FormatError:
            n_err += 1
    assert n_err > 20  # the corruption is detected often enough to matter
    # Offsets that point at themselves / nest deeply stop at MAX_DEPTH
    # or the value budget instead of recursing without end.
    loop = bytes([0, 0x28, 1])  # vector (width 1) whose offset is 0
    with pytest.raises(FormatError):
        flexbuffers.loads(loop)
    with pytest.raises(FormatError):
        flexbuffers.loads(b"\x01\x02")


def _affine_clip(a, o):
    """NumPy reference of the AffineClip kernel below."""
    lo, hi = o["range"]
    r = (a.astype(np.int64) * o["mul"] + o["add"]) >> o["shift"]
    return np.clip(r, lo, hi).astype(np.int8)


KERNELS = device_script("custom_kernels.py")


def _options():
    return {"mul": 3, "add": -5, "shift": 1, "range": [-100, 90],
            "gain": 0.25, "mode": "clip", "enabled": True,
            "nested": {"k": [1, "a", 2.5]}}


def _models():
    """[(name, raw, inputs, reference outputs, heap_lock)]"""
    rng = np.random.default_rng(5)
    o = _options()
    opts = flex(o)
    cases = []
    # 1. two custom ops in a row: Python AffineClip, viper Negate
    m = opgen.Model()
    x, t, y = T([1, 4, 8], scale=0.1), T([1, 4, 8], scale=0.1), \
        T([1, 4, 8], scale=0.1)
    m.add_op("CUSTOM:AffineClip", [x], [t], custom_options=opts)
    m.add_op("CUSTOM:Negate", [t], [y])
    xin = rng.integers(-128, 128, (1, 4, 8), dtype=np.int8)
    ref = np.clip(-_affine_clip(xin, o).astype(np.int32), -128, 127)
    cases.append(("chain", m.build(), [xin], [ref.astype(np.int8)], False))
    # 2. viper kernel alone allocates nothing: under heap_lock
    m = opgen.Model()
    m.add_op("CUSTOM:Negate", [T([2, 50])], [T([2, 50])])
    xin = rng.integers(-128, 128, (2, 50), dtype=np.int8)
    ref = np.clip(-xin.astype(np.int32), -128, 127).astype(np.int8)
    cases.append(("viper", m.build(), [xin], [ref], True))
    # 3. builtin ADD (TFLM gives the reference) then the Python kernel
    a_t = [T([1, 24], scale=0.05, zero_point=3),
           T([1, 24], scale=0.07, zero_point=-2)]
    s_t = T([1, 24], scale=0.1, zero_point=1)
    add_only = opgen.single_op("ADD", a_t, [s_t])
    m = opgen.Model()
    m.add_op("ADD", a_t, [s_t])
    m.add_op("CUSTOM:AffineClip", [s_t], [T([1, 24], scale=0.1)],
             custom_options=opts)
    x1 = rng.integers(-128, 128, (1, 24), dtype=np.int8)
    x2 = rng.integers(-128, 128, (1, 24), dtype=np.int8)
    s = Reference(add_only).run([x1, x2])[0]
    cases.append(("add_then_custom", m.build(), [x1, x2],
                  [_affine_clip(s, o)], False))
    return cases


def test_custom_ops_on_device(tmp_path):
    cases = _models()
    # rejected models: unregistered op (named), prepare raising
    m = opgen.Model()
    m.add_op("CUSTOM:NotThere", [T([4])], [T([4])])
    m.add_op("CUSTOM:Negate", [1], [T([4])])
    m.add_op("CUSTOM:AlsoMissing", [2], [T([4])])
    unreg = m.build()
    bad = opgen.single_op("CUSTOM:Bad", [T([4])], [T([4])])
    flex_cases = samples(30, 7)
    code = KERNELS + "import json\n"
    code += "CASES = %r\n" % [(c[0], c[1].hex(), [x.tobytes().hex()
                                                   for x in c[2]], c[4])
                              for c in cases]
    code += "OTHER = %r\n" % [unreg.hex(), bad.hex()]
    code += "FLEX = %r\nMUT = %r\n" % ([f.hex() for f in flex_cases],
                                       [f.hex() for f in mutants(3, 4)])
    code += r"""
def canon(v):
    if isinstance(v, dict):
        return {'map': [[k, canon(v[k])] for k in sorted(v)]}
    if isinstance(v, (list, tuple)):
        return [canon(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return {'blob': bytes(v).hex()}
    if isinstance(v, float):
        return {'f': repr(v)}
    return v

for name, raw, ins, lock in CASES:
    r = run(bytes.fromhex(raw), [bytes.fromhex(x) for x in ins], lock)
    r['name'] = name
    print(json.dumps(r))
for raw in OTHER:
    print(json.dumps(run(bytes.fromhex(raw), [], False)))
res = []
for h in FLEX:
    raw = bytes.fromhex(h)
    buf = bytearray(b'\xee' + raw)
    res.append(canon(flexbuffers.loads(memoryview(buf)[1:])))
print(json.dumps(res))
n = 0
for h in MUT:
    try:
        flexbuffers.loads(bytes.fromhex(h))
    except tflm.FormatError:
        n += 1
print(json.dumps(n))
"""
    lines = run_mp(code, tmp_path).strip().splitlines()
    for (name, _, _, want, _), line in zip(cases, lines):
        r = json.loads(line)
        assert "out" in r, (name, r)
        got = [np.frombuffer(bytes.fromhex(h), np.int8) for h in r["out"]]
        for g, w in zip(got, want):
            assert np.array_equal(g, w.reshape(-1)), name
    k = len(cases)
    r = json.loads(lines[k])
    assert r["error"] == "UnsupportedOpError"
    assert "op 0 (NotThere)" in r["message"]
    assert "op 2 (AlsoMissing)" in r["message"]
    assert "Negate" not in r["message"]
    assert "register_op" in r["message"]
    r = json.loads(lines[k + 1])
    assert r["error"] == "PrepareError", r
    assert "op 0 (Bad)" in r["message"] and "no thanks" in r["message"]
    want = [canon(fx.Loads(f)) for f in flex_cases]
    got = json.loads(lines[k + 2])
    # float repr differs between ports (digits): compare as floats
    assert _floats(got) == _floats(json.loads(json.dumps(want)))
    assert json.loads(lines[k + 3]) >= 1  # corruption -> FormatError only


def _floats(v):
    if isinstance(v, dict):
        if set(v) == {"f"}:
            return float(v["f"])
        return {k: _floats(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_floats(x) for x in v]
    return v


def test_custom_options_api_on_host():
    """custom.custom_options / find / registry under CPython."""
    from tflm import custom
    from tflm.model import Model
    raw = opgen.single_op("CUSTOM:Foo", [T([4])], [T([4])],
                          custom_options=flex({"a": 5}))
    m = Model(raw)
    op = m.operators[0]
    assert op.name == "Foo" and op.custom_code == "Foo"
    assert flexbuffers.loads(custom.custom_options(op)) == {"a": 5}
    assert custom.options_format(op) == 0
    custom.register_op("Foo", lambda *a: None, lambda s: None)
    assert "Foo" in custom.registered() and custom.find("Foo") is not None
    custom.unregister_op("Foo")
    assert custom.find("Foo") is None
    with pytest.raises(TypeError):
        custom.register_op("Foo", None, None)


def _shared_refs(length, n, kind):
    """A FlexBuffer (byte width 4): a vector of n values of type kind
    (5 string, 4 key, 25 blob) whose offsets all point at one string of
    `length` bytes (keys: n keys starting at successive bytes of it)."""
    import struct
    b = bytearray(struct.pack("<I", length))
    sp = len(b)
    b += b"k" * length + b"\0"
    while len(b) % 4:
        b += b"\0"
    b += struct.pack("<I", n)
    p = len(b)
    for k in range(n):
        b += struct.pack("<I", p + 4 * k - sp - (k if kind == 4 else 0))
    b += bytes([(kind << 2) | 2]) * n
    r = len(b)
    b += struct.pack("<I", r - p) + bytes([(10 << 2) | 2, 4])
    return bytes(b)


def test_loads_shared_strings_stay_small(tmp_path):
    """Offsets may point many values at one long string: it is decoded
    once (a 14 KB buffer used to expand into 8 MB of strings, a
    MemoryError on a board); overlapping keys (n keys at successive bytes
    of one run, n**2 / 2 bytes) stop at the string-data budget with
    FormatError instead of a long scan."""
    for kind in (5, 25, 4):
        raw = _shared_refs(4000, 2000, 4 if kind == 4 else kind)
        if kind == 4:  # keys at successive bytes: over the budget
            with pytest.raises(FormatError):
                flexbuffers.loads(_shared_refs(3000, 3000, 4))
            continue
        v = flexbuffers.loads(raw)
        assert len(v) == 2000 and len(v[1999]) == 4000
    (tmp_path / "s.fb").write_bytes(_shared_refs(4000, 2000, 5))
    (tmp_path / "k.fb").write_bytes(_shared_refs(3000, 3000, 4))
    out = run_mp("""
from tflm import flexbuffers
buf = bytearray(1) + open('%s/s.fb', 'rb').read()  # odd address
v = flexbuffers.loads(memoryview(buf)[1:])
print(len(v), len(v[-1]))
try:
    flexbuffers.loads(open('%s/k.fb', 'rb').read())
except flexbuffers.FormatError as e:
    print('FormatError')
""" % (tmp_path, tmp_path), tmp_path, heap="2M")
    assert out.split() == ["2000", "4000", "FormatError"], out


def test_loads_short_stack_gives_format_error(tmp_path):
    """A board's C stack (a few KB) ends before MAX_DEPTH levels of
    nesting: MicroPython's stack check then raises RuntimeError inside
    loads(), which must come out as FormatError. Simulated by calling
    loads() with less and less stack left."""
    v = 1
    for _ in range(31):
        v = [v]
    (tmp_path / "d.fb").write_bytes(bytes(fx.Dumps(v)))
    out = run_mp("""
from tflm import flexbuffers
raw = open('%s/d.fb', 'rb').read()

def eat(n):
    if n:
        return eat(n - 1)
    try:
        flexbuffers.loads(b'\x01\x04\x01')  # a shallow one fits
    except RuntimeError:
        return 'full'
    try:
        flexbuffers.loads(raw)
        return 'ok'
    except flexbuffers.FormatError:
        return 'FormatError'
    except RuntimeError:
        return 'leak'

seen = []
for n in range(0, 400, 5):
    try:
        seen.append(eat(n))
    except RuntimeError:  # eat() itself ran out of stack
        break
print(' '.join(seen))
""" % tmp_path, tmp_path)
    seen = out.split()
    assert "leak" not in seen and "FormatError" in seen and "ok" in seen, seen
    assert flexbuffers.loads(b"\x01\x04\x01") == 1
