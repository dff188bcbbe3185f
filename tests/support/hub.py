"""A stand-in for the Hugging Face Hub API that spaces_app.store.HubStore uses, over a local folder."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace


def _hub_error(cls, message: str, status: int = 404):
    try:
        return cls(message)
    except TypeError:  # huggingface_hub >= 1.0 wants the HTTP response
        import httpx2

        request = httpx2.Request("GET", "https://huggingface.co/api/datasets/me/results")
        return cls(message, response=httpx2.Response(status, request=request))


class FakeHub:
    """The HfApi methods HubStore uses, over a local folder standing for the repository; `head` is the
    revision, bumped by every commit; a commit whose parent is not the head fails as the Hub does (412)."""

    def __init__(self, root: Path):
        self.root = root
        self.exists = False
        self.offline = False
        self.head = 0
        self.commits: list[dict] = []
        self.downloads: list[dict] = []
        self.before_commit = None  # a hook: another writer committing in between

    def create_repo(self, repo_id, repo_type=None, exist_ok=False, **kw):
        assert repo_type == "dataset" and exist_ok
        self.exists = True

    def repo_info(self, repo_id, *, repo_type=None, **kw):
        assert repo_type == "dataset" and self.exists
        return SimpleNamespace(sha=f"{self.head:040x}")

    def create_commit(self, repo_id, operations, *, commit_message, repo_type=None, parent_commit=None, **kw):
        from huggingface_hub.errors import HfHubHTTPError

        assert repo_type == "dataset"
        if self.before_commit is not None:
            self.before_commit()
        if parent_commit is not None and parent_commit != f"{self.head:040x}":
            raise _hub_error(HfHubHTTPError, "412 Precondition Failed: parent commit is not the head", 412)
        operations = list(operations)
        self.commits.append(
            {
                "repo_id": repo_id,
                "paths": [op.path_in_repo for op in operations],
                "message": commit_message,
                "parent": parent_commit,
            }
        )
        for op in operations:
            target = self.root / op.path_in_repo
            if not hasattr(op, "path_or_fileobj"):  # CommitOperationDelete
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            src = op.path_or_fileobj
            target.write_bytes(src if isinstance(src, bytes) else Path(src).read_bytes())
        self.head += 1

    def hf_hub_download(self, repo_id, filename, *, repo_type=None, revision=None, **kw):
        from huggingface_hub.errors import RemoteEntryNotFoundError

        assert repo_type == "dataset" and revision in (None, f"{self.head:040x}")
        if not (self.root / filename).is_file():
            raise _hub_error(RemoteEntryNotFoundError, f"404 {filename}")
        return str(self.root / filename)

    def snapshot_download(self, repo_id, *, repo_type=None, allow_patterns=None, **kw):
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

        self.downloads.append({"repo_id": repo_id, "repo_type": repo_type, "allow_patterns": allow_patterns})
        if self.offline:
            raise _hub_error(HfHubHTTPError, "503 Service Unavailable", 503)
        if not self.exists:
            raise _hub_error(RepositoryNotFoundError, "404")
        return str(self.root)
