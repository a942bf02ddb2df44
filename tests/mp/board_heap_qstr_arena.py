# Runs in MicroPython: tests/test_board_heap.py (no qstr is made once the
# arena is allocated; argv: the package's .mpy folder, then model files).
# Prints per model the qstr counts (micropython.qstr_info's n_qstr, read
# from its printed line) when the arena has just been allocated and once
# the interpreter is built, between MARK lines the test parses.
import micropython
import sys
sys.path.insert(0, sys.argv[1])
import tflm
import tflm.source as source

allocate = source.allocate


def counted(*args):
    allocate(*args)
    print('MARK arena')
    micropython.qstr_info()


source.allocate = counted
for path in sys.argv[2:]:
    it = tflm.Interpreter(path)
    print('MARK built', it._compiled is True)  # (.compiled: tflm.api)
    micropython.qstr_info()
    it = None
    tflm.unload()
