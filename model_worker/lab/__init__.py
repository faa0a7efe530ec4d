"""The lab: training, benchmarks and measurements of checkpoints. The serving path never imports it."""
