"""The CoRE tab shows a run's reliability verdict beside each factor's mean, with the figures on hover."""

from __future__ import annotations

import re

from tests.support.judges import order_sensitive_core
from tests.support.llm import ScriptedLLM
from trace_metrics.core.prompts import load_prompts
from trace_metrics.core.reliability import RELIABILITY_DIR, build_report, write_report
from trace_metrics.core.rerate import core_subject
from trace_metrics.core.runner import collect_logs, run_corpus
from trace_metrics.lib.reliability import NOT_RELIABLE
from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions


def test_the_core_tab_shows_the_verdict_of_each_factor(tmp_path):
    from spaces_app.core_tab import scored_rows, scores_html

    data = write_toy_data_dir(tmp_path / "trace")
    logs, source = collect_logs(write_toy_predictions(tmp_path / "tfidf.jsonl"), data)
    llm, run = ScriptedLLM(order_sensitive_core), tmp_path / "core" / "tfidf"
    run_corpus(llm, logs, run, load_prompts(), source=source, factors=["appropriateness"], max_rounds=1)
    before = scores_html(scored_rows([tmp_path / "core"]))
    assert NOT_RELIABLE not in before and "ICC(1,1)" not in before
    write_report(build_report(core_subject(llm, [run]), 2, judge=llm.describe()), run / RELIABILITY_DIR)
    html = scores_html(scored_rows([tmp_path / "core"]))
    text = " ".join(re.sub(r"<[^>]+>", " ", html).split())
    assert f"· {NOT_RELIABLE}" in text  # every rating flips when the list is reversed
    assert "reliability: ICC(1,1)" in html and "order flips 1.00" in html
