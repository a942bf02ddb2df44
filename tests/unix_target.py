"""A stand-in target for the tools' --target-cmd / --cmd: the MicroPython
unix port given a ROMFS image and a script, as an emulator wrapper runs
them (the image mounted at /rom first, 16-byte aligned as a board's flash
is). Usage: python unix_target.py IMAGE SCRIPT MICROPYTHON; exits with
MicroPython's status."""

import subprocess
import sys

PRELUDE = (
    "import sys, uctypes, vfs\n"
    "raw = open(%r, 'rb').read()\n"
    "buf = bytearray(len(raw) + 16)\n"
    "k = -uctypes.addressof(buf) %% 16\n"
    "buf[k:k + len(raw)] = raw\n"
    "raw = None\n"
    "vfs.mount(vfs.VfsRom(memoryview(buf)[k:]), '/rom')\n")


def main():
    image, script, mp = sys.argv[1:4]
    with open(script) as f:
        code = PRELUDE % image + f.read()
    return subprocess.run([mp, "-X", "heapsize=16M", "-c", code]).returncode


if __name__ == "__main__":
    sys.exit(main())
