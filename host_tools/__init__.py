"""Host tools for tflm (CPython): run models on the MicroPython unix port,
compare with the TFLM reference interpreter, inspect and plan models."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG_DIR = os.path.join(ROOT, "micropython")
if PKG_DIR not in sys.path:
    sys.path.insert(0, PKG_DIR)
