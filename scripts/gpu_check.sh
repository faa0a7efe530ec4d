#!/usr/bin/env bash
# The checks that need a GPU, as one short run on a machine with one CUDA GPU and PyTorch (for the H200
# figures of docs/benchmarks.md): the GPU-only tests (captured CUDA graphs and the CUDA attention path
# against the plain forwards), then the scale bench at the Clover-35B-A3B shape. Writes tests.log and
# scale.json to $OUT (default var/gpu). SCALE_ARGS adds bench options (`--layers 8` where memory is short).
# Wheels in .whl/ (the gpu extra: flash-linear-attention and fla-core, pure Python; the GPU's image has
# triton and einops) are installed first, so the prefill runs on fla's kernels and is timed against the
# plain-torch rule in the same run. Fetch them here with
#   pip download --no-deps -d .whl flash-linear-attention==0.6.0 fla-core==0.6.0
# and carry .whl (ignored by git through .git/info/exclude: echo /.whl/ >> .git/info/exclude).
set -u
OUT=${OUT:-var/gpu}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
PY=${PY:-python3}
if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
# --noconftest: the suite's conftest starts the web tier's services; these tests need only torch.
$PY -m pytest -q -p no:cacheprovider -p no:django --noconftest \
    tests/model_worker/test_clover_graphs.py tests/model_worker/test_clover_fast_paths.py \
    tests/model_worker/test_clover_model.py tests/model_worker/test_fla_kernels.py \
    -k "lower_right or clover_graphs or fast_paths or on_a_gpu" \
    2>&1 | tee "$OUT/tests.log"
$PY -m model_worker.lab.bench --scale clover-35b-a3b --random-weights --device cuda --graphs --json \
    ${SCALE_ARGS:-} > "$OUT/scale.json"
echo "scale bench rc=$?"
head -c 2000 "$OUT/scale.json"
