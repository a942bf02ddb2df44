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
  table (from its vtable offset);
- T_F, where T names a builtin options table without "Options" and F one
  of its fields (CONV2D_STRIDE_W: Conv2DOptions.stride_w,
  DEPTHWISE_CONV2D_DEPTH_MULTIPLIER): the field index of F.

Kernels read option fields only by such names (`op.opt_int(_CONV2D_STRIDE_W,
0)`), with the accessor of the field's type and the schema's default:
test_option_fields_are_read_by_name.
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
# builtin options tables by normalized name ("conv2d" for Conv2DOptions):
# (fields {FIELD: index}, {FIELD: (flatbuffers scalar type, default)})
OPTION_TABLES = {}
for _name, _cls in vars(s).items():
    if _name.endswith("Options") and isinstance(_cls, type) \
            and _name != "BuiltinOptions" and hasattr(_cls, "Init"):
        _kinds = {}
        for _f, _fn in vars(_cls).items():
            if _f.startswith("_") or not callable(_fn):
                continue
            _src = inspect.getsource(_fn)
            _m = re.search(r"Get\(flatbuffers\.number_types\.(\w+)Flags",
                           _src)
            _d = re.search(r"\n\s*return (\S+)\s*$", _src)
            if _m and _d and "Vector" not in _src:
                _kinds[re.sub(r"(?<!^)(?=[A-Z])", "_", _f).upper()] = (
                    _m.group(1), eval(_d.group(1)))
        OPTION_TABLES[_name[:-7].lower()] = (_fields(_cls), _kinds)


def option_field(name):
    """(table, FIELD, index) for a name T_F as in the module doc (T: the
    options table's name, upper case, underscores ignored), or None."""
    parts = name.split("_")
    for k in range(1, len(parts)):
        table = "".join(parts[:k]).lower()
        field = "_".join(parts[k:])
        if table in OPTION_TABLES and field in OPTION_TABLES[table][0]:
            return table, field, OPTION_TABLES[table][0][field]
    return None


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
    f = option_field(name)
    return f[2] if f else None


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
    # Conv2DOptions: padding, stride_w, stride_h, fused_activation_function,
    # dilation_w_factor, ...; DepthwiseConv2DOptions puts depth_multiplier
    # before the activation; StridedSliceOptions' shrink_axis_mask is 4th
    assert expected("CONV2D_STRIDE_W") == 1
    assert expected("CONV2D_DILATION_H_FACTOR") == 5
    assert expected("DEPTHWISE_CONV2D_FUSED_ACTIVATION_FUNCTION") == 4
    assert expected("STRIDED_SLICE_SHRINK_AXIS_MASK") == 4
    assert expected("CONV2D_STRIDE") is None
    assert OPTION_TABLES["conv2d"][1]["DILATION_W_FACTOR"] == ("Int32", 1)
    assert OPTION_TABLES["softmax"][1]["BETA"] == ("Float32", 0.0)


# the Operator accessor for each flatbuffers scalar type of a field
_ACCESSOR = {"Int32": "opt_int", "Int8": "opt_byte", "Uint8": "opt_byte",
             "Bool": "opt_byte", "Float32": "opt_float"}
_DEFAULTS = {"opt_int": 0, "opt_byte": 0, "opt_float": 0.0}


def test_option_fields_are_read_by_name():
    """Every read of a builtin option in the device package
    (op.opt_int / opt_byte / opt_float, op.options.int_vector / has)
    names its field: never a bare index. Where the name is a module
    constant for an options field, the accessor matches the field's type
    (opt_int for int32, opt_byte for int8 / uint8 / bool, opt_float for
    float32) and the default given is the schema's (dilation factors 1).
    Compares of op.options_type, a tensor's type and an operator's code
    are with named constants (TensorType, BuiltinOperator, BuiltinOptions)."""
    consts = {}
    for path, name, value in device_consts():
        consts.setdefault(path, {})[name] = value
    root = os.path.join(PKG, "tflm")
    bad, reads = [], 0
    for path in sorted(set(consts) | {"model.py"}):
        with open(os.path.join(root, path)) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            for attr in ("options_type", "type", "code"):
                # a union type, a TensorType or a BuiltinOperator code
                # compared with a bare number (0: "none", for the union)
                if isinstance(node, ast.Compare) and any(
                        getattr(x, "attr", "") == attr
                        for x in [node.left] + node.comparators):
                    sides = [node.left] + node.comparators
                    sides += [e for c in sides if isinstance(c, ast.Tuple)
                              for e in c.elts]
                    bad += ["%s:%d: %s compared with %r"
                            % (path, node.lineno, attr, c.value)
                            for c in sides
                            if isinstance(c, ast.Constant)
                            and isinstance(c.value, int)
                            and not (attr == "options_type"
                                     and c.value == 0)]
            if not (isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)):
                continue
            meth, recv = node.func.attr, node.func.value
            on_op = getattr(recv, "id", "") == "op"
            on_opts = getattr(recv, "attr", "") == "options" \
                and getattr(recv.value, "id", "") == "op"
            if not (on_op and meth in _DEFAULTS or on_opts
                    and meth in ("int_vector", "has", "i32", "i8", "f32",
                                 "u8", "table", "vector")):
                continue
            reads += 1
            arg = node.args[0] if node.args else None
            where = "%s:%d: %s" % (path, node.lineno, meth)
            if not isinstance(arg, ast.Name):
                bad.append("%s reads option field %s, not a name"
                           % (where, ast.unparse(arg) if arg else None))
                continue
            if arg.id not in consts.get(path, {}):
                continue  # a parameter (resize._flags): its callers name it
            f = option_field(arg.id.lstrip("_"))
            if f is None:
                bad.append("%s: %s names no options field" % (where, arg.id))
                continue
            kind = OPTION_TABLES[f[0]][1].get(f[1])
            if kind is None or meth not in _DEFAULTS:
                continue  # a vector field
            if _ACCESSOR[kind[0]] != meth:
                bad.append("%s of %s, a %s field" % (where, arg.id, kind[0]))
            default = (ast.literal_eval(node.args[1]) if len(node.args) > 1
                       else _DEFAULTS[meth])
            if default != kind[1]:
                bad.append("%s of %s with default %r, the schema's is %r"
                           % (where, arg.id, default, kind[1]))
    assert not bad, bad
    assert reads > 70, reads


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
