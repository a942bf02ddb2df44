"""Conformance generators: IF, WHILE, CALL_ONCE and the resource
variables VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE (models with
subgraphs: opgen.Model.add_subgraph; see the package docstring for the
interface).

Every subgraph computes with one elementwise operator (ADD, SUB, MUL;
MAXIMUM, MINIMUM for int8 and float32) on int8 (random scales and zero
points), int16 (zero point 0), int32 or float32 tensors of rank 1-4, so
the copies in and out of subgraphs and the arena plan of their tensors
are what is tested. IF: a random bool condition, one or two data inputs
and outputs, a branch with no ops now and then (its outputs its inputs).
WHILE: a loop counter (int32) below a constant limit 0-5 and one or two
loop variables. CALL_ONCE: an init subgraph assigning a constant to a
resource variable, read and updated by subgraph 0. VAR_HANDLE /
READ_VARIABLE / ASSIGN_VARIABLE: subgraph 0 alone reads a variable
before any assignment (its reset value: the zero point of an int8 value,
else zeros), adds the input and assigns the sum; two variables now and
then, one of them in a container. """

import numpy as np

from host_tools import opgen
from host_tools.conformance import rand

T = opgen.Tensor
_OPS = ("ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM")


def _q(rng, dtype):
    if dtype == "int8":
        return dict(scale=rand.scale(rng, 0.01, 2.0),
                    zero_point=rand.zero_point(rng))
    if dtype == "int16":
        return dict(scale=rand.scale(rng, 0.001, 0.5), zero_point=0)
    return {}


def _data(rng, dtype, shape):
    n = int(np.prod(shape))
    if dtype == "float32":
        return np.array([rng.uniform(-4, 4) for _ in range(n)], np.float32)
    lo, hi = {"int8": (-128, 127), "int16": (-3000, 3000),
              "int32": (-1000, 1000)}[dtype]
    return np.array([rng.randint(lo, hi) for _ in range(n)], dtype)


def _tensor(rng, dtype, shape, q=None, data=None):
    return T(shape, dtype, data=data, **(q if q is not None else {}))


def _elementwise(rng, sg, x, dtype, shape, q):
    """One random elementwise op of x and a constant (or x) in model sg;
    returns its output tensor (quantization q)."""
    op = rng.choice(_OPS if dtype in ("int8", "float32") else
                    ("ADD", "SUB", "MUL"))
    qc = _q(rng, dtype)
    other = x if rng.random() < 0.3 else _tensor(
        rng, dtype, shape, qc, _data(rng, dtype, shape))
    y = _tensor(rng, dtype, shape, q)
    sg.add_op(op, [x, other], [y])
    return y


def _branch(rng, name, dtype, shape, qs, empty=False):
    """A subgraph with inputs and outputs of quantization qs (one per
    pair); empty: no operators, its outputs its inputs."""
    sg = opgen.Model(name=name)
    ins = [_tensor(rng, dtype, shape, q) for q in qs]
    outs = ins if empty else [_elementwise(rng, sg, x, dtype, shape, q)
                              for x, q in zip(ins, qs)]
    sg.inputs, sg.outputs = ins, outs
    return sg


def _dtype(rng):
    return rng.choice(("int8", "int8", "float32", "int32", "int16"))


def gen_if(rng, size):
    """IF: bool condition, 1-2 inputs and outputs, then / else each one
    elementwise op per output (now and then none)."""
    dtype = _dtype(rng)
    shape = rand.shape(rng, size, 1, 4)
    n = rng.choice((1, 1, 2))
    qs = [_q(rng, dtype) for _ in range(n)]
    m = opgen.Model()
    t = m.add_subgraph(_branch(rng, "then", dtype, shape, qs,
                               rng.random() < 0.15))
    e = m.add_subgraph(_branch(rng, "else", dtype, shape, qs,
                               rng.random() < 0.15))
    if rng.random() < 0.5:
        t, e = e, t  # subgraph order need not follow then / else
    c = T([1] * rng.randint(0, 2), "bool")
    xs = [_tensor(rng, dtype, shape, q) for q in qs]
    ys = [_tensor(rng, dtype, shape, q) for q in qs]
    m.add_op("IF", [c] + xs, ys,
             {"then_subgraph_index": t, "else_subgraph_index": e})
    m.inputs, m.outputs = [c] + xs, ys
    return m.build()


