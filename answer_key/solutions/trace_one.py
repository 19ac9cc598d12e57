"""Worked solutions of the preface and trace one (pages 00–03), as a student would hand them in."""

import numpy as np

from labkit.nn import attention, rms_norm, rope

# preface: [3, 4, 0, 0] has mean square 25/4, root 2.5
rms_norm_row = 3 / 2.5

# page 02: the first event whose content depends on the EOS mask is the first token.selected
eos_fault_first_event = "e05"

# page 03: EOS is never allowed, so the selection first differs where the correct run picks EOS (step 5)
eos_in_control_step = 5


def cut_off_events(events):
    """An event stays in the tree only through a parent that is an earlier event still in it."""
    connected = set()
    cut = []
    for index, event in enumerate(events):
        parent = event["parent_event_id"]
        if parent in connected or (index == 0 and parent is None):
            connected.add(event["event_id"])
        else:
            cut.append(event["event_id"])
    return cut


def no_repeat_ngram_mask(logits, selected, n):
    masked = np.array(logits, copy=True)
    history = list(selected)
    if len(history) < n - 1:
        return masked
    tail = history[len(history) - (n - 1) :]
    for start in range(len(history) - n + 1):
        if history[start : start + n - 1] == tail:  # the tail occurred here before: what followed it is banned
            masked[history[start + n - 1]] = -np.inf
    return masked


def largest_min_p(logits, k):
    # p_i / p_max = exp(z_i − z_max): the k-th largest logit sets the largest min_p that keeps k tokens
    z = np.sort(np.asarray(logits, dtype=np.float64))
    return float(np.exp(z[-k] - z[-1]))


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
        keys = np.repeat(keys, cfg.group_size, axis=1)  # each query head reads its group's K/V head
        values = np.repeat(values, cfg.group_size, axis=1)
        everything = np.ones((1, keys.shape[-2]), dtype=bool)  # the newest token may see every cached key
        mixed, _ = attention(q, keys, values, everything)
        x = x + mixed.transpose(0, 2, 1, 3).reshape(1, 1, -1) @ layer["o"]
        h = rms_norm(x, cfg.norm_eps)
        gate = h @ layer["gate"]
        x = x + (gate / (1 + np.exp(-gate)) * (h @ layer["up"])) @ layer["down"]
    return (rms_norm(x, cfg.norm_eps) @ weights.output)[0, 0]
