"""Reading a reproduce config file (YAML or TOML), and typed reads from its mappings, each error naming the file
and the dotted field."""

from __future__ import annotations

import math
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

from trace_dataset.io import TraceDataError

T = TypeVar("T")
MAX_DEPTH = 32  # levels of mappings and lists a config may nest (the deepest documented key has 4)


def read_config_file(path: Path) -> tuple[dict[str, Any], bytes]:
    """The mapping a .yaml/.yml or .toml file holds, and the file's bytes. YAML aliases are refused (an alias
    bomb expands a kilobyte into gigabytes) and so is nesting deeper than MAX_DEPTH levels, in either format."""
    suffix = path.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise TraceDataError(
            f"a config named {suffix or 'without a suffix'}; expected a .yaml, .yml or .toml file", path=path
        )
    try:
        blob = path.read_bytes()
    except OSError as e:
        raise TraceDataError(f"cannot read the config ({e.strerror or e})", path=path) from None
    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        raise TraceDataError("not UTF-8 text", path=path) from None
    data = _read_toml(text, path) if suffix == ".toml" else _read_yaml(text, path)
    if not isinstance(data, dict):
        raise TraceDataError(f"expected a mapping of keys at the top, got {type(data).__name__}", path=path)
    _check_depth(data, path)
    return data, blob


def _read_toml(text: str, path: Path) -> Any:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        raise TraceDataError("TOML configs need Python 3.11 or later; use YAML", path=path) from None
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise TraceDataError(
            f"nests deeper than {MAX_DEPTH} levels; expected a flat config", path=path
        ) from None
    except ValueError as e:  # tomllib.TOMLDecodeError
        raise TraceDataError(f"not valid TOML ({e})", path=path) from None


def _read_yaml(text: str, path: Path) -> Any:
    import yaml

    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent):
                raise TraceDataError(
                    f"line {event.start_mark.line + 1}: a YAML alias (*{event.anchor}); write the value out "
                    "(aliases are not allowed in a config)",
                    path=path,
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise TraceDataError(
                        f"line {event.start_mark.line + 1}: nests deeper than {MAX_DEPTH} levels; expected a "
                        "flat config",
                        path=path,
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise TraceDataError(f"not valid YAML ({str(e).splitlines()[0]})", path=path) from None


def _check_depth(data: Any, path: Path) -> None:
    """TraceDataError when `data` nests deeper than MAX_DEPTH (walked without recursion)."""
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TraceDataError(f"nests deeper than {MAX_DEPTH} levels; expected a flat config", path=path)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children)


class Fields:
    """Typed reads from one mapping of the config, each error naming the file and the dotted field."""

    def __init__(self, data: Any, where: str, path: Path, allowed: tuple[str, ...]):
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise TraceDataError(
                f"{where or 'the config'}: expected a mapping of keys, got {type(data).__name__}", path=path
            )
        unknown = sorted((k for k in data if k not in allowed), key=repr)  # keys of any type (YAML `1:`)
        if unknown:
            raise TraceDataError(
                f"unknown key(s) {', '.join(f'{where}{k!r}' if not isinstance(k, str) else where + k for k in unknown)}; "
                "expected some of: "
                f"{', '.join(allowed)}",
                path=path,
            )
        self.data, self.where, self.path = data, where, path

    def bad(self, key: str, expected: str) -> TraceDataError:
        return TraceDataError(
            f"{self.where}{key}: {self.data.get(key)!r}; expected {expected}", path=self.path
        )

    def get(self, key: str, default: Any = None) -> Any:
        value = self.data.get(key, default)
        return default if value is None else value

    def number(
        self,
        key: str,
        default: Any,
        kind: type = int,
        low: float = 0,
        high: float = float("inf"),
        none: bool = False,
    ) -> Any:
        value = self.data.get(key, default)
        if value is None and (none or default is None):
            return None
        ok = (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and (kind is float or isinstance(value, int))
        )
        if not ok or not math.isfinite(value) or not low <= value <= high:
            what = "an integer" if kind is int else "a number"
            rng = f" in [{low:g}, {high:g}]" if high < float("inf") else f" >= {low:g}"
            raise self.bad(key, what + rng + (" or null" if none else ""))
        return kind(value)

    def choice(self, key: str, default: T, choices: tuple[T, ...]) -> T:
        value = self.data.get(key, default)
        if value not in choices:
            raise self.bad(key, f"one of {', '.join(map(str, choices))}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key, default)
        if not isinstance(value, bool):
            raise self.bad(key, "true or false")
        return value

    def text(self, key: str, default: str | None = None) -> str | None:
        value = self.data.get(key, default)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise self.bad(key, "a non-empty string")
        return value

    def folder(self, key: str, default: str) -> str:
        """A folder under the config's `out`: a relative path that stays inside it."""
        value = self.text(key, default) or default
        parts = PurePosixPath(value).parts
        if PurePosixPath(value).is_absolute() or ".." in parts or not parts or "\\" in value:
            raise self.bad(key, "a relative folder under out (no .., not absolute)")
        return value

    def names(self, key: str, default: tuple[str, ...], known: tuple[str, ...]) -> tuple[str, ...]:
        value = self.data.get(key, list(default))
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.bad(key, "a list of names")
        unknown = [v for v in value if v not in known]
        if unknown:
            raise TraceDataError(
                f"{self.where}{key}: unknown {', '.join(map(repr, unknown))}; expected some of: "
                f"{', '.join(known)}",
                path=self.path,
            )
        if len(set(value)) != len(value):
            raise self.bad(key, "each name once")
        return tuple(value)

    def sub(self, key: str, allowed: tuple[str, ...]) -> Fields:
        return Fields(self.data.get(key), f"{self.where}{key}.", self.path, allowed)
