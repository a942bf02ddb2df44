"""DETECTION_POSTPROCESS: TFLM's CUSTOM operator
'TFLite_Detection_PostProcess', the end of SSD object detectors.

Follows tensorflow/lite/micro/kernels/detection_postprocess.cc:

    inputs   box encodings [1, B, C] (C >= 4: y, x, h, w; the rest
             skipped), class scores [1, B, K + bg] (bg 0 or 1: a
             background column first, skipped), anchors [B, 4] (y, x,
             h, w; at least 4 * B values), all float32
    outputs  boxes [1, N, 4] (ymin, xmin, ymax, xmax), classes [1, N],
             scores [1, N], number of detections [1], float32
    options  a FlexBuffers map read by key as TFLM's Init reads it:
             max_detections, max_classes_per_detection,
             detections_per_class (missing: 100), use_regular_nms
             (missing: false), nms_score_threshold, nms_iou_threshold,
             num_classes (K), y_scale, x_scale, h_scale, w_scale

Decoding (DecodeCenterSizeBoxes) computes in double and rounds to
float32: yc = y / y_scale * anchor_h + anchor_y, half_h = 0.5 *
exp(h / h_scale) * anchor_h (x, w alike), then in float32 ymin = yc -
half_h, ymax = yc + half_h. Here every double operation is emulated
exactly (kernels/xfloat.py: each result correctly rounded to double, as
x86-64 SSE rounds it) except exp, computed to about 60 bits and rounded
to double: the float32 box then equals TFLM's unless the exact value
lies within about 2**-55 of a rounding boundary (never seen). The IoU
(ComputeIntersectionOverUnion) is float32 arithmetic, emulated exactly.

Non-max suppression, as TFLM:
* scores below nms_score_threshold are dropped, the rest sorted by
  decreasing score, equal scores by increasing box index (TFLM's stable
  merge sort on the kept boxes, and DecreasingPartialArgSort's
  (value, index) order); a box is kept unless its IoU with a box kept
  before it exceeds nms_iou_threshold;
* fast NMS (use_regular_nms false): per box its c = min(
  max_classes_per_detection, K) best classes, NMS on the best score,
  up to max_detections boxes; detection i's class k is written at
  c * (i * c + k) + k as TFLM writes it (it counts a box once per class),
  and only the detections are written: the other entries keep what they
  held, as in TFLM;
* regular NMS: NMS per class (up to detections_per_class boxes), the
  best max_detections of all classes so far kept after each class;
  all N entries are written, zeros after the detections.

Refused at prepare (PrepareError), where TFLM fails at invoke or would
read or write out of bounds: other tensor counts, ranks (3, 3, 2), a
batch other than 1, fewer than 4 coordinates, scores that are not
[1, B, K or K + 1], fewer than 4 * B anchor values, inputs or outputs
that are not float32 (TFLM's kernel dequantizes nothing: int8 / uint8
inputs fail its Eval), num_classes < 1, max_detections < 0, an IoU
threshold outside (0, 1], max_classes_per_detection < 1 (fast) or
detections_per_class < 1 (regular), and outputs smaller than what TFLM
writes (regular: N = max_detections; fast: c * c * min(max_detections,
B)), options that are not a FlexBuffers map. Decoded boxes with ymin >=
ymax or xmin >= xmax (TFLM's ValidateBoxes) raise InvokeError at
invoke.

Eval allocates nothing: decoded boxes, areas, sort indices and the
registers of xfloat live in work buffers (ctx.work), the constants
(option floats, exp's series) in the arena's persistent part.
"""

import micropython
from micropython import const

from ..errors import PrepareError, raise_made
from . import xfloat as X

_FLOAT32 = const(0)
_RS = const(12)  # xfloat.RS

# registers of the xfloat work buffer
_NREG = const(16)
_RZ = const(15)    # zero
_RT = const(14)    # int -> float32 writes
# constant table: 1 / j! (j = 0..20), ln 2, 1 / ln 2, 1
_C_LN2 = const(21)
_C_INVLN2 = const(22)
_C_ONE = const(23)
_NCONST = const(24)
_NTERMS = const(20)

