"""tflm: TensorFlow Lite for Microcontrollers, in MicroPython.

    import tflm
    interp = tflm.Interpreter('/rom/model.tflite')
    interp.inputs[0].data[:] = my_int8_bytes
    interp.invoke()
    print(bytes(interp.outputs[0].data))

The package also imports under CPython, where host tools reuse its FlatBuffer
reader, model view and memory planner (kernels need MicroPython's viper).
"""

import sys

if sys.implementation.name != "micropython":
    from . import _host  # noqa: F401 (CPython: the micropython shim)

from .errors import (TFLMError, FormatError, ModelError,  # noqa: E402,F401
                     UnsupportedOpError, PrepareError, ArenaError,
                     InvokeError)

__version__ = "0.1.0"
from .interpreter import Interpreter  # noqa: E402,F401


def register_op(name, prepare, eval):
    """Run CUSTOM operators named name with a Python kernel:
    prepare(op, ins, outs, options) -> state once, eval(state) at each
    invoke(). See tflm/custom.py (imported only when used)."""
    from .custom import register_op as reg
    reg(name, prepare, eval)


def unload():
    """Drop the modules that interpreters imported on demand, so that
    what no live interpreter uses goes back to the heap: see
    tflm/modules.py (imported only when called). Returns their names."""
    from .modules import unload as drop
    return drop()


def flash_models():
    """[(name, size in bytes)] of the models written to an rp2 board's
    flash by `python -m host_tools flash-image` (between the firmware and
    the file system): see tflm/flashimage.py (imported only when called).
    Raises FormatError if there is no such image, it is torn, or the
    firmware has grown into it."""
    from .flashimage import models
    return models()


def flash_model(name, check=True):
    """Model `name` of that flash image as a memoryview of flash (no
    copy, CRC-checked unless check=False), for tflm.Interpreter(...).
    Raises FormatError (see flash_models) or if no model has that name."""
    from .flashimage import model
    return model(name, check=check)
