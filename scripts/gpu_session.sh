#!/usr/bin/env bash
# Everything a lent GPU is for, in one device call that fits the session's 15 minutes with the machine's
# start: first the library checkpoint's training run (scripts/gpu_train.sh, MINUTES, default 6), then
# the GPU-only tests and the Clover-35B-A3B scale bench (scripts/gpu_check.sh). $OUT then holds
# train.log, checkpoint.tar.* (two parts), tests.log and scale.json: five of the tool's eight files.
#   run: bash scripts/gpu_session.sh        (timeout_s 600)
set -u
export OUT=${OUT:-var/gpu}
mkdir -p "$OUT"
start=$(date +%s)
MINUTES=${MINUTES:-6} bash scripts/gpu_train.sh
echo "training part: $(( $(date +%s) - start )) s"
bash scripts/gpu_check.sh
echo "whole session script: $(( $(date +%s) - start )) s"
