#!/usr/bin/env bash
# Diagnostic: does eager launch-bound time depend on the host CPU the launches come from, or on the process?
bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-Z' 'a-z' | sed 's/^0000//')
echo "gpu bus $bus local_cpulist: $(cat /sys/bus/pci/devices/0000${bus#0000}/local_cpulist 2>/dev/null || cat /sys/bus/pci/devices/${bus}/local_cpulist 2>/dev/null)"
lscpu | grep -E "NUMA|Socket|Thread|Core" 
for cpu in 0 0 5 10 15 0; do
  taskset -c $cpu .h200/labrun sweep results/h200/diagnostics/diag.yaml --device cuda -q -o /tmp/d.jsonl --force > /dev/null 2>&1
  python3 -c "
import json,sys
L=[json.loads(l) for l in open('/tmp/d.jsonl')]
print('cpu $cpu', L[0]['environment']['device']['host_thread_cpu'], 'launch %.2f'%(L[0]['calibration']['launch']['eager_time_s']*1e6), ' '.join('%s/%d: %.2f'%(p['variant'],p['axes']['n'],p['timing']['time_s']*1e6) for p in L[1:]))"
done
