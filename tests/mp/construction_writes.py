# Runs in MicroPython: tests/test_construction_writes.py. argv: package
# dir, then model files. Each model is read into a bytearray, padded with
# PAD bytes of 0xA5 (the padding makes it at least as large as its largest
# activation: the sizing pass then binds activations and scratch buffers
# to the model's own bytes) from the buffer's second byte (a model at an
# odd address), and an Interpreter built on it, then once more with a
# throw-away buffer for the sizing pass (allocator._custom made True);
# prints one line per model: name, then "ok", whether the bytes changed
# ("same" / "changed"), whether the sizing pass used them ("model" /
# "other"), whether both builds planned the same head and persistent
# bytes ("equal" / "differ"); or "err" and the error's type. Registers the
# Python custom op Fill7, whose prepare writes its output (its models must
# get a buffer of their own).
import sys
sys.path.insert(0, sys.argv[1])
import tflm  # noqa: E402
from tflm import allocator, graphs  # noqa: E402

PAD = 1 << 16
seen = []
real, real_g = allocator._size, graphs._size


def spy(it, mods, dummy, late=None):
    seen.append(len(dummy))
    return real(it, mods, dummy, late)


def spy_g(g, it, mods, dummy, late=None):  # models with subgraphs
    seen.append(len(dummy))
    return real_g(g, it, mods, dummy, late)


def fill7(op, ins, outs, options):
    d = outs[0].data
    for i in range(len(d)):
        d[i] = 7
    return ins[0].data, d


def copy(st):
    st[1][:] = st[0]


tflm.register_op('Fill7', fill7, copy)
# (imported before: construction keeps them)
allocator._size, graphs._size = spy, spy_g
custom = allocator._custom
for path in sys.argv[2:]:
    with open(path, 'rb') as f:
        raw = f.read()
    res = []
    for off, own in ((1, False), (1, True)):
        allocator._custom = (lambda mods: True) if own else custom
        buf = bytearray(off)
        buf.extend(raw)
        buf.extend(b'\xa5' * PAD)
        before = bytes(buf)
        del seen[:]
        try:
            it = tflm.Interpreter(memoryview(buf)[off:] if off else buf)
        except Exception as e:
            res = type(e).__name__
            break
        res.append((bytes(buf) == before,
                    bool(seen) and seen[0] >= len(buf) - off - 15,
                    (it.arena_size, it.persistent_size)))
        it = None
    if isinstance(res, str):
        print(path, 'err', res)
        continue
    print(path, 'ok', 'same' if res[0][0] else 'changed',
          'model' if res[0][1] else 'other',
          'equal' if res[0][2] == res[1][2] else 'differ')
