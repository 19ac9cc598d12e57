"""One request among many: a paged KV cache and a continuous-batching scheduler (issue 45)."""
