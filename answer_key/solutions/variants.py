"""Solutions to the extend exercises: variants the pages do not show and the kit does not contain."""

import numpy as np


def jittered_backoff(attempt, base_ms, cap_ms, u):
    return u * min(cap_ms, base_ms * 2**attempt)


def sliding_window_mask(document_ids, window):
    ids = np.asarray(document_ids)
    distance = np.arange(ids.size)[:, None] - np.arange(ids.size)[None, :]
    return (ids[:, None] == ids[None, :]) & (distance >= 0) & (distance < window)


def rloo_advantages(rewards):
    r = np.asarray(rewards, dtype=np.float64)
    others = (r.sum(axis=-1, keepdims=True) - r) / (r.shape[-1] - 1)
    return r - others


def kl_from_logits(z_p, z_q):
    def log_softmax(z):
        z = np.asarray(z, dtype=np.float64) - np.max(z)
        return z - np.log(np.sum(np.exp(z)))

    log_p, log_q = log_softmax(z_p), log_softmax(z_q)
    return float(np.sum(np.exp(log_p) * (log_p - log_q)))


def fixed_log_softmax(z):
    z = np.asarray(z, dtype=np.float64)
    shifted = z - np.max(z, axis=-1, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=-1, keepdims=True))
