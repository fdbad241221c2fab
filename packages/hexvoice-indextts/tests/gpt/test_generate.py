"""Semantic codes from the GPT graphs on onnxruntime CPU are upstream's:
``UnifiedVoice.inference_speech`` with infer_v2's beam sampling, the same
torch seed (its Exp(1) draws are fed to hexvoice's beam search), on the tiny
config and one with two layers, other heads and a moved codebook, weights far
from their init; runs that end by the stop token and runs cut at the limit,
the beams moving to a larger decode bucket on the way. The latent pass after
it is upstream's ``UnifiedVoice.forward`` within the float32 floor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from indextts.gpt.model_v2 import UnifiedVoice
from scripts.common.build.runners import cpu_runner
from scripts.common.floor import rel_gate

from hexvoice_indextts.build.gates import MAX_REL_ERR, port_pair
from hexvoice_indextts.build.gpt_graph import (
    export_decode,
    export_latent,
    export_prefill,
    latent_name,
    load_ports,
    shape_of,
)
from hexvoice_indextts.gpt.generate import (
    GptRun,
    Sampling,
    beam_search,
    code_length,
    generate_codes,
    gpt_stack,
    teacher_forced,
)
from hexvoice_indextts.gpt.prompt import GptTables
from hexvoice_indextts.graphs.gpt_conditioning import gpt_state
from hexvoice_indextts.model_dir.config import Conformer, Gpt
from hexvoice_indextts.tiny.model import tiny_config

TINY = tiny_config()["gpt"]
#: two layers, four heads, a codebook of 37 with its start/stop ids after it
OTHER = {**TINY, "layers": 2, "heads": 4, "number_mel_codes": 39,
         "start_mel_token": 37, "stop_mel_token": 38}  # fmt: skip
#: text ids (the tiny BPE has 97); one is the stop id, which the prompt drops
TEXT = [5, 17, 1, 44, 9, 63, 2]
#: prompt rows: 34 conditioning + 7 - 1 + 2 text + 1 start = 43
PREFILL_ROWS = [48]
#: the run starts in 64 and moves to 96 past 63 positions
DECODE_POSITIONS = [64, 96]
UPSTREAM_LENGTH = 1024  # infer_v2's condition length (the feature width)
SEEDS = (0, 3)
#: new tokens per run: 43 prompt rows + 30 pass the 64-position bucket
LIMIT = 30
#: weights this far from their init: the logits are peaked enough for top-p to
#: keep few codes, and attention is not yet one-hot (at 0.3 one layer attends
#: to one row, and a decode step at the wrong position went unseen)
SPREAD = 0.1


def typed(cfg: dict[str, Any]) -> Gpt:
    modules = {
        k: Conformer(**cfg[k]) for k in ("condition_module", "emo_condition_module")
    }
    return Gpt(**{**cfg, **modules})


class Model:
    def __init__(self, cfg: dict[str, Any], seed: int, stop_bias: float, out: Path):
        torch.manual_seed(seed)
        gpt = UnifiedVoice(**cfg).eval()
        with torch.no_grad():
            for name, p in gpt.named_parameters():
                if name.startswith(("gpt.", "mel_", "final_norm", "text_")):
                    p.add_(torch.randn_like(p) * SPREAD)
            gpt.mel_head.bias[cfg["start_mel_token"]] = -1e4  # as tiny/model.py
            gpt.mel_head.bias[cfg["stop_mel_token"]] += stop_bias
        torch.save(gpt.state_dict(), out / "gpt.pth")
        gpt.post_init_gpt2_config(use_deepspeed=False, kv_cache=True, half=False)
        self.gpt, self.cfg = gpt, typed(cfg)
        state = gpt_state(out / "gpt.pth")
        self.tables = GptTables.from_state(state, self.cfg)
        self.ports = load_ports(out / "gpt.pth", self.cfg)
        shape = shape_of(self.cfg, Sampling().num_beams)
        specs = [
            export_prefill(self.ports["prefill"], shape, n, out) for n in PREFILL_ROWS
        ]
        specs += [
            export_decode(self.ports["decode"], shape, n, out) for n in DECODE_POSITIONS
        ]
        self.latent_spec = export_latent(self.ports["latent"], shape, 96, out)
        self.specs, self.shape = specs, shape
        runners = {s.name: cpu_runner(s.path) for s in specs}
        self.stack = gpt_stack(runners, shape, PREFILL_ROWS, DECODE_POSITIONS)
        g = torch.Generator().manual_seed(seed + 100)
        self.spk = torch.randn(1, 40, 1024, generator=g)
        self.emo = torch.randn(1, cfg["model_dim"], generator=g) * 0.1
        with torch.no_grad():
            self.latents = gpt.get_conditioning(
                self.spk.transpose(1, 2), torch.tensor([UPSTREAM_LENGTH])
            )

    def upstream(self, seed: int, limit: int) -> list[int]:
        length = torch.tensor([UPSTREAM_LENGTH])
        torch.manual_seed(seed)
        with torch.no_grad():
            codes, _ = self.gpt.inference_speech(
                self.spk, torch.tensor([TEXT], dtype=torch.int32), self.spk,
                cond_lengths=length, emo_cond_lengths=length, emo_vec=self.emo,
                do_sample=True, top_p=0.8, top_k=30, temperature=0.8,
                num_return_sequences=1, length_penalty=0.0, num_beams=3,
                repetition_penalty=10.0, max_generate_length=limit,
            )  # fmt: skip
        return codes[0].tolist()

    def conditioning(self) -> np.ndarray:
        return self.tables.conditioning(self.latents[0].numpy(), self.emo[0].numpy())

    def ours(self, seed: int, limit: int) -> list[int]:
        torch.manual_seed(seed)

        def noise(n: int) -> np.ndarray:  # torch.multinomial's own Exp(1) draws
            return torch.empty(1, n).exponential_(1).numpy()[0]

        search = beam_search(self.tables, Sampling(max_mel_tokens=limit), noise)
        return generate_codes(GptRun(self.stack, self.tables), self.prompt(), search)

    def prompt(self) -> np.ndarray:
        return self.tables.prompt(self.conditioning(), TEXT)


#: the tiny model never emits its stop token (every run is cut at the limit);
#: the other one often does
STOP_BIAS = {"tiny": -1e4, "other": 1.5}


@pytest.fixture(scope="module", params=[0, 1], ids=list(STOP_BIAS))
def model(request: pytest.FixtureRequest, tmp_path_factory: Any) -> Model:
    which = request.param
    out = tmp_path_factory.mktemp("gpt")
    return Model((TINY, OTHER)[which], which, list(STOP_BIAS.values())[which], out)


@pytest.mark.parametrize("seed", SEEDS)
def test_codes_are_upstreams(model: Model, seed: int) -> None:
    limit = LIMIT
    want = model.upstream(seed, limit)
    got = model.ours(seed, limit)
    assert got == want
    assert model.stack.stats.runs  # the account saw the buckets


def test_some_runs_end_by_the_stop_token_and_some_at_the_limit(model: Model) -> None:
    ends = [model.ours(seed, LIMIT) for seed in SEEDS]
    stop = model.tables.stop_mel
    stopped = [stop in codes for codes in ends]
    if model.cfg.layers == 1:
        assert not any(stopped) and all(len(c) == LIMIT for c in ends)
    else:  # a stopped run's last code is its stop token
        assert any(stopped), ends
        assert all(
            c[-1] == stop and c.count(stop) == 1
            for c, s in zip(ends, stopped, strict=True)
            if s
        )


def test_latent_pass_is_upstreams_forward(model: Model) -> None:
    runs = [model.ours(seed, LIMIT) for seed in SEEDS]
    codes = max((c[: code_length(c, model.tables.stop_mel)] for c in runs), key=len)
    assert len(codes) > 1
    cond = model.conditioning()
    rows, keep = model.tables.latent(cond, TEXT, codes)
    with torch.no_grad():
        want = model.gpt(
            model.latents, torch.tensor([TEXT]), torch.tensor([len(TEXT)]),
            torch.tensor([codes], dtype=torch.long), torch.tensor([len(codes)]),
            model.spk,
            emo_vec=model.emo, use_speed=torch.zeros(1, dtype=torch.long),
        ).numpy()  # fmt: skip
    padded = np.zeros((1, 96, rows.shape[1]), np.float32)
    padded[0, : len(rows)] = rows
    got = cpu_runner(model.latent_spec.path).run({"emb": padded})[0][:, keep]
    _, exact = port_pair(model.ports["latent"], torch.from_numpy(rows)[None])
    result = rel_gate(latent_name(96), MAX_REL_ERR, exact[:, keep], want, got)
    assert result.passed, result


@pytest.mark.simulator
def test_teacher_forced_top1_on_the_simulator(model: Model, tmp_path: Path) -> None:
    """The compiled fp16 graphs, fed each beam a different CPU run's codes (past
    the 64 bucket), pick the CPU graphs' top-1 at every step (a miss excused
    only as an fp16 tie, scripts/common/sim_gate.py), cosine >= 0.999."""
    pytest.importorskip("onnxruntime_qnn")
    if model.cfg.layers == 1:
        pytest.skip("one model on the simulator (suite time): the two-layer one")
    from scripts.common.build.runners import Simulator
    from scripts.common.qnn_compile import compile_onnx
    from scripts.common.sim_gate import sim_gate

    limit = 30
    runs = [model.ours(seed, limit) for seed in (*SEEDS, 7)]
    width = min(len(r) for r in runs)
    tokens = np.array([r[:width] for r in runs])  # [beams, T]
    reference = teacher_forced(
        GptRun(model.stack, model.tables), model.prompt(), tokens
    )
    bins = {
        s.name: compile_onnx(s.path, tmp_path / s.name).bin_path for s in model.specs
    }
    sim = Simulator()
    try:
        stack = gpt_stack(sim.open(bins), model.shape, PREFILL_ROWS, DECODE_POSITIONS)
        got = teacher_forced(GptRun(stack, model.tables), model.prompt(), tokens)
    finally:
        sim.close()
    for gate in sim_gate("gpt", [reference], [got]):
        assert gate.passed, gate
    top1 = sim_gate("gpt", [reference], [got])[1]
    assert top1.value == 1.0, top1
