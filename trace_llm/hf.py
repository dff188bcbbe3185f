"""Backend `hf`: a transformers `text-generation` pipeline over a local folder, a Hub id or a GGUF file.

* Chat templates come from the tokenizer; a model without one gets a plain "Role: text" prompt (logged).
* Batches are left-padded; prompts are sorted by length (longest first) so padding is small and an
  out-of-memory error shows on the first batch. Each finished batch goes to the cache at once.
* Device and dtype: CUDA -> bf16 (fp16 where bf16 is unsupported) with device_map="auto"; Apple MPS -> fp16;
  CPU -> fp32. Override with device= / dtype=.
* Sampling (temperature > 0) is seeded with `settings.seed` before every batch (in a forked torch RNG, so the
  caller's random state is untouched): a run is reproducible for the same inputs and batch size; greedy
  decoding ignores the seed.
* threads=N sets torch's CPU threads (process-wide) when the model loads: on a machine shared with other
  jobs, fewer threads than cores avoid OpenMP oversubscription (measured: 1 thread 14x faster than 2 on a
  loaded 2-core machine).
* GGUF files are de-quantised and saved ONCE as a safetensors folder under `<cache dir>/models/` (model and
  tokenizer, `save_pretrained`); later loads read that folder in about a second.
* Constrained decoding (`structured` auto/json_schema/json_object): a request under a `Constraint` is decoded
  with a grammar logits processor (trace_llm.grammar, xgrammar), one matcher per row of the batch; without
  xgrammar installed the request is answered by prompt and counted as a dialect fallback.
* Token counts: the prompt is counted after the chat template; the completion by re-tokenising its text (the
  pipeline returns text only), and finish_reason is "length" when that count reaches max_new_tokens.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import logging
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_llm.base import LLM, CachePath, Message
from trace_llm.cache import Completion, default_cache_dir
from trace_llm.errors import LLMConfigError, LLMError
from trace_llm.settings import DecodingSettings
from trace_llm.structured import DEFAULT_STRUCTURED, GRAMMAR, PROMPT, Constraint

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 8
CONVERTED_MARKER = "trace-bench-gguf.json"  # written last: a folder without it is an unfinished conversion
_FINGERPRINT_BYTES = 1 << 20
DTYPES = ("auto", "float32", "float16", "bfloat16")
_WARNED: list[str] = []  # the missing grammar engine is logged once per process


def models_cache_dir() -> Path:
    return default_cache_dir() / "models"


def choose_device(device: str | None = None, dtype: str | None = None) -> tuple[str, torch.dtype]:
    """(device, dtype): bf16/fp16 on GPU, fp32 on CPU, unless asked otherwise."""
    import torch

    if device in (None, "auto"):
        if torch.cuda.is_available():
            device = "cuda"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            device = "mps"
        else:
            device = "cpu"
    if dtype in (None, "auto"):
        if device.startswith("cuda"):
            chosen = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        elif device.startswith("mps"):
            chosen = torch.float16
        else:
            chosen = torch.float32
    else:
        if dtype not in DTYPES:
            raise LLMConfigError(f"dtype={dtype!r}; expected one of {DTYPES}")
        chosen = getattr(torch, dtype)
    return device, chosen


def gguf_fingerprint(path: Path) -> str:
    """Name, size, first and last MiB: tells files apart without hashing gigabytes."""
    size = path.stat().st_size
    digest = hashlib.sha256(f"{path.name}\0{size}\0".encode())
    with open(path, "rb") as f:
        digest.update(f.read(_FINGERPRINT_BYTES))
        if size > 2 * _FINGERPRINT_BYTES:
            f.seek(size - _FINGERPRINT_BYTES)
            digest.update(f.read(_FINGERPRINT_BYTES))
    return digest.hexdigest()[:16]


def resolve_gguf(model_id: str, gguf_file: str) -> Path:
    """The GGUF file on disk: inside a local folder, or downloaded from a Hub repository."""
    folder = Path(model_id).expanduser()
    if folder.is_dir():
        path = folder / gguf_file
        if not path.is_file():
            raise LLMConfigError(f"GGUF file {str(path)!r} not found (from hf:{model_id}#{gguf_file})")
        return path
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(model_id, gguf_file))


def converted_dir(gguf_path: Path, models_dir: Path | None = None) -> Path:
    """Where the safetensors folder for a GGUF file lives (it may not exist yet)."""
    gguf_path = Path(gguf_path).resolve()
    models_dir = Path(models_dir) if models_dir is not None else models_cache_dir()
    return models_dir / f"{gguf_path.stem}-{gguf_fingerprint(gguf_path)}"


def convert_gguf(gguf_path: Path, models_dir: Path | None = None) -> Path:
    """The safetensors folder for a GGUF file, converting it on first use (safe across processes)."""
    from filelock import FileLock

    gguf_path = Path(gguf_path).resolve()
    target = converted_dir(gguf_path, models_dir)
    models_dir = target.parent
    if (target / CONVERTED_MARKER).is_file():
        return target
    models_dir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if (target / CONVERTED_MARKER).is_file():  # another process finished it while we waited
            return target
        import torch
        import transformers
        from transformers import AutoModelForCausalLM, AutoTokenizer

        log.info(
            "converting %s to a safetensors folder %s (once; later loads take about a second)",
            gguf_path,
            target,
        )
        kwargs: dict[str, Any] = {}
        if hasattr(
            transformers, "GgufConfig"
        ):  # transformers >= 5: keep nothing quantised, so it can be saved
            kwargs["quantization_config"] = transformers.GgufConfig(dequantize=True)
        tmp = models_dir / f".{target.name}.tmp-{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            tokenizer = AutoTokenizer.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
            model = AutoModelForCausalLM.from_pretrained(
                gguf_path.parent, gguf_file=gguf_path.name, dtype=torch.float32, **kwargs
            )
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        except (OSError, ValueError, RuntimeError, KeyError) as e:
            shutil.rmtree(tmp, ignore_errors=True)
            raise LLMError(f"cannot convert GGUF file {str(gguf_path)!r} with transformers: {e}") from e
        marker = {
            "source": gguf_path.name,
            "fingerprint": target.name,
            "transformers": transformers.__version__,
        }
        (tmp / CONVERTED_MARKER).write_text(json.dumps(marker, indent=1, sort_keys=True) + "\n")
        shutil.rmtree(target, ignore_errors=True)  # a half-written folder from an interrupted older version
        os.replace(tmp, target)
        del model
        gc.collect()
    return target


def plain_prompt(messages: list[Message]) -> str:
    """Prompt for a model with no chat template."""
    lines = [f"{m['role'].capitalize()}: {m['content']}" for m in messages]
    return "\n\n".join([*lines, "Assistant:"])


class HFLLM(LLM):
    backend = "hf"

    def __init__(
        self,
        model_id: str,
        settings: DecodingSettings | None = None,
        cache_path: CachePath = None,
        spec: str | None = None,
        *,
        gguf_file: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        device: str | None = None,
        dtype: str | None = None,
        model_label: str | None = None,
        trust_remote_code: bool = False,
        models_dir: str | os.PathLike[str] | None = None,
        threads: int | None = None,
        structured: str = DEFAULT_STRUCTURED,
    ):
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise LLMConfigError(
                f"threads={threads!r}: expected a positive integer or None (torch's default)"
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise LLMConfigError(f"batch_size={batch_size!r}: expected a positive integer")
        local = Path(model_id).expanduser()
        self.model_id = str(local.resolve()) if local.exists() else model_id
        self.gguf_file = gguf_file
        self.batch_size = batch_size
        self.device, self.dtype = choose_device(device, dtype)
        self.trust_remote_code = trust_remote_code
        self.models_dir = Path(models_dir) if models_dir is not None else None
        self.threads = threads
        self._pipe: Any = None
        self._model: Any = None
        self._tokenizer: Any = None
        self._chat = True
        self._lock = threading.Lock()  # one pipeline call at a time when threads share this object
        self._grammars: Any = None
        self.mask_seconds = 0.0  # time spent in grammar matching and masking (benchmarks/structured.py)
        self.decode_seconds = 0.0  # time spent in the pipeline's generate calls
        label = model_label or (f"{self.model_id}#{gguf_file}" if gguf_file else self.model_id)
        super().__init__(
            label,
            settings,
            cache_path,
            spec or f"hf:{model_id}" + (f"#{gguf_file}" if gguf_file else ""),
            structured=structured,
        )

    @property
    def cache_model(self) -> str:
        # fp32 on CPU and bf16 on GPU give different answers: keep them apart in the cache.
        return f"{self.model}|{str(self.dtype).removeprefix('torch.')}"

    def _describe_extra(self) -> dict[str, Any]:
        return {"dtype": str(self.dtype).removeprefix("torch."), "batch_size": self.batch_size}

    def _dialect_for(self, constraint: Constraint | None) -> tuple[str, bool]:
        from trace_llm.grammar import ENGINE, grammar_available

        if grammar_available():
            return GRAMMAR, False
        if not _WARNED:
            _WARNED.append(ENGINE)
            log.warning(
                "%s is not installed: answering by prompt + repair without constrained decoding", ENGINE
            )
        return PROMPT, True

    def _complete_structured(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
        constraint: Constraint,
        dialect: str,
    ) -> None:
        with self._lock:
            self._complete_locked(conversations, settings, on_done, constraint)

    def _grammar_processor(self, constraint: Constraint, rows: int) -> Any:
        from trace_llm.grammar import GrammarCompiler

        if self._grammars is None:
            self._grammars = GrammarCompiler(self._tokenizer, vocab_size=self._model.config.vocab_size)
        return self._grammars.processor(constraint, rows)

    def weights_path(self) -> str:
        """Folder or Hub id that from_pretrained reads (the converted folder for a GGUF file)."""
        if self.gguf_file:
            return str(convert_gguf(resolve_gguf(self.model_id, self.gguf_file), self.models_dir))
        return self.model_id

    def _load(self) -> None:
        if self._pipe is not None:
            return
        from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline

        if self.threads is not None:  # process-wide; on a busy machine 1 thread can be many times faster
            import torch

            torch.set_num_threads(self.threads)
        path = self.weights_path()
        if Path(path).is_dir() and not (Path(path) / "config.json").is_file():
            raise LLMError(
                f"hf model {path!r}: cannot load: the folder has no config.json (not a transformers model)"
            )
        device_map: Any = None
        if self.device == "cuda":
            device_map = "auto"
        elif self.device.startswith("cuda:"):
            device_map = {"": self.device}
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=self.trust_remote_code)
            model = AutoModelForCausalLM.from_pretrained(
                path, dtype=self.dtype, device_map=device_map, trust_remote_code=self.trust_remote_code
            )
        except (OSError, ValueError) as e:
            raise LLMError(
                f"hf model {path!r}: cannot load ({e}); expected a local folder with config.json and tokenizer "
                "files, or a Hub id (downloads need the network)"
            ) from e
        tokenizer.padding_side = "left"
        if tokenizer.pad_token is None:
            if tokenizer.eos_token is None:
                raise LLMError(
                    f"hf model {path!r}: the tokenizer has neither a pad nor an eos token to pad batches with"
                )
            tokenizer.pad_token = tokenizer.eos_token
        self._chat = bool(getattr(tokenizer, "chat_template", None))
        if not self._chat:
            log.warning("hf model %s has no chat template: prompting with plain 'Role: text' lines", path)
        model.eval()
        self._tokenizer, self._model = tokenizer, model
        # placed by device_map when loading, else moved by the pipeline (None = its default: leave it be)
        device = None if device_map is not None else self.device
        self._pipe = pipeline("text-generation", model=model, tokenizer=tokenizer, device=device)
        log.info("hf model %s loaded on %s (%s)", path, self.device, self.dtype)

    def _generation_config(self, settings: DecodingSettings) -> Any:
        config = copy.deepcopy(self._model.generation_config)
        config.max_new_tokens = settings.max_new_tokens
        config.max_length = None
        config.pad_token_id = self._tokenizer.pad_token_id
        config.num_return_sequences = 1
        if settings.greedy:
            config.do_sample = False
            config.temperature = config.top_p = config.top_k = None
        else:
            config.do_sample = True
            config.temperature = settings.temperature
            config.top_p = settings.top_p
        return config

    def _prompt_text(self, messages: list[Message]) -> str:
        if self._chat:
            return self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        return plain_prompt(messages)

    def _n_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=False)["input_ids"])

    def _complete(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
    ) -> None:
        with self._lock:
            self._complete_locked(conversations, settings, on_done)

    def _complete_locked(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
        constraint: Constraint | None = None,
    ) -> None:
        import time

        import torch

        self._load()
        config = self._generation_config(settings)
        prompts = [self._prompt_text(c) for c in conversations]
        prompt_tokens = [self._n_tokens(p) for p in prompts]
        order = sorted(
            range(len(conversations)), key=lambda i: -prompt_tokens[i]
        )  # stable: ties keep input order
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            inputs = [conversations[i] if self._chat else prompts[i] for i in chunk]
            extra: dict[str, Any] = {}
            processor = None
            if constraint is not None:
                processor = self._grammar_processor(constraint, len(chunk))
                from transformers import LogitsProcessorList

                extra["logits_processor"] = LogitsProcessorList([processor])
            started = time.perf_counter()
            # Seed a forked RNG: sampling is reproducible and the caller's global torch RNG is left as it was.
            with torch.random.fork_rng(devices=list(range(torch.cuda.device_count()))):
                torch.manual_seed(settings.seed)
                outputs = self._pipe(
                    inputs, batch_size=len(chunk), generation_config=config, return_full_text=False, **extra
                )
            self.decode_seconds += time.perf_counter() - started
            if processor is not None:
                self.mask_seconds += processor.seconds
            for i, out in zip(chunk, outputs, strict=True):
                text = out[0]["generated_text"]
                if not isinstance(text, str):  # some versions return the chat with the new assistant turn
                    text = text[-1]["content"]
                n = self._n_tokens(text)
                reason = "length" if n >= settings.max_new_tokens else "stop"
                on_done(i, Completion(text, prompt_tokens[i], n, reason))

    def _close_backend(self) -> None:
        if self._pipe is None:
            return
        self._pipe = self._tokenizer = self._model = None
        gc.collect()
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
