#!/usr/bin/env python3
"""labrun's fused variants beside PyTorch's SDPA backends, from one device call's files (results/h100/attention/backends).

Reads torch.txt (torch_attention.py's output), backends.jsonl (labrun sweep configs/attention_backends.yaml) and,
when present, backends-torch-cudnn.jsonl (the same with LABRUN_CUDNN_LIBRARY naming PyTorch's libcudnn), plus the
calibrated bf16 GEMM rate from the labrun header. Prints one table per S: time, TFLOP/s (causal flops, 4 B H S^2 D
/ 2), the fraction of the H100/H200 SXM dense bf16 peak (989 TFLOP/s, datasheet) and of the calibrated cuBLAS GEMM, and
the ratios the targets name: tiled / torch flash (<= 1.0) and cudnn / torch cudnn (<= 1.05).

Usage: summarize.py DIR
"""
import json
import lzma
import os
import sys

TORCH_CUDNN_ROW = "labrun cudnn (torch's cuDNN)"
PEAK_BF16 = 989e12  # H100 and H200 SXM datasheets, dense bf16 tensor-core FLOP/s


def read_jsonl(path):
    if not os.path.exists(path):
        if os.path.exists(path + ".xz"):
            path += ".xz"
        else:
            return []
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def labrun_points(path):
    header, points = None, {}
    for r in read_jsonl(path):
        if r.get("type") == "header":
            header = r
        elif r.get("type") == "point":
            a = r["axes"]
            t = (r.get("timing") or {}).get("time_s") if r["status"] == "ok" else None
            points[(r["variant"], int(a["seq"]))] = (t, r["status"], r.get("reason", ""))
    return header, points


def main(d):
    torch, versions = {}, ""
    for line in open(os.path.join(d, "torch.txt")):
        w = line.split()
        if line.startswith("torch "):
            versions = line.strip()
        elif len(w) >= 8 and w[0].isdigit() and w[6] != "unsupported:":
            torch[(w[5], int(w[2]))] = (float(w[6]), float(w[7]))
    header, lab = labrun_points(os.path.join(d, "backends.jsonl"))
    _, lab_tc = labrun_points(os.path.join(d, "backends-torch-cudnn.jsonl"))
    dev = header["environment"]["device"]
    gemm = header.get("calibration", {}).get("bf16_gemm", {}).get("flop_per_s")
    print(versions)
    print(f"labrun: {dev['name']} {dev['uuid']}; cuDNN {dev.get('cudnn')}; calibrated bf16 GEMM "
          f"{gemm / 1e12:.0f} TFLOP/s" if gemm else "")
    B, H, D = 4, 32, 128
    for s in sorted({k[1] for k in torch} | {k[1] for k in lab}):
        flop = 4.0 * B * H * s * s * D / 2
        print(f"\nS = {s} (B {B}, H {H}, D {D}, causal, bf16, cold L2)")
        print(f"  {'':34} {'time us':>9} {'TFLOP/s':>8} {'of 989':>7} {'of GEMM':>8}")
        rows = [("labrun tiled", lab.get(("tiled", s), (None,))[0]),
                ("labrun cudnn (system cuDNN)", lab.get(("cudnn", s), (None,))[0]),
                (TORCH_CUDNN_ROW, lab_tc.get(("cudnn", s), (None,))[0]),
                ("torch flash", torch.get(("flash", s), (None,))[0]),
                ("torch cudnn", torch.get(("cudnn", s), (None,))[0]),
                ("torch efficient", torch.get(("efficient", s), (None,))[0])]
        for name, t in rows:
            if t is None:
                print(f"  {name:34} {'-':>9}")
                continue
            rate = flop / t
            print(f"  {name:34} {t * 1e6:9.1f} {rate / 1e12:8.1f} {rate / PEAK_BF16:7.1%} "
                  f"{(rate / gemm) if gemm else float('nan'):8.1%}")
        t = dict(rows)
        def ratio(a, b):
            return f"{t[a] / t[b]:.3f}" if t.get(a) and t.get(b) else "n/a"
        print(f"  tiled / torch flash {ratio('labrun tiled', 'torch flash')} (target <= 1.0); "
              f"cudnn / torch cudnn {ratio('labrun cudnn (system cuDNN)', 'torch cudnn')} system, "
              f"{ratio(TORCH_CUDNN_ROW, 'torch cudnn')} torch's (target <= 1.05); "
              f"cudnn / tiled {ratio('labrun cudnn (system cuDNN)', 'labrun tiled')}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
