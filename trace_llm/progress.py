"""One progress bar per part of a long LLM run: per request answered, with the ETA and tokens per second.

    bar = RequestProgress("table5", total=52_274)     # the requests a dry run planned for the part
    llm.progress = bar                                # every LLM object of the part may share it
    ...                                               # each answered request moves the bar by one
    bar.close(); bar.summary()                        # {"requests", "prompt_tokens", "completion_tokens", ...}

The bar moves once per request the backend answers (never per batch of rows), and only for requests that go
to a model: answers served from the response cache are counted beside it (`cached`), not in the bar, so the
ETA is the time the remaining requests will take at the rate seen so far. `total` is what the plan counted;
requests the plan could only estimate may make the real count differ, and the bar then simply ends above or
below its total. Thread-safe: the openai backend answers from its event loop, several pipelines may share it.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from trace_llm.cache import Completion


class RequestProgress:
    """A tqdm bar over requests with `out tok/s` (completion tokens per second) and `in tok/s` as its postfix."""

    def __init__(
        self, desc: str, total: int | None = None, *, enabled: bool = True, clock: Any = time.monotonic
    ):
        from tqdm.auto import tqdm

        self.desc = desc
        self._clock = clock
        self._start = clock()
        self._lock = threading.Lock()
        self.requests = 0
        self.cached = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._bar = tqdm(
            total=total or None,
            desc=desc[:40],
            unit="req",
            disable=not enabled,
            dynamic_ncols=True,
            smoothing=0.05,
        )

    def answered(self, completion: Completion) -> None:
        """One request answered by the model."""
        with self._lock:
            self.requests += 1
            self.prompt_tokens += completion.prompt_tokens
            self.completion_tokens += completion.completion_tokens
            elapsed = max(self._clock() - self._start, 1e-9)
            self._bar.set_postfix(
                {
                    "out tok/s": f"{self.completion_tokens / elapsed:.0f}",
                    "in tok/s": f"{self.prompt_tokens / elapsed:.0f}",
                },
                refresh=False,
            )
            self._bar.update(1)

    def served_from_cache(self, n: int) -> None:
        with self._lock:
            self.cached += n

    def summary(self) -> dict[str, Any]:
        """What the part cost so far: requests, cache hits, tokens and the rates."""
        with self._lock:
            elapsed = self._clock() - self._start
            per_s = 1.0 / elapsed if elapsed > 0 else None
            return {
                "requests": self.requests,
                "cache_hits": self.cached,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "seconds": round(elapsed, 3),
                "requests_per_s": None if per_s is None else round(self.requests * per_s, 1),
                "completion_tokens_per_s": None
                if per_s is None
                else round(self.completion_tokens * per_s, 1),
            }

    def close(self) -> None:
        self._bar.close()
