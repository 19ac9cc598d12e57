"""Solutions to the extend exercises: variants the pages do not show and the kit does not contain."""

import numpy as np


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