# option floats (float32 words)
_F_YS = const(0)
_F_XS = const(1)
_F_HS = const(2)
_F_WS = const(3)
_F_SCORE = const(4)
_F_IOU = const(5)

# state slots
_S_W = const(0)
_S_TAB = const(1)
_S_FO = const(2)
_S_BOX = const(3)
_S_SCORES = const(4)
_S_ANC = const(5)
_S_OBOX = const(6)
_S_OCLS = const(7)
_S_OSCORE = const(8)
_S_ONUM = const(9)
_S_DEC = const(10)
_S_AREA = const(11)
_S_KIDX = const(12)
_S_KVAL = const(13)
_S_SIDX = const(14)
_S_ACT = const(15)
_S_SEL = const(16)
_S_A = const(17)     # fast: best scores; regular: one class's scores
_S_B = const(18)     # fast: class indices; regular: box x class indices
_S_C = const(19)     # regular: scores after NMS
_S_D = const(20)     # sort indices
_S_E = const(21)     # regular: temporary indices
_S_F = const(22)     # regular: temporary scores
_S_NB = const(23)
_S_COORDS = const(24)
_S_NCWB = const(25)
_S_NC = const(26)
_S_LO = const(27)
_S_MAXDET = const(28)
_S_NCAT = const(29)
_S_DPC = const(30)
_S_REGULAR = const(31)
_S_ERR = const(32)

# 1 / j! to 90 bits, ln 2 to 118 bits, 1 / ln 2 to 30 bits:
# (exponent, 30-bit limbs least significant first)
_CONSTS = (
    (-89, 0, 0, 536870912, 0),
    (-89, 0, 0, 536870912, 0),
    (-90, 0, 0, 536870912, 0),
    (-92, 715827883, 715827882, 715827882, 0),
    (-94, 715827883, 715827882, 715827882, 0),
    (-96, 572662306, 143165576, 572662306, 0),
    (-99, 763549742, 548801376, 763549741, 0),
    (-102, 872628276, 13634816, 872628276, 0),
    (-105, 872628276, 13634816, 872628276, 0),
    (-108, 894974226, 727947719, 775669578, 0),
    (-111, 501231016, 1011854905, 620535662, 0),
    (-115, 1021901975, 983724487, 902597327, 0),
    (-118, 681267983, 1013730266, 601731551, 0),
    (-122, 342910522, 339117246, 740592679, 0),
    (-126, 391897740, 540954256, 846391633, 0),
    (-130, 990686562, 433852296, 902817742, 0),
    (-134, 990686562, 433852296, 902817742, 0),
    (-138, 616604463, 408331573, 849710816, 0),
    (-142, 906006797, 482266045, 755298503, 0),
    (-146, 423876727, 10529682, 636040845, 0),
    (-151, 892951128, 16847491, 1017665352, 0),
    (-118, 637598910, 734651315, 524762598, 186065279),
    (-29, 774541002, 0, 0, 0),
    (0, 1, 0, 0, 0),
)


# --- prepare ---

def _options(op):
    """{key: value} of the FlexBuffers map, looked up as flexbuffers'
    Map::operator[] does (a binary search over the stored keys)."""
    from ..custom import custom_options
    from ..errors import FormatError
    from ..flexbuffers import loads
    raw = custom_options(op)
    try:
        m = loads(raw, True) if raw is not None and len(raw) else None
    except FormatError as e:
        raise PrepareError("%s: custom_options: %s" % (op.label(), e))
    if not isinstance(m, list):
        raise PrepareError("%s: custom_options must be a FlexBuffers map"
                           % op.label())
    return m


def _find(m, key):
    """(found, value) of key in the pairs m, by bsearch over the stored
    order (strcmp order of the keys' bytes)."""
    k = key.encode()
    lo, hi = 0, len(m)
    while lo < hi:
        mid = (lo + hi) // 2
        s = m[mid][0].encode()
        if k < s:
            hi = mid
        elif k > s:
            lo = mid + 1
        else:
            return True, m[mid][1]
    return False, None


