"""Subgraphs (IF, WHILE, CALL_ONCE) and resource variables (VAR_HANDLE,
READ_VARIABLE, ASSIGN_VARIABLE) vs TFLM, over sequences of invokes and
interp.reset() (tests/sequences.py: all models in one MicroPython
process, each invoke under micropython.heap_lock()).

Models come from host_tools/conformance/gen_control.py (seeded) and by
hand: a counter whose init subgraph (CALL_ONCE) assigns a variable that
subgraph 0 reads and updates, so every invoke shows the state, and a
reset shows TFLM's rule (the variable back to its reset value, the init
subgraph not run again). Models TFLM rejects or would run out of bounds
must raise a TFLMError naming the reason.
"""

import random

import numpy as np

from host_tools import opgen
from host_tools.conformance.gen_control import GENERATORS
from sequences import RESET, check, check_rejections, run_ours, run_tflm

T = opgen.Tensor
SEEDS = 6  # random models per generator


def _inputs(raw, rng):
    """Random input arrays for every input of model raw."""
    mt = opgen.parse(raw)
    sg = mt.subgraphs[0]
    out = []
    for i in sg.inputs:
        t = sg.tensors[i]
        shape = [int(d) for d in t.shape]
        name = {v: k for k, v in opgen.DTYPES.items()}[t.type]
        if name == "bool":
            out.append(rng.random(shape) < 0.5)
        elif name == "float32":
            out.append(rng.uniform(-3, 3, shape).astype(np.float32))
        elif name == "int32":
            out.append(rng.integers(-2, 6, shape).astype(np.int32))
        else:
            info = np.iinfo(name)
            out.append(rng.integers(info.min, info.max + 1, shape,
                                    dtype=np.int64).astype(name))
    return out


def test_random_models_match_tflm(tmp_path):
    """SEEDS models per generator, each over invoke, invoke, invoke,
    reset, invoke, bit-exact with TFLM at every step."""
    g = np.random.default_rng(5)
    cases = []
    for op, gen in sorted(GENERATORS.items()):
        if op in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
            continue  # the same generator as VAR_HANDLE
        for i in range(SEEDS):
            res = gen(random.Random("control:%s:%d" % (op, i)), 1 + i % 4)
            raw, given = res if isinstance(res, tuple) else (res, None)
            sets = [given if given is not None and k == 0 else
                    _inputs(raw, g) for k in range(3)]
            if given is not None:  # WHILE: a counter that ends the loop
                for s in sets:
                    s[0] = given[0]
            steps = sets + [RESET, sets[0]]
            cases.append(("%s #%d" % (op, i), raw, steps))
    got = run_ours([(raw, steps) for _, raw, steps in cases], tmp_path)
    for (name, raw, steps), res in zip(cases, got):
        check(name, run_tflm(raw, steps), res)


def counter(dtype="int8", zero_point=-5):
    """CALL_ONCE runs init (VAR_HANDLE 'acc', ASSIGN a constant); subgraph
    0 reads acc, outputs input + acc and assigns it."""
    q = dict(scale=0.5, zero_point=zero_point) if dtype == "int8" else {}
    m = opgen.Model()
    init = opgen.Model(name="init")
    h1 = T([], "resource")
    val = np.array([3, -7, 20], dtype)
    init.add_op("VAR_HANDLE", [], [h1], {"container": "",
                                         "shared_name": "acc"})
    init.add_op("ASSIGN_VARIABLE", [h1, T([3], dtype, data=val, **q)], [])
    init.inputs, init.outputs = [], []
    k = m.add_subgraph(init)
    x, h, r, y = (T([3], dtype, **q), T([], "resource"), T([3], dtype, **q),
                  T([3], dtype, **q))
    m.add_op("CALL_ONCE", [], [], {"init_subgraph_index": k})
    m.add_op("VAR_HANDLE", [], [h], {"container": "", "shared_name": "acc"})
    m.add_op("READ_VARIABLE", [h], [r])
    m.add_op("ADD", [x, r], [y])
    m.add_op("ASSIGN_VARIABLE", [h, y], [])
    m.inputs, m.outputs = [x], [y]
    return m.build()


def test_call_once_and_variables_hand(tmp_path):
    """The counter: the init value once, then the running sum; after
    reset() the sum starts from the reset value (int8: zero point -5),
    init not run again; TFLM's outputs say so too."""
    x8 = np.array([4, 4, -4], np.int8)
    xf = np.array([0.5, 1.0, -2.0], np.float32)
    cases = [("int8", counter("int8"), x8), ("float32", counter("float32"),
                                            xf)]
    seqs = [[[x]] * 3 + [RESET, [x], [x]] for _, _, x in cases]
    want = [run_tflm(raw, s) for (_, raw, _), s in zip(cases, seqs)]
    # float32: 3 + 0.5, + 0.5 more, ...; after reset 0 + 0.5
    f = [np.frombuffer(w[0], np.float32)[0] for w in want[1] if w]
    assert f == [3.5, 4.0, 4.5, 0.5, 1.0], f
    # int8 (scale 0.5, zero point -5): init 3 is real 4; after reset the
    # variable holds -5, real 0: the sum is x again
    i8 = [np.frombuffer(w[0], np.int8)[0] for w in want[0] if w]
    assert i8[3] == 4, i8
    got = run_ours([(raw, s) for (_, raw, _), s in zip(cases, seqs)],
                   tmp_path)
    for (name, _, _), w, res in zip(cases, want, got):
        check(name, w, res)


