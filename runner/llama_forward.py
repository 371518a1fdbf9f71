"""The runner's own forward pass for Llama models on CPU: the same float operations as transformers'
LlamaForCausalLM, in the same order, shapes and dtypes (so the tokens are identical), without its module tree.

At a decode batch of 16 on CPU, transformers' module calls (hooks, keyword plumbing, output capture, the
attention interface lookup) cost about as much per step as the paged attention itself; this function calls the
layers' weights directly. It reads the weights of the loaded model, so there is only one copy of them.
"""

import torch
import torch.nn.functional as F
from transformers.models.llama.modeling_llama import LlamaForCausalLM

from runner.paged_attention import PagedStep, paged_attention_forward
from runner.prepacked_linear import StackedLinears


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


def _stacked(module, name: str, linears) -> StackedLinears:
    """The module's StackedLinears of `linears`, made on first use and kept on the module."""
    found = module.__dict__.get(name)
    if found is None:
        found = module.__dict__[name] = StackedLinears(linears)
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


def _attention(attn, hidden: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor, step: PagedStep):
    """LlamaAttention.forward with the paged attention, hidden [tokens, hidden_size]; q, k and v in one product,
    and the rotary embedding of q and k in one pass."""
    dim = attn.head_dim
    heads, kv_heads = attn.q_proj.out_features // dim, attn.k_proj.out_features // dim
    qkv = _stacked(attn, "_stacked_qkv", [attn.q_proj, attn.k_proj, attn.v_proj])(hidden).view(len(hidden), -1, dim)
    rotated = _rotate(qkv[:, :heads + kv_heads], cos, signed_sin)
    query, key, value = (part.transpose(0, 1)[None] for part in (rotated[:, :heads], rotated[:, heads:],
                                                                  qkv[:, heads + kv_heads:]))
    out, _ = paged_attention_forward(attn, query, key, value, None, scaling=attn.scaling, paged_step=step)
    return attn.o_proj.forward(out.reshape(len(hidden), -1).contiguous())


def _decoder_layer(layer, hidden: torch.Tensor, cos: torch.Tensor, signed_sin: torch.Tensor, step: PagedStep):
    """LlamaDecoderLayer.forward; the MLP's gate and up products in one."""
    hidden = hidden + _attention(layer.self_attn, _rms_norm(layer.input_layernorm, hidden), cos, signed_sin, step)
    mlp = layer.mlp
    gate_up = _stacked(mlp, "_stacked_gate_up", [mlp.gate_proj, mlp.up_proj])(
        _rms_norm(layer.post_attention_layernorm, hidden))
    size = mlp.gate_proj.out_features
    return hidden + mlp.down_proj.forward(F.silu(gate_up[:, :size]) * gate_up[:, size:])


def llama_logits(model: LlamaForCausalLM, input_ids: torch.Tensor, position_ids: torch.Tensor,
                 logits_index: torch.Tensor, step: PagedStep) -> torch.Tensor:
    """Logits [len(logits_index), vocab] of one packed step; input_ids and position_ids are [1, tokens]."""
    body = model.model
    hidden = body.embed_tokens.forward(input_ids[0])
    cos, signed_sin = _rotary(*body.rotary_emb(hidden, position_ids=position_ids))
    for layer in body.layers[:model.config.num_hidden_layers]:
        hidden = _decoder_layer(layer, hidden, cos, signed_sin, step)
    hidden = _rms_norm(body.norm, hidden)
    return model.lm_head.forward(hidden[logits_index])
