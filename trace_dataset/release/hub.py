"""Fetch the official Trace release (`taoist/TRACE` on the Hugging Face Hub) where the network allows.

Its layout (data/{train,validation,test}.jsonl.gz + knowledge_base/) is a release like ours, so it goes
through the same `hydrate_release`. Offline or unreachable, the error says how to fetch it by hand.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from trace_dataset.constants import DATA_DIRNAME, KB_DIRNAME, OFFICIAL_HUB_DATASET
from trace_dataset.io import TraceDataError

log = logging.getLogger(__name__)

HUB_PATTERNS = ["README.md", "*.md", "*.json", f"{DATA_DIRNAME}/*", f"{KB_DIRNAME}/*"]
HUB_RELEASE_ALIASES = ("hub", f"hf:{OFFICIAL_HUB_DATASET}")


def is_hub_spec(spec: str | os.PathLike) -> bool:
    """`hub` (the official release) or `hf:OWNER/NAME` (any Hub dataset with the same layout)."""
    s = str(spec)
    return s == "hub" or s.startswith("hf:")


def hub_repo_id(spec: str) -> str:
    if spec == "hub":
        return OFFICIAL_HUB_DATASET
    repo = spec[len("hf:") :]
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise TraceDataError(f"bad Hub dataset {spec!r}; expected 'hub' or 'hf:OWNER/NAME'")
    return repo


def fetch_release(
    spec: str = "hub", *, local_dir: str | os.PathLike | None = None, revision: str | None = None
) -> Path:
    """Download a release from the Hub (cached by huggingface_hub); returns its local folder."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    from huggingface_hub.utils import OfflineModeIsEnabled

    repo_id = hub_repo_id(spec)
    log.info("fetching %s from the Hugging Face Hub", repo_id)
    try:
        path = snapshot_download(
            repo_id=repo_id,
            repo_type="dataset",
            revision=revision,
            local_dir=None if local_dir is None else str(local_dir),
            allow_patterns=HUB_PATTERNS,
        )
    except (LocalEntryNotFoundError, OfflineModeIsEnabled, HfHubHTTPError, OSError, ValueError) as e:
        raise TraceDataError(
            f"could not fetch the release {repo_id!r} from the Hugging Face Hub ({type(e).__name__}: {e}). "
            f"Where this machine has no network, download it elsewhere with `hf download {repo_id} "
            "--repo-type dataset --local-dir DIR`, copy DIR here and pass `--release DIR`."
        ) from None
    root = Path(path)
    if not (root / DATA_DIRNAME).is_dir():
        raise TraceDataError(
            f"the Hub dataset {repo_id!r} has no {DATA_DIRNAME}/ folder: not a Trace release", path=root
        )
    return root
