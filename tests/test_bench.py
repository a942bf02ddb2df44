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
