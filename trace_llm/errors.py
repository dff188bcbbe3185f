"""The LLM layer's errors: one base class so callers can catch everything the layer raises."""

from __future__ import annotations

from trace_bench.errors import TraceBenchError


class LLMError(TraceBenchError):
    """Anything the LLM layer cannot do: bad spec or settings, a backend that fails, a missing package."""


class LLMConfigError(LLMError, ValueError):
    """Bad user input to the layer: spec string, decoding settings, chat messages, JSON schema."""


class LLMConnectionError(LLMError):
    """A server stayed unreachable or kept failing after the bounded retries; names the URL."""

    def __init__(self, message: str, url: str):
        super().__init__(message)
        self.url = url


class LLMOutputError(LLMError):
    """The model's output never became valid JSON for the schema, even after the repair retries.

    `raw` is the last raw output, `error` what was wrong with it, `attempts` how many outputs were tried.
    """

    def __init__(self, message: str, raw: str, error: str, attempts: int):
        super().__init__(message)
        self.raw = raw
        self.error = error
        self.attempts = attempts

    def __reduce__(self):  # picklable across processes (multiprocessing workers return these)
        return (type(self), (str(self), self.raw, self.error, self.attempts))


class LLMRunStopped(TraceBenchError):
    """A run stopped on purpose. Deliberately not an LLMError: callers that treat an LLMError as one failed call
    (the simulated traveler's rules wording, a chat system's lost turn) must not swallow it and carry on."""


class ErrorRateExceeded(LLMRunStopped):
    """The servers failed more than the allowed share of the last requests (openai backend, `max_error_rate`)."""


class AnswersPending(LLMRunStopped):
    """A request is not in the response cache and this LLM may not send it (a dry run, a batch-export pass, the
    cache-only run of the batch path). `count` is how many such requests the call met."""

    def __init__(self, message: str, count: int = 0):
        super().__init__(message)
        self.count = count

    def __reduce__(self):
        return (type(self), (str(self), self.count))
