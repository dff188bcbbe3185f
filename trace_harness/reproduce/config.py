"""The `trace-bench reproduce` config: a small YAML (or TOML) file, checked whole before anything runs.

Every key is optional except `data`, `out` and the models the chosen parts need; an unknown key, a wrong type or
a value out of range is refused with the file, the field and what was expected. The commented example
`trace_harness/reproduce/configs/paper.yaml` lists every key with its default; `offline.yaml` runs on the
built-in corpus with the packaged SmolLM2 in minutes. Relative paths are read from the config file's folder
(from the current folder for a packaged example named by its name).

No surprise bills: the LLM judge, CoRE, the LLM traveler and NLI run only when `parts` lists them, and every
model is named explicitly (no default model is ever called).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from baselines import BASELINES, LLM_SYSTEMS, NON_LLM_BASELINES
from trace_dataset.constants import ALL_SPLITS, POOLS, SEED, SPLITS
from trace_dataset.io import TraceDataError
from trace_harness.reproduce.fields import Fields, read_config_file
from trace_harness.reproduce.reliability import ReliabilityConfig, parse_reliability
from trace_llm import CONFIG_OPTIONS, LLMConfigError, check_options

PARTS: tuple[str, ...] = ("table5", "table6", "table9", "core", "interactive", "nli", "judge")
DEFAULT_PARTS: tuple[str, ...] = ("table5", "table6", "table9")
# Parts whose columns come from the closed-pool runs (Table 6's GS, PC, NLI and Rej. Rec. too) and the open runs.
CLOSED_PARTS: tuple[str, ...] = ("table5", "table6", "table9", "core", "nli", "judge")
ROLES: tuple[str, ...] = ("systems", "simulator", "judge", "core")
# The systems that answer through the systems model are baselines.LLM_SYSTEMS (the registry's `llm: always`);
# SnipRec's variants run as `trace-bench run` runs them without --llm: rules snippets, offline.
# The paper's 13 session-isolated baselines of Tables 5, 6 and 9 (Memory-Aug. is reported apart, App. B).
PAPER_SYSTEMS: tuple[str, ...] = (
    *NON_LLM_BASELINES,
    "llm_zero_shot",
    "dst",
    "rag_citation",
    "multi_review_synthesis",
)
# the backend options a config's `transport:` and `models.*.options` may set: every option but the secret ones
TRANSPORT_KEYS: tuple[str, ...] = CONFIG_OPTIONS  # (trace_llm.options; an API key goes by `api_key_env`)
# The packaged examples: offline and paper, and the main job's two (`trace-bench demo` fills in their folders).
EXAMPLES: tuple[str, ...] = ("offline", "paper", "demo", "demo_llm")
EXAMPLES_DIR = "configs"  # beside this module
# Where the runs go under `out` (jobs.py lists the whole output folder).
DEFAULT_RUNS: dict[str, str] = {"closed": "runs/closed", "open": "runs/open"}
DEFAULT_CORE_OUT = "core/{system}/{split}"  # a CoRE run's folder
INTERACTIVE_DIR = "interactive"  # the interactive runs' folders: interactive/<system>/
LEADERBOARD_DIR = "leaderboard"  # the leaderboard (leaderboard.json, the Space's data)


@dataclass(frozen=True)
class ModelConfig:
    """One model role: its `--llm` spec, decoding settings, what the dry run counts tokens with and prices."""

    llm: str
    temperature: float | None = None  # None: the role's default (App. F for the systems, greedy elsewhere)
    top_p: float | None = None
    max_new_tokens: int | None = None
    seed: int = SEED
    tokenizer: str | None = None  # a local folder or cached Hub id; None: 4 characters per token
    price_input: float | None = None  # USD per million prompt tokens
    price_output: float | None = None  # USD per million output tokens
    options: dict[str, Any] = field(default_factory=dict)  # backend options (load_llm), beside `transport`


@dataclass(frozen=True)
class RunSet:
    """The dialogues a pool's runs cover: a split ("all": the whole corpus) and a seeded subset of it, and
    the folder under `out` the runs are written to."""

    split: str
    subset: int | None
    seed: int = SEED
    runs: str = DEFAULT_RUNS["closed"]


@dataclass(frozen=True)
class InteractiveConfig:
    systems: tuple[str, ...]
    simulator: str = "rules"
    split: str = "test"
    n: int | None = 1000
    turns: int = 8
    pool: str = "closed"
    batch_dialogues: int = 64
    seed: int = SEED
    workers: int | None = 1  # runs side by side in forked processes (None: the CPU count)


@dataclass(frozen=True)
class CoreConfig:
    systems: tuple[str, ...]
    split: str = "test"
    limit: int | None = None
    factors: tuple[str, ...] | None = None
    debate: bool = True
    max_rounds: int = 4
    max_retries: int = 2
    max_repairs: int = 2
    max_new_tokens: int = 1024
    debate_max_new_tokens: int = 512
    chunk: int = 16
    out: str = DEFAULT_CORE_OUT  # each run's folder under `out`: {system} and {split} filled in


@dataclass(frozen=True)
class NLIConfig:
    model: str | None = None
    processes: int | str = 1  # an integer or "auto" (every visible GPU)
    batch_size: int = 32
    dtype: str | None = None


@dataclass(frozen=True)
class ReproduceConfig:
    path: Path  # the config file (or the packaged example)
    sha256: str  # of the config file's bytes
    raw: dict[str, Any]  # as read, for the manifest
    data: Path
    out: Path
    parts: tuple[str, ...]
    systems: tuple[str, ...]
    closed: RunSet
    open: RunSet
    models: dict[str, ModelConfig]
    system_params: dict[str, dict[str, Any]]
    transport: dict[str, Any]
    interactive: InteractiveConfig
    core: CoreConfig
    nli: NLIConfig
    reliability: ReliabilityConfig  # the reports of the model-made numbers (reproduce/reliability.py)
    cache: Path | None  # the LLM response cache file (None: trace-bench's default)
    batch_max_requests: int
    batch_max_bytes: int
    batch_size: int = 64
    num_proc: int = 1
    n_boot: int = 10_000
    grounding_turns: str | None = None

    def wants(self, part: str) -> bool:
        return part in self.parts

    def needs_closed_runs(self) -> bool:
        return any(self.wants(p) for p in CLOSED_PARTS)


# ---------------------------------------------------------------------------------------------------------
# Reading and checking
# ---------------------------------------------------------------------------------------------------------
def example_path(name: str) -> Path:
    """The packaged example config `name` (offline, paper)."""
    return Path(str(resources.files("trace_harness.reproduce").joinpath(EXAMPLES_DIR, f"{name}.yaml")))


def load_config(source: str | os.PathLike, overrides: Mapping[str, Any] | None = None) -> ReproduceConfig:
    """The config a file (or a packaged example's name) holds, checked whole; `overrides` as `load_example`'s."""
    text = os.fspath(source)
    if text in EXAMPLES and not Path(text).is_file():  # a file of that name wins; a folder does not
        return load_example(text, overrides)
    path = Path(text)
    if not path.is_file():
        raise TraceDataError(
            f"config file not found; expected a .yaml or .toml file or one of the packaged examples "
            f"({', '.join(EXAMPLES)})",
            path=path,
        )
    return _load(path, path.parent, overrides)


def load_example(name: str, overrides: Mapping[str, Any] | None = None) -> ReproduceConfig:
    """The packaged example `name`, its relative paths read from the current folder; `overrides` replace
    top-level keys, and keys of a section given as a mapping (`{"interactive": {"n": 20}}`), before the check."""
    return _load(example_path(name), Path.cwd(), overrides)


def _load(path: Path, base: Path, overrides: Mapping[str, Any] | None) -> ReproduceConfig:
    data, blob = read_config_file(path)
    for key, value in (overrides or {}).items():
        section = data.get(key)
        data[key] = {**section, **value} if isinstance(section, dict) and isinstance(value, dict) else value
    return parse_config(data, path, base, hashlib.sha256(blob).hexdigest())


def keys_of(section: type) -> tuple[str, ...]:
    """The keys of a config section: its record's fields, in their order."""
    return tuple(f.name for f in dataclasses.fields(section))


def _path(f: Fields, key: str, base: Path) -> Path | None:
    value = f.text(key)
    if value is None:
        return None
    p = Path(os.path.expanduser(value))
    return p if p.is_absolute() else base / p


def _required_path(f: Fields, key: str, base: Path) -> Path:
    p = _path(f, key, base)
    if p is None:
        raise TraceDataError(f"{f.where}{key}: missing; expected a path", path=f.path)
    return p


def _runset(f: Fields, key: str, default_subset: int | None) -> RunSet:
    g = f.sub(key, keys_of(RunSet))
    return RunSet(
        g.choice("split", ALL_SPLITS, (*SPLITS, ALL_SPLITS)),
        g.number("subset", default_subset, low=1, none=True),
        g.number("seed", SEED),
        g.folder("runs", DEFAULT_RUNS[key]),
    )


def _model(f: Fields, role: str) -> ModelConfig | None:
    value = f.data.get(role)
    if value is None:
        return None
    if isinstance(value, str):
        value = {"llm": value}
    keys = ("llm", "temperature", "top_p", "max_new_tokens", "seed", "tokenizer", "price", "options")
    g = Fields(value, f"{f.where}{role}.", f.path, keys)
    llm = g.text("llm")
    if llm is None:
        raise TraceDataError(
            f"{g.where}llm: missing; expected an LLM spec (openai:BASE_URL#MODEL, hf:PATH, smollm2)",
            path=f.path,
        )
    from trace_llm import parse_spec

    try:
        parse_spec(llm)
    except LLMConfigError as e:
        raise TraceDataError(f"{g.where}llm: {e}", path=f.path) from None
    price = g.sub("price", ("input", "output"))
    options = g.get("options", {})
    if not isinstance(options, dict):
        raise g.bad("options", "a mapping of backend options")
    unknown = sorted(str(k) for k in options if k not in TRANSPORT_KEYS)
    if unknown:
        raise TraceDataError(
            f"{g.where}options: unknown {unknown}; expected some of {', '.join(TRANSPORT_KEYS)}", path=f.path
        )
    options = _checked_options(options, f"{g.where}options.", f.path)
    return ModelConfig(
        llm=llm,
        temperature=g.number("temperature", None, float, 0, 5, none=True),
        top_p=g.number("top_p", None, float, 1e-9, 1, none=True),
        max_new_tokens=g.number("max_new_tokens", None, low=1, none=True),
        seed=g.number("seed", SEED),
        tokenizer=g.text("tokenizer"),
        price_input=price.number("input", None, float, none=True),
        price_output=price.number("output", None, float, none=True),
        options=dict(options),
    )


def _checked_options(values: dict[str, Any], where: str, path: Path) -> dict[str, Any]:
    """Backend options checked as their --llm-* flags check them (trace_llm.options)."""
    try:
        return check_options(values, where)
    except LLMConfigError as e:
        raise TraceDataError(str(e), path=path) from None


TOP_KEYS: tuple[str, ...] = (
    "data",
    "out",
    "parts",
    "systems",
    "closed",
    "open",
    "models",
    "system_params",
    "transport",
    "interactive",
    "core",
    "nli",
    "reliability",
    "cache",
    "batch",
    "batch_size",
    "num_proc",
    "leaderboard",
)


def parse_config(data: dict[str, Any], path: Path, base: Path, sha256: str = "") -> ReproduceConfig:
    """Check a config mapping (see the module docstring); `base` resolves relative paths."""
    f = Fields(data, "", path, TOP_KEYS)
    parts = f.names("parts", DEFAULT_PARTS, PARTS)  # checked in the order of the keys' documentation
    systems = f.names("systems", PAPER_SYSTEMS, tuple(BASELINES))
    m = f.sub("models", ROLES)
    models = {role: cfg for role in ROLES if (cfg := _model(m, role)) is not None}
    system_params = _system_params(f)
    t = f.sub("transport", TRANSPORT_KEYS)
    transport = _checked_options(t.data, t.where, path)
    interactive, core, nli = _interactive(f, systems), _core(f, systems), _nli(f)
    b = f.sub("batch", ("max_requests", "max_bytes"))
    lb = f.sub("leaderboard", ("n_boot", "grounding_turns"))
    from trace_metrics.lib.conventions import GROUNDING_TURNS

    config = ReproduceConfig(
        path=path,
        sha256=sha256,
        raw=json.loads(json.dumps(data, default=str)),
        data=_required_path(f, "data", base),
        out=_required_path(f, "out", base),
        parts=parts,
        systems=systems,
        closed=_runset(f, "closed", None),
        open=_runset(f, "open", 1000),
        models=models,
        system_params=system_params,
        transport=transport,
        interactive=interactive,
        core=core,
        nli=nli,
        reliability=parse_reliability(f),
        cache=_path(f, "cache", base),
        batch_max_requests=b.number("max_requests", 50_000, low=1, high=50_000),
        batch_max_bytes=b.number("max_bytes", 200_000_000, low=1, high=200_000_000),
        batch_size=f.number("batch_size", 64, low=1),
        num_proc=f.number("num_proc", 1, low=1),
        n_boot=lb.number("n_boot", 10_000),
        grounding_turns=lb.choice("grounding_turns", None, (None, *GROUNDING_TURNS)),
    )
    check_models(config)
    check_core_split(config)
    check_folders(config)
    return config


def _system_params(f: Fields) -> dict[str, dict[str, Any]]:
    """`system_params`: per system, its parameters as `--param` takes them (never its model)."""
    from trace_harness.protocols.params import check_params

    params = f.get("system_params", {})
    if not isinstance(params, dict) or not all(isinstance(v, dict) for v in params.values()):
        raise f.bad("system_params", "a mapping of system name -> {parameter: value}")
    for name, values in params.items():
        if name not in BASELINES:
            raise TraceDataError(
                f"system_params.{name}: unknown system; expected some of {', '.join(BASELINES)}", path=f.path
            )
        if "llm" in values:
            raise TraceDataError(
                f"system_params.{name}.llm: the model comes from models.systems", path=f.path
            )
        problem = check_params(name, values)
        if problem:
            raise TraceDataError(f"system_params.{name}: {problem.replace('--param ', '')}", path=f.path)
    return {k: dict(v) for k, v in params.items()}


def _interactive(f: Fields, systems: tuple[str, ...]) -> InteractiveConfig:
    i = f.sub("interactive", keys_of(InteractiveConfig))
    return InteractiveConfig(
        systems=i.names("systems", systems, tuple(BASELINES)),
        simulator=i.choice("simulator", "rules", ("rules", "llm")),
        split=i.choice("split", "test", SPLITS),
        n=i.number("n", 1000, low=1, none=True),
        turns=i.number("turns", 8, low=1),
        pool=i.choice("pool", "closed", POOLS),
        batch_dialogues=i.number("batch_dialogues", 64, low=1),
        seed=i.number("seed", SEED),
        workers=i.number("workers", 1, low=1, none=True),
    )


def _core(f: Fields, systems: tuple[str, ...]) -> CoreConfig:
    from trace_metrics.core.prompts import FACTOR_IDS

    c = f.sub("core", keys_of(CoreConfig))
    factors = c.data.get("factors")
    out = c.folder("out", DEFAULT_CORE_OUT)
    placeholders = set(re.findall(r"{([^{}]*)}", out))
    if "system" not in placeholders or not placeholders <= {"system", "split"}:
        raise c.bad(
            "out", "a folder under out naming {system} (and {split} where CoRE scores several splits)"
        )
    return CoreConfig(
        systems=c.names("systems", systems, tuple(BASELINES)),
        split=c.choice("split", "test", (*SPLITS, ALL_SPLITS)),
        limit=c.number("limit", None, low=1, none=True),
        factors=None if factors is None else c.names("factors", (), FACTOR_IDS),
        debate=c.flag("debate", True),
        max_rounds=c.number("max_rounds", 4, low=1),
        max_retries=c.number("max_retries", 2),
        max_repairs=c.number("max_repairs", 2),
        max_new_tokens=c.number("max_new_tokens", 1024, low=1),
        debate_max_new_tokens=c.number("debate_max_new_tokens", 512, low=1),
        chunk=c.number("chunk", 16, low=1),
        out=out,
    )


def _nli(f: Fields) -> NLIConfig:
    n = f.sub("nli", keys_of(NLIConfig))
    processes = n.data.get("processes", 1)
    if processes != "auto" and (
        isinstance(processes, bool) or not isinstance(processes, int) or processes < 1
    ):
        raise n.bad("processes", "a positive integer or auto (every visible GPU)")
    return NLIConfig(
        model=n.text("model"),
        processes=processes,
        batch_size=n.number("batch_size", 32, low=1),
        dtype=n.choice("dtype", None, (None, "float32", "float16", "bfloat16")),
    )


def check_folders(config: ReproduceConfig) -> None:
    """The closed and the open runs go to folders of their own; CoRE's names {split} where it scores several."""
    if config.closed.runs == config.open.runs and config.wants("table6") and config.needs_closed_runs():
        raise TraceDataError(
            f"open.runs: {config.open.runs!r} is closed.runs too; expected a folder of its own (the open runs "
            "would replace the closed ones)",
            path=config.path,
        )
    from trace_dataset.constants import resolve_splits

    several = config.core.split == ALL_SPLITS and len(resolve_splits(config.closed.split)) > 1
    if config.wants("core") and several and "{split}" not in config.core.out:
        raise TraceDataError(
            f"core.out: {config.core.out!r}; CoRE scores every split of the closed runs here, so expected a "
            "folder naming {split}",
            path=config.path,
        )


def check_core_split(config: ReproduceConfig) -> None:
    """CoRE reads the closed runs: a split of its own must be one they cover (`all` means every split they cover)."""
    from trace_dataset.constants import resolve_splits

    covered = resolve_splits(config.closed.split)
    if config.wants("core") and config.core.split != ALL_SPLITS and config.core.split not in covered:
        raise TraceDataError(
            f"core.split: {config.core.split!r}; CoRE reads the closed runs, which cover {', '.join(covered)} "
            f"(closed.split: {config.closed.split}): expected one of {', '.join(covered)} or {ALL_SPLITS}",
            path=config.path,
        )


def needed_roles(config: ReproduceConfig) -> dict[str, str]:
    """role -> why the config needs a model for it."""
    need: dict[str, str] = {}
    runs = [*config.systems] if config.needs_closed_runs() else []
    if config.wants("interactive"):
        runs += list(config.interactive.systems)
    llm_runs = [s for s in dict.fromkeys(runs) if s in LLM_SYSTEMS]
    if llm_runs:
        need["systems"] = f"the LLM systems {', '.join(llm_runs)}"
    if config.wants("interactive") and config.interactive.simulator == "llm":
        need["simulator"] = "the LLM traveler (interactive.simulator: llm)"
    if config.wants("judge"):
        need["judge"] = "the LLM judge (parts: judge)"
    if config.wants("core"):
        need["core"] = "CoRE (parts: core)"
    return need


def check_models(config: ReproduceConfig) -> None:
    """Every role the parts need has a model: named, never defaulted (no surprise bills)."""
    for role, why in needed_roles(config).items():
        if role in config.models or (role == "core" and "judge" in config.models):
            continue
        hint = " (or models.judge, which CoRE uses too)" if role == "core" else ""
        raise TraceDataError(
            f"models.{role}: missing; {why} need a model: give its LLM spec (openai:BASE_URL#MODEL, "
            f"hf:PATH or smollm2){hint}",
            path=config.path,
        )
    if config.wants("nli") and not config.nli.model:
        from trace_metrics.lib.entailment import how_to_supply

        raise TraceDataError(
            f"nli.model: missing; parts lists nli, but no NLI model is packaged and none is given, "
            f"so no entailment can be reported. {how_to_supply('as `nli: {model: /path/to/model}` in the config')}",
            path=config.path,
        )


def role_model(config: ReproduceConfig, role: str) -> ModelConfig:
    """The model of a role (CoRE falls back to the judge's)."""
    if role in config.models:
        return config.models[role]
    if role == "core" and "judge" in config.models:
        return config.models["judge"]
    raise TraceDataError(f"models.{role}: missing", path=config.path)
