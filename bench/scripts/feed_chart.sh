#!/bin/bash
# SPDX-License-Identifier: MIT
# feed_chart.sh RESULT.json SERIES.txt OUT.png
# Chart an msga_feed run: latency against rate (median, p99, max of
# SendToReceive, median and p99 SupplyToReceive), with the latency-stable
# rate (msga_feed(1)) marked by a dashed vertical line, and mean/max
# SendToReceive per 100 ms over the run. Needs jq and gnuplot
# (scripts/bootstrap.sh).
set -euo pipefail
[ $# = 3 ] || { echo "usage: feed_chart.sh RESULT.json SERIES.txt OUT.png" >&2; exit 2; }
json=$1 series=$2 png=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jq -r '.steps[] | [.rate, .send_to_receive.median_us, .send_to_receive.p99_us,
	.send_to_receive.max_us, .supply_to_receive.median_us,
	.supply_to_receive.p99_us] | @tsv' \
	"$json" >"$work/steps.tsv"
[ -s "$work/steps.tsv" ] || { echo "feed_chart: no steps in $json" >&2; exit 1; }
# (a JSON of an msga_feed without the stable rate: nothing to mark)
stable=$(jq -r '.stable_rate // 0' "$json")
mark=""
# the label on the side of the line with more room
side=$(jq -r '[.steps[].rate] as $r | if .stable_rate * 2 > ($r | min) + ($r | max)
	then "right offset -0.5,0" else "left offset 0.5,0" end' "$json")
[ "$stable" -gt 0 ] && mark="set arrow from $stable, graph 0 to $stable, graph 1 nohead dt 2 lw 2 lc rgb 'dark-green'
set label 'latency-stable $stable msg/s' at $stable, graph 0.06 $side tc rgb 'dark-green'"
gnuplot <<GP
set terminal pngcairo size 1100,800 noenhanced
set output "$png"
set multiplot layout 2,1 title "msga_feed: $(jq -r '"\(.size) B messages, max rate without failure \(.max_rate) msg/s, latency-stable \(.stable_rate // "n/a") msg/s"' "$json")"
set grid
set logscale y
set xlabel "rate [msg/s]"
set ylabel "RTT/2 [us]"
set key top left
$mark
plot "$work/steps.tsv" using 1:2 with linespoints title "SendToReceive median", \
     "" using 1:3 with linespoints title "SendToReceive p99", \
     "" using 1:4 with linespoints title "SendToReceive max", \
     "" using 1:5 with linespoints title "SupplyToReceive median", \
     "" using 1:6 with linespoints title "SupplyToReceive p99"
unset arrow
unset label
set xlabel "time [s]"
set ylabel "SendToReceive per 100 ms [us]"
plot "$series" using 1:3 with lines title "mean", \
     "" using 1:4 with lines title "max"
unset multiplot
GP
echo "feed_chart: wrote $png"
