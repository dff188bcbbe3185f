"""Fixtures of the Collab-REC tests; hand-made catalogues and Trace data live in collab_rec_helpers.py."""
