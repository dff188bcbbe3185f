"""Push a blind set's gold (`OUT/gold`, `trace_dataset.release.blind`) to a private Hugging Face Hub dataset,
where a Space reads it with its token.

The repository is created private; an existing one is used only when the Hub says it is private, so the gold
is never uploaded where anyone could read it. All files go in one commit.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, read_json
from trace_dataset.release.blind import BLIND_SPLIT, PERIOD_FILE
from trace_dataset.release.hub import hub_repo_id

log = logging.getLogger(__name__)


def _check_gold(gold_dir: Path) -> dict[str, Any]:
    """A gold folder: period.json with the seed, and the blind split's file."""
    from trace_dataset.datadir import check_data_dir

    check_data_dir(gold_dir, (BLIND_SPLIT,))
    path = gold_dir / PERIOD_FILE
    if not path.exists():
        raise TraceDataError(
            f"no {PERIOD_FILE}: not the gold folder of a blind set (OUT/gold)", path=gold_dir
        )
    record = read_json(path)
    if not isinstance(record, dict) or "seed" not in record or "period" not in record:
        raise TraceDataError(
            "expected the gold side's period record (with 'period' and 'seed'); this is the inputs' one or "
            "another file",
            path=path,
        )
    return record


def push_gold(
    gold_dir: str | os.PathLike,
    repo_id: str,
    *,
    token: str | None = None,
    api: Any = None,
) -> str:
    """Upload the gold folder to the private dataset `repo_id` (OWNER/NAME); returns the commit's message.

    `token`: a write token (default: huggingface_hub's own, HF_TOKEN or the login); `api`: an `HfApi` (a
    test double in the tests, where there is no network)."""
    from huggingface_hub import CommitOperationAdd, HfApi

    gold = Path(gold_dir)
    record = _check_gold(gold)
    repo_id = hub_repo_id(f"hf:{repo_id}")
    api = api if api is not None else HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=True, exist_ok=True, token=token)
    info = api.repo_info(repo_id, repo_type="dataset", token=token)
    if getattr(info, "private", None) is not True:
        raise TraceDataError(
            f"the Hub dataset {repo_id!r} is not private: the gold of a blind set goes only to a private "
            "repository (make it private on the Hub, or choose another name)"
        )
    files = sorted(p for p in gold.rglob("*") if p.is_file())
    operations = [
        CommitOperationAdd(path_in_repo=p.relative_to(gold).as_posix(), path_or_fileobj=str(p)) for p in files
    ]
    message = f"blind set {record['period']}: gold of {record.get('dialogues')} dialogues"
    api.create_commit(repo_id, operations, commit_message=message, repo_type="dataset", token=token)
    log.info("pushed %d files of %s to the private dataset %s", len(files), gold, repo_id)
    return message
