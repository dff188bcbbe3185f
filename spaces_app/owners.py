"""Who owns a submitted row, and who may replace it.

Two kinds of owner, one per place a submission comes from:
- `hf`: the Hugging Face user logged in to a Hub-hosted Space (Gradio's OAuth, `gr.LoginButton` +
  `gr.OAuthProfile`, as Hugging Face leaderboards do); the row records the username.
- `token`: a submitter token, for a local app and `trace-bench submit`. The first submission of a name
  receives a fresh token (or the one the submitter gives); the row records only a salted PBKDF2 hash of it,
  so a public results repository does not reveal it.
Only an owner that matches the stored record replaces a row; a row stored without an owner (before owners
were recorded) is replaced by nobody.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from typing import Any

from trace_bench.errors import TraceBenchError

MIN_TOKEN_CHARS = 16
TOKEN_HASH = "pbkdf2_sha256"
TOKEN_HASH_ITERATIONS = 100_000  # ~50 ms per check: cheap for a submission, slow for guessing
OWNER_KINDS: tuple[str, ...] = ("hf", "token")


class OwnerError(TraceBenchError, ValueError):
    """A submitter who is not allowed to store this row; the message says why and what to do."""


@dataclass(frozen=True)
class Owner:
    """The submitter of one request: a Hugging Face username, or a submitter token (never stored as such)."""

    kind: str
    user: str = ""
    token: str = field(default="", repr=False)
    token_is_new: bool = False  # generated for this submission: show it to the submitter once

    def __post_init__(self) -> None:
        if self.kind not in OWNER_KINDS:
            raise ValueError(f"unknown owner kind {self.kind!r}; expected one of {OWNER_KINDS}")
        if self.kind == "hf" and not self.user:
            raise ValueError("a Hugging Face owner needs a username")
        if self.kind == "token" and not self.token:
            raise ValueError("a token owner needs a token")

    def describe(self) -> str:
        return f"@{self.user}" if self.kind == "hf" else "the holder of a submitter token"


def owner_from_profile(profile: Any) -> Owner:
    """The owner of a Space visitor logged in through Gradio's OAuth (`gr.OAuthProfile`, or any object with
    a `username`); OwnerError when nobody is logged in."""
    username = getattr(profile, "username", None) if profile is not None else None
    if not username:
        raise OwnerError(
            "sign in with Hugging Face (the button above) to submit: rows belong to their submitter"
        )
    return Owner("hf", user=str(username))


def owner_from_token(token: str | None) -> Owner:
    """The owner holding `token`; without one, a new token is generated (shown once to the submitter)."""
    token = (token or "").strip()
    if not token:
        # hex: a token never starts with "-", which `--token TOKEN` on a command line would read as an option
        return Owner("token", token=secrets.token_hex(20), token_is_new=True)
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
        raise OwnerError(
            f"a submitter token has at least {MIN_TOKEN_CHARS} characters and no spaces; leave it "
            "empty on a first submission to receive one"
        )
    return Owner("token", token=token)


def _hash(token: str, salt: bytes, iterations: int) -> str:
    return hashlib.pbkdf2_hmac("sha256", token.encode("utf-8"), salt, iterations).hex()


def owner_record(owner: Owner) -> dict[str, Any]:
    """What a stored row keeps of its owner: the username, or a salted hash of the token."""
    if owner.kind == "hf":
        return {"kind": "hf", "user": owner.user}
    salt = secrets.token_bytes(16)
    return {
        "kind": "token",
        "hash": TOKEN_HASH,
        "iterations": TOKEN_HASH_ITERATIONS,
        "salt": salt.hex(),
        "digest": _hash(owner.token, salt, TOKEN_HASH_ITERATIONS),
    }


def owns(owner: Owner, record: Any) -> bool:
    """Whether `owner` is the one a stored owner record names (False for a missing or malformed record)."""
    if not isinstance(record, dict) or record.get("kind") != owner.kind:
        return False
    if owner.kind == "hf":
        return isinstance(record.get("user"), str) and record["user"] == owner.user
    try:
        salt, iterations = bytes.fromhex(record["salt"]), int(record["iterations"])
        digest = record["digest"]
    except (KeyError, TypeError, ValueError):
        return False
    if record.get("hash") != TOKEN_HASH or not isinstance(digest, str) or not 1 <= iterations <= 10_000_000:
        return False
    return hmac.compare_digest(_hash(owner.token, salt, iterations), digest)


def check_replace(current: dict[str, Any] | None, owner: Owner) -> None:
    """OwnerError unless `owner` may store a row where `current` (None: nothing yet) is stored."""
    if current is None:
        return
    name = current.get("system", "?")
    record = current.get("owner")
    if record is None:
        raise OwnerError(
            f"a row named {name!r} was stored before rows had owners, so nobody can replace it; "
            "choose another name"
        )
    if owns(owner, record):
        return
    if isinstance(record, dict) and record.get("kind") == "hf":
        raise OwnerError(
            f"the name {name!r} belongs to another submitter (@{record.get('user')}); choose another name"
        )
    if owner.kind == "token" and owner.token_is_new:
        raise OwnerError(
            f"the name {name!r} is taken; to replace your own row, give the submitter token it was "
            "stored with, or choose another name"
        )
    raise OwnerError(
        f"the name {name!r} belongs to another submitter (the token does not match); choose another name"
    )
