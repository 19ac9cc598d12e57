"""Solutions for trace one (§7.2–7.5): the minimum-length EOS mask and one cached decode step."""

import numpy as np

from labkit.nn import attention, rms_norm, rope


def minimum_length_eos_mask(logits, context):
    settings = context.config
    masked = np.array(logits, copy=True)
    if len(context.selected_so_far) < settings.minimum_output_tokens:
        masked[settings.eos_id] = -np.inf
    return masked


def decode_one(decoder, cache, token_id):
    cfg, weights = decoder.config, decoder.weights
    position = np.array([cache.length])  # the step-start convention: feed at L = cache length

    def heads(x, n):  # [1, 1, n·d_h] → [1, n, 1, d_h]
        return x.reshape(1, 1, n, cfg.head_dim).transpose(0, 2, 1, 3)

    x = weights.embedding[[[token_id]]]  # [1, 1, d]
    for index, layer in enumerate(weights.layers):
        h = rms_norm(x, cfg.norm_eps)
        q = rope(heads(h @ layer["q"], cfg.n_q_heads), position, cfg.rope_base)
        k = rope(heads(h @ layer["k"], cfg.n_kv_heads), position, cfg.rope_base)
        v = heads(h @ layer["v"], cfg.n_kv_heads)
        keys, values = cache.append(index, k, v)  # [1, H_kv, L + 1, d_h]
        keys = np.repeat(keys, cfg.group_size, axis=1)  # each query head reads its shared K/V head
        values = np.repeat(values, cfg.group_size, axis=1)
        everything = np.ones((1, keys.shape[-2]), dtype=bool)  # the newest token may see every cached key
        mixed, _ = attention(q, keys, values, everything)
        x = x + mixed.transpose(0, 2, 1, 3).reshape(1, 1, -1) @ layer["o"]
        h = rms_norm(x, cfg.norm_eps)
        gate = h @ layer["gate"]
        x = x + (gate / (1 + np.exp(-gate)) * (h @ layer["up"])) @ layer["down"]
    return (rms_norm(x, cfg.norm_eps) @ weights.output)[0, 0]
