# MicroPython manifest (micropython-lib's packaging convention): freezes
# the tflm package into a firmware build. In a board's manifest:
#     include("path/to/this/repo/micropython/manifest.py")
# Frozen, the package's bytecode stays in flash; viper code is compiled
# for the port's architecture by the build. The version is tflm's
# __version__ (tests/test_manifest.py checks both).
metadata(
    description="TensorFlow Lite for Microcontrollers runtime in MicroPython: "
    "int8 .tflite models from flash, bit-exact with TFLM.",
    version="0.1.0",
)

package("tflm")
