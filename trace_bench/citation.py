"""The one citation of the Trace paper.

The dataset card (`trace_dataset.release.card`) and the metric modules (`trace_metrics.module`) print it from
here; README.md and the metric cards (trace_metrics/*/README.md) carry copies that a test keeps identical.
"""

from __future__ import annotations

TRACE_URL = "https://arxiv.org/abs/2605.07677"
TRACE_CITATION = """\
@article{zhao2026trace,
  title   = {Trace: Tourism Recommendation with Accountable Citation Evidence},
  author  = {Zhao, Zixu and Wang, Sijin and Hou, Yu and Xu, Yuanyuan and Sheng, Yufan and Xie, Xike and
             Zhang, Wenjie and Shin, Won-Yong and Cao, Xin},
  journal = {arXiv preprint arXiv:2605.07677},
  year    = {2026}
}
"""

__all__ = ["TRACE_CITATION", "TRACE_URL"]
