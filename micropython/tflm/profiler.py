"""Per-operator timing of Interpreter.invoke(profile=True).

The interpreter records microseconds per executed step (time.ticks_us
around each eval call, as TFLM's MicroProfiler brackets each operator in
MicroInterpreterGraph::InvokeSubgraph) plus the whole invoke. This module
turns that into a list and an optional table; it runs outside invoke().
"""

from .errors import InvokeError


def report(interp, table=False):
    """[(op index, op name, µs), ...] of the last profiled invoke; with
    table=True also prints it with each op's share of the total and a
    final line with the total (which includes the loop's own overhead).
    Raises InvokeError if there is no profiled invoke yet."""
    if not getattr(interp, "_profiled", False):
        raise InvokeError("no profile yet: call invoke(profile=True)")
    ops = interp.model.operators
    us = interp._prof_us
    rows = [(i, ops[i].name, us[k])
            for k, i in enumerate(interp._prof_ops)]
    interp.model.release()  # the interpreter keeps no parsed operators
    if table:
        print_table(rows, us[len(rows)])
    return rows


def print_table(rows, total):
    """Print rows of (op index, op name, µs) with shares of total µs."""
    print("%4s  %-24s %9s %7s" % ("op", "name", "us", "share"))
    for i, name, t in rows:
        share = 100.0 * t / total if total > 0 else 0.0
        print("%4d  %-24s %9d %6.1f%%" % (i, name, t, share))
    print("%4s  %-24s %9d %6.1f%%" % ("", "total (invoke)", total, 100.0))
