"""The fast parser (orjson) reads every line as the stdlib does: the same object, or the same malformed-line
reason, including where the two parsers differ (integers past 64 bits, deep nesting)."""

from __future__ import annotations

import pytest

from trace_dataset.yelp import lines

pytest.importorskip("orjson")

LINES = [
    b'{"review_id":"r1","stars":4.0,"text":"Caf\\u00e9 \\"ok\\"\\n","useful":3}\n',
    b'  {"a":-0.0,"b":1E5,"c":0.1000000000000000055511151231257827,"d":1e999}\r\n',
    b'{"a":12345678901234567890123}',  # orjson alone would give a float
    b'{"a":-9223372036854775809,"b":18446744073709551615}',
    b'{"a":1,"a":2}',
    b'{"a":"\\ud800"}',
    b'{"a":' + b"[" * 300 + b"]" * 300 + b"}",
    b'{"a":' + b"[" * 1010 + b"]" * 1010 + b"}",  # deeper than the stdlib reads, within orjson's 1,024
    b'{"a":NaN}',
    b'{"a":"x\x01"}',
    b'{"a":1} x',
    b"\xff{}",
    b"[1]",
    b"",
]


def _read(decode, raw: bytes) -> tuple[str, str]:
    try:
        return "object", repr(decode(raw))
    except lines._Bad as e:
        return "malformed", str(e)


@pytest.mark.parametrize("raw", LINES)
def test_orjson_path_reads_each_line_as_the_stdlib(raw):
    assert lines.orjson is not None
    assert _read(lines._decode, raw) == _read(lines._decode_stdlib, raw)
