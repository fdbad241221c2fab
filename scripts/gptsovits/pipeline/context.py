"""The work of each build_voice step, over one set of sources.

Models load lazily (a fully resumed run loads none). Work-dir layout:

    onnx/<key>.onnx       fp32 graphs (bundle onnx/, CPU gates)
    onnx_npu/<key>.onnx   the T2S graphs with float16 K/V (compiled for the NPU)
    stage/{cpu,text,refs} bundle files other than graphs
    bins/<key>.bin        compiled context binaries
"""

from __future__ import annotations

import shutil
import tempfile
from functools import cached_property
from pathlib import Path

import numpy as np
import torch

from daemon.engines.gptsovits import layout
from daemon.engines.gptsovits.frontend import CharVocab, G2pwResolver, TextFrontend
from daemon.engines.gptsovits.frontend.zh.g2pw import G2PW_ROWS, G2PW_TOKENS
from scripts.gptsovits.export import graphs as export
from scripts.gptsovits.export.bert import INPUTS as BERT_INPUTS
from scripts.gptsovits.export.bert import OUTPUT as BERT_OUTPUT
from scripts.gptsovits.export.bert import (
    BertFeatures,
    bert_inputs,
    graph_layers,
    load_bert,
)
from scripts.gptsovits.export.cpu_tables import TABLE_FILES, write_tables
from scripts.gptsovits.export.g2pw import split_g2pw
from scripts.gptsovits.export.shapes import MASK_VALUE, NOISE_SCALE, GraphShapes
from scripts.gptsovits.models.checkpoints import (
    load_gpt_checkpoint,
    load_sovits_checkpoint,
)
from scripts.gptsovits.models.sovits import SovitsModel
from scripts.gptsovits.models.t2s import T2SModel
from scripts.gptsovits.pipeline import aux_refs
from scripts.gptsovits.pipeline.reference_graphs import ReferenceGraphs
from scripts.gptsovits.pipeline.refs import (
    BERT_DIR,
    PROMPT_APPROXIMATE,
    RefFeatures,
    reference_features,
    required_files,
)
from scripts.gptsovits.pipeline.sources import G2PW_FILES, Sources
from scripts.gptsovits.verify import cpu as verify
from scripts.gptsovits.verify import sim as sim_verify
from scripts.gptsovits.verify import text as text_verify

ROOT = Path(__file__).resolve().parents[3]
# Upstream sampling defaults and EOS rule (docs/gpt-sovits.md, T2S sampling; T2S
# stopping).
TOP_K, TOP_P, TEMPERATURE, REPETITION_PENALTY = 15, 1.0, 1.0, 1.35
EOS_BLOCK_STEPS = 11
TEXT_FILES = ("vocab.txt", *G2PW_FILES[1:])


