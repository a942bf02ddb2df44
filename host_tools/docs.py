"""Generated tables of README.md and docs/*.md (`make docs`).

A generated region of a page is

    <!-- generated: NAME -->
    ...
    <!-- end generated -->

and its text comes from REGIONS[NAME]: figures from bench/results.json
(`make bench`, host_tools/bench.py) and bench/device.json (`make
bench-device`, host_tools/bench_device.py), boards from
boards/*/board.json, operators from the kernel registry
(micropython/tflm/kernels/__init__.py), the schema's names
(micropython/tflm/schema.py), the conformance generators
(host_tools/conformance/gen_*.py) and the types table docs_ops.py.

    python -m host_tools docs           rewrite the stale regions
    python -m host_tools docs --check   exit 1 naming the stale regions

tests/test_docs.py runs the check (render() in memory, compared with the
committed pages).
"""

import glob
import json
import os
import re

from . import ROOT

BENCH = os.path.join(ROOT, "bench")
BOARDS = os.path.join(ROOT, "boards")

START = re.compile(r"<!-- generated: ([\w-]+) -->\n")
END = "<!-- end generated -->"


def pages(root=ROOT):
    """The pages that may hold generated regions: README.md, docs/*.md."""
    return [os.path.join(root, "README.md")] + \
        sorted(glob.glob(os.path.join(root, "docs", "*.md")))


def _json(name):
    with open(os.path.join(BENCH, name)) as f:
        return json.load(f)


def _n(v):
    """An integer with thousands separators."""
    return "{:,}".format(int(v))


def _f(v, digits=1):
    return "-" if v is None else "%.*f" % (digits, v)


def _m(v):
    """Instructions in millions."""
    return "%.1f M" % (v / 1e6)


def _table(head, rows, align=None):
    """A Markdown table; align: one of 'l' / 'r' per column."""
    align = align or "l" + "r" * (len(head) - 1)
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" if a == "l" else "---:" for a in align)
           + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _unix_note(res):
    m = res["machine"]
    return ("`make bench` on the unix port, %s on %s (%d cores), %s"
            % (m["micropython"], m["cpu"], m["cores"], m["date"][:10]))


def _device_note(dev):
    return ("`make bench-device` at commit %s on %s"
            % (dev["commit"], dev["target"]))


# --- regions --------------------------------------------------------------


def headline():
    """README: a few numbers per benchmark model."""
    res, dev = _json("results.json"), _json("device.json")
    try:  # bench-device --construction
        con = {m["name"]: m for m in _json("construction.json")["models"]}
    except OSError:
        con = {}
    unix = {m["name"]: m for m in res["models"]}
    m4 = {m["name"]: m for m in dev.get("arches", {}).get(
        "armv7emsp", {}).get("models", ())}
    fit = {f["name"]: f for f in res["fit"]}
    exact = sum(1 for m in res["models"] if m["bit_exact"])
    rows, others = [], []
    for d in dev["models"]:
        u, f = unix.get(d["name"]), fit.get(d["name"])
        e = m4.get(d["name"])
        if not u or not f:
            others.append("%s %s%s" % (d["name"], _f(d["per_mac"]),
                                       " (M4F: %s)" % _f(e["per_mac"])
                                       if e else ""))
            continue
        c = con.get(d["name"])
        rows.append((
            d["name"], "%s / %s" % (_f(d["per_mac"]),
                                    _f(e["per_mac"]) if e else "-"),
            "%.2fx" % u["ratio"],
            "%s / %s" % (_n(u["arena"] + u["persistent"]),
                         _n(u["tflm_head"] + u["tflm_tail"])),
            _n(f["kept"]), "%.0f M / %.0f M" % (
                c["plain"]["construct"] / 1e6,
                c["compiled"]["construct"] / 1e6) if c else "-"))
    return "\n".join([
        "Bit-exact with TFLM's reference kernels: %d of the %d models that "
        "`make bench` runs." % (exact, len(res["models"])), "",
        _table(("model", "instructions / MAC, armv6m / armv7emsp",
                "time vs TFLM (unix port)",
                "arena head + tail, ours / TFLM's, B", "RAM kept, B",
                "armv6m construction, plain / compiled model, instructions"),
               rows), "",
        "Also on armv6m, instructions per MAC: %s. RAM is a 64-bit build's "
        "(%s). Sources: %s; %s%s. More in [docs/performance.md]"
        "(docs/performance.md) and [docs/memory.md](docs/memory.md)."
        % (", ".join(others), res["fit"][0]["arch"] if res["fit"] else "?",
           _device_note(dev), _unix_note(res),
           "; construction (the first Interpreter(), kernel imports "
           "included): `bench-device --construction`, "
           "[bench/construction.md](bench/construction.md)" if con else "")])


