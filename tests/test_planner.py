"""Memory planner: no live overlap, alignment, and TFLM's arena as bar."""

import os

import numpy as np
import pytest

from conftest import SHARED
from host_tools.arena import tflm_arena
from tflm import planner
from tflm.model import Model

INT8_MODELS = [
    "hello_world_int8/hello_world_int8.tflite",
    "micro_speech_quantized/micro_speech_quantized.tflite",
    "person_detect/person_detect.tflite",
    "tiny_kws_ref_int8/kws_ref_model.tflite",
    "tiny_ic_resnet_int8/pretrainedResnet_quant.tflite",
    "tiny_ad01_int8/ad01_int8.tflite",
    "test_conv_model/test_conv_model.tflite",
    "network_tester_model/network_model.tflite",
    "simple_add/simple_add_model.tflite",
    "add_model_int8/add_model.tflite",
]


def check_no_overlap(buffers):
    for i, a in enumerate(buffers):
        assert a.offset % planner.ALIGN == 0
        for b in buffers[i + 1:]:
            live = a.first <= b.last and b.first <= a.last
            apart = (a.offset + a.size <= b.offset
                     or b.offset + b.size <= a.offset)
            assert not live or apart


def test_random_plans_are_valid():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        bufs = []
        for _ in range(n):
            first = int(rng.integers(0, 20))
            bufs.append(planner.Buffer(int(rng.integers(0, 5000)), first,
                                       first + int(rng.integers(0, 6))))
        total = planner.plan(bufs)
        check_no_overlap(bufs)
        assert all(b.offset + b.size <= total for b in bufs)
        # Lower bound: the bytes live at any one step.
        for step in range(26):
            live = sum(b.size for b in bufs if b.first <= step <= b.last)
            assert total >= live


def test_hand_computed_plan():
    # a and b live together; c reuses a's space once a is dead.
    a = planner.Buffer(100, 0, 1)
    b = planner.Buffer(50, 1, 2)
    c = planner.Buffer(60, 2, 3)
    assert planner.plan([a, b, c]) == 176  # 112 + 50, aligned up
    assert (a.offset, b.offset, c.offset) == (0, 112, 0)


def test_hand_computed_growth():
    """An elastic buffer planned at its least size grows into the largest
    gap its lifetime has below the arena's end, up to what it wants."""
    a = planner.Buffer(100, 0, 1)  # [0, 100)
    b = planner.Buffer(40, 1, 1)  # at 112 (after a), wants 300
    b.want = 300
    c = planner.Buffer(400, 2, 2)  # makes the arena 400 bytes
    d = planner.Buffer(8, 2, 2)  # elastic, wants 1000: no room beyond c
    d.want = 1000
    total = planner.plan([a, b, c, d])
    assert total == 416  # c at 0, d at 400
    planner.grow([a, b, c, d], total)
    # b: the gap after a, [112, 416): 300 fit (at the gap's start)
    assert (b.offset, b.size) == (112, 300)
    # d: no gap but its own place, [400, 416): 16 bytes
    assert (d.offset, d.size) == (400, 16)
    assert (a.offset, c.offset) == (0, 0)


def test_random_growth_keeps_plans_valid():
    """Growth moves and widens elastic buffers only into free room:
    the plan stays valid, the arena's size unchanged, every elastic
    buffer between its least and wanted size, a multiple of 4."""
    rng = np.random.default_rng(1)
    grown = 0
    for _ in range(300):
        bufs = []
        for _ in range(int(rng.integers(1, 25))):
            first = int(rng.integers(0, 15))
            b = planner.Buffer(4 * int(rng.integers(0, 800)), first,
                               first + int(rng.integers(0, 4)))
            if rng.random() < 0.4:
                b.last = b.first
                b.want = b.size + 4 * int(rng.integers(1, 500))
            bufs.append(b)
        least = [b.size for b in bufs]
        total = planner.plan(bufs)
        planner.grow(bufs, total)
        check_no_overlap(bufs)
        for b, n in zip(bufs, least):
            assert b.offset + b.size <= total
            assert n <= b.size <= max(n, b.want) and b.size % 4 == 0
            grown += b.size > n
    assert grown > 100


@pytest.mark.parametrize("rel", INT8_MODELS)
def test_arena_not_larger_than_tflm(rel):
    path = os.path.join(SHARED, rel)
    if not os.path.exists(path):
        pytest.skip("missing " + path)
    with open(path, "rb") as f:
        m = Model(f.read())
    total, buffers, _ = planner.plan_model(m)
    check_no_overlap(list(buffers.values()))
    assert total <= tflm_arena(path)["head"]


def test_reshape_output_shares_input_buffer():
    path = os.path.join(SHARED, "micro_speech_quantized",
                        "micro_speech_quantized.tflite")
    if not os.path.exists(path):
        pytest.skip("missing " + path)
    with open(path, "rb") as f:
        m = Model(f.read())
    _, buffers, root = planner.plan_model(m)
    op = [o for o in m.operators if o.name == "RESHAPE"][0]
    assert root[op.outputs[0]] == root[op.inputs[0]]
    assert op.outputs[0] not in buffers


def test_variable_lives_to_the_last_operator():
    """A variable (state) tensor read by the first of three operators
    keeps its bytes to the end, so that later operators' tensors cannot
    overwrite the state before the next invoke (a bug a keyword-shaped
    model showed); an ordinary tensor dies at its last reader."""
    from host_tools import opgen
    from host_tools.conformance import gen_recurrent as gr
    import random
    ts = gr.svdf_tensors(random.Random(4), 2, "int8")
    x, wf, wt, bias, state, y, opts = ts
    m = opgen.Model()
    m.add_op("SVDF", [x, wf, wt, bias, state], [y], opts)
    z = opgen.Tensor(y.shape, scale=y.scale, zero_point=y.zero_point)
    m.add_op("RELU", [y], [z])
    m.add_op("RELU", [z], [opgen.Tensor(y.shape, scale=y.scale,
                                        zero_point=y.zero_point)])
    model = Model(m.build())
    life = planner.lifetimes(model)
    assert life[4] == [0, 2]  # the state
    assert life[5] == [0, 1]  # y: dies at op 1
    _, buffers, _ = planner.plan_model(model)
    check_no_overlap(list(buffers.values()))
