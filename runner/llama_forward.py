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


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def _attention(attn, hidden: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, step: PagedStep) -> torch.Tensor:
    """LlamaAttention.forward with the paged attention, hidden [1, tokens, hidden_size]."""
    shape = (*hidden.shape[:-1], -1, attn.head_dim)
    query = attn.q_proj.forward(hidden).view(shape).transpose(1, 2)
    key = attn.k_proj.forward(hidden).view(shape).transpose(1, 2)
    value = attn.v_proj.forward(hidden).view(shape).transpose(1, 2)
    query = (query * cos) + (_rotate_half(query) * sin)
    key = (key * cos) + (_rotate_half(key) * sin)
    out, _ = paged_attention_forward(attn, query, key, value, None, scaling=attn.scaling, paged_step=step)
    return attn.o_proj.forward(out.reshape(*hidden.shape[:-1], -1).contiguous())


def _decoder_layer(layer, hidden: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, step: PagedStep):
    """LlamaDecoderLayer.forward."""
    hidden = hidden + _attention(layer.self_attn, _rms_norm(layer.input_layernorm, hidden), cos, sin, step)
    mlp, normed = layer.mlp, _rms_norm(layer.post_attention_layernorm, hidden)
    return hidden + mlp.down_proj.forward(F.silu(mlp.gate_proj.forward(normed)) * mlp.up_proj.forward(normed))


def llama_logits(model: LlamaForCausalLM, input_ids: torch.Tensor, position_ids: torch.Tensor,
                 logits_index: torch.Tensor, step: PagedStep) -> torch.Tensor:
    """Logits [len(logits_index), vocab] of one packed step; input_ids and position_ids are [1, tokens]."""
    body = model.model
    hidden = body.embed_tokens.forward(input_ids)
    cos, sin = body.rotary_emb(hidden, position_ids=position_ids)
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
    for layer in body.layers[:model.config.num_hidden_layers]:
        hidden = _decoder_layer(layer, hidden, cos, sin, step)
    hidden = _rms_norm(body.norm, hidden)
    return model.lm_head.forward(hidden[:, logits_index, :])[0]