def bench_device():
    """performance.md: instructions per MAC, per model and op: armv6m's
    table, then one per other arch that device.json holds."""
    dev = _json("device.json")
    out = []
    for arch, d in [("armv6m", dev)] + sorted(dev.get("arches", {}).items()):
        rows = []
        for m in d["models"]:
            ops = ", ".join(
                "%s %s (%d%%)" % (name, _f(o.get("per_mac")),
                                  round(100 * o["share"]))
                for name, o in sorted(m["ops"].items(),
                                      key=lambda kv: -kv[1]["share"])
                if round(100 * o["share"]) >= 1)
            mhz = m["instructions"] / 125e6 * 1000
            rows.append((m["name"], _n(m["macs"]), _m(m["instructions"]),
                         "**%s**" % _f(m["per_mac"]), "%.0f" % mhz
                         if mhz >= 10 else "%.1f" % mhz, ops))
        out += [
            "%s: measured by %s." % (arch, _device_note(d)), "",
            _table(("model", "MACs", "instructions / invoke", "per MAC",
                    "ms at 125 MHz, 1 instruction / cycle",
                    "by operator: instructions per MAC (share)"),
                   rows, "lrrrrl"), ""]
    return "\n".join(out[:-1])


def bench_unix():
    """performance.md: ours vs TFLM on the unix port."""
    res = _json("results.json")
    rows = []
    for m in res["models"]:
        rows.append((
            m["name"], _n(m["macs"]), "%.3f" % (m["ours_us"] / 1000),
            "%.3f" % (m["tflm_us"] / 1000),
            "**%.2f** (%.2f..%.2f)" % (m["ratio"], m["ratio_min"],
                                       m["ratio_max"]),
            "%.0f" % m["mmacs"] if m["mmacs"] else "-",
            "%s / %s" % (_n(m["arena"]), _n(m["persistent"])),
            "%s / %s" % (_n(m["tflm_head"]), _n(m["tflm_tail"])),
            "%.1f" % (m["build_us"] / 1000),
            "yes" if m["bit_exact"] else "no"))
    return "\n".join([
        "Measured by %s; %d rounds, load average %s at start, %s at end."
        % (_unix_note(res), res["rounds"], res["load_start"],
           res["load_end"]), "",
        _table(("model", "MACs", "ours ms", "TFLM ms",
                "ratio (min..max)", "MMAC/s", "arena head / tail B",
                "TFLM head / tail B", "construction ms", "bit-exact"),
               rows)])


def profiles():
    """performance.md: share of operator time per operator type."""
    res = _json("results.json")
    rows = []
    for name, p in res["profiles"].items():
        shares = ", ".join("%s %d%%" % (op, round(100 * s))
                           for op, s in sorted(p["share"].items(),
                                               key=lambda kv: -kv[1])
                           if round(100 * s) >= 1)
        rows.append((name, "%.2f" % (p["total"] / 1000), shares))
    return "\n".join([
        "From `invoke(profile=True)` (%s)." % _unix_note(res), "",
        _table(("model", "total ms", "share of operator time"), rows,
               "lrl")])


def viper():
    """performance.md: the same loop as viper, native and bytecode."""
    v = _json("results.json")["viper"]
    rows = [(k, _n(v[k + "_us"]), "%.1f" % (v[k + "_us"] / v["viper_us"]),
             "yes" if v[k + "_same"] else "no")
            for k in ("viper", "native", "bytecode")]
    return "\n".join([
        "%s op %d of `%s` (%s MACs), its multiply-accumulate loops "
        "written three ways (host_tools/mp_viper_bench.py, unix port):"
        % (v["name"], v["op"], v["model"], _n(v["macs"])), "",
        _table(("emitter", "µs", "x viper", "same output"), rows)])


def fit():
    """memory.md: construction on a board-sized heap."""
    res = _json("results.json")
    rows = []
    for f in res["fit"]:
        p = f["package"]
        rows.append((
            f["name"], _n(f["kept"]),
            "%s / %s" % (_n(f["head"]), _n(f["tail"])),
            _n(f["tflm"]),
            "%.1f + %.1f" % (f["holes"] / 1024, f["margin"] / 1024),
            "%.1f" % ((p["at_rest"]) / 1024),
            "%.1f" % (p["construction"] / 1024)))
    arch = res["fit"][0]["arch"] if res["fit"] else "?"
    return "\n".join([
        "Measured by `python -m host_tools fit` as part of %s (%s build, "
        "package as .mpy):" % (_unix_note(res), arch), "",
        _table(("model", "kept B", "head / tail B", "TFLM head + tail B",
                "holes + margin KiB", "package at rest KiB",
                "construction modules KiB"), rows)])


