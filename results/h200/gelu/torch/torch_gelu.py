# GELU tanh at n = 2^26 with PyTorch: CUDA events over 20 back-to-back launches, median of 5 repetitions, after
# 3 warmup calls (labrun's side: configs/gelu.yaml --only n=67108864). Usage on the GPU machine: python3 torch_gelu.py
import torch, torch.nn.functional as F
x = torch.empty(1 << 26, device="cuda", dtype=torch.float32).uniform_(-6, 6)
def t(f):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(3): f()
    torch.cuda.synchronize(); r = []
    for _ in range(5):
        e0.record()
        for _ in range(20): f()
        e1.record(); e1.synchronize(); r.append(e0.elapsed_time(e1) * 1000 / 20)
    return sorted(r)[2]
y = torch.empty_like(x)
print("torch gelu tanh f32 %.1f us" % t(lambda: F.gelu(x, approximate="tanh")))
print("torch gelu tanh f32 out= %.1f us" % t(lambda: torch.ops.aten.gelu.out(x, approximate="tanh", out=y)))
print("torch copy %.1f us" % t(lambda: y.copy_(x)))
xb = x.bfloat16()
print("torch gelu tanh bf16 %.1f us" % t(lambda: F.gelu(xb, approximate="tanh")))
