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


def check_no_overlap(buffers, links=()):
    """No two buffers alive together share a byte, but linked ones
    (links: planner.plan's i, j, d triples) where buffers[i] starts d bytes
    or more after buffers[j]."""
    pairs = set()
    for q in range(0, len(links), 3):
        i, j, d = links[q:q + 3]
        if buffers[i].offset >= buffers[j].offset + d:
            pairs.add((min(i, j), max(i, j)))
    for i, a in enumerate(buffers):
        assert a.offset % planner.ALIGN == 0 and a.offset >= 0
        for k, b in enumerate(buffers[i + 1:], i + 1):
            live = a.first <= b.last and b.first <= a.last
            apart = (a.offset + a.size <= b.offset
                     or b.offset + b.size <= a.offset)
            assert not live or apart or (i, k) in pairs


def check_model_plan(buffers):
    """check_no_overlap on plan_model's buffers (root -> Buffer)."""
    roots = sorted(buffers)
    check_no_overlap([buffers[r] for r in roots],
                     planner.links(roots, buffers))


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
    check_model_plan(buffers)
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
    check_model_plan(buffers)


def test_random_linked_plans_are_valid():
    """Linked buffers (planner.plan's links, chains as consecutive
    CONV_2D layers make them) share bytes only at their least distance
    or more, and every other pair alive together is apart; links never
    make a plan larger than the same buffers without them, and many
    make it smaller."""
    rng = np.random.default_rng(2)
    linked = smaller = 0
    for _ in range(300):
        bufs, links = [], []  # (made flat below)
        for _ in range(int(rng.integers(1, 25))):
            first = int(rng.integers(0, 15))
            bufs.append(planner.Buffer(int(rng.integers(1, 3000)), first,
                                       first + int(rng.integers(0, 4))))
        for i, a in enumerate(bufs):  # a dies where b starts
            for j, b in enumerate(bufs):
                if a.first < b.first == a.last and rng.random() < 0.5 \
                        and i not in [k for k, _, _ in links] \
                        and j not in [k for _, k, _ in links]:
                    d = 16 * int(rng.integers(-a.size // 16, b.size // 16
                                              + 2))
                    links.append((i, j, d))
                    break
        links = [v for t in links for v in t]
        apart = planner.plan(bufs)
        total = planner.plan(bufs, links)
        check_no_overlap(bufs, links)
        assert all(b.offset + b.size <= total for b in bufs)
        assert total <= apart
        linked += len(links) // 3
        smaller += total < apart
    assert linked > 300 and smaller > 30



