#!/bin/bash
# SPDX-License-Identifier: MIT
# The main job, from a fresh clone. It sets the machine up, builds msgaccel
# and boots the test VM. Inside the VM it does three things:
#   1. on each soft device (rxe0 = RoCE v2, siw0 = iWARP), prints what the
#      device is and pings 64 B over an RC queue pair (msga_ping);
#   2. on soft-RoCE, runs the STAC-N1-style feed benchmark (msga_feed):
#      232 B messages, producer -> reflecting consumer over pub/sub, the rate
#      stepping up until a failure event after a one-second warm-up that is
#      not counted. The report card gives SendToReceive and SupplyToReceive
#      RTT/2 per rate, the highest rate without a failure, the
#      latency-stable rate, and CPU and peak RSS of both sides;
#   3. draws demo-results/feed.png: latency against rate (the
#      latency-stable rate marked), and over time.
# The defaults are scaled to the emulated VM; MSGA_FEED_ARGS overrides them.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. tests/vm/env.sh

scripts/bootstrap.sh
[ -x configure ] || ./autogen.sh >/dev/null 2>&1
mkdir -p build-demo
cd build-demo
[ -f Makefile ] || ../configure -q
make -s -j"$(nproc)" bench/msga_ping bench/msga_feed
results=$PWD/demo-results
mkdir -p "$results"
rm -f "$results/feed.json" "$results/feed-series.txt"

feed_args=${MSGA_FEED_ARGS:---base 2000 --step 2000 --max-rate 40000 --duration 2}
guest_cmds=""
for spec in $MSGA_VM_DEVICES; do
	IFS=: read -r dev addr transport <<<"$spec"
	guest_cmds+="echo; echo '== $dev ($transport) at $addr';"
	guest_cmds+=" $PWD/bench/msga_ping -n ${MSGA_DEMO_COUNT:-2000} $addr || exit 1;"
done
rxe_addr=$(for spec in $MSGA_VM_DEVICES; do
	IFS=: read -r dev addr transport <<<"$spec"
	[ "$transport" = RoCE ] && echo "$addr" && break
done)
guest_cmds+="echo; echo '== msga_feed on soft-RoCE at $rxe_addr';"
guest_cmds+=" $PWD/bench/msga_feed $feed_args --json $results/feed.json"
guest_cmds+=" --series $results/feed-series.txt $rxe_addr || exit 1"
MSGA_VM_RWDIRS="$PWD" ../tests/vm/vm-run.sh "$PWD/vm-results" \
	bash -c "$guest_cmds"
../bench/scripts/feed_chart.sh "$results/feed.json" "$results/feed-series.txt" \
	"$results/feed.png"
