"""Solutions to the extend exercises: variants the pages do not show and the kit does not contain."""

import numpy as np


def min_p_filter(logits, min_p):
    z = np.asarray(logits, dtype=np.float64)
    return np.where(z - z.max() >= np.log(min_p), z, -np.inf)


def jittered_backoff(attempt, base_ms, cap_ms, u):
    return u * min(cap_ms, base_ms * 2**attempt)


def sliding_window_mask(document_ids, window):
    ids = np.asarray(document_ids)
    distance = np.arange(ids.size)[:, None] - np.arange(ids.size)[None, :]
    return (ids[:, None] == ids[None, :]) & (distance >= 0) & (distance < window)


def fixed_log_softmax(z):
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