def _conv_model(hw, cin, cout, k, stride=1, dil=1, padding="SAME",
                batch=1, before=None, reread=False):
    """x [batch, hw, hw, cin] -> CONV_2D (k x k filter) -> y: x a graph
    input, or made from one by a RELU (before "relu") or by a 1x1 CONV_2D
    from one channel ("conv": a chain of links); reread: an ADD reads x
    after the conv (x then must keep its bytes). Returns (model bytes,
    x, y)."""
    from host_tools import opgen
    T = opgen.Tensor
    rng = np.random.default_rng(hw * 131 + cin * 7 + k)
    m = opgen.Model()
    sh = [batch, hw, hw, cin]
    x = m.add_tensor(T(sh if before != "conv" else sh[:3] + [1],
                       scale=0.05, zero_point=3))
    ins = [x]
    if before == "relu":
        xs = m.add_tensor(T(sh, scale=0.05, zero_point=3))
        m.add_op("RELU", [x], [xs])
        x = xs
    elif before == "conv":
        w0 = m.add_tensor(T([cin, 1, 1, 1], scale=[0.02] * cin,
                            zero_point=0, data=rng.integers(-127, 128,
                                                            (cin, 1, 1, 1))))
        xs = m.add_tensor(T(sh, scale=0.04, zero_point=-1))
        m.add_op("CONV_2D", [x, w0, -1], [xs],
                 {"padding": "VALID", "stride_w": 1, "stride_h": 1})
        x = xs
    w = m.add_tensor(T([cout, k, k, cin],
                       scale=[0.01 + 0.002 * c for c in range(cout)],
                       zero_point=0, quantized_dimension=0,
                       data=rng.integers(-127, 128, (cout, k, k, cin))))
    b = m.add_tensor(T([cout], "int32",
                       scale=[0.0005 + 0.0001 * c for c in range(cout)],
                       data=rng.integers(-300, 300, cout)))
    reach = dil * (k - 1) + 1
    o = -(-hw // stride) if padding == "SAME" else \
        -(-(hw - reach + 1) // stride)
    y = m.add_tensor(T([batch, o, o, cout], scale=0.12, zero_point=-2))
    m.add_op("CONV_2D", [x, w, b], [y],
             {"padding": padding, "stride_w": stride, "stride_h": stride,
              "dilation_w_factor": dil, "dilation_h_factor": dil})
    outs = [y]
    if reread:
        z = m.add_tensor(T(sh, scale=0.1, zero_point=0))
        m.add_op("ADD", [x, x], [z])
        outs.append(z)
    m.inputs, m.outputs = ins, outs
    return m.build(), x, y


@pytest.mark.parametrize("case,d,arena", [
    # (hw, cin, cout, k, stride): output row r (32 bytes) ends before
    # input row max(0, r - 2) (16 bytes a row) starts: d = max over r of
    # 32 (r + 1) - 16 max(0, r - 2) = 176 (r = 7); the input's 128 bytes
    # end at 304 (apart: 256 + 128 = 384)
    ((8, 2, 4, 3, 1), 176, 304),
    # stride 2: rows of 16 bytes out, 16 in, from input row 2r - 2:
    # max(16, 32, 48 - 32, 64 - 64) = 32; the input ends at 32 + 128
    ((8, 2, 4, 3, 2), 32, 160),
    # 1x1: output row r (64 bytes) before input row r (32): 64 (r + 1)
    # - 32 r = 288 at r = 7; 288 + 256 = 544 (apart: 768)
    ((8, 4, 8, 1, 1), 288, 544),
])
def test_conv_output_overlaps_its_input_by_hand(case, d, arena):
    """planner.overlap: an int8 CONV_2D's input that dies there is
    placed d bytes after its output (hand-computed), the two sharing
    the arena's bytes."""
    raw, x, y = _conv_model(*case)
    total, buffers, root = planner.plan_model(Model(raw))
    assert buffers[root[x]].link == (root[y], d)
    assert buffers[root[x]].offset - buffers[root[y]].offset == d
    assert buffers[root[y]].offset == 0
    assert total == arena
    check_model_plan(buffers)


def test_gap_is_the_row_by_row_maximum():
    """planner.gap's few terms equal the maximum over every batch and
    output row that overlap() defines (random small shapes)."""
    import random
    rng = random.Random(3)
    for _ in range(3000):
        B, H, OH = rng.randint(1, 3), rng.randint(1, 20), rng.randint(1, 20)
        sh, reach = rng.randint(1, 4), rng.randint(0, 6)
        ri, ro = rng.randint(1, 50), rng.randint(1, 50)
        want = -ri * B * H
        for b in range(B):
            for y in range(OH):
                want = max(want, (b * OH + y + 1) * ro
                           - (b * H + max(0, y * sh - reach)) * ri)
        assert planner.gap(B, H, OH, sh, reach, ri, ro) == want


def test_conv_overlap_keeps_tensors_read_later(tmp_path):
    """No link where the input is read after the conv: by a later
    operator, as a graph output, or by the conv itself through another
    input sharing its bytes (a filter RESHAPEd from it: found by review,
    the output then overwrote filter bytes still to be read); the last
    model stays bit-exact with TFLM."""
    from host_tools import opgen
    from test_ops_binary import _inputs_for
    from test_kernels_misc import run_cases
    raw, x, y = _conv_model(8, 2, 4, 3, reread=True)
    _, buffers, root = planner.plan_model(Model(raw))
    assert all(b.link is None for b in buffers.values())
    check_model_plan(buffers)
    T = opgen.Tensor
    for view in (False, True):
        m = opgen.Model()
        x = m.add_tensor(T([1, 8, 8, 4], scale=0.05, zero_point=0))
        if view:  # the filter: x's 256 bytes
            f = m.add_tensor(T([16, 2, 2, 4], scale=0.05, zero_point=0))
            m.add_op("RESHAPE", [x], [f], {"new_shape": [16, 2, 2, 4]})
        else:
            f = m.add_tensor(T([16, 2, 2, 4], scale=[0.05] * 16,
                               zero_point=0, data=np.ones((16, 2, 2, 4))))
        y = m.add_tensor(T([1, 8, 8, 16], scale=0.5, zero_point=0))
        m.add_op("CONV_2D", [x, f, -1], [y],
                 {"padding": "SAME", "stride_w": 1, "stride_h": 1})
        m.inputs, m.outputs = [x], [y] if view else [y, x]
        raw = m.build()
        _, buffers, root = planner.plan_model(Model(raw))
        assert buffers[root[x]].link is None
    assert run_cases([(raw, _inputs_for(raw))], tmp_path, sets=2) == [None]


def _check_linked(raw, x):
    """x's buffer is linked, the plan smaller for links and x's bytes
    shared with its partner's (at the least distance or more)."""
    total, buffers, root = planner.plan_model(Model(raw))
    b = buffers[root[x]]
    assert b.link is not None
    assert total < _apart(buffers)
    p = buffers[b.link[0]]
    assert b.offset - p.offset >= b.link[1]
    assert b.offset < p.offset + p.size  # they overlap


def _apart(buffers):
    """The arena of plan_model's buffers planned without links."""
    return planner.plan([planner.Buffer(b.size, b.first, b.last)
                         for _, b in sorted(buffers.items())])


CONV_CASES = [
    # hw, cin, cout, k, stride, dil, padding, batch, before
    (9, 3, 8, 3, 1, 1, "SAME", 1, None),     # widening, the first layer
    (9, 3, 8, 3, 1, 1, "SAME", 1, "relu"),
    (10, 4, 4, 3, 2, 1, "SAME", 1, "conv"),  # stride 2
    (10, 4, 6, 3, 1, 2, "SAME", 1, "conv"),  # dilation 2
    (10, 4, 6, 3, 1, 1, "VALID", 1, "conv"),
    (8, 4, 12, 1, 1, 1, "VALID", 1, "relu"),  # 1x1, widening
    (8, 12, 4, 1, 1, 1, "VALID", 2, "conv"),  # 1x1, narrowing, batch 2
    (9, 4, 8, 5, 1, 1, "SAME", 2, "conv"),    # 5x5, batch 2
    (12, 2, 16, 3, 2, 1, "VALID", 1, "conv"),
]


def _pool_model(hw, c, k, stride, padding, kind, batch=1):
    """x [batch, hw, hw, c], made by a 1x1 CONV_2D from one channel (a
    chain of links), -> AVERAGE_POOL_2D / MAX_POOL_2D (k x k, kind
    "AVERAGE" / "MAX") -> y. Returns (model bytes, x, y)."""
    from host_tools import opgen
    T = opgen.Tensor
    rng = np.random.default_rng(hw * 17 + c)
    m = opgen.Model()
    i0 = m.add_tensor(T([batch, hw, hw, 1], scale=0.05, zero_point=3))
    w0 = m.add_tensor(T([c, 1, 1, 1], scale=[0.02] * c, zero_point=0,
                        data=rng.integers(-127, 128, (c, 1, 1, 1))))
    x = m.add_tensor(T([batch, hw, hw, c], scale=0.04, zero_point=-1))
    m.add_op("CONV_2D", [i0, w0, -1], [x],
             {"padding": "VALID", "stride_w": 1, "stride_h": 1})
    o = -(-hw // stride) if padding == "SAME" else -(-(hw - k + 1) // stride)
    y = m.add_tensor(T([batch, o, o, c], scale=0.04, zero_point=-1))
    m.add_op(kind + "_POOL_2D", [x], [y],
             {"padding": padding, "stride_w": stride, "stride_h": stride,
              "filter_width": k, "filter_height": k})
    m.inputs, m.outputs = [i0], [y]
    return m.build(), x, y


POOL_CASES = [
    # hw, c, k, stride, padding, kind, batch
    (12, 8, 2, 2, "VALID", "MAX", 1),
    (12, 8, 2, 2, "VALID", "AVERAGE", 1),
    (11, 6, 3, 2, "SAME", "MAX", 2),
    (11, 6, 3, 2, "SAME", "AVERAGE", 2),
    (10, 4, 3, 1, "SAME", "AVERAGE", 1),
]


def test_conv_overlap_is_bit_exact(tmp_path):
    """Models whose CONV_2D, AVERAGE_POOL_2D or MAX_POOL_2D writes over
    the input that dies there (planner.overlap: linked, and the plan
    smaller for it, in every case) give TFLM's outputs bit for
    bit on the unix port (the viper loops) with the interpreter's own
    arena (two input sets: the second finds the first's leftovers)."""
    from test_ops_binary import _inputs_for
    from test_kernels_misc import run_cases
    cases = []
    for hw, cin, cout, k, s, dil, pad, batch, before in CONV_CASES:
        raw, x, y = _conv_model(hw, cin, cout, k, s, dil, pad, batch,
                                before)
        cases.append((raw, _inputs_for(raw)))
        _check_linked(raw, x)
    for case in POOL_CASES:
        raw, x, y = _pool_model(*case)
        cases.append((raw, _inputs_for(raw)))
        _check_linked(raw, x)
    assert run_cases(cases, tmp_path, sets=2) == [None] * len(cases)

