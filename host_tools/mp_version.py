# Runs inside the MicroPython unix port: prints its version line.
import sys

v = sys.implementation.version
print("MicroPython %d.%d.%d%s (%s, %d-bit)" % (
    v[0], v[1], v[2], "-" + v[3] if len(v) > 3 and v[3] else "",
    sys.platform, 64 if sys.maxsize > 2 ** 32 else 32))
