"""Helpers of the float32 tests: ulp distances, special-value inputs, and
running many single-op models in one MicroPython process against TFLM."""

import numpy as np

from host_tools.oracle import Reference

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45,
                     1.1754942e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0],
                    np.float32)


def ulp_diff(a, b):
    """Per element distance in float32 ulps (0 for equal bits, for -0.0
    vs 0.0 and for NaN vs NaN; 2**40 for NaN vs a number)."""
    a = np.ascontiguousarray(a, np.float32).ravel()
    b = np.ascontiguousarray(b, np.float32).ravel()

    def key(x):
        u = x.view(np.int32).astype(np.int64)
        return np.where(u < 0, -(u & 0x7FFFFFFF), u)

    d = np.abs(key(a) - key(b))
    na, nb = np.isnan(a), np.isnan(b)
    d[na & nb] = 0
    d[na ^ nb] = 1 << 40
    return d


def floats(rng, shape, scale=1.0, special=0.0):
    """Normal float32 values times scale; a fraction `special` of them
    replaced by SPECIALS (zeros, infinities, NaN, subnormals, extremes)."""
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    if special:
        m = rng.random(shape) < special
        x[m] = rng.choice(SPECIALS, int(m.sum()))
    return x


def run_cases(cases, tmp_path):
    """Run (model_bytes, input_sets, tol_ulp) cases: input_sets is a list
    of lists of numpy arrays (one per model input). TFLM runs each set on
    CPython, tflm on the unix port (all in one process, through
    mp_batch.run_on_device: every model at k % 4, each set invoked twice
    under heap_lock).

    Asserts that tflm accepts what TFLM accepts and that every output is
    within tol_ulp of TFLM's (NaN where TFLM has NaN). Returns the largest
    ulp distance seen per case (None when TFLM rejected the model)."""
    from mp_batch import run_on_device
    expected, batch = [], []
    for model, sets, tol in cases:
        try:
            ref = Reference(model)
        except RuntimeError:
            expected.append(None)
            batch.append((model, []))  # built only: it must not crash
            continue
        expected.append([[np.array(o) for o in ref.run(ins)]
                         for ins in sets])
        batch.append((model, sets))
    got = run_on_device(batch, tmp_path)
    worst = []
    for k, (outs, (st, res)) in enumerate(zip(expected, got)):
        if outs is None:
            worst.append(None)
            continue
        assert st == "OK", "case %d: tflm rejected what TFLM runs: %s" % (
            k, res)
        tol = cases[k][2]
        w = 0
        for j, want in enumerate(outs):
            for i, e in enumerate(want):
                raw = res[j][i]
                assert len(raw) == e.nbytes, "case %d: output size" % k
                if e.dtype != np.float32:
                    assert raw == e.tobytes(), "case %d set %d output %d" % (
                        k, j, i)
                    continue
                dist = ulp_diff(np.frombuffer(raw, np.float32), e)
                bad = np.nonzero(dist > tol)[0]
                assert not len(bad), (
                    "case %d set %d output %d: %d values beyond %d ulp, "
                    "first at %d: tflm %r TFLM %r (%d ulp)" % (
                        k, j, i, len(bad), tol, bad[0],
                        np.frombuffer(raw, np.float32)[bad[0]],
                        e.ravel()[bad[0]], dist[bad[0]]))
                w = max(w, int(dist.max()) if dist.size else 0)
        worst.append(w)
    return worst
