"""make bench's pieces that the timing table does not cover."""

from conftest import shared
from host_tools import bench


def test_viper_vs_bytecode_variants_agree():
    """The viper-vs-bytecode step re-prepares a 1x1 CONV_2D of a loaded
    interpreter (whose kept arrays already live in the persistent arena)
    and runs three versions of its loops: all must write the bytes the
    kernel writes."""
    shared(*bench.VIPER_MODEL[0].split("/"))
    res = bench.viper_vs_bytecode(repeats=1)
    assert res["name"] == "CONV_2D"
    assert res["viper_same"] and res["native_same"] and res["bytecode_same"]


def test_board_fit_section_reports_package_cost():
    """make bench's board-fit rows: construction figures and the package
    cost (GC heap of import tflm, of the model's kernel modules, and
    their armv6m machine code; what is left at rest), rendered in
    results.md."""
    todo = [m for m in bench.MODELS if m[0] == "hello_world_int8"]
    shared(*todo[0][1].split("/"))
    fits = bench.board_fit(todo)
    f = fits[0]
    p = f["package"]
    # hello_world is one FULLY_CONNECTED kernel module (+ its imports)
    assert "tflm.kernels.fully_connected" in p["after_kernels"]
    assert p["tflm"] > 0 and p["kernels"] > 0
    # FULLY_CONNECTED's int8 loops are viper code: some machine code
    assert p["kernels_native"] > 1000
    assert f["kept"] >= f["head"] + f["tail"]
    md = bench.markdown({
        "machine": {"date": "d", "cpu": "c", "cores": 2, "micropython": "m"},
        "rounds": 1, "load_start": "0", "load_end": "0", "models": [],
        "fit": fits})
    row = [ln for ln in md.splitlines() if ln.startswith("| hello_world")]
    assert row and "%.1f + %.1f + %.1f" % (
        p["tflm"] / 1024, p["kernels"] / 1024,
        (p["tflm_native"] + p["kernels_native"]) / 1024) in row[0], row
    # at rest: the parser dropped, less than imported
    native = p["tflm_native"] + p["kernels_native"]
    assert p["at_rest"] < p["tflm"] + p["kernels"]
    assert "| %.1f |" % ((p["at_rest"] + native) / 1024) in row[0], row
