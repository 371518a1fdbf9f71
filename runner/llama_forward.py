"""The runner's own forward pass for Llama models on CPU: the same float operations as transformers'
LlamaForCausalLM, in the same order, shapes and dtypes (so the tokens are identical), without its module tree.

At a decode batch of 16 on CPU, transformers' module calls (hooks, keyword plumbing, output capture, the
attention interface lookup) cost about as much per step as the paged attention itself; this function calls the
layers' weights directly. It reads the weights of the loaded model, so there is only one plain copy of them; the
products take oneDNN-packed copies, q/k/v and gate/up each stacked into one product (runner/prepacked_linear.py).
Every matrix product ends with the weights streamed through the caches, and the small operations right after one
run several times slower than they do alone, so fewer products and fewer small operations per layer both count.
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaForCausalLM

from runner.paged_attention import PagedStep, paged_attention_forward
from runner.prepacked_linear import StackedLinears, packing_on


def supports_direct_forward(model, device: torch.device) -> bool:
    """Plain float32 Llama on CPU (other families, dtypes and CUDA keep transformers' forward)."""
    return (type(model) is LlamaForCausalLM and device.type == "cpu" and model.dtype == torch.float32
            and model.config.hidden_act == "silu")


def _rms_norm(norm: tuple[torch.Tensor, float], hidden: torch.Tensor) -> torch.Tensor:
    """LlamaRMSNorm.forward on float32 (where its casts to float32 and back change nothing); norm is
    (weight, epsilon). The in-place steps compute the very floats of the out-of-place ones."""
    weight, epsilon = norm
    return weight * (hidden * hidden.pow(2).mean(-1, keepdim=True).add_(epsilon).rsqrt_())


def _norm_of(module) -> tuple[torch.Tensor, float]:
    return module.weight.detach(), module.variance_epsilon


class _Layer(NamedTuple):
    """What a decoder layer's forward reads, looked up once: its attention module, its norms, its matrix
    products (q/k/v and gate/up stacked) and the head counts that split q/k/v."""
    attn: torch.nn.Module
    input_norm: tuple[torch.Tensor, float]
    post_attention_norm: tuple[torch.Tensor, float]
    qkv: StackedLinears
    o: StackedLinears
    gate_up: StackedLinears
    down: StackedLinears
    heads: int
    kv_heads: int


def _layer(layer) -> _Layer:
    """The layer's _Layer, made on first use and kept on the layer."""
    found = layer.__dict__.get("_schedlab_layer")
    if found is None:
        attn, mlp = layer.self_attn, layer.mlp
        found = layer.__dict__["_schedlab_layer"] = _Layer(
            attn, _norm_of(layer.input_layernorm), _norm_of(layer.post_attention_layernorm),
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


def _decoder_layer(layer: _Layer, hidden: torch.Tensor, rotary: tuple, step: PagedStep, packing: bool,
                   attention) -> torch.Tensor:
    """LlamaDecoderLayer.forward on hidden [tokens, hidden_size], with LlamaAttention.forward's paged attention:
    q, k and v in one product, their rotary embedding in one pass, and the MLP's gate and up in one product."""
    attn, tokens, heads = layer.attn, len(hidden), layer.heads
    qkv = layer.qkv(_rms_norm(layer.input_norm, hidden), packing).view(tokens, -1, attn.head_dim)
    rotated = _rotate(qkv[:, :heads + layer.kv_heads], *rotary)
    query = rotated[:, :heads].transpose(0, 1).unsqueeze(0)
    key = rotated[:, heads:].transpose(0, 1).unsqueeze(0)
    value = qkv[:, heads + layer.kv_heads:].transpose(0, 1).unsqueeze(0)
    out, _ = attention(attn, query, key, value, None, scaling=attn.scaling, paged_step=step)
    hidden = hidden + layer.o(out.reshape(tokens, -1).contiguous(), packing)
    gate_up = layer.gate_up(_rms_norm(layer.post_attention_norm, hidden), packing)
    size = gate_up.shape[-1] // 2
    return hidden + layer.down(F.silu(gate_up[:, :size]) * gate_up[:, size:], packing)


def step_logits(model, direct_forward: bool, input_ids: torch.Tensor, position_ids: torch.Tensor,
                logits_index: torch.Tensor, step) -> torch.Tensor:
    """Logits [len(logits_index), vocab] of one packed step, input_ids and position_ids [1, tokens]: the runner's
    own forward where `direct_forward` (`supports_direct_forward`), else transformers'. Both attend with the
    attention implementation the model is switched to, called with `paged_step=step`."""
    if direct_forward:
        return llama_logits(model, input_ids, position_ids, logits_index, step)
    return model(input_ids=input_ids, position_ids=position_ids, use_cache=False, logits_to_keep=logits_index,
                 paged_step=step).logits[0]


def llama_logits(model: LlamaForCausalLM, input_ids: torch.Tensor, position_ids: torch.Tensor,
                 logits_index: torch.Tensor, step: PagedStep) -> torch.Tensor:
    """Logits [len(logits_index), vocab] of one packed step; input_ids and position_ids are [1, tokens]. Attention
    is the model's implementation, looked up as LlamaAttention does (the paged one, or the model worker's)."""
    attention = ALL_ATTENTION_FUNCTIONS.get_interface(model.config._attn_implementation, paged_attention_forward)
    body, packing = model.model, packing_on(input_ids.device, model.dtype)
    hidden = body.embed_tokens.forward(input_ids[0])
    rotary = _rotary(*body.rotary_emb(hidden, position_ids=position_ids))
    for layer in body.layers[:model.config.num_hidden_layers]:
        hidden = _decoder_layer(_layer(layer), hidden, rotary, step, packing, attention)
    hidden = _rms_norm(_norm_of(body.norm), hidden)
    return _lm_head(model)(hidden[logits_index], packing)


def _lm_head(model: LlamaForCausalLM) -> StackedLinears:
    found = model.__dict__.get("_schedlab_lm_head")
    if found is None:
        found = model.__dict__["_schedlab_lm_head"] = StackedLinears([model.lm_head])
    return found


def pack_weights(model):
    """Pack the weights of every product the direct forward makes now, at load, rather than in the first step
    (for SmolLM2-135M about 0.2 s, and the packed copies it would make then anyway)."""
    if not (supports_direct_forward(model, model.device) and torch.backends.mkldnn.is_available()):
        return
    for layer in model.model.layers[:model.config.num_hidden_layers]:
        found = _layer(layer)
        for stacked in (found.qkv, found.o, found.gate_up, found.down):
            stacked.pack()
    _lm_head(model).pack()
