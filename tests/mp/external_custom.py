# Runs in MicroPython: tests/test_external_buffers.py, which prepends
# MODELS (model bytes as hex).
import tflm
from tflm.errors import TFLMError
seen = []

def prep(op, ins, outs, o):
    seen.append(o)
    return (ins[0].data, outs[0].data, o['add'])

def ev(st):
    src, dst, add = st
    for i in range(len(src)):
        dst[i] = (src[i] + add) & 0xff

tflm.register_op('AddK', prep, ev)
for h in MODELS:  # noqa: F821 (prepended)
    raw = bytes.fromhex(h)
    buf = bytearray(b'\x00\x00\x00' + raw)
    try:
        it = tflm.Interpreter(memoryview(buf)[3:])
    except TFLMError as e:
        print('ERR', type(e).__name__, e)
        continue
    it.inputs[0].data[:] = bytes(range(8))
    it.invoke()
    print(bytes(it.outputs[0].data).hex(), seen[-1]['add'])
