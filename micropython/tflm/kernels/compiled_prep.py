"""What prepare builds once, for a model compiled on the host
(kernels.COMPILING), in place of what eval would gather again at each
invoke: it then lies in the persistent words, which a compiled model
keeps in its bytes (flash on a board: no RAM, no work per eval).
Imported by the kernels' prepare on the host only (host_tools compile
runs it on the unix port), never on a board.
"""


def dw_weights(ctx, op, inp, filt, out, act, shifts, oc, nt):
    """DEPTHWISE_CONV_2D (depthwise_conv.py): for a constant filter
    [1, KH, KW, OC] (nt = KH * KW taps) whose channels have no positive
    shift (depthwise_conv._dwp then shifts no weight: its ls is 0),
    persistent words holding, per output channel oc, its nt weights as
    int32 (tap t: filter byte t * OC + oc, sign-extended) and then their
    sum, what _dwp gathers into its work buffer at each tile otherwise;
    else None. shifts: the op's shift bytes (conv_util.quant_params),
    computed here again in the sizing pass, which leaves them out."""
    if not filt.is_const:
        return None
    from .conv_util import persistent, quant_params
    if getattr(ctx, "sizing", False):
        shifts = quant_params(op, inp, filt, out, act, oc, True, None,
                              neg_ok=True)[1]
    for k in range(oc):
        if 0 < ((shifts[k] ^ 0x80) - 0x80) <= 30:  # (NEG_MARK: above 30)
            return None
    wv = persistent(ctx, "i", oc * (nt + 1))
    d = filt.data
    for k in range(oc):
        s = 0
        for t in range(nt):
            v = (d[t * oc + k] ^ 0x80) - 0x80
            wv[k * (nt + 1) + t] = v
            s += v
        wv[k * (nt + 1) + nt] = s
    return wv