def _num(v):
    """The value as a Python number (flexbuffers' AsInt64 / AsDouble:
    null 0, bool 0 / 1, vectors their size, strings parsed)."""
    if v is None:
        return 0
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, (list, tuple, dict)):
        return len(v)
    try:
        return float(v) if isinstance(v, str) else 0
    except ValueError:
        return 0


def _int32(v):
    v = _num(v)
    if isinstance(v, float):
        v = int(v) if v == v and abs(v) < 9.2e18 else 0
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def _f32_bits(v):
    import struct
    try:
        return struct.unpack("<I", struct.pack("<f", float(_num(v))))[0]
    except OverflowError:
        return 0x7F800000 if _num(v) > 0 else 0xFF800000


def _bits_value(w):
    import struct
    return struct.unpack("<f", struct.pack("<I", w))[0]


def prepare(op, ins, outs, ctx):
    """Check a TFLite_Detection_PostProcess operator and bind its eval:
    tensors, options and refusals as in the module doc."""
    from ..heap import persistent
    label = op.label()
    if len(ins) != 3 or len(outs) != 4 or None in ins or None in outs:
        raise PrepareError("%s needs 3 inputs and 4 outputs" % label)
    box, sc, anc = ins
    m = _options(op)

    def get(key, default=0):
        found, v = _find(m, key)
        return v if found and v is not None else default

    max_det = _int32(get("max_detections"))
    mcpd = _int32(get("max_classes_per_detection"))
    dpc = _int32(get("detections_per_class", 100))
    regular = _int32(get("use_regular_nms", False)) != 0
    nc = _int32(get("num_classes"))
    fo = persistent(ctx, "I", 6)
    for i, key in enumerate(("y_scale", "x_scale", "h_scale", "w_scale",
                             "nms_score_threshold", "nms_iou_threshold")):
        fo[i] = _f32_bits(get(key))
    for t, rank in ((box, 3), (sc, 3), (anc, 2)):
        if len(t.shape) != rank:
            raise PrepareError("%s: %s has %d dimension(s), expected %d"
                               % (label, t.label(), len(t.shape), rank))
    for t in (box, sc, anc) + tuple(outs):
        if t.type != _FLOAT32:
            raise PrepareError("%s: %s is %s; supported: float32 (TFLM's "
                               "kernel dequantizes nothing)"
                               % (label, t.label(), t.dtype))
    nb = box.shape[1]
    coords = box.shape[2]
    if box.shape[0] != 1 or coords < 4:
        raise PrepareError("%s: %s must be [1, boxes, >= 4], not %s"
                           % (label, box.label(), box.shape))
    ncwb = sc.shape[2]
    if sc.shape[0] != 1 or sc.shape[1] != nb:
        raise PrepareError("%s: %s must be [1, %d, classes], not %s"
                           % (label, sc.label(), nb, sc.shape))
    if nc < 1 or not 0 <= ncwb - nc <= 1:
        raise PrepareError("%s: num_classes %d with %d score columns "
                           "(must be num_classes or num_classes + 1, "
                           "num_classes >= 1)" % (label, nc, ncwb))
    if anc.size < 4 * nb:
        raise PrepareError("%s: %s has %d values, %d boxes need %d"
                           % (label, anc.label(), anc.size, nb, 4 * nb))
    iou = _bits_value(fo[_F_IOU])
    if max_det < 0 or not (0.0 < iou <= 1.0):
        raise PrepareError("%s: max_detections %d must be >= 0 and "
                           "nms_iou_threshold %r in (0, 1]"
                           % (label, max_det, iou))
    ncat = min(mcpd, nc)
    if regular and dpc < 1:
        raise PrepareError("%s: detections_per_class %d must be >= 1"
                           % (label, dpc))
    if not regular and mcpd < 1:
        raise PrepareError("%s: max_classes_per_detection %d must be >= 1"
                           % (label, mcpd))
    need = max_det if regular else ncat * ncat * min(max_det, nb)
    ob, ocl, osc, onum = outs
    for t, k in ((ob, 4 * need), (ocl, need), (osc, need), (onum, 1)):
        if t.size < k:
            raise PrepareError("%s: %s has %d values; TFLM writes %d"
                               % (label, t.label(), t.size, k))
    tab = persistent(ctx, "i", _NCONST * _RS)
    for j in range(_NCONST):
        X.setl(tab, j, *_CONSTS[j])
    ext = max_det + nb
    if regular:
        bufs = (ctx.work(nb), ctx.work(ext), ctx.work(ext), ctx.work(ext),
                ctx.work(max_det), ctx.work(max_det))
    else:
        bufs = (ctx.work(nb), ctx.work(nb * ncat), ctx.work(1),
                ctx.work(max(nc, 1)), ctx.work(1), ctx.work(1))
    from ..errors import InvokeError
    err = InvokeError("%s: a decoded box has ymin >= ymax or xmin >= "
                      "xmax (TFLM's ValidateBoxes)" % label)
    return _eval, (
        ctx.work(_NREG * _RS), tab, fo, box.data, sc.data,
        _aligned(anc, ctx), ob.data, ocl.data, osc.data, onum.data,
        ctx.work(4 * nb), ctx.work(nb), ctx.work(nb), ctx.work(nb),
        ctx.work(nb), ctx.work(nb), ctx.work(nb)) + bufs + (
        nb, coords, ncwb, nc, ncwb - nc, max_det, ncat, dpc, regular, err)


