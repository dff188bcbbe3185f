"""OpenAI batch files: the requests a run still needs, written for an engine elsewhere, and its answers read back.

Round by round (trace_harness.reproduce.rounds): the requests `trace_llm.collecting.CollectingLLM`s recorded go
out as OpenAI batch input files (`shard_requests`: at most 50,000 requests and 200 MB per file, one model per
file), an engine answers them (vLLM's `run_batch`, a hosted Batch API), and `import_batch_output` checks the
output file against the export's index and the model and writes the answers into the response cache; the next
round needs nothing sent for what was imported.

Batch input line (the OpenAI format): `{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}` with `body` built by the live backend's own `_body`, so the cache keys of live and batch answers
agree. Output line: `{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}`; the
body is read by the live backend's own parser. custom ids are `<shard>-<n>-<digest>` (`r001s002-000017-3f9a...`):
the digest is the first DIGEST_CHARS hex digits of the request's cache key (a SHA-256 over everything that
decides the answer), so an output file made from another config's export, whose shards and line numbers are the
same but whose prompts differ, matches no request here and is refused. The shard's index holds the cache key,
model, decoding settings and label of request n.

Import, line by line: a line that is not JSON (or nests too deep) or has no custom_id refuses the file; an answer
the live parser refuses (usage that is not a count, content that is not text, no choices) or one over the live
cap on an answer's size (`max_answer_bytes`, the openai backend's `max_response_bytes`) is reported with file,
line and custom_id and counted as an engine failure (asked again next round), and the rest is imported.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from trace_llm.base import LLM
from trace_llm.cache import Completion, ResponseCache
from trace_llm.collecting import PendingRequest
from trace_llm.errors import LLMConfigError, LLMError

log = logging.getLogger(__name__)

CHAT_ENDPOINT = "/v1/chat/completions"
MAX_BATCH_REQUESTS = 50_000  # the OpenAI Batch API's limit per input file
MAX_BATCH_BYTES = 200_000_000  # and its size limit (200 MB)
INDEX_FORMAT = 1
DIGEST_CHARS = 16  # hex digits of a request's cache key in its custom_id
_ID = re.compile(rf"^(r\d{{3,}}s\d{{3,}})-(\d{{6,}})-([0-9a-f]{{{DIGEST_CHARS}}})$")
# what an answering engine may append to the requested model's name: a date (a hosted API's dated snapshot:
# gpt-4o-mini-2024-07-18, claude-3-5-sonnet-20240620, gpt-4-0613), nothing else (Qwen2.5-7B-1M is another model)
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4})")
SHOW = 5  # ids named in an error
PARSER_URL = "http://batch-output.invalid/v1"  # the base URL of the openai backend that reads answer bodies


class BatchFileError(LLMError):
    """A batch output file that does not answer an exported input file: unknown or missing ids, another model."""


# ---------------------------------------------------------------------------------------------------------
# Batch files: export
# ---------------------------------------------------------------------------------------------------------
def model_slug(model: str) -> str:
    """A file-name-safe short form of a model name ('Qwen/Qwen2.5-7B-Instruct' -> 'qwen2.5-7b-instruct')."""
    tail = model.rstrip("/").rsplit("/", 1)[-1] or model
    return re.sub(r"[^a-z0-9._-]+", "-", tail.lower()).strip("-.")[:60] or "model"


@dataclass
class BatchShard:
    """One batch input file's content and its index."""

    shard: str  # r001s002
    model: str
    lines: list[str]  # JSON lines, newline-terminated
    index: dict[str, Any]

    @property
    def file_name(self) -> str:
        return f"{self.shard}-{model_slug(self.model)}.jsonl"

    @property
    def index_name(self) -> str:
        return f"{self.shard}.index.json"


def custom_id(shard: str, n: int, key: str) -> str:
    """The custom_id of request `n` of `shard` whose cache key is `key` (module docstring)."""
    return f"{shard}-{n:06d}-{key[:DIGEST_CHARS]}"


def _input_line(cid: str, body_json: str) -> str:
    return (
        f'{{"body": {body_json}, "custom_id": {json.dumps(cid)}, "method": "POST", '
        f'"url": {json.dumps(CHAT_ENDPOINT)}}}\n'
    )


