"""Per-operator timing of Interpreter.invoke(profile=True).

The interpreter records microseconds per executed step (time.ticks_us
around each eval call, as TFLM's MicroProfiler brackets each operator in
MicroInterpreterGraph::InvokeSubgraph) plus the whole invoke. This module
turns that into a list and an optional table; it runs outside invoke().
"""

from .errors import InvokeError


def report(interp, table=False):
    """interp.profile(table=False) (api.py): [(op index, op name, µs),
    ...] of the last invoke(profile=True), one entry per operator that
    runs (RESHAPE-like views take no time and have none); with
    table=True also prints it with each op's share of the total and a
    final line with the total (which includes the loop's own overhead).
    Raises InvokeError if there is no profiled invoke yet. Allocates
    (call it outside heap_lock)."""
    if not getattr(interp, "_profiled", False):
        raise InvokeError("no profile yet: call invoke(profile=True)")
    m = interp.model  # parsed again on each access
    ops = m.operators
    us = interp._prof_us
    rows = [(i, ops[i].name, us[k])
            for k, i in enumerate(interp._prof_ops)]
    m = ops = None
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
