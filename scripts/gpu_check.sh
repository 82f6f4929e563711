#!/usr/bin/env bash
# The GPU check on the device machine (an H200 with its own torch), one mode per call.
#   here:   bash scripts/gpu_check.sh prepare           wheels of fuzzaoti + sqlite-utils into .whl/
#   there:  bash scripts/gpu_check.sh canary            canary campaign, replay with/without it, gpu tests
#           bash scripts/gpu_check.sh campaign MINUTES [OPTIONS]  an unattended campaign of MINUTES minutes
#           bash scripts/gpu_check.sh large MINUTES [SEED]  the same with --profile large (the GPU's budget)
#           bash scripts/gpu_check.sh shrink            a CUDA canary finding, shrunk
#           bash scripts/gpu_check.sh repros [DIR]      run DIR/repro*.py standalone (default .whl/)
#           bash scripts/gpu_check.sh finding ID        shrink, triage and repro finding ID of .whl/finding.db
#           bash scripts/gpu_check.sh background MINUTES [SEED]  start an unattended large-profile campaign (setsid)
#           bash scripts/gpu_check.sh background-bench MINUTES [OPTIONS]  the bench in the background (MINUTES per arm)
#           bash scripts/gpu_check.sh collect           wait for that run, bring its corpus and log back
#           bash scripts/gpu_check.sh finish            collect, and once it has ended, each finding's repro alone
#           bash scripts/gpu_check.sh acceptance MINUTES SEED [PYTEST ARGS]  background + pytest + collect in one call
#           bash scripts/gpu_check.sh check             fuzzaoti check --device cuda on .whl/check/*.json
#           bash scripts/gpu_check.sh triage ID...       triage findings ID... of .whl/finding.db (no shrink; TRIAGE_S each, default 300)
#           bash scripts/gpu_check.sh check-triage [S]  the same, recorded; then triage each failure (S seconds in all, default 420)
#           bash scripts/gpu_check.sh pytest ARGS...    pytest ARGS in the checkout, importing the installed wheel
#           bash scripts/gpu_check.sh bench MINUTES [OPTIONS]  scripts/bench_throughput.py on the GPU (e.g. --configs default: like with like)
#           bash scripts/gpu_check.sh compile-bench [OPTIONS]  scripts/bench_compile.py on the GPU (default: large, sizes 1 4 16 32)
#           bash scripts/gpu_check.sh restart-bench [CRASHES]  scripts/bench_restart.py: a worker's cold replacement against a warm standby (default 1)
#           bash scripts/gpu_check.sh background-benches [MINUTES] [CRASHES]  background-bench --profile large, then the restart bench
#           bash scripts/gpu_check.sh background-restart-bench [CRASHES]  the same in the background (default 3; then 'collect')
#           bash scripts/gpu_check.sh canary-report     a 5-op canary failure: shrink, report, its repro with/without
# Logs and the corpus go under $OUT (the device tool brings them back).
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
MODE=${1:-canary}
if [ "$MODE" = "prepare" ]; then
    mkdir -p .whl && rm -f .whl/*.whl  # fresh wheels; keeps .whl/check/ and .whl/finding.db
    python3 -m pip wheel -q --no-deps -w .whl .
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 -d .whl \
        sqlite-utils==4.2.1 click-default-group==1.2.4 sqlite-fts4==1.0.3 tabulate==0.10.0
    ls .whl
    exit 0
fi
OUT=${OUT:-/tmp/fuzzaoti-out}
mkdir -p "$OUT"
# once per machine: a background campaign keeps importing from /tmp/site while later calls run
[ -f /tmp/site/.installed ] || { python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --upgrade --target /tmp/site .whl/*.whl && touch /tmp/site/.installed; } || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
# g++ 13 there builds AOTI packages that segfault on load (inside std::regex); g++ 12 works.
command -v g++-12 >/dev/null && export FUZZAOTI_CXX=g++-12
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import importlib.metadata, torch, hypothesis, click, sqlite_utils; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.get_device_name(0), 'hypothesis', hypothesis.__version__, 'click', importlib.metadata.version('click'))"
DB=$OUT/gpu.db
cd /tmp  # import the installed wheel, not the checkout (its package dirs are mapped at install)
seconds_of() { python3 -c "import sys; print(int(float(sys.argv[1]) * 60) + int(sys.argv[2]))" "$1" "$2"; }  # MINUTES (5.5 too) + S
step() { echo "== $*"; local t=$SECONDS; "$@"; local rc=$?; echo "== rc=$rc in $((SECONDS - t)) s"; return $rc; }
campaigns() {
    python3 -c "
import sqlite3, sys
cols = 'id, status, device, canary, programs, batches, runs_checked, runs_skipped, runs_large, runs_over_budget, runs_oom, invalid, failures, new_findings, worker_restarts, started_at, finished_at'
for r in sqlite3.connect(sys.argv[1]).execute('select ' + cols + ' from campaigns'):
    print('campaign', dict(zip(cols.split(', '), r)))" "$DB"
}
findings_and_repros() {
    # each finding shown, and its standalone repro written to /tmp/repros (for 'repros /tmp/repros'
    # in the next call, while this machine is warm) and the first few to $OUT (8 files come back)
    mkdir -p /tmp/repros
    for FID in $(python3 -c "import sqlite3,sys; print(' '.join(str(r[0]) for r in sqlite3.connect(sys.argv[1]).execute('select id from findings')))" "$1"); do
        fuzzaoti show "$FID" --corpus "$1" | head -30 | cut -c1-400
        fuzzaoti repro "$FID" --corpus "$1" -o "/tmp/repros/repro$FID.py"
        [ "$(ls "$OUT" | wc -l)" -lt 7 ] && cp "/tmp/repros/repro$FID.py" "$OUT/"
    done
}
case "$MODE" in
canary)
    step timeout 240 fuzzaoti fuzz --device cuda --inject bmm-batch-rotate --max-batches 1 --batch-size 16 \
        --shrink-minutes 0 --no-triage --corpus "$DB"
    step fuzzaoti list --corpus "$DB"
    FID=$(python3 -c "import sqlite3,sys; r=sqlite3.connect(sys.argv[1]).execute(\"select id from findings where canary='bmm-batch-rotate' and symptom='mismatch' order by id limit 1\").fetchone(); print(r[0] if r else '')" "$DB")
    if [ -n "$FID" ]; then
        step fuzzaoti show "$FID" --corpus "$DB"
        step timeout 120 fuzzaoti replay "$FID" --inject bmm-batch-rotate --corpus "$DB"
        step timeout 120 fuzzaoti replay "$FID" --corpus "$DB"
    fi
    step timeout 200 python3 -m pytest -q -p no:cacheprovider -m gpu "$REPO/tests/test_aoti.py"
    ;;
shrink)
    # a CUDA canary finding, shrunk on the H200 (issue acceptance: <= 2 ops, same signature)
    step timeout 300 fuzzaoti fuzz --device cuda --inject bmm-batch-rotate --max-batches 1 --batch-size 8 \
        --shrink-minutes 3 --corpus "$DB"
    step fuzzaoti list --corpus "$DB"
    ;;
repros)
    # standalone repro scripts (made here with 'fuzzaoti repro ID -o .whl/reproN.py'), run with torch alone
    for r in "${2:-$REPO/.whl}"/repro*.py; do
        echo "=== $r"; (CXX=${FUZZAOTI_CXX:-g++} timeout 150 python3 "$r" > "$OUT/$(basename "$r" .py).log" 2>&1; echo "rc=$?") \
            | tee -a "$OUT/$(basename "$r" .py).log"
        grep -v "triton_bmm\|triton_mm\|FutureWarning\|cls.__new__" "$OUT/$(basename "$r" .py).log" | tail -30 | cut -c1-300
    done
    ;;
finding)
    # a finding found on an earlier run (its corpus carried as .whl/finding.db): shrink, triage, repro
    FID=${2:?finding id}
    cp "$REPO/.whl/finding.db" "$DB"
    step timeout 270 fuzzaoti shrink "$FID" --minutes 3 --corpus "$DB"
    step timeout 150 fuzzaoti triage "$FID" --corpus "$DB"
    step fuzzaoti show "$FID" --corpus "$DB"
    step fuzzaoti repro "$FID" --corpus "$DB" -o "$OUT/repro-min.py"
    CXX=${FUZZAOTI_CXX:-g++} step timeout 120 python3 "$OUT/repro-min.py" 2>&1 | grep -v "FutureWarning\|cls.__new__" | tail -40
    ;;
background)
    # runs on after this call returns (its own session); 'collect' in a later call fetches it
    # (default settings otherwise: --max-bytes from the GPU's free memory); SEED: a seed of its own;
    # PROFILE=small for the small profile (default large)
    MINUTES=${2:-10}
    SEED=${3:-3}
    mkdir -p /tmp/bg
    setsid nohup bash -c "fuzzaoti fuzz --device cuda --profile ${PROFILE:-large} --minutes $MINUTES \
        --corpus /tmp/bg/unattended.db --seed $SEED > /tmp/bg/unattended.log 2>&1; echo \"exited with rc=\$?\" >> /tmp/bg/unattended.log; echo done > /tmp/bg/finished" \
        > /dev/null 2>&1 < /dev/null &
    echo "background campaign started ($MINUTES min): /tmp/bg/unattended.log"
    exit 0
    ;;
background-bench)
    # the throughput bench with arms longer than one call allows (MINUTES per arm: the naive one and
    # one per --workers count; 'collect' as above): the longer the arms, the less the cold starts
    # (a minute or more each on a fresh machine) weigh
    MINUTES=${2:-8}
    shift $(( $# < 2 ? $# : 2 ))
    mkdir -p /tmp/bg
    setsid nohup bash -c "python3 $REPO/scripts/bench_throughput.py --device cuda --minutes $MINUTES \
        --corpus /tmp/bg/unattended.db $* > /tmp/bg/unattended.log 2>&1; echo \"exited with rc=\$?\" >> /tmp/bg/unattended.log; echo done > /tmp/bg/finished" \
        > /dev/null 2>&1 < /dev/null &
    echo "background bench started ($MINUTES min per arm): /tmp/bg/unattended.log"
    exit 0
    ;;
acceptance)
    # a large-profile campaign (PROFILE=small: the small one) of MINUTES, the GPU tests (PYTEST_ARGS) meanwhile, then collect:
    # up to 7 minutes end (deadline grace included) inside one 600 s call; a longer one is
    # snapshotted near the call's end (a consistent copy of its corpus comes back even if the
    # machine is gone before the next call) and a plain 'collect' right after fetches its end
    MINUTES=${2:-7}
    T0=$SECONDS
    bash "$REPO/scripts/gpu_check.sh" background "$MINUTES" "${3:-3}"
    [ $# -gt 3 ] && { shift 3; bash "$REPO/scripts/gpu_check.sh" pytest "$@" 2>&1 | grep -v "FutureWarning\|cls.__new__" | tail -30; }
    END_S=$(seconds_of "$MINUTES" 75); [ "$END_S" -gt 520 ] && END_S=520
    WAIT_S=$((END_S - (SECONDS - T0))) bash "$REPO/scripts/gpu_check.sh" collect
    exit 0
    ;;
collect)
    for _ in $(seq 1 $(( ${WAIT_S:-510} / 3 ))); do [ -f /tmp/bg/finished ] && break; sleep 3; done
    [ -f /tmp/bg/finished ] || echo "background run still running"
    cp /tmp/bg/unattended.log "$OUT"/
    grep -v "FutureWarning\|cls.__new__" /tmp/bg/unattended.log | tail -25 | cut -c1-700
    # one corpus per campaign (a bench with several --workers counts keeps one per arm); a bench
    # still in its naive arm has none yet
    for SRC in /tmp/bg/unattended*.db; do
        [ -f "$SRC" ] || continue
        DB=$OUT/$(basename "$SRC")
        python3 -c "import sqlite3, sys; sqlite3.connect(sys.argv[1]).backup(sqlite3.connect(sys.argv[2]))" \
            "$SRC" "$DB"  # a consistent copy, WAL included, even mid-run
        step fuzzaoti list --corpus "$DB"
        campaigns
        findings_and_repros "$DB"
    done
    exit 0
    ;;
finish)
    # the end of a background campaign (its follow-up included), then every finding's standalone
    # repro, each run alone on the GPU now that nothing else is (the issue's acceptance check)
    bash "$REPO/scripts/gpu_check.sh" collect > "$OUT/collect.log" 2>&1
    grep -a "^campaign \|exited with\|NEW finding\| shrunk: \|is known" /tmp/bg/unattended.log | cut -c1-400
    if [ -f /tmp/bg/finished ]; then
        bash "$REPO/scripts/gpu_check.sh" repros /tmp/repros
    else
        echo "background run still running: call 'finish' again"
    fi
    exit 0
    ;;
canary-report)
    # issue acceptance: a canary failure in a program of 5 ops shrinks to <= 2 ops with the same
    # signature, and the report's repro exits nonzero with the canary and zero without it
    DEVICE=${DEVICE:-cuda}
    python3 - "$OUT/five-op.json" <<'PY'
import json, sys
from fuzzaoti.model.program import DimSpec, InputSpec, Node, Program, Values
p = Program(
    dims=(DimSpec("b", 2, None, 6, "auto"), DimSpec("n", 2, 40, 9)),
    inputs=(InputSpec("x0", "float16", ("b", "n", 4)), InputSpec("x1", "float16", ("b", 4, 5)),
            InputSpec("i0", "int32", (3,), Values("int", 0, "n"))),
    nodes=(Node("t0", "bmm", ("x0", "x1")), Node("t1", "index_select", ("t0", "i0"), (("dim", 1),)),
           Node("t2", "relu", ("t1",)), Node("t3", "affine", ("t2",), (("scale", 2.0), ("shift", 1.0))),
           Node("t4", "sum", ("t3",), (("dim", 2),))),
    outputs=("t4", "t1")).validate()
json.dump({"program": json.loads(p.to_json()),
           "runs": [{"env": {"b": 3, "n": 9}, "seed": 0}, {"env": {"b": 5, "n": 17}, "seed": 1}]},
          open(sys.argv[1], "w"), indent=1)
PY
    step timeout 200 fuzzaoti check --device "$DEVICE" --inject bmm-batch-rotate --record "$DB" "$OUT/five-op.json"
    step timeout 200 fuzzaoti shrink 1 --minutes "${2:-2}" --corpus "$DB"
    step fuzzaoti show 1 --corpus "$DB"
    step fuzzaoti report 1 --corpus "$DB" --dir "$OUT"
    ls "$OUT"
    R=$(ls "$OUT"/*.py | head -1)
    CXX=${FUZZAOTI_CXX:-g++} step timeout 150 python3 -m fuzzaoti.compile.canaries bmm-batch-rotate "$R" 2>&1 | tail -5
    CXX=${FUZZAOTI_CXX:-g++} step timeout 150 python3 "$R" 2>&1 | tail -5
    ;;
pytest)
    shift  # the rest are pytest arguments, e.g. -m gpu tests/test_known.py -k int32 (run from /tmp:
    args=()  # the checkout's fuzzaoti/ is not importable as is, the installed wheel is)
    for a in "$@"; do [[ $a == tests/* ]] && args+=("$REPO/$a") || args+=("$a"); done
    CXX=${FUZZAOTI_CXX:-g++} step timeout 540 python3 -m pytest -q -p no:cacheprovider "${args[@]}"
    ;;
check)
    CXX=${FUZZAOTI_CXX:-g++} step timeout 240 fuzzaoti check --device cuda "$REPO"/.whl/check/*.json
    ;;
triage)
    cp "$REPO/.whl/finding.db" "$DB"
    for FID in "${@:2}"; do
        step timeout "${TRIAGE_S:-300}" fuzzaoti triage "$FID" --corpus "$DB"
        fuzzaoti show "$FID" --corpus "$DB" | head -12 | cut -c1-300
    done
    ;;
check-triage)
    # hand-written cases (e.g. a bench's findings, from a note) checked, then each failure triaged
    # (stage and hand remedies: the bounded-Dim-max probe tells an unbounded-dim member) until S runs out
    END=$((SECONDS + ${2:-420}))
    step timeout 300 fuzzaoti check --device cuda --record "$DB" "$REPO"/.whl/check/*.json
    for FID in $(python3 -c "import sqlite3,sys; print(' '.join(str(r[0]) for r in sqlite3.connect(sys.argv[1]).execute('select id from findings order by id')))" "$DB"); do
        LEFT=$((END - SECONDS)); [ "$LEFT" -gt 30 ] || { echo "no time left to triage finding $FID"; continue; }
        step timeout "$LEFT" fuzzaoti triage "$FID" --corpus "$DB"
        fuzzaoti show "$FID" --corpus "$DB" | head -25 | cut -c1-300
    done
    ;;
bench)
    MINUTES=${2:-2.5}
    shift $(( $# < 2 ? $# : 2 ))  # the rest are extra bench options (--workers 4, --quarantine-rate 1 ...)
    step timeout 580 python3 "$REPO/scripts/bench_throughput.py" --device cuda --minutes "$MINUTES" --corpus "$DB" "$@"
    step fuzzaoti list --corpus "$DB"
    ;;
compile-bench)
    shift  # the rest are bench_compile.py options (default: the large profile at 1, 4, 16 and 32 programs a module)
    [ $# -gt 0 ] || set -- --profile large --sizes 1 4 16 32
    step timeout 580 python3 "$REPO/scripts/bench_compile.py" --device cuda "$@" 2>&1 | grep -v "FutureWarning\|cls.__new__"
    ;;
restart-bench)
    # each arm pays a cold first compile (a minute or more on a fresh GPU machine) and, per crash,
    # a crashing compile and a replacement's first check: 3 crashes ran past 420 s on the H200
    # (and came back with nothing); 'background-restart-bench' runs longer ones
    step timeout 580 python3 "$REPO/scripts/bench_restart.py" --device cuda --crashes "${2:-1}" 2>&1 \
        | grep --line-buffered -v "FutureWarning\|cls.__new__" | tee "$OUT/restart.log"
    ;;
background-benches)
    # what issue 15 still owes in one background run ('collect' every call until it has ended,
    # about 20 minutes): the large-profile throughput bench (MINUTES per arm, default 6) and then
    # the restart bench (CRASHES an arm, default 2), one after the other on the same GPU
    MINUTES=${2:-6}
    mkdir -p /tmp/bg
    setsid nohup bash -c "python3 $REPO/scripts/bench_throughput.py --device cuda --minutes $MINUTES --profile large \
        --corpus /tmp/bg/unattended.db > /tmp/bg/unattended.log 2>&1; echo \"bench exited with rc=\$?\" >> /tmp/bg/unattended.log; \
        python3 $REPO/scripts/bench_restart.py --device cuda --crashes ${3:-2} >> /tmp/bg/unattended.log 2>&1; \
        echo \"exited with rc=\$?\" >> /tmp/bg/unattended.log; echo done > /tmp/bg/finished" \
        > /dev/null 2>&1 < /dev/null &
    echo "background benches started ($MINUTES min per arm, then ${3:-2} crashes an arm): /tmp/bg/unattended.log"
    exit 0
    ;;
background-restart-bench)
    # the restart bench with more crashes than one call allows ('collect' as above)
    mkdir -p /tmp/bg
    setsid nohup bash -c "python3 $REPO/scripts/bench_restart.py --device cuda --crashes ${2:-3} \
        > /tmp/bg/unattended.log 2>&1; echo \"exited with rc=\$?\" >> /tmp/bg/unattended.log; echo done > /tmp/bg/finished" \
        > /dev/null 2>&1 < /dev/null &
    echo "background restart bench started (${2:-3} crashes an arm): /tmp/bg/unattended.log"
    exit 0
    ;;
large)
    # the large profile: batches past 65535, stride-0 index spaces past 2**31 and 2**32 elements
    MINUTES=${2:-5}
    step timeout "$(seconds_of "$MINUTES" 90)" fuzzaoti fuzz --device cuda --profile large \
        --minutes "$MINUTES" --corpus "$DB" --seed "${3:-2}" 2>&1 | tee "$OUT/large.log" | grep -v "FutureWarning\|cls.__new__"
    step fuzzaoti list --corpus "$DB"
    findings_and_repros "$DB"
    ;;
campaign)
    MINUTES=${2:-5}
    shift $(( $# < 2 ? $# : 2 ))  # the rest are extra 'fuzzaoti fuzz' options (--shrink-minutes 0 --no-triage ...)
    step timeout "$(seconds_of "$MINUTES" 90)" fuzzaoti fuzz --device cuda --minutes "$MINUTES" --corpus "$DB" --seed 1 "$@"
    step fuzzaoti list --corpus "$DB"
    ;;
esac
[ -f "$DB" ] && campaigns

