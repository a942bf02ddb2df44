# Runs in MicroPython: tests/test_construction_writes.py. argv: package
# dir, then model files. Each model is read into a bytearray, padded with
# PAD bytes of 0xA5 (the padding makes it at least as large as its largest
# activation: the sizing pass then binds activations and scratch buffers
# to the model's own bytes), and an Interpreter built on it; prints one
# line per model: name, then "ok" and whether the bytes changed
# ("same" / "changed"), or "err" and the error's type.
import sys
sys.path.insert(0, sys.argv[1])
import tflm  # noqa: E402
from tflm import allocator, graphs  # noqa: E402

PAD = 1 << 16
seen = []
real, real_g = allocator._size, graphs._size


def spy(it, mods, dummy, late=None):
    seen.append(dummy)
    return real(it, mods, dummy, late)


def spy_g(g, it, mods, dummy, late=None):  # models with subgraphs
    seen.append(dummy)
    return real_g(g, it, mods, dummy, late)


# (imported before: construction keeps them)
allocator._size, graphs._size = spy, spy_g
for path in sys.argv[2:]:
    with open(path, 'rb') as f:
        buf = bytearray(f.read())
    buf.extend(b'\xa5' * PAD)
    before = bytes(buf)
    del seen[:]
    try:
        it = tflm.Interpreter(buf)
    except Exception as e:
        print(path, 'err', type(e).__name__)
        continue
    it = None
    on_model = bool(seen) and len(seen[0]) == len(buf)
    print(path, 'ok', 'same' if bytes(buf) == before else 'changed',
          'model' if on_model else 'other')
