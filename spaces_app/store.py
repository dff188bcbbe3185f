"""Where submitted leaderboard rows live: a local folder (default) or a Hub dataset repository.

Layout (both backends, the requests/results pattern of Hugging Face leaderboards), key = <slug>__<pool>
(and __blind-<period> for a row of a blind period):
    results/<key>.json                    the current row (what the leaderboard shows)
    history/<key>/v<NNNN>.json            every version of that row ever stored, the current one included
    requests/<key>/v<NNNN>.jsonl[.gz]     the predictions file each version was scored from, in its own format
A stored row carries `version`, `request` (the path of its predictions file), `owner` (spaces_app.owners)
and `submitted_at`. `put` runs only after the submission validated and scored; it repeats the caller's check
against the rows stored now (the look-alike names of spaces_app.submissions; the owner's count and quota of
spaces_app.accountability, whose fields the row records), checks the owner and writes the
three files under one lock (local: temp file + rename each, result last; Hub: one commit on top
of the revision it read), so a refused or failed submission changes nothing and readers never see half a file.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import logging
import shutil
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

from spaces_app.names import (
    default_ignorable,
    describe,
    lookalike_key,
    mixed_script_word,
    needed_invisible,
    slug,
    too_new_char,
)
from spaces_app.owners import Owner, OwnerError, check_replace, owner_record
from spaces_app.unicode_data import confusables_version
from trace_dataset.io import atomic_open, write_json

log = logging.getLogger(__name__)

NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 500
RESULTS_DIR = "results"
REQUESTS_DIR = "requests"
HISTORY_DIR = "history"
REQUEST_SUFFIXES: tuple[str, ...] = (".jsonl", ".jsonl.gz")  # plain JSON lines, or gzip of them


@dataclass(frozen=True)
class Checked:
    """What a RowsCheck found acceptable: `fields` to record on the new row (spaces_app.accountability's
    count) and the stored `retire` rows it replaces on the board (their owner's rows under a name today's checks
    refuse: spaces_app.submissions.refuse_lookalike)."""

    fields: dict[str, Any] = field(default_factory=dict)
    retire: list[dict[str, Any]] = field(default_factory=list)


# given the rows stored now: raises to refuse a row, or says what to record and retire (or None: nothing)
RowsCheck = Callable[[list[dict[str, Any]]], "Checked | None"]


def slugify(name: str) -> str:
    """File-name key of a system name: case-folded letters (any script, accents dropped) and digits joined by
    '-' (spaces_app.names.slug; names that map to the same slug are the same system)."""
    return slug(name)


def forbidden_char(text: str, allow: str = "") -> str | None:
    """The first character that may not appear in a shown text, as 'U+XXXX', or None.

    Refused: controls (C0, DEL, C1), format characters such as the bidirectional overrides and isolates
    (U+202A-U+202E, U+2066-U+2069), surrogates, private-use and unassigned code points, line/paragraph
    separators, and every default-ignorable code point (variation selectors, joiners, fillers, zero-width
    characters) that no script or emoji sequence needs where it stands (spaces_app.names.needed_invisible);
    `allow` lists exceptions (a description may hold newlines).
    """
    for i, c in enumerate(text):
        if c in allow:
            continue
        if default_ignorable(c):
            if needed_invisible(text, i):
                continue
            return f"U+{ord(c):04X}"
        category = unicodedata.category(c)
        if category[0] == "C" or category in ("Zl", "Zp"):
            return f"U+{ord(c):04X}"
    return None


def check_name(name: str | None) -> str:
    """The stripped system name, or ValueError saying what is wrong with it."""
    name = (name or "").strip()
    if not name:
        raise ValueError("a system name is required")
    if len(name) > NAME_MAX_CHARS:
        raise ValueError(f"system name is {len(name)} characters; at most {NAME_MAX_CHARS} are allowed")
    bad = forbidden_char(name)
    if bad and default_ignorable(char := chr(int(bad[2:], 16))):
        raise ValueError(
            f"system name contains an invisible character ({describe(char)}) where no "
            "script or emoji sequence needs one: variation selectors, joiners, fillers, zero-width and "
            "bidirectional formatting characters are not allowed (a ZWNJ or ZWJ is, where a script joins "
            "letters with it)"
        )
    if bad:
        raise ValueError(
            f"system name contains a control or formatting character ({bad}: controls, "
            "bidirectional overrides and invisible characters are not allowed)"
        )
    new = too_new_char(name)
    if new:
        raise ValueError(
            f"system name contains {new}, newer than Unicode {confusables_version()} (the version of the "
            "look-alike data): it cannot be checked against other names yet; leave it out"
        )
    slugify(name)
    mixed = mixed_script_word(name)
    if mixed:
        raise ValueError(
            f"system name word {mixed[0]!r} mixes scripts ({' and '.join(mixed[1])}): such a word can "
            "pass for another name; write each word in one script"
        )
    return name


def stored_slug(row: dict[str, Any]) -> str:
    """The slug a stored row's files are kept under (from its request path; rows stored before the slug knew
    other scripts keep their old one), else the slug of its name."""
    request = row.get("request")
    if isinstance(request, str) and request.count("/") >= 2 and "__" in request.split("/")[1]:
        return request.split("/")[1].split("__", 1)[0]
    return slugify(row["system"])


def lookalike_of(name: str, rows: Iterable[dict[str, Any]]) -> str | None:
    """The name of a row that looks like `name` (same TR39 skeleton) but is another system (another slug)."""
    key, own = lookalike_key(name), slugify(name)
    for row in rows:
        other = row.get("system")
        if isinstance(other, str) and stored_slug(row) != own and lookalike_key(other) == key:
            return other
    return None


def check_description(description: str | None) -> str:
    """The stripped description (newlines and tabs allowed), or ValueError."""
    description = (description or "").strip()
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise ValueError(
            f"description is {len(description)} characters; at most {DESCRIPTION_MAX_CHARS} are allowed"
        )
    bad = forbidden_char(description, allow="\n\t")
    if bad:
        raise ValueError(f"description contains a control or formatting character ({bad})")
    return description


def row_key(row: dict[str, Any], slug: str | None = None) -> str:
    """<slug>__<pool>, and __blind-<period> for a row of a blind period (spaces_app.blind); `slug` (a stored
    row's own, `stored_slug`) in place of its name's."""
    period = row.get("period")
    return f"{slug or slugify(row['system'])}__{row['pool']}" + (f"__blind-{period}" if period else "")


def result_path(row: dict[str, Any]) -> str:
    return f"{RESULTS_DIR}/{row_key(row)}.json"


def history_path(row: dict[str, Any], version: int) -> str:
    return f"{HISTORY_DIR}/{row_key(row)}/v{version:04d}.json"


def request_path(row: dict[str, Any], version: int, suffix: str = ".jsonl") -> str:
    if suffix not in REQUEST_SUFFIXES:
        raise ValueError(f"unknown request format {suffix!r}; expected one of {REQUEST_SUFFIXES}")
    return f"{REQUESTS_DIR}/{row_key(row)}/v{version:04d}{suffix}"


def valid_row(row: Any) -> bool:
    """A stored row the leaderboard can show (a hand-edited or corrupt file must not take it down)."""
    return (
        isinstance(row, dict)
        and isinstance(row.get("system"), str)
        and isinstance(row.get("pool"), str)
        and isinstance(row.get("metrics"), dict)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row["metrics"].values())
    )


def stored_row(
    row: dict[str, Any], current: dict[str, Any] | None, owner: Owner, suffix: str, record: dict[str, Any]
) -> dict[str, Any]:
    """`row` as the next version after `current`, with the owner `record` and its request path (OwnerError
    when `owner` may not replace `current`)."""
    check_replace(current, owner)
    version = int((current or {}).get("version") or 0) + 1
    return {
        **row,
        "version": version,
        "request": request_path(row, version, suffix),
        "owner": record,
        "submitted_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _parse_current(data: bytes, path: str) -> dict[str, Any]:
    """The row stored at `path`; an unreadable one has no known owner, so nobody may replace it."""
    try:
        current = json.loads(data.decode("utf-8"))
    except ValueError:
        current = None
    if not isinstance(current, dict):
        log.warning("stored result %s is unreadable; its name stays blocked until it is repaired", path)
        raise OwnerError(
            "the stored row of this name is unreadable, so its owner is unknown; choose another "
            "name (the store's maintainer can repair it)"
        )
    return current


def _retired(rows: list[dict[str, Any]] | None, row: dict[str, Any], owner: Owner) -> list[str]:
    """The results files of `rows` that storing `row` retires: each of `owner`'s (OwnerError otherwise) and of
    another key than `row`'s own."""
    paths = []
    for old in rows or ():
        check_replace(old, owner)
        path = f"{RESULTS_DIR}/{row_key(old, stored_slug(old))}.json"
        if path != result_path(row):
            paths.append(path)
    return paths


class ResultsStore(Protocol):
    def rows(self) -> list[dict[str, Any]]: ...
    def put(
        self,
        row: dict[str, Any],
        predictions_path: str | Path,
        owner: Owner,
        suffix: str = ".jsonl",
        check: RowsCheck | None = None,
    ) -> dict[str, Any]: ...
    def versions(self, row: dict[str, Any]) -> list[dict[str, Any]]: ...
    def request_file(self, row: dict[str, Any]) -> Path: ...


def _read_rows(paths: list[Path], where: str) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        try:
            row = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as e:
            log.warning("skipping unreadable result %s%s: %s", path, where, e)
            continue
        if valid_row(row):
            out.append(row)
        else:
            log.warning(
                "skipping malformed result %s%s (needs system, pool and numeric metrics)", path, where
            )
    return out


class LocalStore:
    """A folder on disk; atomic writes and an exclusive lock file make concurrent submissions safe, across
    threads (the app) and processes (`trace-bench submit` while the app runs)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        for folder in (RESULTS_DIR, REQUESTS_DIR, HISTORY_DIR):
            (self.root / folder).mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        with open(self.root / ".lock", "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def rows(self) -> list[dict[str, Any]]:
        return _read_rows(sorted((self.root / RESULTS_DIR).glob("*.json")), "")

    def put(
        self,
        row: dict[str, Any],
        predictions_path: str | Path,
        owner: Owner,
        suffix: str = ".jsonl",
        check: RowsCheck | None = None,
    ) -> dict[str, Any]:
        """Store `row` as the next version of its system and pool; returns the stored row (OwnerError when
        another submitter owns the name). `check` sees the rows stored now, under the lock, and raises to
        refuse (of two submissions racing for look-alike names, the second to take the lock sees the first) or
        returns the owner's rows that this one retires from results/ (RowsCheck)."""
        target = self.root / result_path(row)
        record = owner_record(owner)  # hashing a token takes a while: not under the lock
        with self.lock():
            checked = (check(self.rows()) if check is not None else None) or Checked()
            row = {**row, **checked.fields}
            retire = _retired(checked.retire, row, owner)
            current = _parse_current(target.read_bytes(), result_path(row)) if target.exists() else None
            stored = stored_row(row, current, owner, suffix, record)
            with (
                atomic_open(self.root / stored["request"], "wb", compress=False) as out,
                open(predictions_path, "rb") as src,
            ):  # the uploaded bytes as they are
                shutil.copyfileobj(src, out)
            write_json(self.root / history_path(row, stored["version"]), stored)
            write_json(target, stored)  # last: the row appears with its request and history in place
            for path in retire:
                (self.root / path).unlink(missing_ok=True)
        return stored

    def versions(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        """Every stored version of `row`'s system and pool, oldest first."""
        return _read_rows(sorted((self.root / HISTORY_DIR / row_key(row)).glob("v*.json")), "")

    def request_file(self, row: dict[str, Any]) -> Path:
        """The predictions file a stored row was scored from (for rescoring)."""
        return self.root / row["request"]


class HubStore:
    """A Hub dataset repository (HF_TOKEN needs write access); same layout as LocalStore.

    Reading downloads `results/*.json` (snapshot_download keeps a local cache, so unchanged files are not
    fetched again) at most once per `ttl` seconds (every control of the app re-reads the rows); a write
    through this store is seen at once. When the Hub cannot be reached the last rows read are shown and a
    warning is logged. Writing reads the current row at the repository's head revision, checks its owner and
    makes one commit (request + history + result) with that revision as parent, so a concurrent write
    elsewhere makes it fail instead of overwriting; the repository is created on the first write.
    """

    def __init__(self, repo_id: str, token: str | None = None, api: Any = None, ttl: float = 10.0):
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        self.repo_id = repo_id
        self.api = api
        self.ttl = ttl
        self._last_rows: list[dict[str, Any]] = []
        self._read_at: float | None = None
        self._repo_ready = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HubStore({self.repo_id!r})"

    def rows(self) -> list[dict[str, Any]]:
        from huggingface_hub.errors import RepositoryNotFoundError

        if self._read_at is not None and time.monotonic() - self._read_at < self.ttl:
            return copy.deepcopy(self._last_rows)
        try:
            local = self.api.snapshot_download(
                repo_id=self.repo_id, repo_type="dataset", allow_patterns=[f"{RESULTS_DIR}/*.json"]
            )
        except RepositoryNotFoundError:
            log.info("results repo %s does not exist yet: no submissions", self.repo_id)
            self._last_rows, self._read_at = [], time.monotonic()
            return []
        except OSError as e:  # HfHubHTTPError, offline, timeouts: all OSError subclasses
            log.warning("cannot read results repo %s (%s); showing the last rows read", self.repo_id, e)
            return copy.deepcopy(self._last_rows)
        rows = _read_rows(sorted(Path(local, RESULTS_DIR).glob("*.json")), f" in {self.repo_id}")
        self._last_rows, self._read_at = rows, time.monotonic()
        return copy.deepcopy(rows)

    def _download(self, path: str, revision: str | None = None) -> Path | None:
        from huggingface_hub.errors import EntryNotFoundError

        try:
            return Path(
                self.api.hf_hub_download(
                    repo_id=self.repo_id, filename=path, repo_type="dataset", revision=revision
                )
            )
        except EntryNotFoundError:
            return None

    def _rows_at(self, revision: str) -> list[dict[str, Any]]:
        """The rows of the repository at `revision` (not the cached ones: the check before a commit)."""
        local = self.api.snapshot_download(
            repo_id=self.repo_id,
            repo_type="dataset",
            revision=revision,
            allow_patterns=[f"{RESULTS_DIR}/*.json"],
        )
        return _read_rows(sorted(Path(local, RESULTS_DIR).glob("*.json")), f" in {self.repo_id}")

    def put(
        self,
        row: dict[str, Any],
        predictions_path: str | Path,
        owner: Owner,
        suffix: str = ".jsonl",
        check: RowsCheck | None = None,
    ) -> dict[str, Any]:
        """As LocalStore.put; `check` sees the rows at the head revision the commit is made on top of, so a
        commit that another writer overtook fails (409/412) instead of landing unchecked."""
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete
        from huggingface_hub.errors import HfHubHTTPError

        record = owner_record(owner)
        with self._lock:
            if not self._repo_ready:
                self.api.create_repo(repo_id=self.repo_id, repo_type="dataset", exist_ok=True)
                self._repo_ready = True
            head = self.api.repo_info(repo_id=self.repo_id, repo_type="dataset").sha
            checked = (check(self._rows_at(head)) if check is not None else None) or Checked()
            row = {**row, **checked.fields}
            retire = _retired(checked.retire, row, owner)
            current_file = self._download(result_path(row), revision=head)
            current = (
                None if current_file is None else _parse_current(current_file.read_bytes(), result_path(row))
            )
            stored = stored_row(row, current, owner, suffix, record)
            data = json.dumps(stored, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8") + b"\n"
            try:
                self.api.create_commit(
                    repo_id=self.repo_id,
                    repo_type="dataset",
                    parent_commit=head,
                    operations=[
                        CommitOperationAdd(
                            path_in_repo=stored["request"], path_or_fileobj=str(predictions_path)
                        ),
                        CommitOperationAdd(
                            path_in_repo=history_path(row, stored["version"]), path_or_fileobj=data
                        ),
                        CommitOperationAdd(path_in_repo=result_path(row), path_or_fileobj=data),
                        *(CommitOperationDelete(path_in_repo=path) for path in retire),
                    ],
                    commit_message=f"Submission {row['system']} ({row['pool']} pool), version {stored['version']}",
                )
            except HfHubHTTPError as e:
                status = getattr(getattr(e, "response", None), "status_code", None)
                if status in (409, 412):
                    raise OwnerError(
                        "the results repository changed while this submission was stored; submit again"
                    ) from None
                raise
            self._read_at = None  # the next read fetches the new row
        return stored

    def versions(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        local = self.api.snapshot_download(
            repo_id=self.repo_id, repo_type="dataset", allow_patterns=[f"{HISTORY_DIR}/{row_key(row)}/*.json"]
        )
        return _read_rows(
            sorted(Path(local, HISTORY_DIR, row_key(row)).glob("v*.json")), f" in {self.repo_id}"
        )

    def request_file(self, row: dict[str, Any]) -> Path:
        path = self._download(row["request"])
        if path is None:
            raise FileNotFoundError(f"{row['request']} is not in {self.repo_id}")
        return path


def open_store(
    results_dir: str | Path, results_repo: str | None = None, token: str | None = None
) -> ResultsStore:
    """The Hub store when `results_repo` is set (TRACE_SPACE_RESULTS_REPO), else the local folder."""
    if results_repo:
        return HubStore(results_repo, token)
    return LocalStore(results_dir)
