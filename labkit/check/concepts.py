"""The first-level hint of every exercise: the idea to revisit, never the formula.

A wrong answer first shows only *where* it diverges, both values and one of these lines.
The exercise's rule and its precise, case-specific hint (which often state the formula)
come on request (``result.more()``) or on the second wrong run of the same exercise: a
reader who is told the answer at once has nothing left to work out.
"""

from __future__ import annotations

CONCEPTS: dict[str, str] = {
    "bad_parents": "an event may only point back at an event that happened before it",
    "cached_attention_step": "a cached step must see exactly what the full pass sees at that position: "
    "everything before it and itself",
    "cached_path_agrees": "two ways of computing the same logits agree up to float rounding, never bit for bit",
    "causal_self_attention": "causal attention: each position weighs only the past and itself, "
    "and the weights of a row are a probability distribution",
    "cfg_combine": "classifier-free guidance starts from one prediction and moves it along the "
    "difference between the two conditions",
    "compensated_local_gradients": "the all-reduce averages over ranks, but the loss averages over tokens; "
    "ranks hold different numbers of tokens",
    "ddim_update": "a DDIM step first estimates the clean latent, then re-noises it to the previous "
    "timestep's noise level",
    "decode_one": "one decode step is the full pass restricted to the newest position, reading the "
    "earlier positions from the cache",
    "decode_step_lower_bound_ms": "a decode step has to stream every byte it reads through memory once: "
    "count the bytes, then divide by the bandwidth",
    "digest_matches": "an approval binds to one exact request: compare what was approved with what is about to run",
    "distinct_layer_keys": "every layer computes its own keys; compare numbers, not array identity",
    "document_causal_mask": "packing several documents into one row must not let them see each other",
    "dpo_gradient": "DPO pushes the chosen answer up and the rejected one down, more strongly the "
    "more the current policy still prefers the wrong one",
    "grpo_advantages": "a GRPO advantage says how much better one answer is than the others of its own group",
    "idempotent_execute": "an idempotency key turns a retry into a lookup: perform once, then answer from "
    "what was stored, and refuse a different request under the same key",
    "integer_field_mask": "constrained decoding allows a piece only if the document can still be completed "
    "into a valid one",
    "kl_divergence": "KL(p ‖ q) is an expectation under p: outcomes p never produces do not count",
    "masked_ce_gradient": "the gradient of cross-entropy with respect to the logits compares what the "
    "model predicts with what was right, and only supervised rows count",
    "minimum_length_eos_mask": "a logits processor changes only the entries its rule names, and only "
    "while its condition holds",
    "name_the_fault": "compare the two traces event by event: the first divergence names the stage at fault",
    "packed_prediction_mask": "a prediction pairs a token with the next one; it only counts when both "
    "belong to the same document",
    "report_problems": "validate before you read: a damaged document deserves a list of problems, not a crash",
    "reusable_prefix": "a cached key depends on every token before it, so reuse stops at the first difference",
    "rms_norm": "RMSNorm rescales each vector by its root-mean-square; where eps enters matters",
    "speculative_parts": "speculative sampling keeps the target's distribution: the target verifies the "
    "draft, and rejected mass is redistributed where the target wanted more",
    "words_to_normals": "random words become uniforms strictly inside (0, 1), then pairs of uniforms "
    "become pairs of normals",
    "growth_exponent": "a power law is a straight line once both axes are logarithmic",
}
