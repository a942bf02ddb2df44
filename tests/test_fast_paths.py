"""Kernel fast paths that the generic kernel tests reach only for some
shapes, forced for every case: ADD's lookup-table path (equal shapes);
and FULLY_CONNECTED's least work buffer, which the planner grants where
the arena's peak has no room for more."""

import numpy as np

import mp_batch
import test_kernels_misc as km

FORCE_LUT = "import tflm.kernels.add as _add\n_add.LUT_MIN = 0\n"


def test_add_lookup_table_path(tmp_path, monkeypatch):
    monkeypatch.setattr(mp_batch, "SETUP", FORCE_LUT)
    rng = np.random.default_rng(11)
    cases = [km.add_case(rng, act=k % 4, same=True, extreme=k % 5 == 4)
             for k in range(60)]
    errs = km.run_cases(cases, tmp_path, sets=3)
    assert errs == [None] * len(cases)


FC_CHUNKS = ("import tflm.kernels.fully_connected as _fc\n"
             "_fc.GATHER_MAX = 3\n_fc.UNIT_CHUNK = 5\n")


def test_fully_connected_depth_chunks(tmp_path, monkeypatch):
    """Depth gathered 3 values at a time, units 5 at a time: partial
    sums carried across chunks give the same bytes as TFLM."""
    monkeypatch.setattr(mp_batch, "SETUP", FC_CHUNKS)
    rng = np.random.default_rng(12)
    cases = [km.fc_case(rng, per_channel=k % 3 == 1, bias=k % 5 != 4,
                        act=k % 4, keep=k % 7 == 3) for k in range(30)]
    errs = km.run_cases(cases, tmp_path, sets=3, scratch=5)
    assert errs == [None] * len(cases)


def test_squared_difference_lookup_table_path(tmp_path, monkeypatch):
    """SQUARED_DIFFERENCE's table path (shared with ADD: add.fill_tables)
    forced for every int8 conformance model of the op."""
    from host_tools.conformance import cases
    from host_tools.oracle import Reference
    monkeypatch.setattr(mp_batch, "SETUP", FORCE_LUT)
    gen = cases.discover()["SQUARED_DIFFERENCE"]
    todo = []
    for i in range(40):
        raw, ins = cases.make_case(gen, 21, i, 1 + i % 4)
        dts = [Reference(raw).input_details(k)["dtype"]
               for k in range(len(ins))]
        if all(d == np.int8 for d in dts):
            arrays = [np.frombuffer(b, np.int8) for b in ins]
            todo.append((raw, lambda rng, j, a=arrays: a))
    assert len(todo) >= 10
    assert km.run_cases(todo, tmp_path) == [None] * len(todo)


# every elastic work buffer (conv_util.elastic_work) at its least size,
# as where an operator is the arena's peak
LEAST = "import tflm.planner as _p\n_p.grow = lambda buffers, total: None\n"


def test_least_work_buffers(tmp_path, monkeypatch):
    """FULLY_CONNECTED with 64 units and 64 input values per chunk (its
    least work buffer) gives the same bytes as TFLM."""
    monkeypatch.setattr(mp_batch, "SETUP", LEAST)
    rng = np.random.default_rng(13)
    cases = [km.fc_case(rng, per_channel=k % 2 == 1, bias=k % 5 != 4,
                        act=k % 4, units=int(rng.integers(65, 300)),
                        depth=int(rng.integers(65, 400)))
             for k in range(16)]
    errs = km.run_cases(cases, tmp_path, sets=2)
    assert errs == [None] * len(cases)