class BuildContext:
    def __init__(
        self,
        src: Sources,
        shapes: GraphShapes,
        work: Path,
        voice: str,
        ref_text: str | None = None,
    ) -> None:
        self.src, self.shapes, self.work, self.voice = src, shapes, Path(work), voice
        self.ref_text = ref_text
        self.onnx_dir = self.work / "onnx"
        self.npu_dir = self.work / "onnx_npu"
        self.stage = self.work / "stage"
        self.bin_dir = self.work / "bins"
        self.text_dir = self.stage / layout.TEXT_DIR
        self.cpu_dir = self.stage / "cpu"
        #: the zero-shot graphs (--hubert + --sv; build_voice.py sets it)
        self.zero_shot: ReferenceGraphs | None = None
        #: --aux-ref references, averaged into the voice's style (aux_refs.py)
        self.aux_refs: list[aux_refs.AuxRef] = []

    # models -----------------------------------------------------------------
    @cached_property
    def t2s(self) -> T2SModel:
        return T2SModel.from_checkpoint(
            load_gpt_checkpoint(self.src.gpt_ckpt), str(self.src.gpt_ckpt)
        )

    @cached_property
    def sovits(self) -> SovitsModel:
        return SovitsModel.from_checkpoint(
            load_sovits_checkpoint(self.src.sovits_pth), str(self.src.sovits_pth)
        )

    @cached_property
    def bert(self) -> torch.nn.Module:
        bert = load_bert(self.src.bert_dir)
        if graph_layers(bert) != self.shapes.bert_layers:
            raise ValueError(
                f"--bert {self.src.bert_dir}: hidden_states[-3] is layer "
                f"{graph_layers(bert)}, the graph shapes expect "
                f"{self.shapes.bert_layers}"
            )
        return bert

    @cached_property
    def vocab(self) -> CharVocab:
        return CharVocab(self.src.bert_dir / "vocab.txt")

    @cached_property
    def resolver(self) -> G2pwResolver:
        return text_verify.g2pw_resolver(
            self.src.g2pw_dir, self.vocab, self.cpu_dir, self.onnx(layout.G2PW)
        )

    # paths ------------------------------------------------------------------
    def graph_keys(self) -> list[str]:
        decode = [layout.t2s_decode_key(n) for n in self.shapes.kv_buckets]
        ref = list(self.zero_shot.keys) if self.zero_shot else []
        return [layout.G2PW, layout.BERT, layout.T2S_PREFILL, *decode,
                layout.VITS_ENC, layout.VITS_GEN, *ref]  # fmt: skip

    def onnx(self, key: str) -> Path:
        return self.onnx_dir / f"{key}.onnx"

    def npu_onnx(self, key: str) -> Path:
        path = self.npu_dir / f"{key}.onnx"
        return path if key.startswith("t2s_") else self.onnx(key)

    def bin_path(self, key: str) -> Path:
        return self.bin_dir / f"{key}.bin"

    def ref_path(self) -> Path:
        return self.stage / layout.ref_file(self.voice)

    def t2s_outputs(self) -> list[Path]:
        keys = [k for k in self.graph_keys() if k.startswith("t2s_")]
        return [self.onnx(k) for k in keys] + [self.npu_onnx(k) for k in keys]

    def text_outputs(self) -> list[Path]:
        return [self.onnx(layout.BERT), self.onnx(layout.G2PW)]

    def table_outputs(self) -> list[Path]:
        return [self.stage / rel for rel in TABLE_FILES] + [
            self.text_dir / name for name in TEXT_FILES
        ]

    def ref_inputs(self) -> list[Path]:
        files = required_files(self.src.logs, self.src.ref_clip)
        bert = self.src.logs / BERT_DIR / f"{self.src.ref_clip}.pt"
        return files + ([bert] if bert.exists() else [])

    # steps ------------------------------------------------------------------
    def _export_t2s_into(self, out: Path, kv: torch.dtype) -> None:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            for spec in export.export_t2s(self.t2s, self.shapes, Path(tmp), kv):
                name = spec.name.replace("t2s_decode_L", layout.T2S_DECODE_PREFIX)
                spec.path.replace(out / f"{name}.onnx")

    def export_t2s(self) -> dict:
        self._export_t2s_into(self.onnx_dir, torch.float32)
        self._export_t2s_into(self.npu_dir, torch.float16)
        return {}

    def export_vits(self) -> dict:
        export.export_vits(self.sovits, self.shapes, self.onnx_dir)
        return {}

    def export_text(self) -> dict:
        fixed = (G2PW_ROWS, G2PW_TOKENS)
        if (self.shapes.g2pw_rows, self.shapes.g2pw_tokens) != fixed:
            raise ValueError(f"the runtime feeds g2pw {fixed} rows x tokens")
        t = self.shapes.bert_tokens
        export._export(
            BertFeatures(self.bert, t),
            (torch.zeros(1, t, dtype=torch.int32), torch.zeros(1, 1, 1, t)),
            list(BERT_INPUTS),
            [BERT_OUTPUT],
            self.onnx(layout.BERT),
            fold=False,
        )
        head = split_g2pw(
            self.src.g2pw_dir / "g2pW.onnx",
            self.onnx(layout.G2PW),
            self.cpu_dir,
            self.shapes.g2pw_rows,
            self.shapes.g2pw_tokens,
            layout.G2PW_HEAD_PREFIX,
        )
        return {"g2pw_labels": int(head.cls_w.shape[0])}

    def gates_cpu(self) -> dict:
        decode = {
            n: self.onnx(layout.t2s_decode_key(n)) for n in self.shapes.kv_buckets
        }
        npu = {
            n: self.npu_onnx(layout.t2s_decode_key(n)) for n in self.shapes.kv_buckets
        }
        out = verify.gate_t2s(
            self.t2s, self.onnx(layout.T2S_PREFILL), decode, self.shapes
        )
        kv16 = verify.gate_t2s(
            self.t2s, self.npu_onnx(layout.T2S_PREFILL), npu, self.shapes
        )
        out.update({f"kv16_{k}": v for k, v in kv16.items()})
        out.update(
            verify.gate_vits_enc(self.sovits, self.onnx(layout.VITS_ENC), self.shapes)
        )
        out.update(
            verify.gate_vits_gen(self.sovits, self.onnx(layout.VITS_GEN), self.shapes)
        )
        out.update(
            text_verify.gate_bert(
                self.bert, self.onnx(layout.BERT), self.vocab, self.shapes.bert_tokens
            )
        )
        out.update(
            text_verify.gate_g2pw(self.src.g2pw_dir / "g2pW.onnx", self.resolver)
        )
        return out

    def write_tables(self) -> dict:
        write_tables(self.stage, self.t2s, self.sovits)
        self.text_dir.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.src.bert_dir / "vocab.txt", self.text_dir / "vocab.txt")
        for name in G2PW_FILES[1:]:
            shutil.copyfile(self.src.g2pw_dir / name, self.text_dir / name)
        return {}

    def _bert_rows(self, ids: list[int]) -> np.ndarray:
        run = verify.cpu_session(self.onnx(layout.BERT))
        (hidden,) = run(bert_inputs(ids, self.shapes.bert_tokens))
        return hidden[0, : len(ids)]

    def reference(self) -> RefFeatures:
        return reference_features(
            self.src.logs,
            self.src.ref_clip,
            self.sovits,
            TextFrontend(self.resolver),
            self.vocab,
            self._bert_rows,
            self.t2s.dims.bert_dim,
            self.ref_text,
            hubert=self._prompt_hubert(),
        )

    def _prompt_hubert(self):  # -> transformers.HubertModel | None
        """chinese-hubert-base for exact prompt tokens (--hubert), else None."""
        if self.src.hubert_dir is None:
            return None
        if self.zero_shot is not None:
            return self.zero_shot.hubert
        from scripts.gptsovits.export.hubert import load_hubert

        return load_hubert(self.src.hubert_dir)

    def write_refs(self) -> dict:
        src = self.src
        aux = aux_refs.styles(src.logs, self.aux_refs, self.sovits, src.sv_ckpt)
        ref, measured = aux_refs.with_aux(self.reference(), aux, self.sovits)
        used = len(ref.phones) + len(ref.prompt)
        if used >= self.shapes.prefill_len:
            raise ValueError(
                f"reference {ref.name}: {len(ref.phones)} phones + {len(ref.prompt)} "
                f"prompt tokens leave no room in the prefill (P="
                f"{self.shapes.prefill_len}); choose a shorter reference clip"
            )
        ref.save(self.ref_path())
        return {
            "clip": ref.name,
            "ref_seconds": round(ref.seconds, 2),
            "phones": len(ref.phones),
            "prompt": len(ref.prompt),
            "training_bert_rel_err": ref.training_bert_rel_err,
            **measured,
        }

    def gates_sim(self) -> dict:
        ref = self._load_ref()
        sim = sim_verify.open_simulator()
        try:
            res = {}
            ids = [self.vocab.cls, *self.vocab.encode(ref.text), self.vocab.sep]
            res[layout.BERT] = sim_verify.gate_bert(
                sim, self.bin_path(layout.BERT), self.onnx(layout.BERT),
                ids[: self.shapes.bert_tokens], self.shapes.bert_tokens,
            )  # fmt: skip
            _, queries = self.resolver.queries(text_verify.G2PW_SENTENCES)
            batch = next(self.resolver.batches(queries))
            res[layout.G2PW] = sim_verify.gate_g2pw(
                sim, self.bin_path(layout.G2PW), self.onnx(layout.G2PW), batch.feeds
            )
            res.update(
                sim_verify.gate_t2s(
                    sim, self.t2s, self.bin_path(layout.T2S_PREFILL),
                    {n: self.bin_path(layout.t2s_decode_key(n))
                     for n in self.shapes.kv_buckets},
                    self.shapes, ref,
                )
            )  # fmt: skip
            res.update(
                sim_verify.gate_vits(
                    sim, self.sovits,
                    self.bin_path(layout.VITS_ENC), self.onnx(layout.VITS_ENC),
                    self.bin_path(layout.VITS_GEN), self.onnx(layout.VITS_GEN),
                    self.shapes, ref,
                )
            )  # fmt: skip
            if self.zero_shot is not None:
                bins = {k: self.bin_path(k) for k in self.zero_shot.keys}
                res.update(self.zero_shot.gates_sim(sim, bins))
        finally:
            sim.close()
        return {k: vars(v) for k, v in res.items()}

    def _load_ref(self) -> RefFeatures:
        with np.load(self.ref_path()) as z:
            return RefFeatures(
                self.src.ref_clip, str(z[layout.REF_TEXT]), str(z[layout.REF_LANG]),
                z[layout.REF_PHONES], z[layout.REF_BERT], z[layout.REF_PROMPT],
                z[layout.REF_GE], z[layout.REF_GE512], 0.0, None,
                str(z.get(layout.REF_PROMPT_SEMANTIC, PROMPT_APPROXIMATE)),
            )  # fmt: skip

    # manifest ---------------------------------------------------------------
    def params(self) -> layout.GsvParams:
        t, v, s = self.t2s.dims, self.sovits.dims, self.shapes
        return layout.GsvParams(
            width=t.dim, layers=t.layers, heads=t.heads, head_dim=t.head_dim,
            vocab=t.vocab, eos=t.eos, phone_vocab=t.phone_vocab,
            prefill_len=s.prefill_len, kv_buckets=s.kv_buckets,
            max_new_tokens=s.max_new_tokens, vits_frames=s.vits_frames,
            vits_phones=s.vits_phones, vits_hidden=v.hidden, ssl_dim=v.ssl,
            gin=v.gin, hop=v.hop, gen_window=s.gen_window,
            gen_overlap=s.gen_overlap, noise_scale=NOISE_SCALE,
            bert_tokens=s.bert_tokens, bert_dim=t.bert_dim,
            g2pw_rows=s.g2pw_rows, g2pw_tokens=s.g2pw_tokens,
            mask_value=MASK_VALUE, top_k=TOP_K, top_p=TOP_P,
            temperature=TEMPERATURE, repetition_penalty=REPETITION_PENALTY,
            eos_block_steps=EOS_BLOCK_STEPS,
            reference=self.zero_shot.params() if self.zero_shot else None,
        )  # fmt: skip

    def voice_entry(self) -> dict:
        ref = self._load_ref()
        return {
            "file": layout.ref_file(self.voice),
            "clip": self.src.ref_clip,
            "text": ref.text,
            "lang": ref.lang,
            "prompt_semantic": ref.prompt_semantic,
        }

    @staticmethod
    def cpu_metric(key: str, cpu: dict) -> str:
        if key.startswith(layout.T2S_DECODE_PREFIX):
            n = key[len(layout.T2S_DECODE_PREFIX) :]
            return f"rel {cpu.get(f'kv16_t2s_L{n}_rel_err', float('nan')):.2g}"
        names = {
            layout.T2S_PREFILL: ("rel", "t2s_L{}_rel_err"),
            layout.VITS_ENC: ("rel", "vits_enc_rel_err"),
            layout.VITS_GEN: ("SNR", "vits_gen_snr_db"),
            layout.BERT: ("rel", "bert_rel_err"),
            layout.G2PW: ("rel", "g2pw_rel_err"),
        }
        label, metric = names.get(key, ("", ""))
        if "{}" in metric:
            vals = [v for k, v in cpu.items() if k.endswith("_rel_err") and "t2s" in k]
            return f"{label} {max(vals):.2g}" if vals else "-"
        return f"{label} {cpu[metric]:.4g}" if metric in cpu else "-"