def boards():
    """boards.md: one row per boards/<id>/board.json."""
    from .board_spec import load_boards
    rows, fits = [], []
    for b in sorted(load_boards(BOARDS), key=lambda b: b["id"]):
        rows.append((
            "[`%s`](../boards/%s/)" % (b["id"], b["id"]), b["name"],
            b["mcu"], "`%s`" % b["march"], _n(b["ram_bytes"] // 1024),
            _n(b["heap_bytes"] // 1024), _n(b["flash_bytes"] // 1024),
            _n(b["filesystem_bytes"] // 1024),
            "%s KiB" % _n(b["romfs_bytes"] // 1024) if b["romfs"] else "no",
            _n(b["arena_budget_bytes"])))
        for where, models in sorted(b.get("fits", {}).items()):
            fits.append((b["id"], where, ", ".join(models) or "-"))
    return "\n".join([
        _table(("id", "board", "MCU", "mpy-cross -march", "RAM KiB",
                "GC heap KiB (about)", "flash KiB", "filesystem KiB",
                "ROMFS (stock)", "arena budget B"), rows, "lllrrrrrrr"), "",
        "Shared models (`../shared/models`) that fit, from `make boards`:",
        "",
        _table(("board", "model file in", "models"), fits, "lll")])


def _registry():
    """[(name, module, kind)] of the kernel registry, in its order."""
    from tflm import kernels, schema
    out = []
    for word in kernels._KERNELS.split():
        code, mod = word.split(":")
        out.append((schema.builtin_name(int(code)), mod, "builtin"))
    for word in kernels._CUSTOM_KERNELS.split():
        name, mod = word.split(":")
        out.append((name, mod, "custom"))
    return out


def registry_names():
    return [name for name, _, _ in _registry()]


# conformance cases per generator whose tensor types operators.md lists
CASES = 12
CASE_SEED = 1


def case_types(gen, n=CASES, seed=CASE_SEED):
    """The sorted type names of the tensors of gen's operator (inputs,
    outputs) over its first n conformance cases (seed `seed`)."""
    from tflm import schema
    from tflm.model import Model
    from .conformance import cases
    op = gen.op.split("@")[0]
    seen = set()
    for i in range(n):
        raw, _ = cases.make_case(gen, seed, i, cases.size_of(i))
        m = Model(raw)
        for o in m.operators:
            name = o.custom_code if o.name == "CUSTOM" else o.name
            if name != op:
                continue
            for t in list(o.inputs) + list(o.outputs):
                if t >= 0:
                    seen.add(schema.type_name(m.tensors[t].type))
    return sorted(seen)


def operators():
    """operators.md: every registry entry, its types and generator."""
    from .conformance import cases
    from .docs_ops import OPS
    gens = cases.discover()
    rows = []
    for name, mod, kind in sorted(_registry(),
                                  key=lambda r: (r[2], r[0])):
        types, notes = OPS.get(name, ("(not listed in docs_ops.py)", ""))
        g = gens.get(name)
        rows.append(("`%s`" % name if kind == "custom" else name, types,
                     "`kernels/%s.py`" % mod,
                     "`%s`%s: %s" % (g.module, "" if g.strict else " *",
                                     ", ".join(case_types(g)))
                     if g else "-", notes))
    n_b = sum(1 for r in _registry() if r[2] == "builtin")
    return "\n".join([
        "%d builtin operators and %d CUSTOM ones (TFLM's Signal library) "
        "in the kernel registry (`micropython/tflm/kernels/__init__.py`). "
        "*conformance*: the generator in `host_tools/conformance/` and the "
        "tensor types of the operator in its first %d cases (seed %d; "
        "`*`: the runtime may refuse some of that generator's models as "
        "unsupported, which the suite counts apart)."
        % (n_b, len(_registry()) - n_b, CASES, CASE_SEED), "",
        _table(("operator", "types", "kernel", "conformance", "notes"),
               rows, "lllll")])


REGIONS = {
    "headline": headline,
    "bench-device": bench_device,
    "bench-unix": bench_unix,
    "profiles": profiles,
    "viper": viper,
    "fit": fit,
    "boards": boards,
    "operators": operators,
}


# --- rendering --------------------------------------------------------------


def render(text, cache=None):
    """text with every generated region's body regenerated. cache: a dict
    NAME -> body, shared between pages. Raises ValueError for an unknown
    NAME or a region without its end marker."""
    cache = {} if cache is None else cache
    out, pos = [], 0
    for m in START.finditer(text):
        if m.start() < pos:
            continue
        end = text.find(END, m.end())
        if end < 0:
            raise ValueError("generated region %r has no %r"
                             % (m.group(1), END))
        name = m.group(1)
        if name not in REGIONS:
            raise ValueError("unknown generated region %r (known: %s)"
                             % (name, ", ".join(sorted(REGIONS))))
        if name not in cache:
            cache[name] = REGIONS[name]().rstrip("\n") + "\n"
        out.append(text[pos:m.end()])
        out.append(cache[name])
        pos = end
    out.append(text[pos:])
    return "".join(out)


def stale(root=ROOT):
    """[(page path, new text)] of the pages whose regions are stale."""
    cache, out = {}, []
    for path in pages(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = render(text, cache)
        if new != text:
            out.append((path, new))
    return out


def add_parser(sub):
    p = sub.add_parser("docs", help="regenerate the generated tables of "
                       "README.md and docs/*.md")
    p.add_argument("--check", action="store_true",
                   help="write nothing; exit 1 if a table is stale")
    return p


def main(args):
    changed = stale()
    for path, new in changed:
        rel = os.path.relpath(path, ROOT)
        if args.check:
            print("stale: %s (run make docs)" % rel)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            print("wrote %s" % rel)
    return 1 if args.check and changed else 0
