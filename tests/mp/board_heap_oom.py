# Runs in MicroPython: tests/test_board_heap.py (running out of heap while
# constructing is always an ArenaError; see the test for its arguments).
import gc
import sys
sys.path.insert(0, sys.argv[1])
import tflm
with open(sys.argv[2], 'rb') as f:
    buf = f.read()
seen = {}
for keep in range(0, 90000, 700):
    gc.collect()
    # The free heap is not one block: shrink the ballast until it fits
    # (the heap then keeps at least `keep` bytes free, maybe more).
    size = max(0, gc.mem_free() - keep)
    ballast = None
    while ballast is None and size >= 0:
        try:
            ballast = bytearray(size)
        except MemoryError:
            size -= 256
    if ballast is None:
        continue
    try:
        it = tflm.Interpreter(buf)
        it.invoke()
        k = 'ok'
    except tflm.ArenaError as e:
        k = 'ArenaError'
        # the model's objects did not fit: what needs less follows
        if 'the model needs more RAM' in str(e):
            h = 'hint' if 'arena=' in str(e) else 'no hint'
            seen[h] = seen.get(h, 0) + 1
    except Exception as e:
        k = type(e).__name__
    it = ballast = None
    seen[k] = seen.get(k, 0) + 1
gc.collect()
it = tflm.Interpreter(buf)  # no ballast: the whole heap builds
it.invoke()
print(sorted(seen.items()))
