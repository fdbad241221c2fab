"""Zero-shot voices: a clip and its transcript in, a ``VoicePrint`` out, and a
print back as the ``Reference`` the engine speaks with.

What upstream's ``TTS.py`` computes per reference (docs/gpt-sovits.md, reference audio,
SoVITS decode), on the bundle's graphs:

- prompt semantic tokens: the 16 kHz clip + 0.6 s of zeros through ``hubert``
  and ``ssl_quant`` (reference/prompt.py);
- ``ge``/``ge512``: the 32 kHz clip's spectrogram through ``ref_enc`` with the
  sv embedding of its 16 kHz copy (``sv``; reference/style.py); with aux clips, ``ge``
  averaged after PReLU over all of them (reference/aux.py);
- the prompt's phones and BERT rows: the engine's own frontend and ``bert``
  graph on the transcript, exactly as the build's refs stage computes a bundle's
  references (``prompt_text`` first: a sentence-final "。" when it lacks one).

The print's layout and its way back to a ``Reference``: voiceprint.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from daemon.engines.gptsovits import layout as L
from daemon.engines.gptsovits.cloning.voiceprint import (
    PROMPT_SOURCE,
    has_reference_graphs,
    reference_model_id,
)
from daemon.engines.gptsovits.reference.audio import Clip, prepare, prepare_aux
from daemon.engines.gptsovits.reference.aux import mean_style
from daemon.engines.gptsovits.reference.params import (
    HUBERT_RATE,
    MIN_REF_SECONDS,
)
from daemon.engines.gptsovits.reference.prompt import PromptTokens
from daemon.engines.gptsovits.reference.style import Style
from daemon.engines.gptsovits.t2s import CapacityError
from daemon.sdk.bundles.manifest import BundleError
from daemon.sdk.cloning import CloneRequest, Cloning, VoicePrint

if TYPE_CHECKING:
    from daemon.engines.gptsovits.layout import GsvParams
    from daemon.engines.gptsovits.t2s import T2S
    from daemon.engines.gptsovits.text import TextStack
    from daemon.sdk.bundles.manifest import Bundle
    from daemon.sdk.cancel import CancelToken
    from daemon.sdk.graphs import Runner

#: TTS.run step 4: a prompt not ending in one of these gets "。".
SENTENCE_ENDS: Final = frozenset("，。？！,.?!~:：—…")
PROMPT_END: Final = "。"
#: upstream takes any number of aux references; a bound keeps a registration's
#: NPU time (one ref_enc + sv call per clip) like a synthesis's
MAX_AUX: Final = 4
#: the fits-check leaves room for the shortest segment: one Chinese char
#: (initial + final) and its punctuation
MIN_SEGMENT_PHONES: Final = 3
LANGS: Final = ("zh", "en")
#: the warm-up clip: a quiet tone (any audio runs the same static graphs)
WARMUP_HZ, WARMUP_LEVEL = 220.0, 0.1


def prompt_text(text: str) -> str:
    text = text.strip("\n").strip()
    return text if text and text[-1] in SENTENCE_ENDS else text + PROMPT_END


class Cloner:
    """The engine's ``clone``: prints from the bundle's reference graphs."""

    def __init__(
        self,
        p: GsvParams,
        graphs: Mapping[str, Runner],
        text: TextStack,
        t2s: T2S,
        model_id: str,
        codebook: np.ndarray,
    ) -> None:
        rp = p.reference
        if rp is None:
            raise BundleError("params.reference is missing: the bundle cannot clone")
        self.p, self.text, self.t2s, self.model_id = p, text, t2s, model_id
        self.longest = rp.max_seconds
        # the nearest code is found on the CPU, in fp32 (reference/prompt.py says why)
        self.prompt = PromptTokens(graphs[L.HUBERT], graphs[L.SSL_QUANT], rp, codebook)
        self.style = Style(graphs[L.REF_ENC], graphs[L.SV], rp)

    @property
    def capability(self) -> Cloning:
        """Upstream's 3..10 s, or less where the bundle's windows end sooner
        (rounded inward to the ms: a clip the service lets through is one the
        16 kHz check takes); the transcript is part of the prompt."""
        low = math.ceil(MIN_REF_SECONDS * 1000) / 1000
        high = math.floor(self.longest * 1000) / 1000
        return Cloning(self.model_id, low, high, "required", MAX_AUX)

    def warmup(self) -> None:
        """Each reference graph once, on a tone of the shortest clip length."""
        n = round(MIN_REF_SECONDS * HUBERT_RATE)
        tone = np.sin(2 * np.pi * WARMUP_HZ * np.arange(n) / HUBERT_RATE)
        clip = prepare((WARMUP_LEVEL * tone).astype(np.float32), HUBERT_RATE)
        self.prompt(clip.hubert16k)
        self.style(clip.spec32k)

    def clone(self, req: CloneRequest, cancel: CancelToken | None = None) -> VoicePrint:
        """``CloningEngine.clone`` once its ``Cloning.check`` passed."""
        assert req.transcript is not None  # check() refused a missing one
        main = prepare(req.audio, req.sample_rate, longest=self.longest)
        extra = [
            prepare_aux(a, r, f"aux clip {i}", self.longest)
            for i, (a, r) in enumerate(req.aux)
        ]
        text = prompt_text(req.transcript)
        phonemes = self.text.phonemize(text, cancel)
        lang = _language(phonemes, req.language)
        try:
            self.text.check_fits(phonemes)
        except CapacityError as exc:
            raise ValueError(
                f"{L.ENGINE_ID}: the transcript is too long: {exc}"
            ) from None
        bert = self.text.bert_features(phonemes, cancel)
        tokens = self.prompt(main.hubert16k, cancel)
        self._check_fits(len(phonemes.phone_ids), len(tokens))
        ge, ge512 = self._style([main, *extra], cancel)
        arrays = {
            L.REF_PHONES: np.asarray(phonemes.phone_ids, np.int32),
            L.REF_BERT: np.asarray(bert, np.float32),
            L.REF_PROMPT: np.asarray(tokens, np.int32),
            L.REF_GE: np.asarray(ge, np.float32),
            L.REF_GE512: np.asarray(ge512, np.float32),
        }
        for key in (L.REF_GE, L.REF_GE512):
            if not np.isfinite(arrays[key]).all():
                raise ValueError(f"{L.ENGINE_ID}: the style graphs gave a bad {key}")
        meta = {
            L.REF_TEXT: text,
            L.REF_LANG: lang,
            L.REF_PROMPT_SEMANTIC: PROMPT_SOURCE,
            "seconds": round(main.seconds, 3),
            "aux": len(extra),
        }
        return VoicePrint(L.ENGINE_ID, self.model_id, arrays, meta)

    def _style(
        self, clips: list[Clip], cancel: CancelToken | None
    ) -> tuple[np.ndarray, np.ndarray]:
        styles = [self.style(c.spec32k, cancel) for c in clips]
        return styles[0] if len(styles) == 1 else mean_style(styles)

    def _check_fits(self, n_phones: int, n_prompt: int) -> None:
        """The prompt must leave the prefill room for a segment (else no text
        could ever be spoken in this voice)."""
        try:
            self.t2s.check_fits(n_phones + MIN_SEGMENT_PHONES, n_prompt, 1)
        except CapacityError as exc:
            raise ValueError(
                f"{L.ENGINE_ID}: the clip's {n_prompt} prompt tokens and its "
                f"transcript's {n_phones} phones leave no room for text ({exc}); "
                "use a shorter clip or transcript"
            ) from None


def _language(phonemes: Any, language: str | None) -> str:
    """The prompt's language: ``language`` when given (zh or en, and the
    transcript must hold it), else as refs.py labels a bundle's: zh when any
    part is Chinese (the frontend detects per part, upstream's "auto")."""
    found = {part.lang for part in phonemes.parts}
    detected = "zh" if "zh" in found else "en"
    if language is None:
        return detected
    lang = language.split("_")[0].lower()
    if lang not in LANGS:
        raise ValueError(f"{L.ENGINE_ID}: language {language!r}: expected zh or en")
    if lang not in found:
        raise ValueError(
            f"{L.ENGINE_ID}: language {language!r}, but the transcript has no "
            f"{lang} text (found {sorted(found)})"
        )
    return lang


def load_cloner(
    bundle: Bundle,
    p: GsvParams,
    graphs: Mapping[str, Runner],
    text: TextStack,
    t2s: T2S,
    codebook: np.ndarray,
) -> Cloner | None:
    """The bundle's cloner when it has ``params.reference`` and the four
    graphs (``graph_needs`` requires them all once the params are there);
    ``codebook`` is the SoVITS quantizer's (cpu/vits_codebook.npy)."""
    if p.reference is None or not has_reference_graphs(graphs):
        return None
    model = reference_model_id(bundle.graphs)
    return Cloner(p, graphs, text, t2s, model, codebook)
