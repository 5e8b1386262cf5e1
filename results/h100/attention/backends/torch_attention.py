#!/usr/bin/env python3
"""PyTorch's scaled-dot-product-attention backends at labrun's attention points, timed as labrun times them.

Shapes: B = 4, H = 32, D = 128, causal, bf16 Q, K, V in [B, H, S, D] (labrun's layout), S in {1024, 4096, 16384}
(override with --seq). Each backend (flash, cuDNN, memory-efficient) runs under torch.nn.attention.sdpa_kernel.

cold: every sample is one call between two CUDA events, after a 512 MiB write that evicts L2 (the H200's L2 is
60 MB), the median of --samples samples; labrun's `l2: cold` flushes the same way before each sample.
hot: --batch calls back to back between two events, divided by the batch; the median of --samples batches.
Also printed: torch, its CUDA and its cuDNN version, the GPU's name and uuid, and the max abs difference of each
backend's output against the math backend on the first head (a backend that is fast because it is wrong shows).

Usage: python3 torch_attention.py [--seq 1024 4096 16384] [--samples 30] [--batch 10]
"""
import argparse
import statistics
import subprocess

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def time_cold(fn, samples, flush):
    times = []
    for _ in range(samples):
        flush.fill_(1)  # 512 MiB written: L2 holds nothing of q, k, v or o
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    return statistics.median(times)


def time_hot(fn, samples, batch):
    times = []
    for _ in range(samples):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3 / batch)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, nargs="+", default=[1024, 4096, 16384])
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--batch", type=int, default=10)
    args = ap.parse_args()
    uuid = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                          text=True).stdout.strip()
    print(f"torch {torch.__version__} cuda {torch.version.cuda} cudnn {torch.backends.cudnn.version()} "
          f"gpu {torch.cuda.get_device_name()} {uuid}")
    flush = torch.empty(512 << 20, dtype=torch.uint8, device="cuda")
    B, H, D = args.batch_size, args.heads, args.head_dim
    print("B H S D causal backend cold_time_s hot_time_s cold_TFLOPs max_abs_diff_vs_math")
    for S in args.seq:
        g = torch.Generator(device="cuda").manual_seed(S)
        q = (torch.rand(B, H, S, D, device="cuda", generator=g) * 4 - 2).bfloat16()
        k = (torch.rand(B, H, S, D, device="cuda", generator=g) * 4 - 2).bfloat16()
        v = (torch.rand(B, H, S, D, device="cuda", generator=g) * 2 - 1).bfloat16()
        flop = 4.0 * B * H * S * S * D / 2  # causal: half of the S x S products (labrun's cost model)
        ref = F.scaled_dot_product_attention(q[:1, :1].double(), k[:1, :1].double(), v[:1, :1].double(),
                                             is_causal=True)
        for name, backend in BACKENDS.items():
            with sdpa_kernel(backend):
                def fn():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=True)
                try:
                    o = fn()
                except RuntimeError as e:
                    print(f"{B} {H} {S} {D} 1 {name} unsupported: {str(e).splitlines()[0]}")
                    continue
                diff = (o[:1, :1].double() - ref).abs().max().item()
                for _ in range(3):
                    fn()
                cold = time_cold(fn, args.samples, flush)
                hot = time_hot(fn, args.samples, args.batch)
                print(f"{B} {H} {S} {D} 1 {name} {cold:.6e} {hot:.6e} {flop / cold / 1e12:.1f} {diff:.3e}")


if __name__ == "__main__":
    main()
