"""Where a decoder's host time goes: one account for every KV-cached decoder.

A step is what one ``loop.Feed`` call does: one token of GPT-SoVITS's T2S or
the Qwen3-ASR text decoder, one frame of the Qwen3-TTS talker (its step and
the code predictor's).  Benchmarks read the host's share of a step (its whole
time less the time inside ``Runner.execute``) and tests count steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DecodeStats:
    """Host-side accounting of decode steps, summed over requests."""

    steps: int = 0
    #: whole steps: writing the inputs, the graph calls, and whatever the
    #: decoder counts with them (choosing the token, for T2S and Qwen3-ASR)
    step_seconds: float = 0.0
    graph_seconds: float = 0.0  # inside Runner.execute
    prefill_seconds: float = 0.0
    #: decodes started, and how many of them began in each KV bucket
    runs: int = 0
    by_bucket: dict[int, int] = field(default_factory=dict)
    #: when set, each step's host seconds are appended (benchmarks: medians
    #: are robust to the preemptions a busy machine adds to an average)
    host_steps: list[float] | None = None

    @property
    def host_seconds_per_step(self) -> float:
        return (self.step_seconds - self.graph_seconds) / max(self.steps, 1)

    def step(self, seconds: float, graph_seconds: float) -> None:
        """One step of ``seconds``, ``graph_seconds`` of them in the graphs."""
        self.steps += 1
        self.step_seconds += seconds
        self.graph_seconds += graph_seconds
        if self.host_steps is not None:
            self.host_steps.append(seconds - graph_seconds)

    def run(self, bucket: int) -> None:
        """A decode started in the KV bucket of ``bucket`` positions."""
        self.runs += 1
        self.by_bucket[bucket] = self.by_bucket.get(bucket, 0) + 1

    def reset(self) -> None:
        """Every count back to zero (a benchmark's next round); ``host_steps``
        stays on (emptied) when it was on."""
        self.steps, self.step_seconds, self.graph_seconds = 0, 0.0, 0.0
        self.prefill_seconds, self.runs = 0.0, 0
        self.by_bucket.clear()
        if self.host_steps is not None:
            self.host_steps.clear()