def _if_model(cond=("bool", [1]), then=1, els=2, n_sub=2, n_in=1,
              else_shape=(3,)):
    m = opgen.Model()
    for k in range(n_sub):
        sg = opgen.Model(name="b%d" % k)
        a = T(list(else_shape if k == 1 else (3,)), "float32")
        b = T(list(else_shape if k == 1 else (3,)), "float32")
        sg.add_op("ABS", [a], [b])
        sg.inputs, sg.outputs = [a], [b]
        m.add_subgraph(sg)
    c = T(cond[1], cond[0])
    xs = [T([3], "float32") for _ in range(n_in)]
    y = T([3], "float32")
    m.add_op("IF", [c] + xs, [y], {"then_subgraph_index": then,
                                   "else_subgraph_index": els})
    m.inputs, m.outputs = [c] + xs, [y]
    return m.build()


def test_rejections(tmp_path):
    """Models TFLM refuses, or would crash on, raise a TFLMError naming
    the reason; a model with a subgraph nothing calls (another signature)
    loads as before, its operators never resolved."""
    def assign(value, read_shape, name="v"):
        m = opgen.Model()
        h = T([], "resource")
        r = T(read_shape, "float32")
        m.add_op("VAR_HANDLE", [], [h], {"shared_name": name})
        if value is not None:
            m.add_op("ASSIGN_VARIABLE", [h, T(value, "float32",
                                              data=np.zeros(value))], [])
        m.add_op("READ_VARIABLE", [h], [r])
        x, y = T(read_shape, "float32"), T(read_shape, "float32")
        m.add_op("ADD", [x, r], [y])
        m.inputs, m.outputs = [x], [y]
        return m.build()

    def no_name():
        m = opgen.Model()
        h = T([], "resource")
        x, r = T([2], "float32"), T([2], "float32")
        m.add_op("VAR_HANDLE", [], [h], opgen.s.VarHandleOptionsT())
        m.add_op("READ_VARIABLE", [h], [r])
        y = T([2], "float32")
        m.add_op("ADD", [x, r], [y])
        m.inputs, m.outputs = [x], [y]
        return m.build()

    def unused_subgraph():
        m = opgen.Model()
        x, y = T([3], "float32"), T([3], "float32")
        m.add_op("ABS", [x], [y])
        sg = opgen.Model(name="other")
        a, b = T([3], "float32"), T([3], "float32")
        sg.add_op("CUSTOM:Nope", [a], [b])
        m.add_subgraph(sg)
        return m.build()

    def while_int_cond():
        m = opgen.Model()
        cond = opgen.Model(name="cond")
        i, o = T([1], "int32"), T([1], "int32")
        cond.add_op("ABS", [i], [o])
        cond.inputs, cond.outputs = [i], [o]
        body = opgen.Model(name="body")
        bi, bo = T([1], "int32"), T([1], "int32")
        body.add_op("ABS", [bi], [bo])
        body.inputs, body.outputs = [bi], [bo]
        c, b = m.add_subgraph(cond), m.add_subgraph(body)
        x, y = T([1], "int32"), T([1], "int32")
        m.add_op("WHILE", [x], [y], {"cond_subgraph_index": c,
                                     "body_subgraph_index": b})
        return m.build()

    def null_container():
        m = opgen.Model()
        ys = []
        for opts in ({"shared_name": "a"},
                     {"container": "c", "shared_name": "b"}):
            h, r = T([], "resource"), T([2], "float32")
            m.add_op("VAR_HANDLE", [], [h], opts)
            m.add_op("ASSIGN_VARIABLE", [h, T([2], "float32",
                                              data=np.ones(2))], [])
            m.add_op("READ_VARIABLE", [h], [r])
            ys.append(r)
        m.outputs = ys
        return m.build()

    cases = [
        ("container after none", null_container(), ["absent container"]),
        ("if int8 condition", _if_model(cond=("int8", [1])),
         ["condition", "bool"]),
        ("if two-element condition", _if_model(cond=("bool", [2])),
         ["condition", "one"]),
        ("if then out of range", _if_model(then=5),
         ["then_subgraph_index 5"]),
        ("if recursion", _if_model(els=0), ["recursion"]),
        ("if else of another size", _if_model(else_shape=(4,)),
         ["differ"]),
        ("if inputs do not pair", _if_model(n_in=2), ["inputs"]),
        ("while int32 cond", while_int_cond(), ["bool"]),
        ("read never assigned", assign(None, [2]), ["no ASSIGN_VARIABLE"]),
        ("read of another size", assign([3], [2]), ["12 bytes"]),
        ("var handle without name", no_name(), ["shared_name"]),
        ("unused subgraph", unused_subgraph(), None),
    ]
    x = np.zeros(3, np.float32)
    check_rejections(cases[:-1], x, tmp_path)
    got = run_ours([(cases[-1][1], [[np.array([-1, 2, -3], np.float32)]])],
                   tmp_path)
    assert got[0][0] == "OK", got
    assert np.frombuffer(got[0][1][0][0], np.float32).tolist() == [1, 2, 3]