def _aligned(t, ctx):
    """t's data readable with ptr32: itself when 4-byte aligned, else a
    copy in the arena's persistent part (a constant at an odd place in
    the model; counted in ctx.copied_bytes)."""
    from ..heap import persistent
    if _low_bits(t.data) == 0:
        return t.data
    a = persistent(ctx, "B", t.nbytes)
    a[:] = t.data
    if hasattr(ctx, "copied_bytes"):
        ctx.copied_bytes += t.nbytes
    return a


# --- eval helpers (viper, no allocation) ---

@micropython.viper
def _low_bits(buf) -> int:
    return int(ptr8(buf)) & 3


@micropython.viper
def _geti(buf, i: int) -> int:
    return int(ptr32(buf)[i])


@micropython.viper
def _puti(buf, i: int, v: int):
    ptr32(buf)[i] = v


@micropython.viper
def _wcopy(dst, d: int, src, s: int, n: int, stride: int):
    """dst[d + k] = src[s + k * stride] for k < n (int32 words)."""
    pd = ptr32(dst)
    ps = ptr32(src)
    k: int = 0
    while k < n:
        pd[d + k] = ps[s]
        s += stride
        k += 1


@micropython.viper
def _fill(dst, d: int, n: int, v: int):
    pd = ptr32(dst)
    k: int = 0
    while k < n:
        pd[d + k] = v
        k += 1


@micropython.viper
def _above(s, off: int, stride: int, n: int, fo, kidx, kval) -> int:
    """kidx / kval = the indexes / scores of s[off + i * stride] (i < n)
    that are >= the score threshold fo[_F_SCORE] (C's float >=: NaN
    never); returns their count."""
    ps = ptr32(s)
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)
    t: int = int(ptr32(fo)[_F_SCORE])
    tm: int = t & MAG
    tk: int = tm
    if (t >> 31) & 1:
        tk = 0 - tm
    pi = ptr32(kidx)
    pv = ptr32(kval)
    c: int = 0
    if tm > INF:
        return 0
    i: int = 0
    while i < n:
        w: int = int(ps[off])
        wm: int = w & MAG
        if wm <= INF:
            wk: int = wm
            if (w >> 31) & 1:
                wk = 0 - wm
            if wk >= tk:
                pi[c] = i
                pv[c] = w
                c += 1
        off += stride
        i += 1
    return c


