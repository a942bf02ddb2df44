"""Model inputs from files (.npy, .bin, .bmp) or random, as raw bytes."""

import numpy as np

NP_DTYPES = {"int8": np.int8, "uint8": np.uint8, "int16": np.int16,
             "int32": np.int32, "float32": np.float32}


def quantize(x, scale, zero_point, dtype=np.int8):
    """TFLM AffineQuantize: round(x / scale) + zp, float32 division,
    ties away from zero, clamped to the dtype's range."""
    q = np.float32(x) / np.float32(scale)
    q = np.sign(q) * np.floor(np.abs(q) + np.float32(0.5))
    info = np.iinfo(dtype)
    return np.clip(q + zero_point, info.min, info.max).astype(dtype)


def read_bmp(path):
    """Pixels of an 8-bit palette BMP as uint8 gray values [h, w]."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] != b"BM":
        raise ValueError("%s is not a BMP file" % path)
    off = int.from_bytes(raw[10:14], "little")
    w = int.from_bytes(raw[18:22], "little", signed=True)
    h = int.from_bytes(raw[22:26], "little", signed=True)
    bpp = int.from_bytes(raw[28:30], "little")
    if bpp != 8:
        raise ValueError("%s: only 8-bit BMPs are supported" % path)
    hdr = int.from_bytes(raw[14:18], "little")
    palette = np.frombuffer(raw, np.uint8, 256 * 4, 14 + hdr).reshape(256, 4)
    stride = (w + 3) & ~3
    rows = np.frombuffer(raw, np.uint8, stride * abs(h), off)
    img = rows.reshape(abs(h), stride)[:, :w]
    if h > 0:  # bottom-up rows
        img = img[::-1]
    return palette[img, 0]


def from_file(path, tensor, raw=False, frame=0):
    """Raw bytes for one input tensor from a file.

    tensor: dict with dtype (str), shape, scale, zero_point, nbytes.
    Float data (.npy float, or a .bin of float32 frames) is quantized with
    the tensor's scale and zero point; uint8 data for an int8 tensor is
    shifted by -128 unless raw=True (then reinterpreted as int8). BMP
    pixels are always taken raw, top row first, as TFLM's person_detection
    example does (generate_cc_arrays.py copies PIL's bytes unchanged).
    A 16-bit mono .wav feeds an int16 input its samples (window `frame`
    of as many samples as the input holds).
    """
    dt = NP_DTYPES[tensor["dtype"]]
    n = int(np.prod(tensor["shape"]))
    if path.endswith(".bmp"):
        data = read_bmp(path).ravel()
        raw = True
    elif path.endswith(".wav"):
        import wave
        with wave.open(path) as w:
            if w.getsampwidth() != 2 or w.getnchannels() != 1:
                raise ValueError("%s: only 16-bit mono .wav is read" % path)
            data = np.frombuffer(w.readframes(w.getnframes()), "<i2")
        if dt != np.int16:
            raise ValueError("%s: .wav samples are int16, the input is %s"
                             % (path, tensor["dtype"]))
        data = data[frame * n:(frame + 1) * n]  # window `frame` of n samples
    elif path.endswith(".npy"):
        data = np.load(path).ravel()
    elif path.endswith(".bin"):
        with open(path, "rb") as f:
            blob = f.read()
        if len(blob) == tensor["nbytes"]:
            return blob
        data = np.frombuffer(blob[:len(blob) // 4 * 4], np.float32)
        data = data[frame * n:(frame + 1) * n]
    else:
        raise ValueError("%s: inputs are .npy, .bin (raw tensor bytes or "
                         "float32 frames), .bmp or .wav (int16) files"
                         % path)
    if data.size != n:
        raise ValueError("%s holds %d values, the input needs %d"
                         % (path, data.size, n))
    if data.dtype.kind == "f" and dt != np.float32:
        data = quantize(data, tensor["scale"], tensor["zero_point"], dt)
    elif data.dtype == np.uint8 and dt == np.int8:
        data = data.view(np.int8) if raw else (data.astype(np.int16) - 128)
    return np.asarray(data, dt).tobytes()


def random_input(tensor, rng):
    """Seeded random bytes for a tensor: full range for integers,
    [-1, 1) for floats."""
    dt = NP_DTYPES[tensor["dtype"]]
    n = int(np.prod(tensor["shape"]))
    if dt == np.float32:
        return rng.uniform(-1, 1, n).astype(np.float32).tobytes()
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max + 1, n, dtype=dt).tobytes()
