# Runs in MicroPython: tests/test_kernels_conv.py, which prepends ROOT
# (the repository); see the test for its arguments and output.
import sys
sys.path.insert(0, ROOT + '/micropython')  # noqa: F821 (prepended)
import micropython
import time
from array import array
from tflm import model, kernels
from tflm.errors import PrepareError

class Ctx:
    def __init__(self, n):
        self.scratch = array('i', bytes(4 * n))
        self.scratch_len = n
        self.copied_bytes = 0

def load(path, shift):
    with open(path, 'rb') as f:
        raw = f.read()
    # Place the model at offset `shift` of a buffer: constants misaligned.
    buf = bytearray(len(raw) + shift)
    buf[shift:] = raw
    mv = memoryview(buf)[shift:]
    m = model.Model(mv)
    for t in m.tensors:
        if t.is_const:
            t.data = mv[t.const_pos:t.const_pos + t.const_len]
        else:
            t.data = memoryview(bytearray(t.nbytes))
    return m

def prep(m, k, ctx):
    op = m.operators[k]
    ins = [m.tensors[i] if i >= 0 else None for i in op.inputs]
    outs = [m.tensors[i] for i in op.outputs]
    mod = kernels.find(op.code)
    return mod.prepare(op, ins, outs, ctx), ins, outs

def run_case(line):
    # name model op_index input output shift: run one op, write its output.
    name, path, k, inpath, outpath, shift = line.split()
    from tflm.kernels import conv_util
    conv_util.HELD.clear()  # the last case's buffers (see packed())
    m = load(path, int(shift))
    ctx = Ctx(512)
    (fn, st), ins, outs = prep(m, int(k), ctx)
    with open(inpath, 'rb') as f:
        ins[0].data[:] = f.read()
    fn(st)
    first = bytes(outs[0].data)
    outs[0].data[:] = bytes(len(outs[0].data))
    micropython.heap_lock()
    try:
        t0 = time.ticks_us()
        fn(st)
        dt = time.ticks_diff(time.ticks_us(), t0)
    finally:
        micropython.heap_unlock()
    if bytes(outs[0].data) != first:
        print('NONDETERMINISTIC', name)
    print('TIME', name, dt, fn.__name__)
    with open(outpath, 'wb') as f:
        f.write(first)

def bad_case(line):
    # name path mutation: prepare must raise PrepareError naming the op.
    name, path, what = line.split()
    m = load(path, 0)
    op = m.operators[0]
    t_in = m.tensors[op.inputs[0]]
    t_f = m.tensors[op.inputs[1]]
    t_out = m.tensors[op.outputs[0]]
    if what == 'outshape':
        t_out.shape = (t_out.shape[0], t_out.shape[1] + 1) + tuple(
            t_out.shape[2:])
    elif what == 'intype':
        t_in.type = 3
        t_in.dtype = 'uint8'
    elif what == 'rank':
        t_in.shape = t_in.shape[1:]
    elif what == 'nscales':
        t_f.scales = t_f.scales[:2]
    elif what == 'bias':
        t_b = m.tensors[op.inputs[2]]
        t_b.size = t_b.size + 1
    elif what == 'stride':
        op.opt_int = (lambda f, d=0: 0 if f in (1, 2) else
                      op.__class__.opt_int(op, f, d))
    elif what == 'padding':
        op.opt_byte = (lambda f, d=0: 7 if f == 0 else
                       op.__class__.opt_byte(op, f, d))
    elif what == 'act':
        fld = 3 if op.code == 3 else 4
        op.opt_byte = (lambda f, d=0: 5 if f == fld else
                       op.__class__.opt_byte(op, f, d))
    elif what == 'dm':
        op.opt_int = (lambda f, d=0: op.__class__.opt_int(op, f, d)
                      + (1 if f == 3 else 0))
    elif what == 'scratch':
        pass
    try:
        prep(m, 0, Ctx(1 if what == 'scratch' else 512))
    except PrepareError as e:
        msg = str(e)
        ok = msg.startswith('op 0 (') and ('CONV_2D' in msg)
        print('REJECTED' if ok else 'BADMSG', name, msg)
        return
    print('ACCEPTED', name)

with open(sys.argv[1]) as f:
    for line in f:
        if line.startswith('bad '):
            bad_case(line[4:])
        elif line.strip():
            run_case(line)
print('DONE')
