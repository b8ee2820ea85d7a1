"""Decoder architectures by name, their hyper-parameters from published configs (each cited).

Sources (read at litert-torch commit d738f43cb7550554a820dadcedaf7c3e0e80c6b6, `litert_torch/generative/examples/`;
the Hugging Face configs are copies naming the original as `_name_or_path`, /work/research/llm_specs.md section 1):

- gemma3-1b: gemma3/decoder.py `get_decoder_config_1b()` l.340-391 (26 layers, dim 1152, FFN 6*1152 GeGLU
  gelu-tanh, 4 heads x 256, 1 KV head, QK norm, pre+post norms, sliding window 512 on layers with
  (i+1) % 6 != 0, rope 10k local / 1M global, vocab 262144, embedding scale sqrt(1152), tied head);
  HF copy https://huggingface.co/MatanBT/mia-target-model/blob/main/config.json agrees.
- gemma3-tiny: gemma3/decoder.py `get_fake_decoder_config_1b()` l.448-462 (the 1B config with 2 layers,
  dim 128, vocab 128, 4 heads x 64, FFN 128, window 64): what tests/fixtures/make_tiny_gemma3.py converts.
- llama3.2-1b: llama/llama.py `get_1b_model_config()` l.99-144 (16 layers, dim 2048, FFN 8192 SwiGLU,
  32 heads x 64, 8 KV heads, rope 500k with llama3 scaling, vocab 128256, tied); HF copy
  https://huggingface.co/task-aware/Llama_3.2_1B_Instruct/blob/main/config.json.
- llama3.2-3b: llama/llama.py `get_3b_model_config()` l.147-156 (the 1B config with 28 layers, dim 3072,
  24 heads x 128); HF copy https://huggingface.co/mlx-community/Llama-3.2-3B-bf16/blob/refs%2Fpr%2F1/config.json.
- qwen2.5-1.5b: qwen/qwen.py `get_3b_model_config()` l.32-64 and `get_1_5b_model_config()` l.67-76
  (28 layers, dim 1536, FFN 8960 SwiGLU, 12 heads x 128, 2 KV heads, qkv bias, rope 1M, vocab 151936, tied);
  HF copy https://huggingface.co/onnx-community/Qwen2.5-1.5B-Instruct/blob/94677ac90364afdc2b476788d085a9680efde737/config.json.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Architecture:
    """A decoder-only transformer as litert-torch's generative API builds it."""

    name: str
    vocab: int
    dim: int
    ffn: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    activation: str  # "gelu_tanh" (GeGLU) or "silu" (SwiGLU)
    norm_eps: float
    rope_base: float
    source: str
    qk_norm: bool = False
    post_norms: bool = False  # Gemma's sandwich norms: post-attention and post-FFN
    qkv_bias: bool = False
    embedding_scale: float | None = None
    sliding_window: int = 0  # 0: every layer attends globally
    global_every: int = 0  # with a window: layer i is global when (i + 1) % global_every == 0
    global_rope_base: float = 0.0
    query_scale: float = 0.0  # the scalar q is multiplied by (0: 1 / sqrt(head_dim))

    def is_global(self, layer: int) -> bool:
        return not self.sliding_window or (self.global_every > 0 and (layer + 1) % self.global_every == 0)

    @property
    def q_scale(self) -> float:
        return self.query_scale or 1.0 / math.sqrt(self.head_dim)

    @property
    def params(self) -> int:
        """Weights (the tied embedding once)."""
        qkv = self.dim * (self.heads + 2 * self.kv_heads) * self.head_dim
        layer = qkv + self.heads * self.head_dim * self.dim + 3 * self.dim * self.ffn
        return self.layers * layer + self.vocab * self.dim


_GEMMA3 = dict(activation="gelu_tanh", norm_eps=1e-6, rope_base=10_000.0, global_rope_base=1_000_000.0, qk_norm=True,
               post_norms=True, global_every=6)
_G3_SRC = "litert-torch gemma3/decoder.py get_decoder_config_1b() l.340-391 @ d738f43"

ARCHITECTURES: dict[str, Architecture] = {
    "gemma3-1b": Architecture("gemma3-1b", vocab=262_144, dim=1152, ffn=6 * 1152, layers=26, heads=4, kv_heads=1,
                              head_dim=256, embedding_scale=1152 ** 0.5, sliding_window=512,
                              query_scale=256 ** -0.5, source=_G3_SRC, **_GEMMA3),
    "gemma3-tiny": Architecture("gemma3-tiny", vocab=128, dim=128, ffn=128, layers=2, heads=4, kv_heads=1,
                                head_dim=64, embedding_scale=128 ** 0.5, sliding_window=64,
                                query_scale=256 ** -0.5,
                                source="litert-torch gemma3/decoder.py get_fake_decoder_config_1b() l.448-462",
                                **_GEMMA3),
    "llama3.2-1b": Architecture("llama3.2-1b", vocab=128_256, dim=2048, ffn=8192, layers=16, heads=32, kv_heads=8,
                                head_dim=64, activation="silu", norm_eps=1e-5, rope_base=500_000.0,
                                source="litert-torch llama/llama.py get_1b_model_config() l.99-144 @ d738f43"),
    "llama3.2-3b": Architecture("llama3.2-3b", vocab=128_256, dim=3072, ffn=8192, layers=28, heads=24, kv_heads=8,
                                head_dim=128, activation="silu", norm_eps=1e-5, rope_base=500_000.0,
                                source="litert-torch llama/llama.py get_3b_model_config() l.147-156 @ d738f43"),
    "qwen2.5-1.5b": Architecture("qwen2.5-1.5b", vocab=151_936, dim=1536, ffn=8960, layers=28, heads=12, kv_heads=2,
                                 head_dim=128, activation="silu", norm_eps=1e-6, rope_base=1_000_000.0, qkv_bias=True,
                                 source="litert-torch qwen/qwen.py get_1_5b_model_config() l.67-76 @ d738f43"),
}


def architecture(name: str) -> Architecture:
    """The named architecture, or ValueError listing the names."""
    try:
        return ARCHITECTURES[name]
    except KeyError:
        raise ValueError(f"unknown architecture {name!r}; choose one of {', '.join(ARCHITECTURES)} "
                         "or give an LLM .tflite file") from None
