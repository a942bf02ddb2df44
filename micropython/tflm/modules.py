"""tflm.unload(): give back the RAM of modules imported on demand.

A board keeps the native code of every imported module in RAM, and the
kernel modules that each model needs are imported the first time an
interpreter uses them; in a long session that switches models, they add
up. Imported only when tflm.unload() is called.
"""

import gc
import sys

# imported on demand besides the kernel modules (tflm.custom stays: it
# holds register_op's registrations), and the parser (interpreter.PARSE:
# print(interp) and interp.model import it again once built, then above
# the arena)
# (tflm.interpreter.CONSTRUCTION's modules go when an interpreter is built)
HELPERS = ("tflm.fixedpoint", "tflm.api", "tflm.repl", "tflm.values",
           "tflm.view",
           "tflm.profiler", "tflm.modules", "tflm.model", "tflm.flatbuf",
           "tflm.kernels")


def unload():
    """Drop the kernel modules, fixedpoint, the REPL helpers (api, repl,
    values, profiler) and the parser (model, flatbuf, the kernels
    package) from sys.modules and their packages,
    then collect: what no live interpreter uses goes back to the heap.
    The next Interpreter imports what its model needs again. Live
    interpreters keep working (their kernels hold what they use), but a
    model built while one lives may then import a second copy of a
    module, so call it when the previous interpreter is dropped:
        interp = None; tflm.unload(); interp = tflm.Interpreter(path)
    Registered custom ops stay registered. Returns the names dropped.
    """
    names = [k for k in sys.modules
             if k.startswith("tflm.kernels.") or k in HELPERS]
    for k in names:
        del sys.modules[k]
        i = k.rfind(".")
        parent = sys.modules.get(k[:i])
        if parent is not None:
            try:
                delattr(parent, k[i + 1:])
            except (AttributeError, KeyError, TypeError):
                pass
    gc.collect()
    return names
