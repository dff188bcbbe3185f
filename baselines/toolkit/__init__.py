"""What the systems share, so that no system reaches into another one's module (tests/test_layers.py checks it):
the user's stated state read from a turn row (`state`), the tokeniser and query (`text`), template responses with
verbatim quotes (`responses`), distances (`geo`), the stated-constraint parser (`constraints`), and the scorers,
encoders and graphs several systems rank with: `tfidf`, `dense`, `aspect`, `proximity`."""
