#!/usr/bin/env bash
# run.sh LABEL COMMIT_DIR [extra runner args]: one Ferrite-only side-by-side round with the new runner against COMMIT_DIR's jar
set -euo pipefail
label=$1; dir=$2; shift 2
r=/tmp/perfab-407b5caa
cp="$r/perf/target/classes:$(cat $r/perf/target/runner.classpath)"
out=/tmp/perfab-runs/$label.json
echo "$label start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/perfab-runs/log
cd /tmp/perfab-runs
java -Xmx1g -Dsidebyside.commit="$(git -C $dir rev-parse --short HEAD)" -Dsidebyside.ferrite.jar=$dir/broker/target/ferrite-broker.jar \
  --add-opens java.base/jdk.internal.misc=ALL-UNNAMED -cp "$cp" io.ferrite.perf.sidebyside.SideBySide \
  --skip-kafka --skip-tools --rounds 1 --rates 5000 --sync-records 200 --e2e-seconds 2 --out $out "$@" > /tmp/perfab-runs/$label.out 2>&1
echo "$label end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/perfab-runs/log
