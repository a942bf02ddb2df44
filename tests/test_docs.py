"""The documentation stays true: every ```python block of README.md and
docs/*.md runs on the unix port, and every generated table
(host_tools/docs.py, `make docs`) matches what its sources give now.

Blocks run one per MicroPython process, in a folder holding every file of
../shared/models under its own name (person_detect.tflite, yes_1000ms.wav,
...), so that a block names a model as a user with the file beside them
would. A block is

- a script: run as it is; it fails the test if it raises;
- a REPL transcript (its lines start with `>>> `, `... ` continues a
  statement): each statement runs as the REPL runs it, and the lines
  after it must be what it prints (a `...` in an expected line matches
  anything there);
- `# board` on its first line: meant for a board, run here with `/rom/`
  paths read from that folder instead;
- `# board-only` on its first line: needs a board (rp2 flash, machine,
  pins): not run.

Shell blocks (```sh, ```bash or indented) are not run. Without
../shared/models the example tests skip.
"""

import glob
import os
import re

import pytest

from conftest import PKG, ROOT, SHARED
from host_tools import device, docs
from host_tools.docs_ops import OPS

FENCE = re.compile(r"^```(\w*)\s*$")
SEP = "\x01@@"


def doc_pages():
    return [os.path.join(ROOT, "README.md")] + \
        sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def python_blocks(path):
    """[(first line number of the code, code)] of path's ```python
    blocks (line numbers from 1)."""
    out, cur, lang = [], None, None
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if cur is None and m and m.group(1):
            lang, cur, start = m.group(1), [], i + 1
        elif cur is None and m:
            lang, cur, start = "", [], i + 1
        elif cur is not None and line.strip() == "```":
            if lang == "python":
                out.append((start, "\n".join(cur) + "\n"))
            cur = None
        elif cur is not None:
            cur.append(line)
    assert cur is None, "%s: a ``` block is not closed" % path
    return out


def all_blocks():
    out = []
    for path in doc_pages():
        rel = os.path.relpath(path, ROOT)
        for start, code in python_blocks(path):
            out.append(pytest.param(path, start, code,
                                    id="%s:%d" % (rel, start)))
    return out


def transcript(start, code):
    """[(line, statement, expected output lines)] of a REPL transcript."""
    stmts = []
    for k, line in enumerate(code.rstrip("\n").split("\n")):
        if line.startswith(">>> ") or line == ">>>":
            stmts.append([start + k, [line[4:]], []])
        elif (line.startswith("... ") or line == "...") and stmts and \
                not stmts[-1][2]:
            stmts[-1][1].append(line[4:])
        elif stmts:
            stmts[-1][2].append(line)
    return [(n, "\n".join(src) + "\n", out) for n, src, out in stmts]


def is_transcript(code):
    """A REPL transcript: its first line after the comments starts with
    >>>."""
    for line in code.split("\n"):
        if not line.startswith("#"):
            return line.startswith(">>>")
    return False


def _matches(expected, got):
    pattern = ".*".join(re.escape(p) for p in expected.split("..."))
    return re.fullmatch(pattern, got) is not None


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    if not os.path.isdir(SHARED):
        pytest.skip("no ../shared/models")
    d = tmp_path_factory.mktemp("docs_models")
    for src in sorted(glob.glob(os.path.join(SHARED, "*", "*"))):
        name = os.path.basename(src)
        if not os.path.exists(str(d / name)):
            os.symlink(src, str(d / name))
    return d


def _script(path, start, code):
    """MicroPython source that runs one block (compiled with the page's
    name and line numbers, so that a traceback names both)."""
    head = ["import sys", "sys.path.insert(0, %r)" % PKG,
            "_g = {'__name__': '__main__'}",
            "def _run(src, mode):",
            "    exec(compile(src, %r, mode), _g)"
            % os.path.relpath(path, ROOT)]
    first = code.split("\n", 1)[0].strip()
    if first == "# board":
        code = code.replace("'/rom/", "'").replace('"/rom/', '"')
    if is_transcript(code):
        for line, stmt, _ in transcript(start, code):
            head.append("print(%r)" % (SEP + str(line)))
            # blank lines before a statement are a SyntaxError in mode
            # 'single'; joined lines (backslashes) keep the numbering
            head.append("_run(%r, 'single')" % ("\\\n" * (line - 1)
                                                 + stmt))
    else:
        head.append("_run(%r, 'exec')" % ("\n" * (start - 1) + code))
    return "\n".join(head) + "\n"


