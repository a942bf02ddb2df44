"""`make demo`: the digits CNN on its held-out set, on the unix port.

Prints accuracy on the held-out digits, agreement with the TFLM reference
interpreter, time per inference and arena bytes.
"""

import os

import numpy as np

from . import device
from .cli_run import model_io

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
MODEL = os.path.join(DATA, "digits_cnn_int8.tflite")
TEST = os.path.join(DATA, "digits_test.npz")


def main(args=None):
    d = np.load(TEST)
    x, y = d["x"], d["y"]
    _, outs = model_io(MODEL)
    sets = [[img.astype(np.int8).tobytes()] for img in x]
    print("digits CNN (%d bytes) on %d held-out digits, MicroPython unix "
          "port..." % (os.path.getsize(MODEL), len(x)))
    results, info = device.run_model(MODEL, sets, len(outs))
    ours = np.array([np.frombuffer(r[0], np.int8) for r in results])
    from .oracle import Reference
    ref = Reference(MODEL)
    theirs = np.array([ref.run([img])[0].ravel() for img in x])
    acc = float(np.mean(ours.argmax(1) == y))
    same = int(np.sum(np.all(ours == theirs, axis=1)))
    us = sorted(info["us"])[len(info["us"]) // 2]
    print("accuracy:        %.2f%% (%d/%d)" % (100 * acc,
                                               int(acc * len(y) + .5),
                                               len(y)))
    print("agrees with TFLM: %d/%d outputs bit-exact" % (same, len(x)))
    print("time/inference:  %.2f ms (median, unix port)" % (us / 1000))
    print("arena:           %d bytes (%d head + %d tail)" % (
        info["arena"] + info["persistent"], info["arena"],
        info["persistent"]))
    return 0 if same == len(x) else 1
