"""Where sentences end: one rule for streamed and for whole texts.

The boundaries come from ``sentence-stream``, the detector wyoming-piper and
wyoming-bench use (docs/clients.md, sentence boundaries): a period is a sentence end
only before whitespace and an upper-case letter (or a list number), it waits past "Mr.",
initials and decimals, and it cuts CJK text at 。！？ without a space after.
Wyoming streams are cut with it as text arrives; engines that pause between
sentences cut whole texts with it too, so the same text gives the same
sentences (and the same pauses) whichever way it came.
"""

from __future__ import annotations

from dataclasses import dataclass

from sentence_stream import SentenceBoundaryDetector, stream_to_sentences


@dataclass(frozen=True)
class Sentence:
    text: str
    #: False when cut at the length limit without a sentence end in sight.
    complete: bool = True


def split_sentences(text: str) -> list[str]:
    """The sentences of a whole text, in order (stripped, none empty)."""
    return [s for s in stream_to_sentences([text]) if s]


class SentenceStream:
    """Streamed text cut into sentences as soon as each one is known to end.

    A sentence is released once the text after it shows it ended (so "Hello Mr."
    waits for what follows).  Pieces are at most ``limit`` characters; text with
    no end in sight beyond ``limit`` is let go rather than held forever.
    """

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._detector = SentenceBoundaryDetector()

    def add(self, text: str) -> list[Sentence]:
        found = [Sentence(s) for s in self._detector.add_chunk(text)]
        d = self._detector
        # The detector's two public buffers: text not yet released.
        if len(d.remaining_text) + len(d.current_sentence) > self._limit:
            found += self._flush(complete=False)
        return self._bounded(found)

    def finish(self) -> list[Sentence]:
        """Everything still held, at the end of the stream."""
        return self._bounded(self._flush(complete=True))

    def _flush(self, complete: bool) -> list[Sentence]:
        rest = self._detector.finish()
        return [Sentence(rest, complete)] if rest else []

    def _bounded(self, sentences: list[Sentence]) -> list[Sentence]:
        out = []
        for s in sentences:
            text = s.text
            while len(text) > self._limit:
                cut = text.rfind(" ", 1, self._limit + 1)  # keep words whole
                cut = cut if cut > 0 else self._limit
                out.append(Sentence(text[:cut].rstrip(), complete=False))
                text = text[cut:].lstrip()
            if text:
                out.append(Sentence(text, s.complete))
        return out
