#!/usr/bin/env bash
# Runs COMMAND with its host slowed on purpose, for the across-hosts evidence (docs/diff.md, "Across hosts"): the
# command and its children (labrun's processes and workers) are pinned with taskset to one CPU that K CPU-bound
# busy loops share, so every host path (launches, syncs, the host probe, the CUB host code) gets about 1/(K+1) of
# a core. The GPU is untouched. Whatever slowdown the host probe then measures is the one the diff must take out.
# With --sibling the busy loops run on the CPU's SMT siblings instead (the other hardware threads of its core), so
# the command keeps its CPU to itself but shares the core's execution units: a uniformly slower host rather than
# one that loses whole scheduler time slices (which makes samples bimodal, not slower).
# Usage: scripts/slow_host.sh [--cpu N] [--hogs K] [--sibling] -- COMMAND [ARG...]  (defaults: the last CPU, 1 hog)
# Exit: COMMAND's status; 2 for bad usage or a CPU this process may not use.
set -euo pipefail
cpu="" hogs=1 sibling=0
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) cpu=${2:?--cpu takes a CPU number}; shift 2 ;;
    --hogs) hogs=${2:?--hogs takes a count}; shift 2 ;;
    --sibling) sibling=1; shift ;;
    --) shift; break ;;
    *) echo "slow_host.sh: unknown argument $1 (usage: slow_host.sh [--cpu N] [--hogs K] [--sibling] -- COMMAND...)" >&2; exit 2 ;;
  esac
done
[ $# -gt 0 ] || { echo "slow_host.sh: no COMMAND after --" >&2; exit 2; }
command -v taskset > /dev/null || { echo "slow_host.sh: taskset (util-linux) is needed" >&2; exit 2; }
[ -n "$cpu" ] || cpu=$(( $(nproc) - 1 ))
case "$hogs" in ''|*[!0-9]*) echo "slow_host.sh: --hogs takes a whole number, got $hogs" >&2; exit 2 ;; esac
taskset -c "$cpu" true 2> /dev/null || { echo "slow_host.sh: CPU $cpu is not one this process may use" >&2; exit 2; }
hog_cpus=$cpu
if [ $sibling -eq 1 ]; then
  list=/sys/devices/system/cpu/cpu$cpu/topology/thread_siblings_list
  [ -r "$list" ] || { echo "slow_host.sh: --sibling: $list is not readable" >&2; exit 2; }
  # The list is e.g. "7,71" or "6-7": every CPU of the core but the command's own.
  hog_cpus=$(tr ',' '\n' < "$list" | while IFS=- read -r a b; do seq "$a" "${b:-$a}"; done | { grep -vx "$cpu" || true; } | paste -sd, -)
  [ -n "$hog_cpus" ] || { echo "slow_host.sh: --sibling: CPU $cpu has no SMT sibling ($(cat "$list"))" >&2; exit 2; }
fi
pids=()
cleanup() { [ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2> /dev/null || true; }
trap cleanup EXIT INT TERM
for _ in $(seq 1 "$hogs"); do
  taskset -c "$hog_cpus" sh -c 'while :; do :; done' &
  pids+=($!)
done
echo "slow_host.sh: command on CPU $cpu, $hogs busy loop(s) on CPU $hog_cpus: $*" >&2
set +e
taskset -c "$cpu" "$@"
status=$?
exit $status
