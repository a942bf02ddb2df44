"""No 32-bit loads from unaligned model data (Cortex-M0+ hard-faults).

Every conformance generator's models are loaded 1, 2 or 3 bytes into a
buffer (in turn: a generator's cases see all three). After prepare, a
kernel state may hold a view of a constant tensor of 2- or 4-byte
elements at an unaligned address only if its kernel reads that tensor
byte by byte (BYTEWISE, checked by reading each kernel); float kernels
must hold an aligned copy (kernels/f32.words).
x86 does not fault on unaligned loads, so the tests that run models at
odd offsets cannot catch this; this test looks at the addresses.
"""

import json

import numpy as np

from conftest import device_script, run_mp
from host_tools import opgen
from host_tools.conformance import cases

# (op, constant's dtype) -> why an unaligned constant view is fine there
BYTEWISE = {
    ("CONCATENATION", "float32"): "byte copies",
    ("CONCATENATION", "int64"): "byte copies",
    ("CONCATENATION", "int32"): "byte copies",
    ("FILL", "float32"): "value read with ptr8",
    ("FILL", "int32"): "value read with ptr8",
    ("GATHER", "int32"): "indices read with ptr8",
}
for _op in ("MAXIMUM", "MINIMUM", "ADD", "SUB", "MUL", "SQUARED_DIFFERENCE"):
    BYTEWISE[(_op, "int32")] = "broadcast.gather reads 4 bytes bytewise"
BYTEWISE[("MUL", "int16")] = "broadcast.gather reads 2 bytes bytewise"
for _op in ("MAXIMUM", "MINIMUM"):
    BYTEWISE[(_op, "float32")] = "broadcast.gather reads 4 bytes bytewise"
for _op in ("EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS",
            "LESS_EQUAL"):
    for _dt in ("float32", "int32", "int64"):
        BYTEWISE[(_op, _dt)] = "broadcast.gather reads 4 bytes bytewise"
for _op in ("FLOOR_DIV", "FLOOR_MOD"):
    BYTEWISE[(_op, "float32")] = ("broadcast.gather reads 4 bytes "
                                  "bytewise, has_zero ptr8")
for _dt in ("float32", "int32", "int16"):
    BYTEWISE[("PADV2", _dt)] = "pad value read with ptr8"
for _dt in ("float32", "int32", "int16", "uint32"):
    BYTEWISE[("CAST", _dt)] = "input read with ptr8"
for _dt in ("float32", "int32"):
    BYTEWISE[("DIV", _dt)] = "broadcast.gather reads 4 bytes bytewise"
# issue 35's index and byte-copy kernels read these with ptr8
for _dt in ("int32", "int64"):
    BYTEWISE[("BROADCAST_ARGS", _dt)] = "shapes read with ptr8"
    BYTEWISE[("DYNAMIC_UPDATE_SLICE", _dt)] = "start indices read with ptr8"
BYTEWISE[("GATHER_ND", "int32")] = "indices read with ptr8"
BYTEWISE[("EMBEDDING_LOOKUP", "int32")] = "ids read with ptr8"
BYTEWISE[("EMBEDDING_LOOKUP", "float32")] = "rows copied byte by byte"
for _dt in ("float32", "int16"):
    BYTEWISE[("SELECT_V2", _dt)] = "elements copied byte by byte"
BYTEWISE[("BATCH_MATMUL", "int16")] = "operands read with ptr8"
# the 16x8 kernels (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED with an
# int16 input: CHECK names the op "... 16x8")
for _op in ("CONV_2D", "FULLY_CONNECTED"):
    for _dt in ("int32", "int64"):
        BYTEWISE[(_op + " 16x8", _dt)] = "bias read with ptr8"
BYTEWISE[("DEPTHWISE_CONV_2D 16x8", "int64")] = "bias read with ptr8"
# only TRANSPOSE_CONV 16x8 (tconv16) takes an int64 or int16 bias
for _dt in ("int64", "int16"):
    BYTEWISE[("TRANSPOSE_CONV", _dt)] = "16x8 bias read with ptr8"


def float_const_models():
    """float32 ops with a constant operand (the generators make few)."""
    T = opgen.Tensor
    c = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    out = []
    for op in ("ADD", "SUB", "MUL", "SQUARED_DIFFERENCE"):
        out.append((op, opgen.single_op(
            op, [T([3, 4], "float32"), T([3, 4], "float32", data=c)],
            [T([3, 4], "float32")]).hex()))
    return out


CHECK = device_script("alignment.py")


def test_unaligned_constants_are_copied_or_read_bytewise(tmp_path):
    gens = cases.discover()
    models = []
    for op, g in sorted(gens.items()):
        for i in range(4):  # every size (1 + i % 4) once
            try:
                raw, _ = cases.make_case(g, 5, i, 1 + i % 4)
            except Exception:  # noqa: BLE001 - the conformance test's job
                continue
            models.append((op, raw.hex()))
    models += float_const_models()
    code = "import json\nMODELS = %r\n" % models + CHECK
    found = json.loads(run_mp(code, tmp_path, timeout=900).strip()
                       .splitlines()[-1])
    bad = sorted({(op, dt) for _, op, dt in found
                  if (op, dt) not in BYTEWISE})
    assert not bad, "kernels holding unaligned 2/4-byte constants: %s" % bad
