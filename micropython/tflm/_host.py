"""CPython only (host tools): lets the package import there. Never part
of a board's package (host_tools.romfs.package_sources leaves it out).

Host tools reuse the FlatBuffer reader, model view and memory planner;
kernel modules import too (their '@micropython.viper' functions are
never run there). On MicroPython the compiler handles those decorators
itself.
"""

import sys


class _MicroPythonShim:
    """Stand-in so kernel modules import under CPython (not run)."""

    @staticmethod
    def viper(f):
        return f

    native = asm_thumb = viper

    @staticmethod
    def const(x):
        return x


# A folder named 'micropython' (this repo's) may already be imported
# as a namespace package: replace anything without 'viper'.
if not hasattr(sys.modules.get("micropython"), "viper"):
    sys.modules["micropython"] = _MicroPythonShim