def shard_requests(
    requests: Sequence[PendingRequest],
    round_no: int,
    *,
    max_requests: int = MAX_BATCH_REQUESTS,
    max_bytes: int = MAX_BATCH_BYTES,
) -> list[BatchShard]:
    """The batch input files of one round: one model per file, at most `max_requests` lines and `max_bytes`."""
    if max_requests < 1 or max_bytes < 1:
        raise LLMConfigError(
            f"batch shard limits must be positive, got {max_requests} requests, {max_bytes} bytes"
        )
    missing = [r for r in requests if r.body is None]
    if missing:
        raise LLMConfigError(
            f"{len(missing)} request(s) are for {missing[0].backend} model {missing[0].model!r}, which runs in this "
            "process: batch files are for OpenAI-compatible models (openai:BASE_URL#MODEL)"
        )
    by_model: dict[tuple[str, str], list[PendingRequest]] = {}
    for r in requests:
        by_model.setdefault((r.model, r.cache_model), []).append(r)
    shards: list[BatchShard] = []
    for (model, cache_model), group in by_model.items():
        current: BatchShard | None = None
        settings_ids: dict[str, int] = {}
        label_ids: dict[str, int] = {}
        size = 0
        for r in group:
            body = json.dumps(r.body, ensure_ascii=False, sort_keys=True)
            if current is not None:
                line = _input_line(custom_id(current.shard, len(current.lines), r.key), body)
            if (
                current is None
                or len(current.lines) >= max_requests
                or size + len(line.encode("utf-8")) > max_bytes
            ):
                tag = f"r{round_no:03d}s{len(shards) + 1:03d}"
                current = BatchShard(
                    tag,
                    model,
                    [],
                    {
                        "format": INDEX_FORMAT,
                        "shard": tag,
                        "backend": r.backend,
                        "model": model,
                        "cache_model": cache_model,
                        "settings": [],
                        "labels": [],
                        "requests": [],
                    },
                )
                shards.append(current)
                size, settings_ids, label_ids = 0, {}, {}
                line = _input_line(custom_id(tag, 0, r.key), body)
                if len(line.encode("utf-8")) > max_bytes:
                    raise LLMConfigError(
                        f"one request is {len(line.encode('utf-8')):,} bytes, over the batch file "
                        f"limit of {max_bytes:,} bytes"
                    )
            tag_settings = json.dumps(r.settings, sort_keys=True)
            if tag_settings not in settings_ids:
                settings_ids[tag_settings] = len(current.index["settings"])
                current.index["settings"].append(r.settings)
            if r.label not in label_ids:
                label_ids[r.label] = len(current.index["labels"])
                current.index["labels"].append(r.label)
            current.lines.append(line)
            current.index["requests"].append([r.key, settings_ids[tag_settings], label_ids[r.label]])
            size += len(line.encode("utf-8"))
    return shards


# ---------------------------------------------------------------------------------------------------------
# Batch files: import
# ---------------------------------------------------------------------------------------------------------
@dataclass
class ImportReport:
    """What one output file brought: answers imported per shard, lines the engine failed (not imported: the next
    export round asks for them again), and what the engine said about itself."""

    imported: int = 0
    failed: dict[str, str] = field(default_factory=dict)  # custom_id -> error
    shards: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    system_fingerprints: list[str] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    per_label: dict[str, dict[str, int]] = field(default_factory=dict)  # label -> requests, tokens


def split_custom_id(cid: Any) -> tuple[str, int, str] | None:
    """(shard, n, digest) of a custom_id this package wrote; None for any other."""
    m = _ID.match(cid) if isinstance(cid, str) else None
    return (m.group(1), int(m.group(2)), m.group(3)) if m else None


def same_model(requested: str, answered: Any) -> bool:
    """An answer's `model` names the requested model: equal, or a dated snapshot of it ('gpt-4o-mini' answered as
    'gpt-4o-mini-2024-07-18', as hosted APIs do); any other suffix names another model."""
    if not isinstance(answered, str):
        return False
    return answered == requested or (
        answered.startswith(requested) and _SNAPSHOT.fullmatch(answered[len(requested) :]) is not None
    )


