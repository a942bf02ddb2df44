# Runs in MicroPython: tests/test_audio.py, which prepends PRE, KWS (model
# paths) and CLIPS.
import gc
import json
import micropython
import tflm
from tflm import audio
pre = tflm.Interpreter(PRE)  # noqa: F821 (prepended)
kws = tflm.Interpreter(KWS)  # noqa: F821 (prepended)
out = {}
for name, path in CLIPS:  # noqa: F821 (prepended)
    pcm = audio.read_wav(path)
    feats = bytearray(49 * 40)
    n = audio.features(pre, pcm, feats)
    x = kws.input(0).data
    x[:] = feats
    kws.invoke()
    out[name] = [n, bytes(feats).hex(), bytes(kws.output(0).data).hex(),
                 audio.wav_rate(path)]
# no allocation per window: the whole loop under heap_lock
pre.reset()
n = ok = 0  # globals made before the heap is locked
gc.collect()
micropython.heap_lock()
try:
    n = audio.features(pre, pcm, feats, reset=False)
    ok = 1
except MemoryError:
    ok = 0
micropython.heap_unlock()
out["locked"] = [n, ok]
print(json.dumps(out))
