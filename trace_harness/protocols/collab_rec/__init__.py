"""Collab-REC's own benchmark (200 European cities, the authors' query CSV) around the system in
`baselines.collab_rec`: `run` writes one strategy's run folder, `metrics` its metrics.json, `tables` the paper's
Tables 1 and 3, `cli` the `trace-bench collab-rec run|tables` command."""
