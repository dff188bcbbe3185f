"""How many times a row's owner submitted to its track and period, the per-period quota, and the manifest a
submission may carry.

A row's track is `public` (the configured split) or one blind period (spaces_app.blind). Every stored version is
one accepted submission, and only its owner replaces a row, so the submissions an owner made to a track and
period are the versions of the rows there that the owner owns. The store counts them under its lock, just before
it writes (`count_check`): the new row records the count with itself included (`submissions`), and a blind
submission past the quota is refused there, so submissions racing from threads or processes never pass it
together. A row shows that count, or, for a Hugging Face owner, the sum over the owner's rows of the track and
period if that is higher (a token cannot be matched across rows without the token itself). Counting a token
owner's rows checks the token against each row of the track's token rows (PBKDF2, ~50 ms a row; a Hugging Face
owner's is a comparison of names).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from spaces_app.owners import Owner, owns
from trace_harness.leaderboard.reproduction import MANIFEST_MAX_BYTES, ManifestError, check_manifest


class QuotaError(ValueError):
    """The owner has used the period's quota; the message says how many and which period."""


def track_key(row: dict[str, Any]) -> tuple[str, str]:
    """(track, period) of a row: ("public", "") or ("blind", NAME)."""
    period = row.get("period")
    return ("blind", period) if isinstance(period, str) and period else ("public", "")


def _versions(row: dict[str, Any]) -> int:
    version = row.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) and version > 0 else 1


def owner_count(owner: Owner, rows: Iterable[dict[str, Any]], key: tuple[str, str]) -> int:
    """Submissions `owner` made to the track and period `key`: the versions of the rows there it owns."""
    return sum(_versions(r) for r in rows if track_key(r) == key and owns(owner, r.get("owner")))


def count_check(owner: Owner, key: tuple[str, str], quota: int | None):
    """The counting part of a store check (spaces_app.store.RowsCheck, its `Checked.fields`): counts `owner`'s submissions to `key` among the rows
    stored now, refuses one past `quota` (None: no quota) and returns the count to record on the new row."""

    def check(rows: list[dict[str, Any]]) -> dict[str, Any]:
        made = owner_count(owner, rows, key)
        if quota is not None and made >= quota:
            raise QuotaError(
                f"{owner.describe()} has made {made} submissions to blind period {key[1]!r}; the quota is "
                f"{quota} per period"
            )
        return {"submissions": made + 1}

    return check


def shown_count(row: dict[str, Any], rows: Iterable[dict[str, Any]]) -> int | None:
    """The submission count a row shows (module docstring); None for a row that is not a submission."""
    if row.get("source") != "submission":
        return None
    stored = row.get("submissions")
    count = stored if isinstance(stored, int) and not isinstance(stored, bool) else _versions(row)
    owner = row.get("owner")
    if isinstance(owner, dict) and owner.get("kind") == "hf" and isinstance(owner.get("user"), str):
        key = track_key(row)
        total = sum(
            _versions(r)
            for r in rows
            if r.get("source") == "submission"
            and track_key(r) == key
            and isinstance(r.get("owner"), dict)
            and r["owner"].get("kind") == "hf"
            and r["owner"].get("user") == owner["user"]
        )
        count = max(count, total)
    return count


def read_manifest(path: str | Path | None) -> dict[str, Any] | None:
    """The checked manifest of an upload (None when none was given); ManifestError naming what is wrong."""
    if not path:
        return None
    path = Path(path)
    if path.stat().st_size > MANIFEST_MAX_BYTES:
        raise ManifestError(f"{path.name}: a manifest is at most {MANIFEST_MAX_BYTES // 1024} KB")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise ManifestError(f"{path.name}: not a JSON manifest ({e})") from None
    check_manifest(manifest)
    return manifest
