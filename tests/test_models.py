"""Real models: output bytes identical to TFLM's, on sample and random
inputs, with invoke() under heap_lock and the model at an odd address."""

import numpy as np
import pytest

from conftest import shared
from host_tools import device, inputs
from host_tools.cli_run import model_io
from host_tools.oracle import Reference

N_RANDOM = 20

# model file -> sample input files (one list per input set)
MODELS = {
    "hello_world_int8/hello_world_int8.tflite": [],
    "micro_speech_quantized/micro_speech_quantized.tflite":
        [["micro_speech_quantized/yes_features.npy"],
         ["micro_speech_quantized/no_features.npy"]],
    "micro_speech_unalign/model.tflite":
        [["micro_speech_quantized/yes_features.npy"]],
    "person_detect/person_detect.tflite":
        [["person_detect/person.bmp"], ["person_detect/no_person.bmp"]],
    "tiny_kws_ref_int8/kws_ref_model.tflite":
        [["tiny_kws_ref_int8/input.npy"]],
    "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite":
        [["tiny_ic_resnet_int8/input.npy"]],
    "tiny_ad01_int8/ad01_int8.tflite":
        [["tiny_ad01_int8/normal_id_01_00000000_hist_librosa.bin"]],
    "test_conv_model/test_conv_model.tflite": [],
    "network_tester_model/network_model.tflite": [],
    "simple_add/simple_add_model.tflite": [],
    "add_model_int8/add_model.tflite": [],
}


def input_sets(rel, n_random=N_RANDOM, seed=0):
    """Sample sets from files, then seeded random sets: lists of bytes."""
    path = shared(rel)
    ins, _ = model_io(path)
    sets = [[inputs.from_file(shared(f), t) for f, t in zip(files, ins)]
            for files in MODELS[rel]]
    if rel.startswith("network_tester"):
        sets.append([inputs.from_file(shared("network_tester_model",
                                             "input.npy"), ins[0], raw=True)])
    rng = np.random.default_rng(seed)
    sets += [[inputs.random_input(t, rng) for t in ins]
             for _ in range(n_random)]
    return path, ins, sets


def tflm_outputs(path, ins, sets):
    ref = Reference(path)
    out = []
    for data in sets:
        arrs = [np.frombuffer(d, inputs.NP_DTYPES[t["dtype"]])
                for d, t in zip(data, ins)]
        out.append([o.tobytes() for o in ref.run(arrs)])
    return out


def run_ours(path, sets, offset=0):
    _, outs = model_io(path)
    got, info = device.run_model(path, sets, len(outs), offset=offset)
    assert got is not None, info
    return got


@pytest.mark.parametrize("rel", sorted(MODELS))
def test_bit_exact_with_tflm(rel):
    path, ins, sets = input_sets(rel)
    assert run_ours(path, sets) == tflm_outputs(path, ins, sets)


@pytest.mark.parametrize("rel", sorted(MODELS))
def test_model_at_odd_address(rel):
    path, ins, sets = input_sets(rel, n_random=2, seed=7)
    assert run_ours(path, sets, offset=1) == tflm_outputs(path, ins, sets)


def top(raw):
    return int(np.argmax(np.frombuffer(raw, np.int8)))


def test_person_detect_labels():
    path, _, sets = input_sets("person_detect/person_detect.tflite", 0)
    got = run_ours(path, sets)
    # output order is [no_person, person]
    assert [top(o[0]) for o in got] == [1, 0]


def test_micro_speech_labels():
    rel = "micro_speech_quantized/micro_speech_quantized.tflite"
    path, _, sets = input_sets(rel, 0)
    got = run_ours(path, sets)
    # labels [silence, unknown, yes, no]
    assert [top(o[0]) for o in got] == [2, 3]


def test_network_tester_expected_output():
    rel = "network_tester_model/network_model.tflite"
    path, _, sets = input_sets(rel, 0)
    got = run_ours(path, sets)
    want = np.load(shared("network_tester_model", "expected_output.npy"))
    assert got[0][0] == want.astype(np.uint8).tobytes()


def test_run_model_contract():
    """device.run_model through the device driver: one output list per
    input set (none for none), per-invoke times with repeat, per-op
    profile rows; a wrong output count or an extra input is a
    DeviceError, not a silent drop."""
    path = shared("hello_world_int8", "hello_world_int8.tflite")
    x = bytes([5])
    got, info = device.run_model(path, [[x], [bytes([200])]], 1, repeat=3,
                                 profile=2)
    assert len(got) == 2 and all(len(g) == 1 and len(g[0]) == 1
                                 for g in got)
    assert got[0] != got[1]  # sin at two points
    assert len(info["us"]) == 6 and info["arena"] > 0
    assert [r[1] for r in info["ops"]] == ["FULLY_CONNECTED"] * 3
    assert device.run_model(path, [], 1)[0] == []
    with pytest.raises(device.DeviceError, match="1 outputs, not 2"):
        device.run_model(path, [[x]], 2)
    with pytest.raises(device.DeviceError, match="2 input files"):
        device.run_model(path, [[x, x]], 1)
