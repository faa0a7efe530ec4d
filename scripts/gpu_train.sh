#!/usr/bin/env bash
# Train the library checkpoint (`--preset library`: every corpus page, from scratch) on one CUDA GPU
# inside a time budget, and bring it back through $OUT: the training log, and the exported checkpoint
# (fp32, no optimizer state) as a tar split into parts under the device tool's 16 MiB a file.
#   MINUTES (default 7; 5 when scripts/gpu_check.sh follows in the same session): the training budget.
#   TRAIN_ARGS: more `train` options (--batch-size 8, ...).
# A later session continues where one ended: unpack the checkpoint into var/train/clover-library here,
# name that folder in the device call's `carry`, and set TRAIN_ARGS="--init-from var/train/clover-library
# --all-pages --lr 1e-3" (its weights and tokenizer, a fresh optimizer and schedule).
# Peak memory: about 3.5 GB an example at the longest pages (4.6 GB resident for batch 1 on a CPU), so
# the preset's batch of 16 needs about 60 GB of the H200's 139.
# Back here: cat checkpoint.tar.* | tar -xf - -C var/train  (gives var/train/clover-library), then
# `python -m model_worker.lab.bench --path var/train/clover-library ...` and, to ship it, copy the folder
# to model_worker/checkpoints/clover-demo with its model card updated.
set -u
OUT=${OUT:-var/gpu-train}
mkdir -p "$OUT" var/train
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
RUN=var/train/library-run
nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv,noheader 2>&1 | tee "$OUT/train.log"
$PY -m model_worker.lab.train --preset library --device cuda --minutes "${MINUTES:-7}" --out "$RUN" \
    --no-progress ${TRAIN_ARGS:-} 2>&1 | grep --line-buffered -v "Writing model shards" | tee -a "$OUT/train.log"
rc=${PIPESTATUS[0]}
echo "train rc=$rc" | tee -a "$OUT/train.log"
[ -f "$RUN/config.json" ] || exit 1
$PY -c "from pathlib import Path; from model_worker.lab.train import export; \
export(Path('$RUN'), Path('var/train/clover-library'))" 2>&1 | grep -v "Writing model shards"
tar -cf - -C var/train clover-library | split -b 15M - "$OUT/checkpoint.tar."
ls -la "$OUT"
