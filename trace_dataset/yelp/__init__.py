"""Yelp Open Dataset bundles: the streaming reader (`reader`), attribute parsing (`attributes`) and the
built-in synthetic bundle in the same schema (`synth`, review text in `review_text`)."""

from __future__ import annotations

__all__ = ["inspect_bundle", "iter_businesses", "iter_reviews", "open_bundle", "write_synthetic_bundle"]


def __getattr__(name: str):
    if name in ("inspect_bundle", "iter_businesses", "iter_reviews", "open_bundle"):
        from trace_dataset.yelp import reader

        return getattr(reader, name)
    if name == "write_synthetic_bundle":
        from trace_dataset.yelp.synth import write_synthetic_bundle

        return write_synthetic_bundle
    raise AttributeError(f"module 'trace_dataset.yelp' has no attribute {name!r}")
