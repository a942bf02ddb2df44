"""Audio front-end helpers: .wav samples to a keyword model's features.

TFLM's micro_speech example computes its 49 x 40 int8 spectrogram with a
model, audio_preprocessor_int8.tflite (TFLM's Signal ops: window, FFT,
mel filter bank, noise reduction, PCAN, log), run on 30 ms windows of
16 kHz audio every 20 ms (micro_speech_test.cc GenerateFeatures). This
module does the same around any such preprocessor interpreter; it is
imported only when used (`from tflm import audio`):

    import tflm
    from tflm import audio
    pre = tflm.Interpreter('/rom/audio_preprocessor_int8.tflite')
    kws = tflm.Interpreter('/rom/micro_speech_quantized.tflite')
    pcm = audio.read_wav('yes_1000ms.wav')        # array('h')
    audio.features(pre, pcm, kws.input(0).data)   # 49 frames x 40
    kws.invoke()

features() allocates nothing per frame (a board can call it on a
microphone's buffer in a loop); read_wav() reads the whole file.
"""

from array import array

import micropython
from micropython import const

from .errors import FormatError, InvokeError

_INT16 = const(7)


def read_wav(path):
    """The samples of a 16-bit PCM mono .wav file as array('h').

    Reads the RIFF 'fmt ' and 'data' chunks (other chunks are skipped,
    not read) and the samples straight into the array (no second copy of
    the file in RAM). A data chunk that claims more bytes than the file
    holds (0xFFFFFFFF from a streaming recorder, a cut-off file) is read
    to the end of the file. Raises FormatError naming the file for
    anything else (another encoding, bit depth or channel count, no data
    chunk); OSError if it cannot be opened; ArenaError where the heap
    has no block for the samples (on a board, a file in ROMFS can be
    used in place instead: memoryview(open(path, 'rb'))[44:], docs/
    audio.md). Sample rate: wav_rate()."""
    from .heap import zeros
    with open(path, "rb") as f:
        fmt, n = _chunks(f, path)
        if fmt[0] != 1 or fmt[1] != 1 or fmt[3] != 16:
            raise FormatError("%s: %d-channel %d-bit audio, format %d; "
                              "only 16-bit PCM mono is read"
                              % (path, fmt[1], fmt[3], fmt[0]))
        try:
            out = zeros("h", n // 2)
        except MemoryError:
            from .errors import ArenaError
            raise ArenaError("%s: no free block of %d bytes for its "
                             "samples (in ROMFS: use the file in place, "
                             "memoryview(open(path, 'rb'))[44:])"
                             % (path, 2 * (n // 2)))
        got = f.readinto(out) if n >= 2 else 0
    if got is None or got < 2 * (n // 2):
        raise FormatError("%s: read %s of the data chunk's %d bytes"
                          % (path, got, n))
    return out


def wav_rate(path):
    """The sample rate of a .wav file, in Hz (FormatError as read_wav)."""
    with open(path, "rb") as f:
        return _chunks(f, path)[0][2]


def _le(b):
    v = 0
    for i in range(len(b) - 1, -1, -1):
        v = v << 8 | b[i]
    return v


def _chunks(f, path):
    """((format, channels, rate, bits), data bytes), with file f at the
    start of the data; the data size is cut to what the file holds."""
    end = f.seek(0, 2)
    f.seek(0)
    head = f.read(12)
    if len(head) < 12 or head[0:4] != b"RIFF" or head[8:12] != b"WAVE":
        raise FormatError("%s is not a RIFF WAVE file" % path)
    fmt = None
    while True:
        h = f.read(8)
        if len(h) < 8:
            raise FormatError("%s: no %s chunk" % (
                path, "'fmt '" if fmt is None else "'data'"))
        size = _le(h[4:8])
        here = f.seek(0, 1)
        if h[0:4] == b"data":
            if fmt is None:
                raise FormatError("%s: 'data' before 'fmt '" % path)
            return fmt, min(size, end - here)
        if h[0:4] == b"fmt ":
            if size < 16:
                raise FormatError("%s: a %d-byte 'fmt ' chunk" % (path,
                                                                  size))
            body = f.read(16)
            if len(body) < 16:
                raise FormatError("%s: the 'fmt ' chunk is cut off" % path)
            fmt = (_le(body[0:2]), _le(body[2:4]), _le(body[4:8]),
                   _le(body[14:16]))
        f.seek(here + size + (size & 1))  # skip (the rest of) the chunk


def features(pre, samples, out, frame=480, stride=320, reset=True):
    """Run preprocessor interpreter `pre` over int16 `samples` (array('h'),
    or bytes / bytearray / memoryview of raw little-endian int16, e.g.
    memoryview(open('/rom/x.wav', 'rb'))[44:] from ROMFS: no copy)
    in windows of `frame` samples every `stride` samples, writing each
    window's output bytes (e.g. 40 int8 features) one after the other
    into `out` (a writable bytes-like,
    e.g. a keyword model's input tensor .data) until out is full or the
    samples run out. With reset (default) the preprocessor's state (its
    noise estimate) is zeroed first, as for a new interpreter per clip in
    TFLM's micro_speech example. Returns the number of windows run.

    pre's input 0 must hold `frame` int16 samples. Raises InvokeError for
    other shapes or types, or argument types other than those above
    (nothing run), or what pre.invoke() raises. An array is taken as
    array('h') (a board cannot tell its typecode): pass int16 only.
    Allocates nothing with reset=False (reset() does, a little)."""
    if not (isinstance(samples, array) or isinstance(samples, bytes) or
            isinstance(samples, bytearray) or
            isinstance(samples, memoryview)):
        raise InvokeError("samples must be array('h') or raw int16 bytes, "
                          "not %s" % type(samples).__name__)
    if isinstance(out, bytes) or not (isinstance(out, bytearray) or
                                      isinstance(out, memoryview)):
        raise InvokeError("out must be a writable bytearray or memoryview "
                          "(e.g. a tensor's .data), not %s"
                          % type(out).__name__)
    if not isinstance(frame, int) or not isinstance(stride, int):
        raise InvokeError("frame and stride are sample counts (int)")
    x = pre.input(0)
    y = pre.output(0)
    if x.nbytes != 2 * frame or x.type != _INT16:
        raise InvokeError("preprocessor input %s takes %d bytes, not %d "
                          "int16 samples" % (x.label(), x.nbytes, frame))
    if stride < 1:
        raise InvokeError("stride %d must be at least 1" % stride)
    step = y.nbytes
    total = _nbytes(samples)
    if reset:
        pre.reset()
    k = 0
    pos = 0
    n_out = len(out)
    while 2 * (pos + frame) <= total and (k + 1) * step <= n_out:
        _copy(x.data, samples, 2 * pos, 2 * frame)
        pre.invoke()
        _copy_to(out, k * step, y.data, step)
        k += 1
        pos += stride
    return k


def _nbytes(samples):
    """Bytes of int16 samples: an array (array('h')) holds elements;
    bytes, bytearray and memoryviews hold raw little-endian bytes (a
    board's memoryview has no itemsize to tell an int16 one apart: give
    the array itself)."""
    if isinstance(samples, array):
        return 2 * len(samples)
    return len(samples)


@micropython.viper
def _copy(dst, src, off: int, n: int):
    """dst[0:n] = src's bytes [off, off + n)."""
    d = ptr8(dst)
    s = ptr8(src)
    i: int = 0
    while i < n:
        d[i] = s[off + i]
        i += 1


@micropython.viper
def _copy_to(dst, off: int, src, n: int):
    """dst's bytes [off, off + n) = src[0:n]."""
    d = ptr8(dst)
    s = ptr8(src)
    i: int = 0
    while i < n:
        d[off + i] = s[i]
        i += 1