@pytest.mark.parametrize("path,start,code", all_blocks())
def test_doc_example(path, start, code, models_dir, tmp_path):
    first = code.split("\n", 1)[0].strip()
    where = "%s:%d" % (os.path.relpath(path, ROOT), start)
    if first == "# board-only":
        pytest.skip("%s needs a board" % where)
    script = tmp_path / "block.py"
    script.write_text(_script(path, start, code))
    proc = device.run_script(str(script), timeout=300, cwd=str(models_dir))
    out = proc.stdout
    if proc.returncode != 0:
        line = start
        if SEP in out:
            line = int(out.rsplit(SEP, 1)[1].split("\n", 1)[0])
        pytest.fail("%s:%d: the example raised:\n%s%s"
                    % (os.path.relpath(path, ROOT), line, out[-3000:],
                       proc.stderr[-3000:]))
    if not is_transcript(code):
        return
    got = {}
    for part in out.split(SEP)[1:]:
        n, text = part.split("\n", 1)
        got[int(n)] = text.rstrip("\n").split("\n") if text.strip() else []
    for line, stmt, expected in transcript(start, code):
        lines = got.get(line, [])
        ok = len(lines) == len(expected) and all(
            _matches(e, g) for e, g in zip(expected, lines))
        assert ok, "%s:%d: %r printed\n%s\nnot\n%s" % (
            os.path.relpath(path, ROOT), line, stmt.strip(),
            "\n".join(lines), "\n".join(expected))


def test_transcript_parsing():
    t = transcript(10, ">>> for i in range(2):\n...     i\n...\n0\n1\n"
                   ">>> x = 1\n>>> x\n1\n")
    assert t == [(10, "for i in range(2):\n    i\n\n", ["0", "1"]),
                 (15, "x = 1\n", []), (16, "x\n", ["1"])]
    assert _matches("array('f', [...])", "array('f', [1.5, 2.0])")
    assert not _matches("[1]", "[2]")


def test_python_blocks_are_found():
    blocks = [b for p in doc_pages() for b in python_blocks(p)]
    assert len(blocks) >= 10
    readme = python_blocks(os.path.join(ROOT, "README.md"))
    assert any(code.startswith(">>> ") for _, code in readme)


# --- generated tables ---------------------------------------------------


def test_generated_tables_are_fresh():
    stale = [os.path.relpath(p, ROOT) for p, _ in docs.stale()]
    assert not stale, ("generated tables are stale in %s: run `make docs`"
                       % ", ".join(stale))


def test_every_region_is_used():
    text = "".join(open(p, encoding="utf-8").read() for p in doc_pages())
    for name in docs.REGIONS:
        assert "<!-- generated: %s -->" % name in text, name


def test_render_replaces_only_regions():
    text = ("a\n<!-- generated: viper -->\nold\n<!-- end generated -->\nb\n")
    new = docs.render(text)
    assert new.startswith("a\n<!-- generated: viper -->\n")
    assert new.endswith("<!-- end generated -->\nb\n")
    assert "old" not in new and "| viper |" in new
    assert docs.render(new) == new
    with pytest.raises(ValueError):
        docs.render("<!-- generated: nosuch -->\n<!-- end generated -->")


def test_every_operator_has_a_types_row():
    """A kernel registry entry without a row in host_tools/docs_ops.py
    (a new operator) fails here: add its types there and run make docs."""
    names = docs.registry_names()
    missing = sorted(set(names) - set(OPS))
    extra = sorted(set(OPS) - set(names))
    assert not missing, "add to host_tools/docs_ops.py: %s" % missing
    assert not extra, "not in the kernel registry: %s" % extra


