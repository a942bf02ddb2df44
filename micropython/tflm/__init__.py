"""tflm: TensorFlow Lite for Microcontrollers, in MicroPython.

    import tflm
    interp = tflm.Interpreter('/rom/model.tflite')
    interp.inputs[0].data[:] = my_int8_bytes
    interp.invoke()
    print(bytes(interp.outputs[0].data))

The package also imports under CPython, where host tools reuse its FlatBuffer
reader, model view and memory planner (kernels need MicroPython's viper).
"""

try:
    import micropython
    micropython.viper  # a folder named 'micropython' may shadow it
except (ImportError, AttributeError):  # CPython: let viper modules import.
    import sys

    class _MicroPythonShim:
        """Stand-in so kernel modules import under CPython (not run)."""

        @staticmethod
        def viper(f):
            return f

        native = viper

        @staticmethod
        def const(x):
            return x

    sys.modules["micropython"] = _MicroPythonShim

from .errors import (TFLMError, FormatError, ModelError,  # noqa: E402
                     UnsupportedOpError, PrepareError, ArenaError,
                     InvokeError)

__version__ = "0.1.0"
from .interpreter import Interpreter  # noqa: E402
