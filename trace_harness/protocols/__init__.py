"""The protocols: how systems meet the data or a simulated traveller.

teacher_forced/   `trace-bench run`: a registered system over a split's system turns, resumable
interactive/      `trace-bench interact`: the `trace` and `sniprec` protocols (simulator/ inside)
collab_rec/       `trace-bench collab-rec`: Collab-REC's own benchmark
params.py         a system's parameters (`--param`) checked against its constructor
subsets.py        seeded subsets of a split, written as data directories of their own
"""