def test_readme_is_short_with_the_quick_start_early():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert len(lines) <= 200
    assert "make demo" in lines[2] and "make test" in lines[3]
    head = "\n".join(lines[:60])
    for needed in ("## Quick start on a board", "FLASH_MODEL=", "ROMFS=1",
                   "mip install", "## At the REPL"):
        assert needed in head, needed


def test_a_raising_block_names_its_page_and_line(tmp_path):
    """What a failing example reports: the page's name and the line."""
    path = os.path.join(ROOT, "README.md")
    for code, line in (("x = 1\nraise ValueError('boom')\n", 41),
                       (">>> x = 1\n>>> 1 // 0\n", 41)):
        script = tmp_path / "block.py"
        script.write_text(_script(path, 40, code))
        proc = device.run_script(str(script), cwd=str(tmp_path))
        assert proc.returncode != 0
        assert 'File "README.md", line %d' % line in proc.stderr + \
            proc.stdout, proc.stderr


# The operators of TFLM's op resolver (tensorflow/lite/micro/
# micro_mutable_op_resolver.h, the newest tflite-micro): its builtins and
# its custom operators by name, EthosU (an NPU call) left out.
TFLM_BUILTINS = (
    "ABS ADD ADD_N ARG_MAX ARG_MIN ASSIGN_VARIABLE AVERAGE_POOL_2D "
    "BATCH_MATMUL BATCH_TO_SPACE_ND BROADCAST_ARGS BROADCAST_TO "
    "CALL_ONCE CAST CEIL CONCATENATION CONV_2D COS CUMSUM "
    "DEPTHWISE_CONV_2D DEPTH_TO_SPACE DEQUANTIZE DIV "
    "DYNAMIC_UPDATE_SLICE ELU EMBEDDING_LOOKUP EQUAL EXP EXPAND_DIMS "
    "FILL FLOOR FLOOR_DIV FLOOR_MOD FULLY_CONNECTED GATHER GATHER_ND "
    "GREATER GREATER_EQUAL HARD_SWISH IF L2_NORMALIZATION L2_POOL_2D "
    "LEAKY_RELU LESS LESS_EQUAL LOG LOGICAL_AND LOGICAL_NOT LOGICAL_OR "
    "LOGISTIC LOG_SOFTMAX MAXIMUM MAX_POOL_2D MEAN MINIMUM MIRROR_PAD "
    "MUL NEG NOT_EQUAL PACK PAD PADV2 PRELU QUANTIZE READ_VARIABLE "
    "REDUCE_ALL REDUCE_MAX REDUCE_MIN RELU RELU6 RESHAPE "
    "RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR REVERSE_V2 ROUND RSQRT "
    "SELECT_V2 SHAPE SIN SLICE SOFTMAX SPACE_TO_BATCH_ND SPACE_TO_DEPTH "
    "SPLIT SPLIT_V SQRT SQUARE SQUARED_DIFFERENCE SQUEEZE STRIDED_SLICE "
    "SUB SUM SVDF TANH TRANSPOSE TRANSPOSE_CONV "
    "UNIDIRECTIONAL_SEQUENCE_LSTM UNPACK VAR_HANDLE WHILE ZEROS_LIKE "
).split()
TFLM_CUSTOM = (
    "CIRCULAR_BUFFER SignalDelay SignalEnergy SignalFftAutoScale "
    "SignalFilterBank SignalFilterBankLog "
    "SignalFilterBankSpectralSubtraction SignalFilterBankSquareRoot "
    "SignalFramer SignalIrfft SignalOverlapAdd SignalPCAN SignalRfft "
    "SignalStacker SignalWindow TFLM_DECODE "
    "TFLite_Detection_PostProcess "
).split()


def test_every_tflm_resolver_operator_has_a_kernel():
    """Every operator that TFLM's MicroMutableOpResolver offers (but
    EthosU) has a kernel in the registry: the missing ones are named."""
    names = set(docs.registry_names())
    missing = sorted(set(TFLM_BUILTINS + TFLM_CUSTOM) - names)
    assert not missing, "no kernel for: %s" % missing
    assert len(TFLM_BUILTINS) == 100 and len(TFLM_CUSTOM) == 17