@micropython.viper
def _topk(v, off: int, n: int, k: int, idx):
    """idx[0:k] = the k first of 0..n-1 ordered by decreasing value
    v[off + i], equal values by increasing i (C's float order: a NaN
    compares as neither greater nor smaller, and the index decides)."""
    pv = ptr32(v)
    pi = ptr32(idx)
    one: int = 1
    MAG: int = (one << 31) - 1
    INF: int = 0xFF * (one << 23)
    i: int = 0
    while i < n:
        pi[i] = i
        i += 1
    p: int = 0
    while p < k:
        best: int = p
        bi: int = int(pi[p])
        bw: int = int(pv[off + bi])
        j: int = p + 1
        while j < n:
            ci: int = int(pi[j])
            cw: int = int(pv[off + ci])
            # cw before bw: cw > bw, or equal (or unordered) and ci < bi
            bm: int = bw & MAG
            cm: int = cw & MAG
            gt: int = 0
            if bm > INF or cm > INF:
                gt = 2
            else:
                bk: int = bm
                if (bw >> 31) & 1:
                    bk = 0 - bm
                ck: int = cm
                if (cw >> 31) & 1:
                    ck = 0 - cm
                if ck > bk:
                    gt = 1
                elif ck == bk:
                    gt = 2
            if gt == 1 or (gt == 2 and ci < bi):
                best = j
                bi = ci
                bw = cw
            j += 1
        pi[best] = pi[p]
        pi[p] = bi
        p += 1


# --- eval (Python over the helpers above; small ints only) ---

def _rd(W, r):
    X.rnd(W, r, 53, -1074, 1024)


def _rf(W, r):
    X.rnd(W, r, 24, -149, 128)


def _exp(W, tab, x, c):
    """Register c = exp(register x) rounded to double (registers 9-13
    used)."""
    k = X.kind(W, x)
    if k:  # NaN, +inf -> themselves, -inf -> 0
        X.special(W, c, 0 if k == 1 and X.sign(W, x) else k, 0)
        return
    t = X.top(W, x)
    if t > 12:  # |x| >= 2048: far outside double's range
        X.special(W, c, 0 if X.sign(W, x) else 1, 0)
        return
    X.ldc(W, 9, tab, _C_INVLN2)
    X.mul(W, x, 9, 10)
    X.seti(W, 11, X.toint(W, 10))  # k ~ x / ln 2
    kk = X.toint(W, 10)
    X.ldc(W, 9, tab, _C_LN2)
    X.mul(W, 11, 9, 12)
    X.add(W, x, 12, 10, 13, 1)     # r = x - k ln 2
    X.rnd(W, 10, 66, -0x80000, 0x80000)
    X.ldc(W, c, tab, _NTERMS)
    j = _NTERMS - 1
    while j >= 0:                  # T = T * r + 1 / j!
        X.rnd(W, c, 66, -0x80000, 0x80000)
        X.mul(W, c, 10, 11)
        X.ldc(W, 9, tab, j)
        X.add(W, 11, 9, c, 13, 0)
        j -= 1
    X.scale2(W, c, kk)
    _rd(W, c)


