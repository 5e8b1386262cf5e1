#!/usr/bin/env bash
# A real single-node Slurm on localhost for labrun's tests (CI has no cluster): munge, slurmctld and slurmd
# started in the foreground by this script and stopped by it, by PID (no systemd; nothing else is touched).
# Installs Debian's packages if missing. Usage: scripts/slurm_local.sh up|down|status [STATE_DIR]
# (default STATE_DIR /tmp/labrun-slurm). After `up`, sbatch/squeue/scontrol work with SLURM_CONF set to
# STATE_DIR/slurm.conf (the script prints it; it also installs the config as /etc/slurm/slurm.conf when that
# file is absent, so plain `sbatch` works).
set -euo pipefail
cmd=${1:-}
dir=${2:-/tmp/labrun-slurm}
conf=$dir/slurm.conf
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

install() {
  local missing=()
  for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "slurm_local: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
  fi
}

up() {
  install
  mkdir -p "$dir"/{state,spool,log}
  if [ -f "$dir/pids" ]; then echo "slurm_local: already up ($dir/pids); run down first" >&2; exit 1; fi
  # munge: its key, its run directory, the daemon in the foreground as user munge (so $! is the daemon).
  [ -f /etc/munge/munge.key ] || $sudo mungekey -c -f -k /etc/munge/munge.key
  $sudo chown munge:munge /etc/munge/munge.key && $sudo chmod 400 /etc/munge/munge.key
  $sudo mkdir -p /run/munge /var/lib/munge /var/log/munge && $sudo chown munge:munge /run/munge /var/lib/munge /var/log/munge
  $sudo setpriv --reuid=munge --regid=munge --init-groups munged -F > "$dir/log/munged.log" 2>&1 &
  echo "munged $!" > "$dir/pids"
  for _ in $(seq 50); do [ -S /run/munge/munge.socket.2 ] && break; sleep 0.1; done
  local host mem cpus
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(slurmd -C 2>/dev/null | sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p')
  cat > "$conf" <<CONF
ClusterName=labrun-local
SlurmctldHost=localhost
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
MinJobAge=600
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=${mem:-1000} State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
  if [ ! -f /etc/slurm/slurm.conf ]; then $sudo mkdir -p /etc/slurm && $sudo cp "$conf" /etc/slurm/slurm.conf && echo "/etc/slurm/slurm.conf" > "$dir/installed-conf"; fi
  $sudo slurmctld -D -i -f "$conf" > "$dir/log/slurmctld.out" 2>&1 &
  echo "slurmctld $!" >> "$dir/pids"
  $sudo slurmd -D -f "$conf" > "$dir/log/slurmd.out" 2>&1 &
  echo "slurmd $!" >> "$dir/pids"
  for _ in $(seq 100); do
    if SLURM_CONF=$conf sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      echo "slurm_local: up (SLURM_CONF=$conf; node $host, $cpus CPUs)"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm_local: the node did not become idle; logs in $dir/log" >&2
  SLURM_CONF=$conf sinfo >&2 || true
  exit 1
}

down() {
  [ -f "$dir/pids" ] || { echo "slurm_local: not up ($dir/pids missing)"; return 0; }
  # Reverse order: slurmd, slurmctld, munged. Only the PIDs this script started.
  tac "$dir/pids" | while read -r name pid; do
    if kill -0 "$pid" 2>/dev/null; then
      $sudo kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null && $sudo kill -9 "$pid" 2>/dev/null || true
    fi
    echo "slurm_local: stopped $name ($pid)"
  done
  if [ -f "$dir/installed-conf" ]; then $sudo rm -f "$(cat "$dir/installed-conf")"; fi
  rm -rf "$dir"
}

case "$cmd" in
  up) up ;;
  down) down ;;
  status) [ -f "$dir/pids" ] && SLURM_CONF=$conf sinfo || echo "slurm_local: not up" ;;
  *) echo "usage: scripts/slurm_local.sh up|down|status [STATE_DIR]" >&2; exit 2 ;;
esac
