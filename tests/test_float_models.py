"""Real float32 models vs TFLM: hello_world_float and magic_wand.

Sample inputs and 20 seeded random inputs each; invoke() under heap_lock
(the float kernels allocate nothing), the model also at an odd address
(unaligned float weights are copied once at prepare). hello_world_float
(FULLY_CONNECTED only) must match TFLM bit for bit; magic_wand ends in a
SOFTMAX, whose expf may differ from glibc's by 1 ulp, so its outputs are
compared within TOL["SOFTMAX"] ulps (every other op of it is bit-exact).
"""

import numpy as np
import pytest

from conftest import shared
from float_cases import ulp_diff
from host_tools import device, inputs
from host_tools.cli_run import model_io
from host_tools.oracle import Reference
from test_float_ops import TOL

N_RANDOM = 20
HELLO = "hello_world_float/hello_world_float.tflite"
WAND = "magic_wand/magic_wand.tflite"
WAND_LABELS = ["wing", "ring", "slope", "negative"]  # magic_wand_test.cc


def input_sets(rel, seed=0, n_random=N_RANDOM):
    """Sample sets (magic_wand's strokes), then seeded random sets."""
    path = shared(rel)
    ins, _ = model_io(path)
    rng = np.random.default_rng(seed)
    sets = []
    if rel == WAND:
        sets = [[inputs.from_file(shared("magic_wand", n + "_features.npy"),
                                  ins[0])] for n in ("ring", "slope")]
        # accelerometer-like values (the samples span about +-2000)
        sets += [[rng.normal(0, 600, 384).astype(np.float32).tobytes()]
                 for _ in range(n_random)]
    else:
        sets = [[np.float32([x]).tobytes()]
                for x in (0.0, 1.5707964, 3.1415927)]
        sets += [[rng.uniform(-1, 7, 1).astype(np.float32).tobytes()]
                 for _ in range(n_random)]
    return path, sets


def compare(path, sets, tol, offset=0):
    got, info = device.run_model(path, sets, 1, offset=offset)
    assert got is not None, info
    if offset % 4:  # the float weights were copied to aligned memory
        assert info["copied"] > 0, info
    ref = Reference(path)
    worst = 0
    for g, s in zip(got, sets):
        want = ref.run([np.frombuffer(s[0], np.float32)])[0]
        d = ulp_diff(np.frombuffer(g[0], np.float32), want)
        assert d.max() <= tol, (np.frombuffer(g[0], np.float32), want)
        worst = max(worst, int(d.max()))
    return got, worst


@pytest.mark.parametrize("rel,tol", [(HELLO, 0), (WAND, TOL["SOFTMAX"])])
def test_matches_tflm(rel, tol):
    path, sets = input_sets(rel)
    compare(path, sets, tol)


@pytest.mark.parametrize("rel,tol", [(HELLO, 0), (WAND, TOL["SOFTMAX"])])
def test_model_at_odd_address(rel, tol):
    path, sets = input_sets(rel, seed=3, n_random=2)
    compare(path, sets, tol, offset=1)


def test_magic_wand_labels():
    path, sets = input_sets(WAND, n_random=0)
    got, _ = compare(path, sets, TOL["SOFTMAX"])
    labels = [WAND_LABELS[int(np.argmax(np.frombuffer(o[0], np.float32)))]
              for o in got]
    assert labels == ["ring", "slope"]
