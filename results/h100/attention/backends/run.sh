#!/usr/bin/env bash
# The attention backends side by side on one GPU, back to back in one call: PyTorch's SDPA backends (flash, cuDNN,
# memory-efficient; torch_attention.py), then labrun's tiled and cudnn variants (configs/attention_backends.yaml)
# with the system's cuDNN and again with the cuDNN in PyTorch's wheel (LABRUN_CUDNN_LIBRARY), so a gap between
# labrun's cudnn and torch's is read at the same library version. Then summarize.py prints the table.
# Usage, from the repository root on the GPU machine: bash results/h100/attention/backends/run.sh OUT [LABRUN]
set -u
out=$1; labrun=${2:-build/labrun}; here=$(dirname "$0")
mkdir -p "$out"
nvidia-smi --query-compute-apps=pid,name --format=csv,noheader > "$out/tenants.txt" 2>&1  # must be empty
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader > "$out/gpu.csv" 2>&1
torch_cudnn=$(python3 -c "import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], 'lib'))")
python3 "$here/torch_attention.py" --samples 20 > "$out/torch.txt" 2>&1
"$labrun" sweep configs/attention_backends.yaml --device cuda -q -o "$out/backends.jsonl" --force
LABRUN_CUDNN_LIBRARY="$torch_cudnn/libcudnn.so.9" "$labrun" sweep configs/attention_backends.yaml --device cuda -q \
  --only variant=cudnn -o "$out/backends-torch-cudnn.jsonl" --force
python3 "$here/summarize.py" "$out" > "$out/summary.txt"
cat "$out/summary.txt"