def gen_while(rng, size):
    """WHILE: int32 counter below a constant limit (0-5), 1-2 loop
    variables, each updated by one elementwise op in the body."""
    dtype = rng.choice(("int8", "float32", "int32", "int16"))
    shape = rand.shape(rng, size, 1, 3)
    n = rng.choice((1, 2))
    qs = [_q(rng, dtype) for _ in range(n)]
    limit = rng.randint(0, 5)
    cond = opgen.Model(name="cond")
    ci = T([1], "int32")
    cvars = [_tensor(rng, dtype, shape, q) for q in qs]
    flag = T([1], "bool")
    cond.add_op("LESS", [ci, T([1], "int32", data=np.array([limit],
                                                           np.int32))],
                [flag])
    cond.inputs, cond.outputs = [ci] + cvars, [flag]
    body = opgen.Model(name="body")
    bi = T([1], "int32")
    bo = T([1], "int32")
    body.add_op("ADD", [bi, T([1], "int32", data=np.array([1], np.int32))],
                [bo])
    bvars = [_tensor(rng, dtype, shape, q) for q in qs]
    bouts = [_elementwise(rng, body, x, dtype, shape, q)
             for x, q in zip(bvars, qs)]
    body.inputs, body.outputs = [bi] + bvars, [bo] + bouts
    m = opgen.Model()
    if rng.random() < 0.5:
        c = m.add_subgraph(cond)
        b = m.add_subgraph(body)
    else:
        b = m.add_subgraph(body)
        c = m.add_subgraph(cond)
    x0 = T([1], "int32")
    xs = [_tensor(rng, dtype, shape, q) for q in qs]
    y0 = T([1], "int32")
    ys = [_tensor(rng, dtype, shape, q) for q in qs]
    m.add_op("WHILE", [x0] + xs, [y0] + ys,
             {"cond_subgraph_index": c, "body_subgraph_index": b})
    m.inputs, m.outputs = [x0] + xs, [y0] + ys
    start = np.array([rng.randint(-1, limit)], np.int32)
    inputs = [start] + [_data(rng, dtype, shape) for _ in xs]
    return m.build(), inputs


def _counter(rng, m, dtype, shape, q, name, container, x):
    """In model m: read variable (container, name), add x, assign the
    sum; returns the sum's tensor."""
    h = T([], "resource")
    r = _tensor(rng, dtype, shape, q)
    y = _tensor(rng, dtype, shape, q)
    m.add_op("VAR_HANDLE", [], [h],
             {"container": container, "shared_name": name})
    m.add_op("READ_VARIABLE", [h], [r])
    m.add_op("ADD", [x, r], [y])
    m.add_op("ASSIGN_VARIABLE", [h, y], [])
    return y


def gen_call_once(rng, size):
    """CALL_ONCE: the init subgraph assigns a constant to a variable
    that subgraph 0 reads, adds its input to and assigns."""
    dtype = rng.choice(("int8", "float32", "int32", "int16"))
    shape = rand.shape(rng, size, 1, 4)
    q = _q(rng, dtype)
    init = opgen.Model(name="init")
    h = T([], "resource")
    init.add_op("VAR_HANDLE", [], [h], {"container": "",
                                        "shared_name": "acc"})
    init.add_op("ASSIGN_VARIABLE",
                [h, _tensor(rng, dtype, shape, q,
                            _data(rng, dtype, shape))], [])
    init.inputs, init.outputs = [], []
    m = opgen.Model()
    k = m.add_subgraph(init)
    x = _tensor(rng, dtype, shape, q)
    m.add_op("CALL_ONCE", [], [], {"init_subgraph_index": k})
    y = _counter(rng, m, dtype, shape, q, "acc", "", x)
    m.inputs, m.outputs = [x], [y]
    return m.build()


def gen_variables(rng, size):
    """VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE in subgraph 0 alone:
    the first read gives the reset value (an int8 value's zero point)."""
    dtype = rng.choice(("int8", "int8", "float32", "int32", "int16"))
    shape = rand.shape(rng, size, 1, 4)
    m = opgen.Model()
    xs, ys = [], []
    for k in range(rng.choice((1, 1, 2))):
        q = _q(rng, dtype)
        x = _tensor(rng, dtype, shape, q)
        xs.append(x)
        ys.append(_counter(rng, m, dtype, shape, q, "v%d" % k,
                           rng.choice(("", "c")), x))
    m.inputs, m.outputs = xs, ys
    return m.build()


GENERATORS = {
    "IF": gen_if,
    "WHILE": gen_while,
    "CALL_ONCE": gen_call_once,
    "VAR_HANDLE": gen_variables,
    "READ_VARIABLE": gen_variables,
    "ASSIGN_VARIABLE": gen_variables,
}

# Our runtime must run every model these generators make.
STRICT = tuple(GENERATORS)
