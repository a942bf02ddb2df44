# Runs in MicroPython: the device side of tests/test_alignment.py, which
# prepends MODELS = [(name, model bytes as hex)]. Prints a JSON list of
# the constants an eval state points to at an address that is not 4-byte
# aligned.
import json
import uctypes
import tflm
# imported once, the construction modules stay (compiled from source on
# the unix port, they would be compiled again for every model)
for n in tflm.interpreter.CONSTRUCTION:
    __import__(n)

def items(x, depth=0):
    if isinstance(x, (tuple, list)) and depth < 4:
        for y in x:
            yield from items(y, depth + 1)
    else:
        yield x

found = []
for k, (name, hexraw) in enumerate(MODELS):  # noqa: F821 (prepended)
    raw = bytes.fromhex(hexraw)
    # one offset per model, in turn: a generator's 4 cases see all three
    for off in (1 + k % 3,):
        buf = bytearray(off + len(raw))
        buf[off:] = raw
        mv = memoryview(buf)[off:]
        try:
            it = tflm.Interpreter(mv)
        except tflm.TFLMError:
            break
        lo = uctypes.addressof(mv)
        consts = {}
        tensors = it.tensors  # (parsed again on each access)
        ops = it.model.operators
        for t in tensors:
            if t.is_const and t.itemsize >= 2 and t.nbytes:
                consts[lo + t.const_pos] = t
        for k in range(len(it._steps) // 2):
            st = it._steps[2 * k + 1]
            op = ops[it._prof_ops[k]]
            name16 = op.name
            if op.name in ('CONV_2D', 'DEPTHWISE_CONV_2D',
                           'FULLY_CONNECTED') and \
                    tensors[op.inputs[0]].dtype == 'int16':
                name16 += ' 16x8'
            for x in items(st):
                if isinstance(x, memoryview) and len(x):
                    a = uctypes.addressof(x)
                    if a % 4 and a in consts:
                        found.append([name, name16, consts[a].dtype])
print(json.dumps(found))
