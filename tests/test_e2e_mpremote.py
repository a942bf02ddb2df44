"""End to end through mpremote, with the unix port standing in for a board.

socat links a pty to the `micropython` REPL, run in a temporary folder that
plays the board's filesystem; `mpremote connect PTY resume cp ...` deploys
the .mpy package and the models; `mpremote connect PTY resume exec ...` runs
inferences as a user would at the REPL; the printed outputs must equal
TFLM's (host_tools.oracle).

How the pieces fit (each one matters):
- socat: `PTY,link=<tmp>/ttyMP,raw,echo=0` is the "serial port" mpremote
  opens; `EXEC:'micropython -X heapsize=32M',pty,raw,echo=0,stderr,setsid,
  ctty` gives micropython a pty of its own as stdin/stdout, so it starts its
  interactive REPL (isatty(0)), which has the raw REPL and raw-paste mode
  mpremote needs. `raw` on the EXEC side is essential: micropython's
  mp_hal_stdio_mode_raw() leaves c_oflag alone, so without it the pty's
  ONLCR turns every "\\r\\n" into "\\r\\r\\n" and mpremote "could not enter
  raw repl".
- `resume`: the unix port has no soft reset: Ctrl-D in the raw REPL ends
  the process (and socat with it).
- The package goes to `:tflm`, not `:`: mpremote's `cp -r DIR :` asks
  whether `:` exists with os.stat(''), which fails on the unix port, so it
  would copy the folder's contents into the root (on a board the VFS
  answers for '' and `:` works).
Copying the 33 .mpy files takes ~10 s (mpremote writes 256-byte chunks,
each a raw-paste round trip with 10 ms polls); the module takes 12-19 s.
Skipped when socat is not installed (`.ci/run` installs it).
"""

import ast
import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest

from conftest import ROOT, shared, unix_arch
from host_tools import build, deploy, device
from host_tools.oracle import Reference

HEAP = "32M"
CP_TIMEOUT = 60      # the whole package
CMD_TIMEOUT = 30     # any other mpremote command
HELLO_INPUTS = [-128, -100, -37, 0, 5, 42, 99, 127]
MARK = "OUT"


def mpremote_bin():
    exe = deploy.mpremote_cmd()
    if os.path.isabs(exe):
        return exe
    return shutil.which(exe)


class Board:
    """A unix-port "board" behind a pty: root (its filesystem), port (the
    pty link), mp(*args) runs `mpremote connect PORT resume ARGS`."""

    def __init__(self, root, port, proc, log):
        self.root, self.port, self.proc, self.log = root, port, proc, log
        self.mpremote = mpremote_bin()

    def log_text(self):
        try:
            with open(self.log) as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def mp(self, *args, timeout=CMD_TIMEOUT, check=True):
        cmd = [self.mpremote, "connect", self.port, "resume"] + list(args)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=timeout, cwd=ROOT)
        except subprocess.TimeoutExpired as e:
            pytest.fail("timed out after %ds: %s\n%s\nsocat: %s"
                        % (timeout, " ".join(cmd), e.stdout,
                           self.log_text()))
        if check and proc.returncode != 0:
            pytest.fail("exit %d: %s\n%s%s\nsocat: %s"
                        % (proc.returncode, " ".join(cmd), proc.stdout,
                           proc.stderr, self.log_text()))
        return proc

    def exec(self, code, timeout=CMD_TIMEOUT):
        """Runs code in the board's REPL; returns the parsed values of the
        lines printed as `OUT <python literal>`."""
        out = self.mp("exec", code, timeout=timeout).stdout
        vals = [ast.literal_eval(ln[len(MARK):].strip())
                for ln in out.splitlines() if ln.startswith(MARK + " ")]
        assert vals, "no %s lines in:\n%s" % (MARK, out)
        return vals


