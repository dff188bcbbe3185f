"""Builders of the blind-set tests: a public corpus over the synthetic bundle's knowledge base (the data
directory a blind set is made from), and a stand-in for the Hub API that knows which repositories are private."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from tests.support.hub import FakeHub


def write_public_corpus(root: Path, n: int = 400) -> tuple[Path, Path]:
    """(the Yelp bundle, a generated corpus of n dialogues over its knowledge base, 11 POIs per cell)."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    bundle = write_synthetic_bundle(root / "bundle", seed=42, scale=0.1)
    build_kb(bundle, root / "kb", per_cell=11)
    generate_corpus(root / "kb", root / "public", n=n, seed=42, workers=1, progress=False)
    return bundle, root / "public"


class PrivateHub(FakeHub):
    """FakeHub that records how repositories are created and answers `private` in repo_info, as the Hub
    does; `public` lists repositories that already exist and are public."""

    def __init__(self, root: Path, public: tuple[str, ...] = ()):
        super().__init__(root)
        self.public = set(public)
        self.created: list[dict] = []

    def create_repo(self, repo_id, repo_type=None, exist_ok=False, **kw):
        self.created.append({"repo_id": repo_id, "repo_type": repo_type, **kw})
        super().create_repo(repo_id, repo_type=repo_type, exist_ok=exist_ok)

    def repo_info(self, repo_id, *, repo_type=None, **kw):
        info = super().repo_info(repo_id, repo_type=repo_type)
        return SimpleNamespace(sha=info.sha, private=repo_id not in self.public)
