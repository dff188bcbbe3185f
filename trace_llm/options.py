"""The backend options of `load_llm`, declared once: one `LLMOption` each, in `_OPTIONS` below.

From the table come the `--llm-*` flags (`add_flags`, through `trace_llm.cli.add_llm_backend_options`) and what
they give `load_llm` (`from_args`, `trace_llm.cli.llm_options`); the options each backend takes
(`BACKEND_OPTIONS`: `load_llm` passes a backend its own and drops the others'); the options that change no
reply (`TRANSPORT_OPTIONS`: left out of a run's identity) and the secret ones (`SECRET_OPTIONS`: never
recorded, never read from a config file); the check of a value that did not come through argparse
(`LLMOption.check`, `check_options`: a config file's, with the flag's own parser); and the table of
docs/llm.md (`markdown_table()`, which a test compares). A new option is one entry here plus the parameter of
the backend that takes it (tests/trace_llm/test_options.py checks that the two agree).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from trace_bench.options import byte_size, number_in, positive_seconds
from trace_llm.errors import LLMConfigError
from trace_llm.hf import DTYPES
from trace_llm.structured import DEFAULT_STRUCTURED, SERVER_DIALECTS, STRUCTURED_MODES

MAX_INSTANCES = 64  # copies of a llama.cpp model a flag may ask for (the backend also caps them at the cores)

# The backends an option may name; `smollm2` takes hf's or llamacpp's, by the runtime that runs it.
BACKENDS: tuple[str, ...] = ("hf", "llamacpp", "openai")
EVERY = frozenset(BACKENDS)
HF, LLAMACPP, OPENAI = frozenset({"hf"}), frozenset({"llamacpp"}), frozenset({"openai"})
IN_PROCESS = HF | LLAMACPP


@dataclass(frozen=True, kw_only=True)
class LLMOption:
    """One keyword of `load_llm` (and of the constructor of each backend that takes it)."""

    name: str
    backends: frozenset[str]  # of BACKENDS
    transport: bool  # True: how the requests travel, not what is answered (not part of a run's identity)
    help: str  # what it does (the flag's help adds who takes it and the default)
    default: str  # the default, as the help shows it (a test holds it to each backend's own)
    parse: Callable[[str], Any] | None = (
        None  # the flag's argparse type, also a config value's check; None: text
    )
    choices: tuple[str, ...] = ()
    switch: bool = False  # true or false: a flag without a value
    flag: str | None = None  # its command-line flag; None: a keyword of load_llm and a config key only
    metavar: str | None = None
    secret: bool = False  # never written to a run's metadata, never read from a config file

    @property
    def dest(self) -> str:
        """The argparse attribute of the flag ("--llm-batch-size" -> "llm_batch_size")."""
        return (self.flag or "").removeprefix("--").replace("-", "_")

    def help_text(self, default: Any = None) -> str:
        """The flag's help; `default`: a command's own default, or one per name (the systems of `trace-bench
        run` that declare one: {name: value}, the others getting the backends'); None: the backends'."""
        who = backends_label(self.backends)
        if isinstance(default, Mapping):
            by_value: dict[str, list[str]] = {}
            for name, value in default.items():
                by_value.setdefault(str(value), []).append(name)
            shown = "".join(f"{v} for {', '.join(names)}; " for v, names in by_value.items())
            shown += f"otherwise {self.default}"
        else:
            shown = f"{default} for this command" if default is not None else self.default
        return f"{who + ': ' if who else ''}{self.help} (default: {shown})"

    def add_flag(self, group: argparse.ArgumentParser | argparse._ArgumentGroup, default: Any = None) -> None:
        """The flag; `default` (a command's own, given to the backends that take the option) or None (each
        backend's default)."""
        if self.flag is None:
            return
        if self.switch:
            group.add_argument(self.flag, action="store_true", default=default, help=self.help_text(default))
            return
        typed: dict[str, Any] = {"type": self.parse} if self.parse is not None else {}
        group.add_argument(
            self.flag,
            **typed,
            default=default,
            choices=self.choices or None,
            metavar=self.metavar,
            help=self.help_text(default),
        )

    def check(self, value: Any, where: str = "") -> Any:
        """`value` as the flag's parser reads it (a number or a string: a config file's value); None stays None
        (the backend's default). LLMConfigError names `where` + the option and what it expects."""
        if value is None:
            return None
        if self.switch:
            if not isinstance(value, bool):
                raise LLMConfigError(f"{where}{self.name}: {value!r}; expected true or false")
            return value
        if self.parse is None:
            if not isinstance(value, str) or not value.strip():
                raise LLMConfigError(f"{where}{self.name}: {value!r}; expected a non-empty string")
            parsed: Any = value
        elif isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise LLMConfigError(f"{where}{self.name}: {value!r}; expected a number or a string")
        else:
            try:
                parsed = self.parse(str(value))
            except argparse.ArgumentTypeError as e:
                raise LLMConfigError(f"{where}{self.name}: {e}") from None
        if self.choices and parsed not in self.choices:
            raise LLMConfigError(f"{where}{self.name}: {value!r}; expected one of {', '.join(self.choices)}")
        return parsed


def backends_label(backends: frozenset[str]) -> str:
    """Who takes an option, as its help says it ("" for every backend)."""
    if backends == EVERY:
        return ""
    names = [b for b in BACKENDS if b in backends]
    if backends >= IN_PROCESS:
        names.append("smollm2")
    elif "hf" in backends:
        names.append("smollm2 run by transformers")
    elif "llamacpp" in backends:
        names.append("smollm2 run by llama.cpp")
    return ", ".join(names)


_OPTIONS: tuple[LLMOption, ...] = (
    # with a flag, in the order `llm_options(args)` gives them (the order of a run's recorded `llm_options`)
    LLMOption(
        name="batch_size",
        backends=HF,
        transport=True,
        parse=number_in(int, 1),
        flag="--llm-batch-size",
        help="prompts per batch",
        default="8",
    ),
    LLMOption(
        name="concurrency",
        backends=OPENAI,
        transport=True,
        parse=number_in(int, 1),
        flag="--llm-concurrency",
        help="requests in flight at once per server, every thread and backend of the process together",
        default="64",
    ),
    LLMOption(
        name="timeout",
        backends=OPENAI,
        transport=True,
        parse=positive_seconds,
        flag="--llm-timeout",
        metavar="SECONDS",
        help="deadline of one request, answer included, before it is retried",
        default="300",
    ),
    LLMOption(
        name="device",
        backends=HF,
        transport=False,
        flag="--llm-device",
        help="auto, cpu, cuda, cuda:N, mps",
        default="auto",
    ),
    LLMOption(
        name="dtype",
        backends=IN_PROCESS,
        transport=False,
        choices=DTYPES,
        flag="--llm-dtype",
        help="weights dtype; llamacpp: the GGUF weights rewritten once in that type (float16 reads long prompts "
        "faster on a CPU, docs/llm.md)",
        default="hf: bf16/fp16 on GPU, fp32 on CPU; llamacpp: the file's own",
    ),
    LLMOption(
        name="threads",
        backends=IN_PROCESS,
        transport=True,
        parse=number_in(int, 1),
        flag="--llm-threads",
        help="CPU threads; 1 helps on a machine busy with other jobs",
        default="torch's; llama.cpp: half the cores generating, all reading the prompt",
    ),
    LLMOption(
        name="prompt_cache",
        backends=LLAMACPP,
        transport=True,
        parse=number_in(int, 0),
        flag="--llm-prompt-cache",
        metavar="MB",
        help="RAM for the states kept, for requests that continue earlier ones (CoRE's debates, Collab-REC's "
        "rounds), so that each reads only what follows the shared part (0: none; speed only, same replies)",
        default="1024",
    ),
    LLMOption(
        name="flash_attn",
        backends=LLAMACPP,
        transport=False,
        switch=True,
        flag="--llm-flash-attn",
        help="flash attention (faster at reading long prompts; replies may differ where two tokens are nearly "
        "tied, so the model's label names it)",
        default="off",
    ),
    LLMOption(
        name="instances",
        backends=LLAMACPP,
        transport=True,
        parse=number_in(int, 1, MAX_INSTANCES),
        flag="--llm-instances",
        metavar="N",
        help="copies of the model answering a batch side by side, the cores shared between them (2 keeps both "
        "cores of a 2-core machine busy, same replies: docs/llm.md)",
        default="1",
    ),
    LLMOption(
        name="parallel",
        backends=LLAMACPP,
        transport=True,
        parse=number_in(int, 1),
        flag="--llm-parallel",
        metavar="N",
        help="requests of a batch decoded side by side, N sequences of one llama.cpp context (each of `context` "
        "tokens, about 190 MB at 8192): one step generates a token of each; same replies as one at a time "
        "(docs/llm.md)",
        default="1",
    ),
    LLMOption(
        name="max_response_bytes",
        backends=OPENAI,
        transport=True,
        parse=byte_size,
        flag="--llm-max-response-bytes",
        metavar="BYTES",
        help="a longer answer fails its request, read no further (suffixes K, M, G)",
        default="4M",
    ),
    LLMOption(
        name="structured",
        backends=EVERY,
        transport=False,
        choices=STRUCTURED_MODES,
        flag="--structured",
        help="JSON answers: auto = a grammar in process, the server's response_format dialect with a counted "
        f"fallback to prompt + repair; {' / '.join(SERVER_DIALECTS)} = that server dialect only; prompt = no "
        "constraint",
        default=DEFAULT_STRUCTURED,
    ),
    # keywords of load_llm and config keys, without a flag
    LLMOption(
        name="context",
        backends=LLAMACPP,
        transport=False,
        parse=number_in(int, 1),
        help="tokens of llama.cpp's context (each copy's)",
        default="8192",
    ),
    LLMOption(
        name="trust_remote_code",
        backends=HF,
        transport=False,
        switch=True,
        help="run a Hub model's own modelling code",
        default="off",
    ),
    LLMOption(
        name="models_dir",
        backends=HF,
        transport=False,
        help="where GGUF files are converted to safetensors folders",
        default="models/ in the cache folder",
    ),
    LLMOption(
        name="connect_timeout",
        backends=OPENAI,
        transport=True,
        parse=positive_seconds,
        help="seconds to open a connection",
        default="10",
    ),
    LLMOption(
        name="max_retries",
        backends=OPENAI,
        transport=True,
        parse=number_in(int, 0),
        help="retries of a request after a connection error, a timeout, 408/425/429 or 5xx",
        default="4",
    ),
    LLMOption(
        name="backoff",
        backends=OPENAI,
        transport=True,
        parse=number_in(float, 0),
        help="seconds before the first retry, doubled at each next one",
        default="0.5",
    ),
    LLMOption(
        name="api_key",
        backends=OPENAI,
        transport=False,
        secret=True,
        help="the server's API key",
        default="$TRACE_LLM_API_KEY, else $OPENAI_API_KEY",
    ),
    LLMOption(
        name="api_key_env",
        backends=OPENAI,
        transport=False,
        help="the environment variable holding the API key",
        default="TRACE_LLM_API_KEY, else OPENAI_API_KEY",
    ),
    LLMOption(
        name="max_error_rate",
        backends=OPENAI,
        transport=True,
        parse=number_in(float, 0, 1),
        help="share of failed attempts in the window that stops the run (1: no abort)",
        default="0.1",
    ),
    LLMOption(
        name="error_window",
        backends=OPENAI,
        transport=True,
        parse=number_in(int, 1),
        help="attempts the error rate is measured over",
        default="100",
    ),
)

OPTIONS: Mapping[str, LLMOption] = MappingProxyType({o.name: o for o in _OPTIONS})
BACKEND_OPTIONS: Mapping[str, frozenset[str]] = MappingProxyType(
    {b: frozenset(o.name for o in _OPTIONS if b in o.backends) for b in BACKENDS}
)
TRANSPORT_OPTIONS: tuple[str, ...] = tuple(o.name for o in _OPTIONS if o.transport)
SECRET_OPTIONS: tuple[str, ...] = tuple(o.name for o in _OPTIONS if o.secret)
CONFIG_OPTIONS: tuple[str, ...] = tuple(o.name for o in _OPTIONS if not o.secret)  # what a config may set
FLAGGED: tuple[LLMOption, ...] = tuple(o for o in _OPTIONS if o.flag is not None)
FLAG_NAMES: tuple[str, ...] = tuple(o.name for o in FLAGGED)


def add_flags(
    group: argparse.ArgumentParser | argparse._ArgumentGroup, defaults: Mapping[str, Any] | None = None
) -> None:
    """Every declared option's flag, in the table's order; `defaults`: a command's own, by option name (checked
    as a config value is)."""
    own = check_options(defaults or {}, "a command's default ", FLAG_NAMES)
    for option in FLAGGED:
        option.add_flag(group, own.get(option.name))


def from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The options the flags gave (None: not given, the backend's default), by option name."""
    return {o.name: getattr(args, o.dest, None) for o in FLAGGED}


def check_options(
    values: Mapping[str, Any], where: str = "", allowed: Iterable[str] = CONFIG_OPTIONS
) -> dict[str, Any]:
    """`values` (a config file's options; `where`: the prefix naming them, "transport.") checked by their
    declarations: LLMConfigError names an unknown key (and the known ones) or a value its flag would refuse.
    Returns the values as the flags' parsers read them."""
    allowed = tuple(allowed)
    unknown = sorted(str(k) for k in values if k not in allowed)  # keys of any type (a YAML `1:`)
    if unknown:
        raise LLMConfigError(
            f"unknown option(s) {', '.join(where + k for k in unknown)}; expected some of {', '.join(allowed)}"
        )
    return {k: OPTIONS[k].check(v, where) for k, v in values.items()}


def markdown_table() -> str:
    """The options as docs/llm.md shows them (a test compares the two)."""
    rows = [
        "| option | flag | backends | default | part of a run's identity | what it does |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for o in _OPTIONS:
        identity = "no (secret: never recorded)" if o.secret else "no (transport)" if o.transport else "yes"
        rows.append(
            f"| `{o.name}` | {f'`{o.flag}`' if o.flag else ''} | {backends_label(o.backends) or 'every backend'} "
            f"| {o.default} | {identity} | {o.help} |"
        )
    return "\n".join(rows) + "\n"