def _children(pid):
    """Pids of pid's child processes (Linux /proc; [] if unknown)."""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def _alive(pid):
    """pid runs (a zombie, already exited, counts as gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _stop(proc):
    """Ends socat and the micropython it runs (it gets SIGHUP when its pty
    closes; killed by pid if it is still there)."""
    kids = _children(proc.pid)
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    deadline = time.monotonic() + 5
    for pid in kids:
        while time.monotonic() < deadline:
            if not _alive(pid):
                break
            time.sleep(0.05)
        else:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _wait_ready(board):
    """Waits for the pty link and a REPL answering mpremote; returns the
    REPL's working directory."""
    deadline = time.monotonic() + 15
    while not os.path.exists(board.port):
        if board.proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail("socat did not create %s: %s"
                        % (board.port, board.log_text()))
        time.sleep(0.05)
    while True:
        proc = board.mp("exec", "import os; print('%s', repr(os.getcwd()))"
                        % MARK, timeout=15, check=False)
        if proc.returncode == 0:
            return ast.literal_eval(proc.stdout.split(MARK, 1)[1].strip())
        if board.proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail("no raw REPL on %s:\n%s%s\nsocat: %s"
                        % (board.port, proc.stdout, proc.stderr,
                           board.log_text()))
        time.sleep(0.2)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """A running unix-port board with the .mpy package (the port's arch)
    deployed."""
    socat = shutil.which("socat")
    if not socat:
        pytest.skip("socat is not installed (apt-get install socat; "
                    ".ci/run installs it): no pty to link mpremote to the "
                    "unix port")
    if not mpremote_bin():
        pytest.skip("mpremote is not installed (make venv)")
    tmp = tmp_path_factory.mktemp("e2e")
    _, out_dir, _ = build.build_target(arch=unix_arch(),
                                       build_dir=str(tmp / "build"))
    root = tmp / "board"
    root.mkdir()
    port = str(tmp / "ttyMP")
    log = str(tmp / "socat.log")
    mp_cmd = "%s -X heapsize=%s" % (device.micropython_bin(), HEAP)
    assert "," not in mp_cmd, mp_cmd  # a comma would end socat's EXEC:
    argv = [socat, "PTY,link=%s,raw,echo=0" % port,
            "EXEC:%s,pty,raw,echo=0,stderr,setsid,ctty" % mp_cmd]
    with open(log, "w") as logf:
        proc = subprocess.Popen(argv, cwd=str(root), stdin=subprocess.DEVNULL,
                                stdout=logf, stderr=subprocess.STDOUT,
                                start_new_session=True)
    b = Board(str(root), port, proc, log)
    try:
        cwd = _wait_ready(b)
        assert os.path.realpath(cwd) == os.path.realpath(str(root))
        b.mp("cp", "-r", os.path.join(out_dir, "tflm"), ":tflm",
             timeout=CP_TIMEOUT)
        yield b
    finally:
        _stop(proc)


def _cp_model(board, rel, name):
    board.mp("cp", shared(*rel.split("/")), ":" + name)
    return shared(*rel.split("/"))


def test_deployed_files(board):
    """mpremote put the .mpy package where `import tflm` finds it."""
    ((path, names),) = board.exec(
        "import tflm, os; print('%s', repr((tflm.__file__, "
        "sorted(os.listdir('tflm')))))" % MARK)
    assert path == "tflm/__init__.mpy"
    assert "interpreter.mpy" in names and "kernels" in names
    assert not any(n.endswith(".py") for n in names)
    assert sorted(os.listdir(os.path.join(board.root, "tflm"))) == names


def test_hello_world_matches_tflm(board):
    path = _cp_model(board, "hello_world_int8/hello_world_int8.tflite",
                     "hello_world_int8.tflite")
    got = board.exec(
        "import tflm\n"
        "it = tflm.Interpreter('hello_world_int8.tflite')\n"
        "for v in %r:\n"
        "    it.inputs[0].set([v])\n"
        "    it.invoke()\n"
        "    print('%s', list(it.outputs[0].get()))\n" % (HELLO_INPUTS, MARK))
    ref = Reference(path)
    want = [ref.run([np.array([v], np.int8)])[0].flatten().tolist()
            for v in HELLO_INPUTS]
    assert got == want


def test_micro_speech_matches_tflm(board):
    path = _cp_model(board, "micro_speech_quantized/"
                     "micro_speech_quantized.tflite", "micro_speech.tflite")
    feats = {}
    for word in ("yes", "no"):
        f = np.load(shared("micro_speech_quantized", word + "_features.npy"))
        feats[word] = f.astype(np.int8).flatten()
        local = os.path.join(os.path.dirname(board.root), word + ".bin")
        with open(local, "wb") as fh:
            fh.write(feats[word].tobytes())
        board.mp("cp", local, ":%s.bin" % word)
    # a third input computed on the board: (i * 37 + 11) mod 256 as int8
    feats["ramp"] = (((np.arange(1960) * 37 + 11) & 0xff) ^ 0x80).astype(
        np.int16) - 0x80
    got = board.exec(
        "import tflm\n"
        "it = tflm.Interpreter('micro_speech.tflite')\n"
        "for x in (open('yes.bin', 'rb').read(), open('no.bin', 'rb').read(),"
        " bytes((i * 37 + 11) & 0xff for i in range(1960))):\n"
        "    it.inputs[0].set(x)\n"
        "    it.invoke()\n"
        "    print('%s', list(it.outputs[0].get()))\n" % MARK)
    ref = Reference(path)
    want = [ref.run([feats[w].astype(np.int8)])[0].flatten().tolist()
            for w in ("yes", "no", "ramp")]
    assert got == want
    labels = ["silence", "unknown", "yes", "no"]
    assert [labels[int(np.argmax(g))] for g in got[:2]] == ["yes", "no"]
