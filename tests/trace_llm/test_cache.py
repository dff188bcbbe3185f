from __future__ import annotations

import multiprocessing as mp

import pytest

from trace_llm import DecodingSettings, LLMError, ResponseCache, default_cache_path
from trace_llm.cache import Completion, cache_key

MSGS = [{"role": "user", "content": "hi"}]
SETTINGS = DecodingSettings().to_dict()


def test_key_depends_on_every_part():
    base = cache_key("hf", "m", SETTINGS, MSGS)
    assert base == cache_key("hf", "m", dict(reversed(list(SETTINGS.items()))), MSGS)  # order-free
    assert base != cache_key("openai", "m", SETTINGS, MSGS)
    assert base != cache_key("hf", "m2", SETTINGS, MSGS)
    assert base != cache_key("hf", "m", {**SETTINGS, "seed": 1}, MSGS)
    assert base != cache_key("hf", "m", SETTINGS, [{"role": "system", "content": "hi"}])


def test_persists_across_instances(tmp_path):
    path = tmp_path / "sub" / "llm.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k1", "hf", "m", SETTINGS, Completion("answer", 3, 2, "stop"))
        assert cache.get("missing") is None
    with ResponseCache(path) as cache:
        assert cache.get("k1") == Completion("answer", 3, 2, "stop")
        assert len(cache) == 1
        stats = cache.stats()
        assert (stats["entries"], stats["prompt_tokens"], stats["completion_tokens"]) == (1, 3, 2)


def test_many_keys_in_one_lookup(tmp_path):
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        for i in range(1200):
            cache.put(f"k{i}", "hf", "m", SETTINGS, Completion(str(i)))
        found = cache.get_many([f"k{i}" for i in range(0, 1300, 1)])
        assert len(found) == 1200 and found["k1199"].text == "1199"


def _writer(path: str, start: int, n: int) -> None:
    cache = ResponseCache(path)
    for i in range(start, start + n):
        cache.put(f"k{i}", "hf", "m", SETTINGS, Completion(f"v{i}", 1, 1))
    cache.close()


def test_concurrent_processes_share_one_file(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    ResponseCache(path).close()
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    procs = [ctx.Process(target=_writer, args=(path, k * 150, 150)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with ResponseCache(path) as cache:
        assert len(cache) == 450
        assert cache.get("k449").text == "v449"


def test_default_location_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "tb"))
    assert default_cache_path() == tmp_path / "tb" / "llm.sqlite"
    monkeypatch.delenv("TRACE_BENCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "trace-bench" / "llm.sqlite"


def test_corrupt_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(LLMError, match="bad.sqlite"):
        ResponseCache(bad)
