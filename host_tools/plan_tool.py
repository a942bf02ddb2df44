"""`python -m host_tools plan MODEL [--png FILE]`: the arena plan.

Runs the device package's own planner (tflm.planner.plan_model) under
CPython, so it shows exactly the offsets a board uses: for every
activation tensor its offset, size, first and last use (operator
indices, inclusive) and which tensor's bytes it shares (RESHAPE-like
outputs are views of their input; a CONV_2D's or pool's input that
its output writes over, starting the bytes shown after it or more:
"t1 +63728"). The picture has time (operator index)
on x and arena offset on y, one box per buffer.
"""

import os

from tflm import planner
from tflm.model import Model

from .png import CHAR_H, Canvas, text_width


def add_parser(sub):
    p = sub.add_parser("plan", help="print (and draw) the arena plan of a "
                       "model, as the board computes it")
    p.add_argument("model")
    p.add_argument("--png", help="also draw the plan into this PNG file")
    p.add_argument("--tflm", action="store_true",
                   help="compare with TFLM's own arena figures")


def compute(model):
    """The plan of a Model, path or bytes, as a dict.

    Keys: arena (bytes), ops (list of (index, name)), tensors (list of
    dicts: index, name, shape, dtype, nbytes, offset, first, last, root,
    for every planned activation, in tensor order), buffers (list of
    dicts: root, members, offset, size, first, last, link: None or
    [root, d] of the buffer whose bytes this one may share, starting d
    bytes or more after it: planner.overlap), no_reuse (sum of buffer
    sizes) and peak_live (most bytes live during one operator: a lower
    bound for any plan with these lifetimes in which buffers alive
    together never share bytes, as TFLM's).
    """
    if not isinstance(model, Model):
        if isinstance(model, str):
            with open(model, "rb") as f:
                model = f.read()
        model = Model(model)
    arena, bufs, root = planner.plan_model(model)
    life = planner.lifetimes(model)
    tensors = []
    members = {}
    for i in sorted(life):
        r = root[i]
        b = bufs.get(r)
        if b is None:  # a view of a constant: not in the arena
            continue
        t = model.tensors[i]
        tensors.append({"index": i, "name": t.name, "shape": list(t.shape),
                        "dtype": t.dtype, "nbytes": t.nbytes,
                        "offset": b.offset, "first": life[i][0],
                        "last": life[i][1], "root": r})
        members.setdefault(r, []).append(i)
    buffers = [{"root": r, "members": members.get(r, [r]),
                "offset": b.offset, "size": b.size, "first": b.first,
                "last": b.last,
                "link": None if b.link is None else list(b.link)}
               for r, b in sorted(bufs.items())]
    n_ops = len(model.operators)
    peak = max([sum(b["size"] for b in buffers
                    if b["first"] <= k <= b["last"])
                for k in range(n_ops)] or [0])
    return {"arena": arena,
            "ops": [(op.index, op.name) for op in model.operators],
            "tensors": tensors, "buffers": buffers,
            "no_reuse": sum(b["size"] for b in buffers),
            "peak_live": peak}


def _short(name, n):
    """name cut to n characters, keeping its end (TF names end with the
    informative part: '.../conv_3/Relu')."""
    return name if len(name) <= n else ".." + name[-(n - 2):]


