#!/usr/bin/env bash
# A one-node Slurm on this machine, for 'fuzzaoti launch --executor slurm' tests: installs
# Debian's slurm-wlm and munge where missing (as root), writes a slurm.conf for this host and
# starts munged, slurmctld and slurmd. Idempotent: a running cluster is left as it is.
#   bash scripts/slurm_local.sh          set up and start; prints "slurm ready" and sinfo
#   bash scripts/slurm_local.sh stop     stop the daemons
set -uo pipefail
if [ "${1:-start}" = "stop" ]; then
    pkill -x slurmd; pkill -x slurmctld; pkill -x munged; exit 0
fi
[ "$(id -u)" = 0 ] || { echo "slurm_local.sh: needs root (apt-get, daemons)"; exit 1; }
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null \
        || { echo "slurm_local.sh: cannot install slurm-wlm and munge"; exit 1; }
fi
if sinfo -h >/dev/null 2>&1 && [ "$(sinfo -h -o %t | head -1)" = idle ]; then
    echo "slurm ready (already running)"; sinfo; exit 0
fi
HOST=$(hostname -s)
CPUS=$(nproc)
MEM=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
mkdir -p /etc/munge /var/log/munge /run/munge /var/lib/munge /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
[ -s /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
chown -R munge:munge /etc/munge /var/log/munge /run/munge /var/lib/munge 2>/dev/null
chmod 0700 /etc/munge; chmod 0400 /etc/munge/munge.key
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged || { echo "slurm_local.sh: munged did not start"; exit 1; }
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=fuzzaoti
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld || { echo "slurm_local.sh: slurmctld did not start"; tail -5 /var/log/slurm/slurmctld.log; exit 1; }
pgrep -x slurmd >/dev/null || /usr/sbin/slurmd || { echo "slurm_local.sh: slurmd did not start"; tail -5 /var/log/slurm/slurmd.log; exit 1; }
for _ in $(seq 1 30); do
    [ "$(sinfo -h -o %t 2>/dev/null | head -1)" = idle ] && { echo "slurm ready"; sinfo; exit 0; }
    sleep 1
done
echo "slurm_local.sh: the node did not come up idle"; sinfo; tail -5 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log
exit 1
