"""Runs the package's @micropython.asm_thumb functions on an emulated
Cortex-M0 (unicorn), as a board with the inline assembler would.

The machine code is what mpy-cross -march=armv6m puts in the .mpy of a
module (host_tools/mpy_native.py reads it out), so the test checks the
bytes a board loads. A call gets its arguments in r0..r3 as MicroPython
passes them (a buffer's address, or an int's value), returns to a
sentinel address, and fails on what a Cortex-M0 would fault on or a
caller would not survive: an unaligned 16/32-bit access (ARMv6-M has
no unaligned support), an access outside the memory given to the call,
or r4-r11 / sp not restored.
"""

import os
import re
import struct
import tempfile

from unicorn import (UC_ARCH_ARM, UC_HOOK_CODE, UC_HOOK_MEM_READ,
                     UC_HOOK_MEM_WRITE, UC_MEM_WRITE, UC_MODE_MCLASS,
                     UC_MODE_THUMB, Uc)
import unicorn.arm_const as A

from host_tools import PKG_DIR, mpy_native, romfs

CODE = 0x10000000   # flash (XIP) on an RP2040
RAM = 0x20000000
RAM_SIZE = 0x100000
RET = 0x10080000    # return sentinel, in the mapped code region
_SAVED = [getattr(A, "UC_ARM_REG_R%d" % i) for i in range(4, 12)] + \
    [A.UC_ARM_REG_SP]


def asm_functions(rel, arch="armv6m"):
    """{name: machine code} of the asm_thumb functions of package module
    rel ('tflm/kernels/thumb.py'), compiled by mpy-cross for arch. The
    names come from the source, in order (the .mpy keeps no names for
    asm functions; mpy-cross writes them in definition order)."""
    src = os.path.join(PKG_DIR, *rel.split("/"))
    with open(src) as f:
        names = re.findall(r"^@micropython\.asm_thumb\s*\ndef (\w+)",
                           f.read(), re.M)
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "m.mpy")
        err = romfs.mpy_cross(src, rel, arch, dst)
        assert err is None, err
        with open(dst, "rb") as f:
            data = f.read()
    codes = []
    mpy_native.native_functions(data, codes)
    assert len(codes) == len(names), (names, len(codes))
    return dict(zip(names, codes))


def block_layout(rel, name):
    """The word names of a block, from the comment in package module rel
    that lays it out ('# NAME: W0 W1 ...', continued on '#   ...' lines):
    the device code keeps no names (they would cost a board RAM)."""
    with open(os.path.join(PKG_DIR, *rel.split("/"))) as f:
        lines = f.read().splitlines()
    start = [i for i, ln in enumerate(lines)
             if ln.startswith("# %s:" % name)]
    assert len(start) == 1, (rel, name)
    words = lines[start[0]].split(":", 1)[1].split()
    for ln in lines[start[0] + 1:]:
        if not ln.startswith("#   "):
            break
        words += ln[1:].split()
    assert len(set(words)) == len(words), words
    return words


class ThumbError(AssertionError):
    """The machine code did what a Cortex-M0 or its caller would not
    survive."""


class Emulator:
    """A Cortex-M0 (or with m4=True a Cortex-M4, which runs ARMv7E-M's
    DSP instructions) with the code at CODE and RAM_SIZE bytes at RAM.
    alloc() hands out RAM; call() runs a function. Unaligned 16/32-bit
    accesses fail on both (the M4 code promises aligned loads only),
    except word reads of a buffer allocated with unaligned on the M4."""

    def __init__(self, m4=False):
        self.uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
        self.uc.ctl_set_cpu_model(A.UC_CPU_ARM_CORTEX_M4 if m4 else
                                  A.UC_CPU_ARM_CORTEX_M0)
        self.uc.mem_map(CODE, 0x100000)
        self.uc.mem_map(RAM, RAM_SIZE)
        self.uc.mem_write(RET, b"\x00\xbf" * 4)  # nop: never run
        self.top = RAM + 0x1000  # below: the stack
        self.m4 = m4
        # (start, end, writable, unaligned word reads allowed)
        self.regions = [(RAM + 0x800, RAM + 0x1000, True, False)]  # stack
        self.faults = []
        self.count = 0
        self.uc.hook_add(UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, self._mem)
        self.uc.hook_add(UC_HOOK_CODE, self._step)

    def _mem(self, uc, access, address, size, value, data):
        write = access == UC_MEM_WRITE
        if size > 1 and address % size and not (
                self.m4 and not write and size == 4 and any(
                    a <= address and address + size <= b and u
                    for a, b, w, u in self.regions)):
            self.faults.append("unaligned %d-byte access at 0x%x"
                               % (size, address))
        if not any(a <= address and address + size <= b and (w or not write)
                   for a, b, w, u in self.regions):
            self.faults.append("%s outside the call's buffers at 0x%x"
                               % ("write" if write else "read", address))

    def _step(self, uc, address, size, data):
        self.count += 1

    def alloc(self, data, align=4, offset=0, writable=False,
              unaligned=False):
        """Copies bytes data into RAM at an address = offset mod align,
        after a gap; returns the address. The code may read it, and write
        it if writable; on the M4, with unaligned, read words of it at
        any address (LDR does in hardware: thumb_dw_dsp.py's plane)."""
        a = -(-(self.top + 16) // align) * align + offset
        self.uc.mem_write(a, bytes(data))
        self.top = a + len(data)
        self.regions.append((a, self.top, writable, unaligned))
        return a

    def read(self, address, n):
        return bytes(self.uc.mem_read(address, n))

    def words(self, address, n):
        """n int32 values at address."""
        return list(struct.unpack("<%di" % n, self.read(address, 4 * n)))

    def call(self, code, *args, limit=10 ** 7):
        """Runs machine code with args in r0..r3; returns r0 (unsigned).
        Raises ThumbError as the class says."""
        self.uc.mem_write(CODE, code)
        # unicorn keeps translated blocks by address: another function
        # called at CODE by the same emulator must not run stale ones
        self.uc.ctl_remove_cache(CODE, CODE + 0x100000)
        self.faults = []
        self.count = 0
        sp = RAM + 0x1000 - 64
        before = []
        for i, reg in enumerate(_SAVED):
            v = sp if reg == A.UC_ARM_REG_SP else 0x5A5A0000 + i
            self.uc.reg_write(reg, v)
            before.append(v)
        for i, a in enumerate(args):
            self.uc.reg_write(getattr(A, "UC_ARM_REG_R%d" % i),
                              a & 0xFFFFFFFF)
        self.uc.reg_write(A.UC_ARM_REG_LR, RET | 1)
        self.uc.emu_start(CODE | 1, RET, count=limit)
        if self.uc.reg_read(A.UC_ARM_REG_PC) != RET:
            raise ThumbError("did not return within %d instructions"
                             % limit)
        if self.faults:
            raise ThumbError("; ".join(self.faults[:3]))
        after = [self.uc.reg_read(r) for r in _SAVED]
        if after != before:
            raise ThumbError("r4-r11 or sp not restored")
        return self.uc.reg_read(A.UC_ARM_REG_R0)
