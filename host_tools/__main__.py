"""Command line: python -m host_tools {run,demo,romfs,...} ..."""

import argparse
import sys

from . import boards, build, cli_run, demo, deploy, romfs
from . import bench, bench_device, plan_tool
from . import fuzz
from .conformance import runner as conformance
from . import compile as compile_tool
from . import dedupe, docs, fit, flash_image, inspect_tool


def parser():
    p = argparse.ArgumentParser(prog="python -m host_tools",
                                description="tflm host tools")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run a model on the MicroPython unix port")
    r.add_argument("model")
    r.add_argument("--input", action="append", default=[],
                   help=".npy, .bin or .bmp file per model input "
                        "(default: seeded random)")
    r.add_argument("--raw", action="store_true",
                   help="take uint8 files as raw int8 bytes (no -128)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--repeat", type=int, default=5,
                   help="invokes to time (median is printed)")
    r.add_argument("--check", action="store_true",
                   help="compare with the TFLM reference interpreter")
    sub.add_parser("demo", help="digits CNN: accuracy, TFLM agreement")
    romfs.add_parser(sub)
    fuzz.add_parser(sub)
    bench.add_parser(sub)
    plan_tool.add_parser(sub)
    boards.add_parser(sub)
    build.add_parsers(sub)
    deploy.add_parser(sub)
    conformance.add_parser(sub)
    inspect_tool.add_parser(sub)
    dedupe.add_parser(sub)
    compile_tool.add_parser(sub)
    fit.add_parser(sub)
    flash_image.add_parser(sub)
    bench_device.add_parser(sub)
    docs.add_parser(sub)
    return p


def main(argv=None):
    """Parse argv and run one subcommand; returns its exit status. A
    missing or unreadable file, or a model this runtime rejects, is one
    line on stderr and status 1, not a traceback."""
    args = parser().parse_args(argv)
    from tflm.errors import TFLMError
    try:
        return _dispatch(args)
    except OSError as e:
        name = getattr(e, "filename", None)
        print("error: %s%s" % ("%s: " % name if name else "",
                               e.strerror or e), file=sys.stderr)
    except TFLMError as e:
        print("error: %s: %s" % (type(e).__name__, e), file=sys.stderr)
    return 1


def _dispatch(args):
    if args.cmd == "run":
        return cli_run.main(args)
    if args.cmd == "bench":
        return bench.main(args)
    if args.cmd == "plan":
        return plan_tool.main(args)
    if args.cmd == "romfs":
        if args.compile:  # the models compiled for the image's arch
            args.model = compile_tool.compile_specs(args.model, args.arch)
        return romfs.main(args)
    if args.cmd == "fuzz":
        return fuzz.main(args)
    if args.cmd == "boards":
        return boards.main(args)
    if args.cmd == "mpy":
        return build.main_mpy(args)
    if args.cmd == "package-json":
        return build.main_package_json(args)
    if args.cmd == "deploy":
        return deploy.main(args)
    if args.cmd == "conformance":
        return conformance.main(args)
    if args.cmd == "inspect":
        return inspect_tool.main(args)
    if args.cmd == "compile":
        return compile_tool.main(args)
    if args.cmd == "dedupe":
        return dedupe.main(args)
    if args.cmd == "fit":
        return fit.main(args)
    if args.cmd == "flash-image":
        return flash_image.main(args)
    if args.cmd == "bench-device":
        return bench_device.main(args)
    if args.cmd == "docs":
        return docs.main(args)
    return demo.main(args)


if __name__ == "__main__":
    sys.exit(main())
