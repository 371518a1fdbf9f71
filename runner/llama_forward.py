"""The runner's own forward pass for Llama models on CPU: the same float operations as transformers'
LlamaForCausalLM, in the same order, shapes and dtypes (so the tokens are identical), without its module tree.

At a decode batch of 16 on CPU, transformers' module calls (hooks, keyword plumbing, output capture, the
attention interface lookup) cost about as much per step as the paged attention itself; this function calls the
layers' weights directly. It reads the weights of the loaded model, so there is only one copy of them.
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F
from transformers.models.llama.modeling_llama import LlamaForCausalLM

from runner.paged_attention import PagedStep, paged_attention_forward
from runner.prepacked_linear import StackedLinears, packing_on


def supports_direct_forward(model, device: torch.device) -> bool:
    """Plain Llama on CPU (other families and CUDA keep transformers' forward)."""
    return type(model) is LlamaForCausalLM and device.type == "cpu" and model.config.hidden_act == "silu"


def _rms_norm(norm, hidden: torch.Tensor) -> torch.Tensor:
    """LlamaRMSNorm.forward."""
    dtype = hidden.dtype
    hidden = hidden.to(torch.float32)
    variance = hidden.pow(2).mean(-1, keepdim=True)
    hidden = hidden * torch.rsqrt(variance + norm.variance_epsilon)
    return norm.weight * hidden.to(dtype)


class _Products(NamedTuple):
    """A decoder layer's matrix products, q/k/v and gate/up stacked, and the head counts to split them."""
    qkv: StackedLinears
    o: StackedLinears
    gate_up: StackedLinears
    down: StackedLinears
    heads: int
    kv_heads: int


def _products(layer) -> _Products:
    """The layer's _Products, made on first use and kept on the layer."""
    found = layer.__dict__.get("_schedlab_products")
    if found is None:
        attn, mlp = layer.self_attn, layer.mlp
        found = layer.__dict__["_schedlab_products"] = _Products(
            StackedLinears([attn.q_proj, attn.k_proj, attn.v_proj]), StackedLinears([attn.o_proj]),
            StackedLinears([mlp.gate_proj, mlp.up_proj]), StackedLinears([mlp.down_proj]),
            attn.q_proj.out_features // attn.head_dim, attn.k_proj.out_features // attn.head_dim)
    return found


def _rotary(cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The rotary tables [tokens, 1, head_dim] for `_rotate`: rotate_half(x) * sin, which is (-x2, x1) * (s1, s2),
    equals (x2, x1) * (-s1, s2) exactly (a negation rounds nothing), so the sign moves into the table once per
    step and each layer rolls its heads instead of slicing, negating and concatenating them."""
    half = sin.shape[-1] // 2
    return cos[0, :, None], torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)[0, :, None]


def _rotate(x: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor) -> torch.Tensor:
    """transformers' (x * cos) + (rotate_half(x) * sin) for x [tokens, heads, head_dim], to the bit."""
    return (x * cos) + (x.roll(x.shape[-1] // 2, dims=-1) * signed_sin)


def _decoder_layer(layer, hidden: torch.Tensor, rotary: tuple, step: PagedStep, packing: bool) -> torch.Tensor:
    """LlamaDecoderLayer.forward on hidden [tokens, hidden_size], with LlamaAttention.forward's paged attention:
    q, k and v in one product, their rotary embedding in one pass, and the MLP's gate and up in one product."""
    products, attn, tokens = _products(layer), layer.self_attn, len(hidden)
    heads, kv_heads = products.heads, products.kv_heads
    qkv = products.qkv(_rms_norm(layer.input_layernorm, hidden), packing).view(tokens, -1, attn.head_dim)
    rotated = _rotate(qkv[:, :heads + kv_heads], *rotary)
    query, key, value = (part.transpose(0, 1)[None] for part in (rotated[:, :heads], rotated[:, heads:],
                                                                  qkv[:, heads + kv_heads:]))
    out, _ = paged_attention_forward(attn, query, key, value, None, scaling=attn.scaling, paged_step=step)
    hidden = hidden + products.o(out.reshape(tokens, -1).contiguous(), packing)
    gate_up = products.gate_up(_rms_norm(layer.post_attention_layernorm, hidden), packing)
    size = gate_up.shape[-1] // 2
    return hidden + products.down(F.silu(gate_up[:, :size]) * gate_up[:, size:], packing)


def llama_logits(model: LlamaForCausalLM, input_ids: torch.Tensor, position_ids: torch.Tensor,
                 logits_index: torch.Tensor, step: PagedStep) -> torch.Tensor:
    """Logits [len(logits_index), vocab] of one packed step; input_ids and position_ids are [1, tokens]."""
    body, packing = model.model, packing_on(input_ids.device)
    hidden = body.embed_tokens.forward(input_ids[0])
    rotary = _rotary(*body.rotary_emb(hidden, position_ids=position_ids))
    for layer in body.layers[:model.config.num_hidden_layers]:
        hidden = _decoder_layer(layer, hidden, rotary, step, packing)
    hidden = _rms_norm(body.norm, hidden)
    lm_head = model.__dict__.get("_schedlab_lm_head")
    if lm_head is None:
        lm_head = model.__dict__["_schedlab_lm_head"] = StackedLinears([model.lm_head])
    return lm_head(hidden[logits_index], packing)
