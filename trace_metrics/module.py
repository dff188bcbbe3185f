"""The shared shape of Trace's `evaluate` modules: a template method, where the public method validates and
orchestrates and each subclass implements one small hook.

`TraceMetric.compute` (evaluate's) collects the inputs; `_compute` here checks that the inputs line up and
that the options are known, calls the one hook `_score` (a thin call into `trace_metrics.lib`) and checks that
the result is a flat dict. Subclasses declare `input_features`, `description`, `inputs_description` and
`options` (the keyword arguments `_score` accepts besides the features). The metric options among them are
the declared ones (`specs.module_options(<module>)`), whose defaults `metric_options` fills from the
declarations (`specs.OPTIONS`), so no module restates a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import datasets
import evaluate

from trace_bench.citation import TRACE_CITATION, TRACE_URL
from trace_metrics import specs


class TraceMetric(evaluate.Metric):
    """Base of the Trace metric modules: subclasses implement `_score(**features, **options) -> dict`."""

    input_features: ClassVar[dict[str, Any]] = {}
    description: ClassVar[str] = ""
    inputs_description: ClassVar[str] = ""
    options: ClassVar[tuple[str, ...]] = ()

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=self.description,
            citation=TRACE_CITATION,
            inputs_description=self.inputs_description,
            features=datasets.Features(self.input_features),
            reference_urls=[TRACE_URL],
        )

    def _compute(self, **kwargs: Any) -> dict:
        inputs = {k: kwargs.pop(k) for k in self.input_features}
        unknown = sorted(set(kwargs) - set(self.options))
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.compute got unknown option(s) {unknown}; expected {list(self.options)}"
            )
        lengths = {k: len(v) for k, v in inputs.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"inputs differ in length: {lengths}; expected one entry per item in each")
        out = self._score(**inputs, **kwargs)
        nested = [k for k, v in out.items() if isinstance(v, dict)]
        if nested:
            raise TypeError(
                f"{type(self).__name__} returned nested values for {nested}; results must be flat"
            )
        return out

    def _score(self, *args: Any, **kwargs: Any) -> dict:
        raise NotImplementedError


def declared_options(module: str) -> tuple[str, ...]:
    """The metric options of an evaluate module's metrics (`specs.module_options`)."""
    return specs.module_options(module)


def metric_options(module: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The module's metric options: those given, the others at their declared defaults, all checked
    (`specs.MetricOptionError`, a ValueError, names the option and what it admits)."""
    return specs.resolve_options(given, specs.module_options(module))
