"""A tiny random-weight DeBERTa-v2 NLI classifier, built offline from a config.

Tests and `benchmarks/nli.py --tiny` use it to run the entailment machinery (tokenisation, batching, label
lookup, caching, data parallelism) without downloading anything. Its probabilities mean nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_LABELS: dict[int, str] = {0: "contradiction", 1: "neutral", 2: "entailment"}
SPECIAL_TOKENS: tuple[str, ...] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
# a small review-like vocabulary; other words map to [UNK]
VOCABULARY: tuple[str, ...] = tuple(
    dict.fromkeys(
        """the a an and or but is was were are it this that they we i you he she food service staff place room hotel
    restaurant bar museum tour view views great good bad slow fast friendly rude clean dirty cozy quiet loud
    romantic cheap expensive affordable upscale fresh tasty delicious bland amazing terrible nice lovely best worst
    pizza tacos sushi coffee brunch breakfast dinner lunch dessert cocktails beer wine parking wifi pool gym
    reviewer said mentioned recommend suggest options option here are two stars rated price for with of in on at
    to from very really not no loved love liked hated definitely again would will back visit stay night""".split()
    )
)


# DeBERTa-v3-base's architecture (microsoft/deberta-v3-base config.json), for speed measurements with random
# weights: the attention layout and sizes are what cost time, not the weight values.
DEBERTA_V3_BASE: dict = {
    "hidden_size": 768,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "intermediate_size": 3072,
    "relative_attention": True,
    "position_buckets": 256,
    "max_relative_positions": -1,
    "pos_att_type": ["p2c", "c2p"],
    "norm_rel_ebd": "layer_norm",
    "share_att_key": True,
    "position_biased_input": False,
    "max_position_embeddings": 512,
    "type_vocab_size": 0,
}


def write_tiny_nli_model(
    out_dir: str | os.PathLike,
    id2label: dict[int, str] | None = None,
    *,
    seed: int = 42,
    hidden_size: int = 32,
    layers: int = 2,
    initializer_range: float = 0.5,
    base_architecture: bool = False,
) -> Path:
    """Write config, random weights and a word-level tokenizer loadable by `AutoModelForSequenceClassification`
    and `AutoTokenizer` to `out_dir`. `initializer_range` is large so that the outputs differ between inputs.
    `base_architecture=True` uses DeBERTa-v3-base's sizes and attention (`DEBERTA_V3_BASE`) instead: a
    stand-in for speed measurements offline (its vocabulary stays tiny)."""
    import torch
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification, PreTrainedTokenizerFast

    id2label = dict(DEFAULT_LABELS if id2label is None else id2label)
    vocab = {tok: i for i, tok in enumerate(SPECIAL_TOKENS + VOCABULARY)}
    if len(vocab) != len(SPECIAL_TOKENS) + len(VOCABULARY):
        raise ValueError("the tiny vocabulary repeats a token")
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    cls_id, sep_id = vocab["[CLS]"], vocab["[SEP]"]
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=512,
    )
    sizes = (
        dict(DEBERTA_V3_BASE, initializer_range=0.02)
        if base_architecture
        else {
            "hidden_size": hidden_size,
            "num_hidden_layers": layers,
            "num_attention_heads": 2,
            "intermediate_size": 2 * hidden_size,
            "max_position_embeddings": 512,
            "initializer_range": initializer_range,
        }
    )
    # num_labels (and id2label) go through PretrainedConfig's **kwargs, which the class's signature omits
    config = DebertaV2Config(  # type: ignore[call-arg]
        vocab_size=len(vocab),
        num_labels=len(id2label),
        id2label=id2label,
        label2id={name: i for i, name in id2label.items()},
        pad_token_id=vocab["[PAD]"],
        **sizes,
    )
    torch.manual_seed(seed)
    model = DebertaV2ForSequenceClassification(config)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def relabel(model_dir: str | os.PathLike, id2label: dict[int, str]) -> None:
    """Rewrite only the label names of a saved model (same weights): for label-order tests."""
    import json

    path = Path(model_dir) / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    config["id2label"] = {str(i): name for i, name in id2label.items()}
    config["label2id"] = {name: i for i, name in id2label.items()}
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
