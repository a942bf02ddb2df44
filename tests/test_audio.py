"""micro_speech from raw audio, as TFLM's micro_speech example runs it:
a 1-second 16 kHz .wav -> 49 windows of 30 ms every 20 ms ->
audio_preprocessor_int8.tflite (TFLM's Signal ops, one interpreter per
clip, its noise estimate carried from window to window) -> 49 x 40 int8
features -> micro_speech_quantized.tflite -> 4 scores (silence, unknown,
yes, no).

On the unix port with tflm.audio (read_wav, features), compared with the
same pipeline in TFLM (PyPI tflite-micro) byte for byte: the features of
every window and the scores; and the label each clip is named after wins
(micro_speech_test.cc expects yes, no, and silence for both the
silence and the noise clip). Plus:
features() allocates nothing per window, and read_wav's errors.
"""

import json
import wave

import numpy as np
import pytest

from conftest import device_script, run_mp, shared
from host_tools.oracle import Reference

PRE = ("audio_preprocessor_int8", "audio_preprocessor_int8.tflite")
KWS = ("micro_speech_quantized", "micro_speech_quantized.tflite")
CLIPS = ("yes", "no", "silence", "noise")
LABELS = ("silence", "unknown", "yes", "no")


def _pcm(path):
    with wave.open(path) as w:
        assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
        return np.frombuffer(w.readframes(w.getnframes()), "<i2")


def _tflm(pre, kws, pcm):
    """TFLM's pipeline: (features [49, 40] int8, scores [4] int8)."""
    p = Reference(open(pre, "rb").read())
    feats = np.zeros((49, 40), np.int8)
    k = 0
    while k < 49 and 320 * k + 480 <= len(pcm):
        feats[k] = p.run([pcm[320 * k:320 * k + 480].reshape(1, 480)])[0]
        k += 1
    m = Reference(open(kws, "rb").read())
    return feats, m.run([feats.reshape(1, 49 * 40)])[0].reshape(-1)


SCRIPT = device_script("audio_chain.py")


def test_micro_speech_from_wav_matches_tflm(tmp_path):
    pre, kws = shared(*PRE), shared(*KWS)
    clips = [(c, shared("micro_speech_quantized", "%s_1000ms.wav" % c))
             for c in CLIPS]
    got = json.loads(run_mp("PRE = %r\nKWS = %r\nCLIPS = %r\n" % (
        pre, kws, clips) + SCRIPT, tmp_path,
                            heap="4M").splitlines()[-1])
    assert got["locked"] == [49, 1], got["locked"]
    for name, path in clips:
        pcm = _pcm(path)
        feats, scores = _tflm(pre, kws, pcm)
        n, f_hex, s_hex, rate = got[name]
        assert (n, rate) == (49, 16000)
        ours = np.frombuffer(bytes.fromhex(f_hex), np.int8).reshape(49, 40)
        bad = np.nonzero((ours != feats).any(axis=1))[0]
        assert not len(bad), (name, "windows differ", bad[:10])
        ours_s = np.frombuffer(bytes.fromhex(s_hex), np.int8)
        assert list(ours_s) == list(scores), (name, ours_s, scores)
        want = {"noise": "silence"}.get(name, name)  # as the example's test
        assert LABELS[int(np.argmax(ours_s))] == want, (name, ours_s)


READ = device_script("audio_read.py")


def _wav(path, channels=1, width=2, frames=b"\x01\x00\xff\xff"):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(8000)
        w.writeframes(frames)
    return str(path)