def read_output_lines(lines: Iterable[str], where: str) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """(line number, bytes, record) of each non-blank line; BatchFileError for one that is not an output line."""
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise BatchFileError(
                f"{where}, line {lineno}: not JSON ({e.msg}); expected an OpenAI batch output line"
            ) from None
        except (RecursionError, ValueError) as e:  # nested too deep, an integer too long
            raise BatchFileError(
                f"{where}, line {lineno}: not readable JSON ({type(e).__name__}); expected an OpenAI batch "
                "output line"
            ) from None
        if not isinstance(record, dict) or "custom_id" not in record:
            raise BatchFileError(
                f"{where}, line {lineno}: no custom_id; expected an OpenAI batch output line"
            )
        yield lineno, len(line.encode("utf-8", "surrogatepass")), record


BodyParser = Callable[[dict[str, Any]], Completion]
_Answer = tuple[
    str, dict[str, Any], Completion, Mapping[str, Any], str
]  # key, settings, answer, index, label


class _Line(NamedTuple):
    """One answered line of an output file: the request it answers, where it is, its size, what it holds."""

    shard: str
    n: int
    lineno: int
    size: int
    record: dict[str, Any]


def import_batch_output(
    lines: Iterable[str],
    where: str,
    indexes: Mapping[str, Mapping[str, Any]],
    cache: ResponseCache,
    parse: BodyParser,
    *,
    max_answer_bytes: int | None = None,
) -> ImportReport:
    """Check one batch output file against the exported shards it answers and write its answers to `cache`.

    `indexes`: shard tag -> the index written at export. `parse(body) -> Completion` reads one answer body (the
    live backend's parser). Refused, with nothing imported: a line whose custom_id no export holds (its digest
    included), a shard of which some ids are not answered, an answer from another model than the one exported.
    Lines the engine failed (an `error`, a status other than 200), answers the parser refuses and answers over
    `max_answer_bytes` (default: the openai backend's cap on a live answer) are reported (file, line, custom_id)
    and left for the next round.
    """
    if max_answer_bytes is None:
        from trace_llm.openai_backend import DEFAULT_MAX_RESPONSE_BYTES

        max_answer_bytes = DEFAULT_MAX_RESPONSE_BYTES
    seen = _answered_ids(read_output_lines(lines, where), where, indexes)
    report = ImportReport(shards=_complete_shards(seen, where, indexes))
    answers = _answers(seen, where, indexes, parse, report, max_answer_bytes)
    for key, settings, completion, index, label in answers:
        cache.put(key, index["backend"], index["cache_model"], settings, completion)
        report.prompt_tokens += completion.prompt_tokens
        report.completion_tokens += completion.completion_tokens
        tally = report.per_label.setdefault(
            label, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
        )
        tally["requests"] += 1
        tally["prompt_tokens"] += completion.prompt_tokens
        tally["completion_tokens"] += completion.completion_tokens
    report.imported = len(answers)
    return report


def _answered_ids(
    records: Iterable[tuple[int, int, dict[str, Any]]], where: str, indexes: Mapping[str, Mapping[str, Any]]
) -> dict[str, _Line]:
    """custom_id -> its line; BatchFileError for an id no export holds (or whose digest is another request's)
    or one answered twice."""
    unknown, foreign, duplicate = [], [], []
    seen: dict[str, _Line] = {}
    for lineno, size, record in records:
        cid = record["custom_id"]
        parts = split_custom_id(cid)
        if parts is None or parts[0] not in indexes or parts[1] >= len(indexes[parts[0]]["requests"]):
            unknown.append(f"{cid!r} (line {lineno})")
        elif indexes[parts[0]]["requests"][parts[1]][0][:DIGEST_CHARS] != parts[2]:
            foreign.append(f"{cid!r} (line {lineno})")
        elif cid in seen:
            duplicate.append(repr(cid))
        else:
            seen[cid] = _Line(parts[0], parts[1], lineno, size, record)
    for ids, what in ((unknown, "match no exported request"), (foreign, "answer other requests")):
        if ids:
            raise BatchFileError(
                f"{where}: {len(ids)} custom_id(s) {what}: {', '.join(ids[:SHOW])}"
                f"{' ...' if len(ids) > SHOW else ''}; was this file made from another export (another out "
                "folder, config or round)?"
            )
    if duplicate:
        raise BatchFileError(f"{where}: custom_id(s) answered twice: {', '.join(duplicate[:SHOW])}")
    return seen


