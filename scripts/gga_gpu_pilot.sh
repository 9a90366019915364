#!/usr/bin/env bash
# A small GPU pilot of issue 4's comparison, for a machine lent for minutes: the xgb
# history of a few ResNet-18 layers, then one left-out layer tuned by xgb, gga and ga
# taking turns (gga_turns.py), all on the `cuda` templates and measurer. Its budgets are
# far below the issue's (xgb >= 500 trials), so its figures are a pilot, not the targets'
# verdict. Each step stops at its deadline; the report covers what was measured by then.
#
#   bash scripts/gga_gpu_pilot.sh OUT        # OUT: where the report and databases go
#
# Environment (defaults in brackets): LAYER [r18_l3], HISTORY [r18_l2,r18_l3a,r18_l4],
# HISTORY_TRIALS [128], XGB [256], GGA [128], GA [128], BATCH [16], TARGET [cuda:h200],
# HISTORY_SECONDS [200], TURNS_SECONDS [300], WORK [/tmp/gga-gpu-pilot].
set -u
OUT=${1:?usage: gga_gpu_pilot.sh OUT}
LAYER=${LAYER:-r18_l3}
HISTORY=${HISTORY:-r18_l2,r18_l3a,r18_l4}
WORK=${WORK:-/tmp/gga-gpu-pilot}
common=(--target "${TARGET:-cuda:h200}" --space cuda --measurer cuda
        --batch-size "${BATCH:-16}" --no-pruned --db "$WORK/base.db")
mkdir -p "$OUT" "$WORK"
SECONDS=0
timeout "${HISTORY_SECONDS:-200}" python3 scripts/reproduce_gga.py --history-only "${common[@]}" \
    --layers "$HISTORY" --history-layers "$HISTORY" --trials "${HISTORY_TRIALS:-128}"
echo "history: rc $? after ${SECONDS} s"
turns=("${common[@]}" --layers "$LAYER" --history-layers "$HISTORY" --work "$WORK/runs"
       --out "$OUT/report" --budget "xgb=${XGB:-256}" --budget "gga=${GGA:-128}"
       --budget "ga=${GA:-128}")
timeout "${TURNS_SECONDS:-300}" python3 scripts/gga_turns.py "${turns[@]}" --keep-workers
rc=$?
echo "turns: rc $rc after ${SECONDS} s"
if [ "$rc" -ne 0 ]; then  # stopped at its deadline: report what the databases hold
    python3 scripts/gga_turns.py "${turns[@]}" --report-only
fi
tar czf "$OUT/pilot-databases.tgz" -C "$WORK" .
echo "done after ${SECONDS} s"