def _decode(st):
    """Decoded boxes (ymin, xmin, ymax, xmax) and their float32 areas;
    False if one has ymin >= ymax or xmin >= xmax."""
    W = st[_S_W]
    tab = st[_S_TAB]
    fo = st[_S_FO]
    box = st[_S_BOX]
    anc = st[_S_ANC]
    dec = st[_S_DEC]
    area = st[_S_AREA]
    coords = st[_S_COORDS]
    ok = True
    for i in range(st[_S_NB]):
        bo = i * coords
        ao = 4 * i
        for d in range(2):  # d 0: y, h; 1: x, w
            # centre: enc / scale * anchor size + anchor centre (double)
            X.ld32(W, 0, box, bo + d)
            X.ld32(W, 1, fo, _F_YS + d)
            X.div(W, 0, 1, 2)
            _rd(W, 2)
            X.ld32(W, 3, anc, ao + 2 + d)
            X.mul(W, 2, 3, 4)
            _rd(W, 4)
            X.ld32(W, 5, anc, ao + d)
            X.add(W, 4, 5, 6, 7, 0)
            _rd(W, 6)
            _rf(W, 6)
            # half size: 0.5 * exp(enc / scale) * anchor size (double)
            X.ld32(W, 0, box, bo + 2 + d)
            X.ld32(W, 1, fo, _F_HS + d)
            X.div(W, 0, 1, 2)
            _rd(W, 2)
            _exp(W, tab, 2, 4)
            X.scale2(W, 4, -1)
            _rd(W, 4)
            X.mul(W, 4, 3, 8)
            _rd(W, 8)
            _rf(W, 8)
            # min / max corners (float32)
            X.add(W, 6, 8, 0, 7, 1)
            X.st32(W, 0, dec, ao + d)
            X.add(W, 6, 8, 1, 7, 0)
            X.st32(W, 1, dec, ao + 2 + d)
            if X.cmp(W, 0, 1) in (0, 1):
                ok = False
            X.add(W, 1, 0, 10, 7, 1)  # side, float32 (ymax - ymin kept
            _rf(W, 10)                 # in area[i] while _exp uses
            if d == 0:                 # registers 9-13)
                X.st32(W, 10, area, i)
        X.ld32(W, 11, area, i)
        X.mul(W, 11, 10, 12)           # (ymax - ymin) * (xmax - xmin)
        X.st32(W, 12, area, i)
    return ok


def _iou_above(W, dec, area, fo, i, j):
    """ComputeIntersectionOverUnion(i, j) > the IoU threshold, in
    float32 (std::max / std::min as C++ defines them)."""
    X.ld32(W, 0, area, i)
    X.ld32(W, 1, area, j)
    if X.cmp(W, 0, _RZ) in (-1, 0) or X.cmp(W, 1, _RZ) in (-1, 0):
        return False
    for d in range(2):
        X.ld32(W, 2, dec, 4 * i + d)
        X.ld32(W, 3, dec, 4 * j + d)
        lo = 3 if X.cmp(W, 2, 3) == -1 else 2         # max(a, b)
        X.ld32(W, 4, dec, 4 * i + 2 + d)
        X.ld32(W, 5, dec, 4 * j + 2 + d)
        hi = 5 if X.cmp(W, 5, 4) == -1 else 4         # min(a, b)
        X.add(W, hi, lo, 6 + 2 * d, 7, 1)
        _rf(W, 6 + 2 * d)
        if X.cmp(W, 6 + 2 * d, _RZ) == -1:            # max(v, 0)
            X.special(W, 6 + 2 * d, 0, 0)
    X.mul(W, 6, 8, 9)
    _rf(W, 9)
    X.add(W, 0, 1, 10, 11, 0)
    _rf(W, 10)
    X.add(W, 10, 9, 12, 11, 1)
    _rf(W, 12)
    X.div(W, 9, 12, 13)
    _rf(W, 13)
    X.ld32(W, 2, fo, _F_IOU)
    return X.cmp(W, 13, 2) == 1


def _nms(st, s, off, stride, max_det):
    """NonMaxSuppressionSingleClassHelper over scores s[off + i * stride]:
    the selected box indexes in st[_S_SEL]; returns their count."""
    W = st[_S_W]
    fo = st[_S_FO]
    dec = st[_S_DEC]
    area = st[_S_AREA]
    kidx = st[_S_KIDX]
    sidx = st[_S_SIDX]
    act = st[_S_ACT]
    sel = st[_S_SEL]
    kept = _above(s, off, stride, st[_S_NB], fo, kidx, st[_S_KVAL])
    _topk(st[_S_KVAL], 0, kept, kept, sidx)
    out_size = min(kept, max_det)
    _fill(act, 0, kept, 1)
    active = kept
    n = 0
    for i in range(kept):
        if active == 0 or n >= out_size:
            break
        if _geti(act, i) != 1:
            continue
        bi = _geti(kidx, _geti(sidx, i))
        _puti(sel, n, bi)
        n += 1
        _puti(act, i, 0)
        active -= 1
        for j in range(i + 1, kept):
            if _geti(act, j) == 1 and _iou_above(
                    W, dec, area, fo, bi, _geti(kidx, _geti(sidx, j))):
                _puti(act, j, 0)
                active -= 1
    return n


