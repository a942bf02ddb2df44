# Runs in MicroPython: tests/test_board_heap.py (a plain construction
# makes no qstr from the construction modules' import, right after the
# kernels' code, to the arena's allocation; argv: the package's .mpy
# folder, then a model file). Prints micropython.qstr_info's line once
# the construction modules are imported and when the arena is about to
# be allocated, between MARK lines the test parses, then whether it built.
import micropython
import sys
sys.path.insert(0, sys.argv[1])
import tflm
import tflm.allocator as allocator

helpers = allocator._helpers
allocate = allocator.allocate


def imported(*args):
    helpers(*args)
    print('MARK helpers')
    micropython.qstr_info()


def counted(*args):
    print('MARK arena')
    micropython.qstr_info()
    allocate(*args)


allocator._helpers = imported
allocator.allocate = counted
it = tflm.Interpreter(sys.argv[2])
print('MARK built', it.arena is not None)