def table(plan):
    """The plan as text lines."""
    lines = ["%4s %-28s %-9s %-18s %8s %8s %6s %5s  %s"
             % ("t", "name", "dtype", "shape", "bytes", "offset", "first",
                "last", "shares bytes of")]
    at = dict((b["root"], b) for b in plan["buffers"])
    links = {}  # the links the plan uses: the buffers share bytes
    for b in plan["buffers"]:
        k = b["link"]
        if k is not None:
            p = at[k[0]]
            if b["offset"] - p["offset"] >= k[1] and \
                    b["offset"] < p["offset"] + p["size"]:
                links[b["root"]] = k
    for t in plan["tensors"]:
        alias = "" if t["root"] == t["index"] else "t%d" % t["root"]
        k = links.get(t["index"])
        if k is not None:  # (planner.overlap: written over as it is read)
            alias = "t%d +%d" % tuple(k)
        lines.append("%4d %-28s %-9s %-18s %8d %8d %6d %5d  %s"
                     % (t["index"], _short(t["name"], 28), t["dtype"],
                        "x".join(str(d) for d in t["shape"]) or "scalar",
                        t["nbytes"], t["offset"], t["first"], t["last"],
                        alias))
    lines.append("arena: %d bytes (%d buffers; %d without reuse; at most "
                 "%d live during one operator)"
                 % (plan["arena"], len(plan["buffers"]), plan["no_reuse"],
                    plan["peak_live"]))
    return lines


_COLORS = [(141, 211, 199), (255, 255, 179), (190, 186, 218),
           (251, 128, 114), (128, 177, 211), (253, 180, 98),
           (179, 222, 105), (252, 205, 229), (217, 217, 217),
           (188, 128, 189), (204, 235, 197), (255, 237, 111)]


def draw(plan, path, title="", width=900, height=560):
    """Draw the plan: x = operator index, y = arena offset (0 at the
    top), one outlined box per buffer labelled with its tensor indices."""
    n_ops = max(len(plan["ops"]), 1)
    left, right, top, bottom = 70, 20, 40, 40
    c = Canvas(width, height)
    c.text(left, 10, title or "arena plan", scale=2)
    pw, ph = width - left - right, height - top - bottom
    arena = max(plan["arena"], 1)
    col = pw / n_ops

    def ypos(off):
        return top + int(off * ph / arena)

    c.box(left - 1, top - 1, left + pw + 1, top + ph + 1, (250, 250, 250))
    for k, b in enumerate(plan["buffers"]):
        x0 = left + int(b["first"] * col)
        x1 = left + int((b["last"] + 1) * col)
        y0, y1 = ypos(b["offset"]), max(ypos(b["offset"] + b["size"]),
                                        ypos(b["offset"]) + 2)
        c.box(x0, y0, x1, y1, _COLORS[k % len(_COLORS)])
        label = "=".join("t%d" % i for i in b["members"])
        if text_width(label) + 4 > x1 - x0 or CHAR_H + 4 > y1 - y0:
            label = "t%d" % b["root"]
        if text_width(label) + 4 <= x1 - x0 and CHAR_H + 4 <= y1 - y0:
            c.text(x0 + 3, (y0 + y1 - CHAR_H) // 2, label)
    # x axis: operator indices; y axis: offsets in bytes
    step = max(1, int(n_ops / (pw / 28.0)) + 1)
    for k in range(0, n_ops, step):
        x = left + int((k + 0.5) * col)
        c.vline(x, top + ph, top + ph + 4, (0, 0, 0))
        c.text(x - text_width(str(k)) // 2, top + ph + 7, str(k))
    c.text(left + pw // 2 - text_width("operator") // 2, height - 14,
           "operator")
    for f in range(5):
        off = plan["arena"] * f // 4
        y = ypos(off)
        c.hline(left - 5, left, y, (0, 0, 0))
        s = str(off)
        c.text(left - 8 - text_width(s), y - (CHAR_H // 2 if f else 0), s)
    c.save(path)


def main(args):
    plan = compute(args.model)
    for line in table(plan):
        print(line)
    if args.tflm:
        from .arena import tflm_arena
        t = tflm_arena(args.model)
        print("TFLM: head %s bytes (planned activations), tail %s bytes"
              % (t.get("head"), t.get("tail")))
    if args.png:
        title = "%s: arena %d bytes" % (os.path.basename(args.model),
                                        plan["arena"])
        draw(plan, args.png, title)
        print("wrote %s" % args.png)
    return 0
