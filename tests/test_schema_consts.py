"""Module-private schema constants of the device package against the
official generated schema (tflite_micro's schema_py_generated).

Device modules name the codes they compare with as `_CONV_2D = const(3)`
(schema.py says why: no qstr, no dict entry). This test is what keeps those
copies right: every module-level `_NAME = const(v)` whose NAME is

- a BuiltinOperator or TensorType member: v is its value;
- PADDING_X / ACT_X: Padding.X / ActivationFunctionType.X;
- X_OPTIONS: the BuiltinOptions member X Options (case and underscores
  aside, e.g. POOL2D_OPTIONS is Pool2DOptions);
- MODEL_X, SG_X, OPCODE_X, OP_X, T_X, Q_X: the field index of X in the
  Model, SubGraph, OperatorCode, Operator, Tensor or QuantizationParameters
  table (from its vtable offset).
"""

import ast
import inspect
import os
import re

import pytest

from conftest import PKG

s = pytest.importorskip(
    "tflite_micro.tensorflow.lite.micro.python.schema_py_generated")


def _members(cls):
    return {k: v for k, v in vars(cls).items() if not k.startswith("_")}


def _fields(table):
    """{FIELD: index} of a table, from the generated accessors' vtable
    offsets (index = (offset - 4) / 2), e.g. Model's SUBGRAPHS: 2."""
    out = {}
    for name, fn in vars(table).items():
        if name.startswith("_") or not callable(fn):
            continue
        m = re.search(r"\._tab\.Offset\((\d+)\)", inspect.getsource(fn))
        if m:
            out[re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()] = \
                (int(m.group(1)) - 4) // 2
    return out


OPS = _members(s.BuiltinOperator)
TYPES = _members(s.TensorType)
OPTIONS = {k.lower(): v for k, v in _members(s.BuiltinOptions).items()}
PADDING = _members(s.Padding)
ACT = _members(s.ActivationFunctionType)
# field-index constants: prefix -> table
FIELDS = {"MODEL_": _fields(s.Model), "SG_": _fields(s.SubGraph),
          "OPCODE_": _fields(s.OperatorCode), "OP_": _fields(s.Operator),
          "T_": _fields(s.Tensor), "Q_": _fields(s.QuantizationParameters)}


def expected(name):
    """The official value for a constant named name (without its leading
    underscore), or None if the name is not a schema name."""
    for prefix in ("MODEL_", "SG_", "OPCODE_", "OP_", "T_", "Q_"):
        if name.startswith(prefix):
            return FIELDS[prefix][name[len(prefix):]]
    if name in OPS:
        return OPS[name]
    if name in TYPES:
        return TYPES[name]
    if name.startswith("PADDING_"):
        return PADDING[name[8:]]
    if name.startswith("ACT_"):
        return ACT[name[4:]]
    if name.endswith("_OPTIONS"):
        return OPTIONS[name.replace("_", "").lower()]
    return None


def device_consts():
    """[(module path, NAME, value)] for every module-level
    `_NAME = const(expr)` in the device package."""
    out = []
    root = os.path.join(PKG, "tflm")
    for dirpath, _, names in os.walk(root):
        for fn in sorted(names):
            if not fn.endswith(".py"):
                continue
            path = os.path.join(dirpath, fn)
            with open(path) as f:
                tree = ast.parse(f.read())
            for node in tree.body:
                if not (isinstance(node, ast.Assign)
                        and isinstance(node.value, ast.Call)
                        and getattr(node.value.func, "id", "") == "const"):
                    continue
                name = node.targets[0].id
                value = eval(compile(ast.Expression(node.value.args[0]),
                                     path, "eval"), {})
                out.append((os.path.relpath(path, root), name, value))
    return out


def test_schema_consts_match_official_schema():
    checked, wrong = 0, []
    for path, name, value in device_consts():
        if not name.startswith("_"):
            continue
        want = expected(name[1:])
        if want is None:
            continue
        checked += 1
        if value != want:
            wrong.append("%s: %s = %d, schema says %d"
                         % (path, name, value, want))
    assert not wrong, wrong
    # the kernels compare with dozens of codes: a parse that found none
    # would pass vacuously
    assert checked > 100, checked


def test_expected_knows_the_enums():
    """The name rules above map names to the values schema.fbs gives
    (hand-checked: CONV_2D 3, INT8 9, SAME 0, RELU6 3, Pool2DOptions 5,
    Model.subgraphs field 2, Model.buffers field 4, Operator's
    builtin_options field 4, Tensor's quantization field 4)."""
    assert expected("CONV_2D") == 3
    assert expected("INT8") == 9
    assert expected("PADDING_SAME") == 0
    assert expected("ACT_RELU6") == 3
    assert expected("POOL2D_OPTIONS") == 5
    assert expected("FULLY_CONNECTED_OPTIONS") == 8
    assert expected("MODEL_SUBGRAPHS") == 2
    assert expected("MODEL_BUFFERS") == 4
    assert expected("OP_BUILTIN_OPTIONS") == 4
    assert expected("T_QUANTIZATION") == 4
    assert expected("MAX_RANK") is None


def test_no_module_reads_a_code_schema_lacks():
    """schema.py keeps no code constants: a `schema.NAME` left in a
    device module would fail only when that line runs."""
    from tflm import schema
    root = os.path.join(PKG, "tflm")
    missing = []
    for dirpath, _, names in os.walk(root):
        for fn in names:
            if not fn.endswith(".py"):
                continue
            with open(os.path.join(dirpath, fn)) as f:
                tree = ast.parse(f.read())
            missing += ["%s: schema.%s" % (fn, node.attr)
                        for node in ast.walk(tree)
                        if isinstance(node, ast.Attribute)
                        and getattr(node.value, "id", "") == "schema"
                        and not hasattr(schema, node.attr)]
    assert not missing, missing


def test_kernel_table_codes():
    """kernels._KERNELS names operators by BuiltinOperator code; the
    comment line above each line of codes names them: both agree with
    the official schema, word by word, and every supported name is
    there once."""
    from host_tools.build import kernel_modules
    from tflm import kernels
    ops = _members(s.BuiltinOperator)
    path = os.path.join(PKG, "tflm", "kernels", "__init__.py")
    with open(path) as f:
        src = f.read()
    body = src[src.index("_KERNELS = ("):src.index("_CUSTOM_KERNELS")]
    lines = body.splitlines()
    seen = []
    for k, line in enumerate(lines):
        m = re.match(r'\s*" (.*)"\s*$', line)
        if not m:
            continue
        names = lines[k - 1].strip().lstrip("#").split()
        words = m.group(1).split()
        assert len(names) == len(words), (lines[k - 1], line)
        for name, word in zip(names, words):
            code, module = word.split(":")
            assert ops[name] == int(code), (name, word)
            assert kernels.module_name(int(code)) == module, word
            seen.append(name)
    assert len(seen) == len(set(seen)) == len(kernel_modules()), seen
