#!/usr/bin/env bash
# Reproducibility of eager launch-bound points: two processes each, interleaved and not.
cmp() { python3 -c "
import json,sys
a=[json.loads(l) for l in open('$1')][1:]; b={p['id']:p for p in [json.loads(l) for l in open('$2')][1:]}
r=[p['timing']['time_s']/b[p['id']]['timing']['time_s'] for p in a if p['status']=='ok']
import statistics
print('$3', len(r), 'within3%%: %d'%sum(.97<=x<=1.03 for x in r), 'median %.3f q %s'%(statistics.median(r), [round(x,3) for x in statistics.quantiles(r,n=4)]))"; }
for c in eager_small eager_small_noil; do
  for i in 1 2; do .h200/labrun sweep results/h200/diagnostics/$c.yaml --device cuda -q -o /tmp/$c-$i.jsonl --force > /dev/null 2>&1; done
  cmp /tmp/$c-1.jsonl /tmp/$c-2.jsonl $c
done
# the same config after a big-n load (as in the full sweep order)
