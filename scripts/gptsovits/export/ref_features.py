"""A reference clip's features as the bundle keeps them (``refs/<name>.npz``):
its phones, BERT features, prompt tokens and speaker vectors, written by the
build's refs stage and read back by the simulator gates."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from daemon.engines.gptsovits import layout

PROMPT_APPROXIMATE = layout.PROMPT_APPROXIMATE


@dataclass(frozen=True)
class RefFeatures:
    name: str
    text: str
    lang: str
    phones: np.ndarray  # int32 [n]
    bert: np.ndarray  # float32 [n, bert_dim]
    prompt: np.ndarray  # int32 [n_prompt]
    ge: np.ndarray  # float32 [gin, 1]
    ge512: np.ndarray  # float32 [mrte, 1]
    seconds: float
    training_bert_rel_err: float | None
    prompt_semantic: str = PROMPT_APPROXIMATE

    def save(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".part.npz")
        np.savez(
            tmp,
            **{
                layout.REF_PHONES: self.phones,
                layout.REF_BERT: self.bert,
                layout.REF_PROMPT: self.prompt,
                layout.REF_GE: self.ge,
                layout.REF_GE512: self.ge512,
                layout.REF_TEXT: np.array(self.text),
                layout.REF_LANG: np.array(self.lang),
                layout.REF_PROMPT_SEMANTIC: np.array(self.prompt_semantic),
            },
        )
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: Path, clip: str) -> RefFeatures:
        """A saved reference (its seconds and BERT check are not kept)."""
        with np.load(path) as z:
            how = z.get(layout.REF_PROMPT_SEMANTIC, PROMPT_APPROXIMATE)
            return cls(
                name=clip,
                text=str(z[layout.REF_TEXT]),
                lang=str(z[layout.REF_LANG]),
                phones=z[layout.REF_PHONES],
                bert=z[layout.REF_BERT],
                prompt=z[layout.REF_PROMPT],
                ge=z[layout.REF_GE],
                ge512=z[layout.REF_GE512],
                seconds=0.0,
                training_bert_rel_err=None,
                prompt_semantic=str(how),
            )