def test_read_wav(tmp_path):
    """16-bit mono PCM is read as int16 (first and last sample checked),
    also when the data chunk claims 0xFFFFFFFF bytes (read to the end) or
    follows an odd-sized LIST chunk (skipped); stereo, 8-bit, not-RIFF
    and a missing data chunk are FormatErrors naming the file."""
    good = _wav(tmp_path / "g.wav", frames=b"\x01\x00\x02\x00\xff\xff")
    stereo = _wav(tmp_path / "s.wav", channels=2)
    bits8 = _wav(tmp_path / "b.wav", width=1)
    text = tmp_path / "t.wav"
    text.write_bytes(b"hello, not a wave file")
    head = tmp_path / "h.wav"
    head.write_bytes(open(good, "rb").read()[:36])  # fmt, no data chunk
    raw = open(good, "rb").read()  # RIFF, fmt (24 bytes), data
    streamed = tmp_path / "st.wav"  # data size 0xFFFFFFFF: to the end
    streamed.write_bytes(raw[:40] + b"\xff\xff\xff\xff" + raw[44:])
    listed = tmp_path / "l.wav"  # a LIST chunk before the data: skipped
    listed.write_bytes(raw[:36] + b"LIST\x05\x00\x00\x00abcde\x00"
                       + raw[36:])
    got = json.loads(run_mp("PATHS = %r\n" % ([good, stereo, bits8, str(text),
                                      str(head), str(streamed),
                                      str(listed)],) + READ,
                            tmp_path).splitlines()[-1])
    assert got[0] == ["ok", 3, 1, -1], got
    assert got[5] == got[6] == got[0], got
    got = got[:5]
    for r, why in zip(got[1:], ("2-channel", "8-bit", "not a RIFF",
                                "no 'data' chunk")):
        assert r[0] == "FormatError" and why in r[1], (r, why)
    assert "s.wav" in got[1][1] and "h.wav" in got[4][1], got


def test_read_wav_without_a_block_for_its_samples(tmp_path):
    """read_wav where the heap has no block for the samples (200,000
    bytes on a 160 KB heap) is an ArenaError naming the file, the bytes
    and the in-place form, not a bare MemoryError."""
    good = _wav(tmp_path / "g.wav", frames=b"\x01\x00" * 100000)
    out = run_mp("""
from tflm import audio
from tflm.errors import ArenaError
try:
    audio.read_wav(P)
    print("read")
except ArenaError as e:
    print(e)
""".replace("P", repr(good)), tmp_path, heap="160k")
    line = out.strip().splitlines()[-1]
    assert line.startswith(good + ": no free block of 200000 bytes") and \
        "memoryview(open(path, 'rb'))[44:]" in line, out


def test_features_refuses_bad_arguments(tmp_path):
    """A window length that is not the preprocessor's input, samples or
    an output of another kind (None, a list, an immutable bytes output),
    a float stride: InvokeError naming the argument, nothing run."""
    code = """
import json, tflm
from tflm import audio
from array import array
pre = tflm.Interpreter(%r)
pcm = array('h', bytes(2000))
out = []
for args, kw in (((pcm, bytearray(40)), {'frame': 100}),
                 ((None, bytearray(40)), {}), (([0] * 960, bytearray(40)), {}),
                 ((pcm, bytes(40)), {}), ((pcm, bytearray(40)),
                                          {'stride': 1.5})):
    try:
        audio.features(pre, *args, **kw)
        out.append("ran")
    except tflm.InvokeError as e:
        out.append(str(e))
print(json.dumps(out))
""" % shared(*PRE)
    got = json.loads(run_mp(code, tmp_path).splitlines()[-1])
    assert "960 bytes" in got[0] and "100 int16" in got[0], got
    assert "samples" in got[1] and "samples" in got[2], got
    assert "out must be" in got[3] and "stride" in got[4], got


def test_host_tools_take_wav_and_know_the_signal_ops(tmp_path):
    """`run --input x.wav` feeds an int16 input the clip's samples (window
    `frame`), and `inspect` counts the built-in Signal ops as kernels."""
    from host_tools import inputs, inspect_tool
    wav = shared("audio_preprocessor_int8", "yes_30ms.wav")
    t = {"dtype": "int16", "shape": [1, 480], "scale": 0.0,
         "zero_point": 0, "nbytes": 960}
    assert inputs.from_file(wav, t) == _pcm(wav)[:480].tobytes()
    with pytest.raises(ValueError, match="int16"):
        inputs.from_file(wav, dict(t, dtype="int8", nbytes=480))
    with open(shared(*PRE), "rb") as f:
        text = "\n".join(inspect_tool.summary(f.read()))
    assert "SignalRfft " in text and "no kernel" not in text, text
