"""Aspect retrieval (App. F "AspectRetrievalBaseline"): five aspects, keyword sentiment per review.

    score(p) = sum_a w_a * s_a(p) + 0.1 * stars(p),   w_a = min(hits_a / 3, 1.0)

The lexicon, the sentiment rule and the pipeline that ranks by the formula are the toolkit's
(`baselines.toolkit.aspect`, whose docstring says each choice); here w_a comes from the user turns so far.
"""

from __future__ import annotations

from typing import ClassVar

from baselines.toolkit.aspect import AspectWeightedPipeline


class AspectBaseline(AspectWeightedPipeline):
    """sum_a w_a * s_a + 0.1 * stars, with w_a from the user turns (see the module docstring)."""

    name: ClassVar[str] = "aspect"
