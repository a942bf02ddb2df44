"""MEAN: float32 only for now (pool_f32.prepare_mean, which follows TFLM's
reduce_common.cc / reference reduce.h); other types raise PrepareError."""


def prepare(op, ins, outs, ctx):
    """See pool_f32.prepare_mean."""
    from .pool_f32 import prepare_mean
    return prepare_mean(op, ins, outs, ctx)
