#!/usr/bin/env bash
# The checks that need a GPU, as one short run on a machine with one CUDA GPU and PyTorch (for the H200
# figures of docs/benchmarks.md): the GPU-only tests (captured CUDA graphs and the CUDA attention path
# against the plain forwards), then the scale bench at the Clover-35B-A3B shape. Writes tests.log and
# scale.json to $OUT (default var/gpu). SCALE_ARGS adds bench options (`--layers 8` where memory is short).
set -u
OUT=${OUT:-var/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
# --noconftest: the suite's conftest starts the web tier's services; these tests need only torch.
$PY -m pytest -q -p no:cacheprovider -p no:django --noconftest \
    tests/model_worker/test_clover_graphs.py tests/model_worker/test_clover_fast_paths.py \
    tests/model_worker/test_clover_model.py -k "lower_right or clover_graphs or fast_paths or on_a_gpu" \
    2>&1 | tee "$OUT/tests.log"
$PY -m model_worker.lab.bench --scale clover-35b-a3b --random-weights --device cuda --graphs --json \
    ${SCALE_ARGS:-} > "$OUT/scale.json"
echo "scale bench rc=$?"
head -c 2000 "$OUT/scale.json"