def _complete_shards(
    seen: Mapping[str, _Line], where: str, indexes: Mapping[str, Mapping[str, Any]]
) -> list[str]:
    """The shards the file answers, each wholly (BatchFileError naming the requests without a line)."""
    shards = sorted({line.shard for line in seen.values()})
    answered = {(line.shard, line.n) for line in seen.values()}
    missing = [
        f"{s}-{n:06d}" for s in shards for n in range(len(indexes[s]["requests"])) if (s, n) not in answered
    ]
    if missing:
        raise BatchFileError(
            f"{where}: {len(missing)} request(s) of the exported file(s) {', '.join(shards)} have no "
            f"line: {', '.join(missing[:SHOW])}{' ...' if len(missing) > SHOW else ''}; import the "
            "complete output file"
        )
    return shards


def _failure(line: _Line, max_answer_bytes: int) -> str | None:
    """Why the engine's answer on `line` is not one (an error, a status, no body, too big), or None."""
    record = line.record
    response = record.get("response")
    if not isinstance(response, dict):
        response = {}
    status = response.get("status_code")
    if record.get("error") or status != 200 or not isinstance(response.get("body"), dict):
        return str(record.get("error") or f"status {status}")[:300]
    if line.size > max_answer_bytes:
        return f"the answer is {line.size:,} bytes, over the {max_answer_bytes:,} bytes an answer may have"
    return None


def _answers(
    seen: Mapping[str, _Line],
    where: str,
    indexes: Mapping[str, Mapping[str, Any]],
    parse: BodyParser,
    report: ImportReport,
    max_answer_bytes: int,
) -> list[_Answer]:
    """The answered lines, read; failed lines go to `report.failed`, the models and fingerprints to `report`;
    BatchFileError when an answer comes from another model than the exported one."""
    answers: list[_Answer] = []
    wrong: list[str] = []
    models, fingerprints = set(), set()
    for cid, line in seen.items():
        index = indexes[line.shard]
        failure = _failure(line, max_answer_bytes)
        if failure is not None:
            report.failed[cid] = failure
            continue
        body = line.record["response"]["body"]
        if not same_model(index["model"], body.get("model")):
            wrong.append(f"{cid} answered by {body.get('model')!r}")
            continue
        try:
            completion = parse(body)
        except LLMError as e:
            message = str(e).removeprefix(f"{PARSER_URL}/chat/completions: ")
            report.failed[cid] = f"{where}, line {line.lineno}, custom_id {cid}: {message}"[:300]
            log.warning("%s", report.failed[cid])
            continue
        models.add(str(body["model"]))
        if isinstance(body.get("system_fingerprint"), str):
            fingerprints.add(body["system_fingerprint"])
        key, settings_id, label_id = index["requests"][line.n]
        answers.append((key, index["settings"][settings_id], completion, index, index["labels"][label_id]))
    if wrong:
        raise BatchFileError(
            f"{where}: {len(wrong)} answer(s) are from another model than the exported "
            f"{indexes[report.shards[0]]['model']!r}: {'; '.join(wrong[:SHOW])}; export and answer with the "
            "model of the config"
        )
    report.models = sorted(models)
    report.system_fingerprints = sorted(fingerprints)
    return answers


def openai_body_parser(llm: LLM) -> BodyParser:
    """`parse(body) -> Completion` through the openai backend's own response parser."""
    import httpx

    parse = getattr(llm, "_parse", None)
    if parse is None:
        raise LLMConfigError(f"{llm.backend} model {llm.model!r}: batch answers are for openai models")

    def read(body: dict[str, Any]) -> Completion:
        return parse(
            httpx.Response(
                200, content=json.dumps(body).encode("utf-8"), headers={"content-type": "application/json"}
            )
        )

    return read
