"""RESHAPE, SQUEEZE, EXPAND_DIMS: TFLite's shape rules, zero copy."""

import numpy as np
import pytest

from conftest import run_bytes
from host_tools import opgen
from host_tools.oracle import Reference

T = opgen.Tensor


def shape_model(op, in_shape, out_shape, extra=None, options=None,
                out_scale=0.5, out_zp=3):
    m = opgen.Model()
    x = m.add_tensor(T(in_shape, scale=0.5, zero_point=3))
    ins = [x]
    if extra is not None:
        ins.append(m.add_tensor(extra))
    y = m.add_tensor(T(out_shape, scale=out_scale, zero_point=out_zp))
    m.add_op(op, ins, [y], options)
    m.inputs, m.outputs = [x], [y]
    return m.build()


def run_ok(raw, tmp_path, n):
    data = np.arange(n, dtype=np.int64).astype(np.int8).tobytes()
    got, info = run_bytes(raw, tmp_path, [[data]])
    assert got is not None, info
    want = Reference(raw).run([np.frombuffer(data, np.int8)])[0].tobytes()
    assert got[0][0] == want == data  # same bytes, as TFLM
    return info


def rejected(raw, tmp_path, n, words):
    data = bytes(n)
    got, info = run_bytes(raw, tmp_path, [[data]])
    assert got is None, "model was accepted"
    assert info["error"] == "PrepareError", info
    for w in words:
        assert w in info["message"], info["message"]
    return info["message"]


def i32(vals):
    return T([len(vals)], "int32", data=np.array(vals, np.int32))


@pytest.mark.parametrize("target,out", [
    ([2, -1], [2, 12]),          # single -1 inferred
    ([-1], [24]),                # flatten
    ([1, -1], [1, 24]),          # converters' flatten [N, -1]
    ([4, 3, 2], [4, 3, 2]),
])
def test_reshape_from_shape_tensor(tmp_path, target, out):
    raw = shape_model("RESHAPE", [2, 3, 4], out, extra=i32(target))
    info = run_ok(raw, tmp_path, 24)
    # zero copy: input and output share one buffer, arena holds one tensor
    assert info["arena"] == 32


def test_reshape_from_new_shape_option(tmp_path):
    raw = shape_model("RESHAPE", [2, 3, 4], [6, 4],
                      options={"new_shape": [6, -1]})
    run_ok(raw, tmp_path, 24)


def test_reshape_from_stored_output_shape(tmp_path):
    run_ok(shape_model("RESHAPE", [2, 3, 4], [3, 8]), tmp_path, 24)


@pytest.mark.parametrize("target,out,words", [
    ([-1, -1], [4, 6], ["more than one -1"]),
    ([5, -1], [4, 6], ["cannot infer -1"]),
    ([5, 5], [5, 5], ["holds 25 elements", "24"]),
    ([-2, -12], [2, 12], ["negative dimension"]),
    ([4, 6], [6, 4], ["(6, 4)", "(4, 6)", "op 0 (RESHAPE)"]),
])
def test_reshape_errors_name_op_and_shapes(tmp_path, target, out, words):
    raw = shape_model("RESHAPE", [2, 3, 4], out, extra=i32(target))
    rejected(raw, tmp_path, 24, words)


def test_reshape_refuses_to_requantize(tmp_path):
    raw = shape_model("RESHAPE", [2, 12], [24], out_scale=0.25)
    rejected(raw, tmp_path, 24, ["cannot requantize"])


def test_squeeze(tmp_path):
    raw = shape_model("SQUEEZE", [1, 4, 1, 3], [4, 3])
    run_ok(raw, tmp_path, 12)
    raw = shape_model("SQUEEZE", [1, 4, 1, 3], [1, 4, 3],
                      options={"squeeze_dims": [-2]})
    run_ok(raw, tmp_path, 12)


@pytest.mark.parametrize("dims,words", [
    ([1], ["dimension 1", "it is 4"]),
    ([4], ["out of range"]),
])
def test_squeeze_errors(tmp_path, dims, words):
    raw = shape_model("SQUEEZE", [1, 4, 1, 3], [4, 3],
                      options={"squeeze_dims": dims})
    rejected(raw, tmp_path, 12, words)


@pytest.mark.parametrize("axis,out", [(0, [1, 4, 3]), (-1, [4, 3, 1]),
                                      (1, [4, 1, 3])])
def test_expand_dims(tmp_path, axis, out):
    raw = shape_model("EXPAND_DIMS", [4, 3], out, extra=i32([axis]))
    run_ok(raw, tmp_path, 12)


def test_expand_dims_axis_out_of_range(tmp_path):
    raw = shape_model("EXPAND_DIMS", [4, 3], [4, 3, 1], extra=i32([4]))
    rejected(raw, tmp_path, 12, ["out of range"])
