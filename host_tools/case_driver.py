"""The one host-side MicroPython driver: runs models in MicroPython
processes (the unix port, or a target command) and collects their
answers, for the conformance runner, the fuzzer, the kernel tests,
device.run_model (tests, demo, `run`, bench) and bench-device.

The device side is host_tools/mp_cases.py (it runs in MicroPython): given
a listing of cases (id, model file, input files) it builds, invokes and
prints one JSON line per case, in order. serve() starts such processes
(or any worker that answers one JSON line per case, like the TFLM oracle
workers), restarts one that crashes or goes silent after the case it was
on, and records that case as "crash" or "hang". run_unix() runs cases on
the unix port, run_target() on a MicroPython target through a command
and a ROMFS image.
"""

import json
import os
import queue
import subprocess
import shlex
import threading

from . import PKG_DIR, ROOT, unix_port

SCRIPT = os.path.join(ROOT, "host_tools", "mp_cases.py")
HEAP = "16M"  # the unix port's heap for a run of cases


def _lines(stream, q):
    for line in stream:
        q.put(line)
    q.put(None)


def _feed(proc, lines):
    try:
        for line in lines:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        proc.stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def serve(todo, start, attr, timeout, what):
    """Run todo (objects with an `id`, in order) through processes made by
    start(first index) -> (Popen with text stdout, lines to feed its stdin
    or None); each answers one JSON line {"id": ..., ...} per case, stored
    in case.<attr> (which must be None before). A process that exits or
    stays silent for timeout seconds marks the first unanswered case
    {"r": "crash" / "hang", "msg": what happened, with the end of its
    stderr} and is restarted after it. Lines that are not JSON are
    ignored."""
    pos = 0
    by_id = {c.id: c for c in todo}
    while pos < len(todo):
        proc, feed = start(pos)
        q = queue.Queue()
        threading.Thread(target=_lines, args=(proc.stdout, q),
                         daemon=True).start()
        if feed is not None:
            threading.Thread(target=_feed, args=(proc, feed),
                             daemon=True).start()
        failed = None
        while pos < len(todo):
            try:
                line = q.get(timeout=timeout)
            except queue.Empty:
                proc.kill()
                failed = {"r": "hang", "msg": "%s: no answer in %gs"
                          % (what, timeout)}
                break
            if line is None:
                proc.wait()
                failed = {"r": "crash", "msg": "%s exited with status %s"
                          % (what, proc.returncode)}
                break
            try:
                res = json.loads(line)
            except ValueError:
                continue  # stray output
            c = by_id.get(res.get("id")) if isinstance(res, dict) else None
            if c is not None:
                setattr(c, attr, res)
            while pos < len(todo) and getattr(todo[pos], attr) is not None:
                pos += 1
        proc.wait()
        err = proc.stderr.read() if proc.stderr else ""
        for s in (proc.stdout, proc.stderr, proc.stdin):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
        if failed is not None and pos < len(todo):
            failed["id"] = todo[pos].id
            if err:
                failed["msg"] += ": " + err.strip()[-600:]
            setattr(todo[pos], attr, failed)
            pos += 1


def write_listing(todo, path, model_of):
    """The cases file of mp_cases.py: "id<TAB>model<TAB>in0|in1..." per
    case of todo (objects with id and inputs: a list of paths, one input
    set; or, with sets, a list of such lists: "a|b;c|d", "-" for none);
    model_of(case) gives its model's path."""
    with open(path, "w") as f:
        for c in todo:
            sets = getattr(c, "sets", None)
            ins = ("|".join(c.inputs) if sets is None else
                   ";".join("|".join(s) for s in sets) if sets else "-")
            f.write("%d\t%s\t%s\n" % (c.id, model_of(c), ins))


def run_unix(todo, work, tag, model_of, timeout, api=False, attr="dev",
             flags=(), heap=HEAP):
    """Our side of every case of todo on the MicroPython unix port
    (unix_port.micropython_bin(), heap `heap`), many cases per process, in id
    order: sets case.<attr> to mp_cases.py's answer, or to a crash / hang
    record. api: also make the bad API calls (the fuzzer's mode); flags:
    more of mp_cases.py's flags ("twice", "scratch=N", "setup=PATH"). The
    listing goes to work/<tag>_cases.txt."""
    todo = sorted(todo, key=lambda c: c.id)
    listing = os.path.join(work, tag + "_cases.txt")
    write_listing(todo, listing, model_of)

    def start(pos):
        cmd = [unix_port.micropython_bin(), "-X", "heapsize=" + heap, SCRIPT,
               PKG_DIR, listing, str(todo[pos].id)] + (["api"] if api else [])
        cmd += list(flags)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT)
        return proc, None

    serve(todo, start, attr, timeout, "micropython")


# Bytes of case files per ROMFS image on a target (with the package)
TARGET_CASE_BYTES = 400000


def run_target(todo, work, tag, cmd, arch, timeout, flags=(), attr="dev",
               chunk_bytes=TARGET_CASE_BYTES):
    """Like run_unix, on a MicroPython target: cmd (a string with {image}
    and {script}, e.g. "python3 run.py --romfs {image} {script}") runs
    mp_cases.py (its arguments prepended as ARGS) with a ROMFS image that
    holds the package compiled for arch (mpy-cross -march), the cases'
    models and input files and their listing; in chunks of about
    chunk_bytes of case files (0: one case per image and process, each in
    a fresh heap). Each case of todo has an id, `raw` (the model's bytes)
    and `input_data` (one bytes object per input; one input set). Sets
    case.<attr> as run_unix does; a target that stays silent for 4 x
    timeout seconds marks a hang."""
    from . import romfs
    todo = sorted(todo, key=lambda c: c.id)
    package = [(p, d, False) for p, d in romfs.compile_package(
        arch, code_in_rom=True)]
    with open(SCRIPT) as f:
        driver = f.read()
    chunks, size = [[]], 0
    for c in todo:
        n = len(c.raw or b"") + sum(len(d) for d in c.input_data)
        if chunks[-1] and size + n > chunk_bytes:
            chunks.append([])
            size = 0
        chunks[-1].append(c)
        size += n
    for chunk in chunks:
        def start(pos, chunk=chunk):
            files, lines = list(package), []
            for c in chunk[pos:]:
                files.append(("c%d.tflite" % c.id, c.raw, True))
                ins = []
                for k, d in enumerate(c.input_data):
                    files.append(("c%d.in%d" % (c.id, k), d, False))
                    ins.append("/rom/c%d.in%d" % (c.id, k))
                lines.append("%d\t/rom/c%d.tflite\t%s\n"
                             % (c.id, c.id, "|".join(ins)))
            files.append(("cases.txt", "".join(lines).encode(), False))
            img = os.path.join(work, tag + "_target.img")
            with open(img, "wb") as f:
                f.write(romfs.build_image(files)[0])
            script = os.path.join(work, tag + "_driver.py")
            with open(script, "w") as f:
                f.write("ARGS = %r\n" % ((("/rom", "/rom/cases.txt", "0")
                                          + tuple(flags)),) + driver)
            args = [a.format(image=img, script=script)
                    for a in shlex.split(cmd)]
            proc = subprocess.Popen(args, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
            return proc, None

        serve(chunk, start, attr, timeout * 4, "the target")
