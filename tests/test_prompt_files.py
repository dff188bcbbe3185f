"""Every prompt the package sends is a file in the one format, loaded by the one loader (`trace_llm.prompts`),
and renders to the same text it did before the formats were merged.

`prompt_renders.json` holds the SHA-256 (first 16 hex digits) of every section of every prompt file rendered
with fixed values through its caller, as the five earlier loaders rendered them; the merged loader must give
the same bytes. Editing a prompt changes its hashes on purpose: rerun with `TRACE_UPDATE_PROMPT_RENDERS=1` to
rewrite the file, and say in the commit why the text the model receives changed.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from tests.support.layout import LAYERS, ROOT
from trace_llm.prompts import SECTION_RE, load_prompt

GOLDEN = Path(__file__).with_name("prompt_renders.json")


def value(name: str) -> str:
    """A fixed value that would show any second pass over it: template syntax of every earlier format."""
    return f"<{name} $x ${{y}} {{json}} {{FACTOR}} $$ %s>"


def prompt_files() -> list[Path]:
    return sorted(p for top in LAYERS for p in (ROOT / top).rglob("prompts/**/*.txt"))


def renders() -> dict[str, str]:
    """Every section of every prompt file, rendered through its caller with `value`s (and whole messages of
    the generator's llm backend and the judge, whose callers build the rest of the message)."""
    from baselines.collab_rec.agents import load_prompts as collab_rec_prompts
    from baselines.llm.prompting import load_prompt as baseline_prompt
    from baselines.sniprec import prompts as sniprec
    from tests.support.gen_kb import write_fixture_kb
    from trace_dataset.generate.attempts import build_context, plan_for
    from trace_dataset.generate.llm_backend import PromptBuilder
    from trace_dataset.kb.store import KnowledgeBase
    from trace_harness.protocols.interactive.simulator.llm import PROMPTS_DIR as SIMULATOR_PROMPTS
    from trace_harness.protocols.interactive.systems import load_chat_prompt
    from trace_metrics.core.prompts import TEMPLATE_FIELDS, load_prompts
    from trace_metrics.lib.judge import judge_messages

    out: dict[str, str] = {}

    def every_section(key: str, prompt) -> None:
        for sec in prompt.sections:
            out[f"{key}::{sec}"] = prompt.render(sec, **{k: value(k) for k in prompt.placeholders(sec)})

    for f in sorted((ROOT / "baselines/llm/prompts").glob("*.txt")):
        every_section(f"baselines/llm/prompts/{f.name}", baseline_prompt(f.stem))
    every_section("baselines/collab_rec/prompts/collab_rec.txt", collab_rec_prompts())
    for f in sorted(SIMULATOR_PROMPTS.glob("*.txt")):
        every_section(f"trace_harness/protocols/interactive/simulator/prompts/{f.name}", load_prompt(f))
    from trace_harness.integrations.inspect_eval.turns import PROMPT as INSPECT_TURN

    every_section("trace_harness/integrations/inspect_eval/prompts/inspect_turn.txt", INSPECT_TURN)
    chat = load_chat_prompt()
    out["trace_harness/protocols/interactive/prompts/chat_system_v1.txt::system"] = chat.render(
        "system", **{k: value(k) for k in chat.placeholders("system")}
    )
    for name in sniprec.PROMPT_NAMES:
        for m in sniprec.render(
            name, value("item_type"), **{k: value(k) for k in sniprec.PROMPT_FIELDS[name]}
        ):
            out[f"baselines/sniprec/prompts/{name}.txt::{m['role']}"] = m["content"]
    core = load_prompts()
    fields = {n: value(n) for names in TEMPLATE_FIELDS.values() for n in names}
    for key in ("evaluator", "retry", "debate"):
        out[f"trace_metrics/core/prompts/{key}.txt::{key}"] = getattr(core, key).render(key, **fields)
    out["trace_metrics/core/prompts/task.txt::task"] = core.task
    for fac in core.factors:
        for sec, text in (
            ("definition", fac.definition),
            ("evaluation_standard", fac.standard),
            ("evaluation_steps", fac.steps),
        ):
            out[f"trace_metrics/core/prompts/factors/{fac.id}.txt::{sec}"] = text
    for role in core.roles:
        out[f"trace_metrics/core/prompts/roles/{role.id}.txt::description"] = role.description
    with tempfile.TemporaryDirectory() as tmp:
        ctx = build_context(KnowledgeBase.load(write_fixture_kb(Path(tmp) / "kb")), 4, 42)
        for i in range(4):
            plan, _ = plan_for(ctx, i, 0, Counter())
            for m in PromptBuilder(plan, ctx).messages():
                out[f"generator::plan{i}::{m['role']}"] = m["content"]
    items = [
        {
            "response": 'Try "X" [R1] $5',
            "context": [{"role": "user", "text": "hi {x} $y"}],
            "reviews": ["good $$ {a}", None, "ok"],
        },
        {"response": " ", "context": None, "reviews": []},
        {"response": "r", "context": "a string context ${z}"},
    ]
    for i, item in enumerate(items):
        for m in judge_messages(item):
            out[f"judge::item{i}::{m['role']}"] = m["content"]
    return out


def test_every_prompt_file_is_in_the_one_format():
    files = prompt_files()
    assert (
        len(files) >= 39
    )  # six baselines, Collab-REC, 7 SnipRec, 20 CoRE, 2 simulators, chat, generator, judge
    for path in files:
        prompt = load_prompt(path)
        assert prompt.sections, path
        assert prompt.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_text_the_model_receives_is_unchanged():
    got = {k: hashlib.sha256(v.encode("utf-8")).hexdigest()[:16] for k, v in sorted(renders().items())}
    if os.environ.get("TRACE_UPDATE_PROMPT_RENDERS"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert sorted(got) == sorted(expected)
    assert [k for k in expected if got[k] != expected[k]] == []


def test_one_loader():
    """No module but trace_llm/prompts.py defines a prompt class or parser, or reads section lines itself."""
    wrong = []
    for top in LAYERS:
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == ROOT / "trace_llm" / "prompts.py":
                continue
            text = path.read_text(encoding="utf-8")
            tree = ast.parse(text)
            for node in ast.walk(tree):
                if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name in (
                    "Prompt",
                    "parse_prompt",
                ):
                    wrong.append(f"{path.relative_to(ROOT)}: defines {node.name}")
            if "string.Template" in text or "=== user ===" in text:
                wrong.append(f"{path.relative_to(ROOT)}: reads prompt text itself")
    assert not wrong, wrong


@pytest.mark.parametrize("path", prompt_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_section_lines_are_the_format(path):
    text = path.read_text(encoding="utf-8")
    assert SECTION_RE.search(text)
    assert not any(
        line.startswith("[") and line.rstrip().endswith("]") and line.strip("[]").isidentifier()
        for line in text.splitlines()
    ), "an old [section] header"
