# MicroPython manifest (micropython-lib's packaging convention): freezes
# the tflm package into a firmware build. In a board's manifest:
#     include("path/to/this/repo/micropython/manifest.py")
# Frozen, the package's bytecode stays in flash; viper code is compiled
# for the port's architecture by the build. The version is tflm's
# __version__ (tests/test_manifest.py checks both).
#
# tflm/kernels/thumb*.py (thumb.py, thumb_dw.py, thumb_softmax.py,
# thumb_pool.py, thumb_rescale.py, thumb_lstm.py; thumb_dsp.py,
# thumb_dw_dsp.py, thumb_rq_dsp.py and thumb_fpu.py, which only
# Cortex-M4/M7/M33 import, compile on every Thumb port) hold
# Cortex-M machine code (@micropython.asm_thumb) that only Thumb ports can
# compile; conv_dsp.py, dw_dsp.py, fc_dsp.py and add_dsp.py, the viper
# drivers that use thumb_dsp.py's, thumb_dw_dsp.py's and thumb_rq_dsp.py's
# extra paths, import them. For a
# port without it (esp32, RISC-V):
#     include("path/to/this/repo/micropython/manifest.py", thumb=False)
# (the kernels' viper loops then run, as they would anyway).
import os

metadata(
    description="TensorFlow Lite for Microcontrollers runtime in MicroPython: "
    "int8 .tflite models from flash, bit-exact with TFLM.",
    version="0.1.0",
)

options.defaults(thumb=True)
if options.thumb:
    package("tflm")
else:
    package("tflm", files=sorted(
        os.path.relpath(os.path.join(d, n), "tflm").replace(os.sep, "/")
        for d, _, names in os.walk("tflm") for n in names
        if n.endswith(".py") and not n.startswith("thumb")
        and not n.endswith("_dsp.py")))