def _put_float(W, buf, i, v):
    """buf[i] = float32 of the int v."""
    X.seti(W, _RT, v)
    X.st32(W, _RT, buf, i)


def _fast(st):
    W = st[_S_W]
    sc = st[_S_SCORES]
    dec = st[_S_DEC]
    best = st[_S_A]
    cidx = st[_S_B]
    order = st[_S_D]
    ncwb = st[_S_NCWB]
    nc = st[_S_NC]
    lo = st[_S_LO]
    ncat = st[_S_NCAT]
    for row in range(st[_S_NB]):
        o = row * ncwb + lo
        _topk(sc, o, nc, ncat, order)
        _wcopy(cidx, row * ncat, order, 0, ncat, 1)
        _wcopy(best, row, sc, o + _geti(order, 0), 1, 1)
    n = _nms(st, best, 0, 1, st[_S_MAXDET])
    sel = st[_S_SEL]
    ob = st[_S_OBOX]
    ocl = st[_S_OCLS]
    osc = st[_S_OSCORE]
    k = 0
    for i in range(n):
        b = _geti(sel, i)
        for col in range(ncat):
            at = ncat * k + col
            c = _geti(cidx, b * ncat + col)
            _wcopy(ob, 4 * at, dec, 4 * b, 4, 1)
            _put_float(W, ocl, at, c)
            _wcopy(osc, at, sc, b * ncwb + lo + c, 1, 1)
            k += 1
    _put_float(W, st[_S_ONUM], 0, k)


def _regular(st):
    W = st[_S_W]
    sc = st[_S_SCORES]
    dec = st[_S_DEC]
    cls = st[_S_A]
    bidx = st[_S_B]
    bval = st[_S_C]
    order = st[_S_D]
    tmpi = st[_S_E]
    tmpv = st[_S_F]
    sel = st[_S_SEL]
    nb = st[_S_NB]
    ncwb = st[_S_NCWB]
    lo = st[_S_LO]
    max_det = st[_S_MAXDET]
    size = 0
    for col in range(st[_S_NC]):
        _wcopy(cls, 0, sc, col + lo, nb, ncwb)
        n = _nms(st, cls, 0, 1, st[_S_DPC])
        k = size
        for i in range(n):
            b = _geti(sel, i)
            _puti(bidx, k, b * ncwb + col + lo)
            _wcopy(bval, k, cls, b, 1, 1)
            k += 1
        m = min(k, max_det)
        _topk(bval, 0, k, m, order)
        for r in range(m):
            t = _geti(order, r)
            _puti(tmpi, r, _geti(bidx, t))
            _wcopy(tmpv, r, bval, t, 1, 1)
        _wcopy(bidx, 0, tmpi, 0, m, 1)
        _wcopy(bval, 0, tmpv, 0, m, 1)
        size = m
    ob = st[_S_OBOX]
    ocl = st[_S_OCLS]
    osc = st[_S_OSCORE]
    for i in range(max_det):
        if i < size:
            v = _geti(bidx, i)
            a = v // ncwb
            _wcopy(ob, 4 * i, dec, 4 * a, 4, 1)
            _put_float(W, ocl, i, v - a * ncwb - lo)
            _wcopy(osc, i, bval, i, 1, 1)
        else:
            _fill(ob, 4 * i, 4, 0)
            _fill(ocl, i, 1, 0)
            _fill(osc, i, 1, 0)
    _put_float(W, st[_S_ONUM], 0, size)


def _eval(st):
    X.seti(st[_S_W], _RZ, 0)
    if not _decode(st):
        raise_made(st[_S_ERR])
    if st[_S_REGULAR]:
        _regular(st)
    else:
        _fast(st)
