"""Answers to the predict and derive exercises, worked out by hand (the checker compares each
with what the real kernels and runtimes compute)."""

import math

# preface: [3, 4, 0, 0] has mean square 25/4, root 2.5
rms_norm_row = 3 / 2.5
# page 02: the first event whose content depends on the EOS mask is the first token.selected
eos_fault_first_event = "e05"
# page 03: the raw logits agree; the first selection whose masked IDs differ
eos_in_control_step = 1
# page 07: the proposal is first read when it is parsed
extra_field_first_event = "t02"
# page 08: canonical JSON sorts the keys
digest_changes_on_reorder = False
# page 09: the template and schema, up to where the user text differs
reuse_for_other_request = 76
# page 10: the commit happened; the client's record of it is the first to differ
lost_response_first_event = "t09"
# page 11: the batch order is recorded in the condition event
cfg_swap_divergence = ("d00", "cfg_batch_order[0]")
# page 12: eight fixed events, a selection and a delta per token, a decode step between two tokens
three_token_event_count = 8 + 2 * 3 + 2 * (3 - 1)
# lab 01: −ln(1/3); gradient [1/3 − 1, 1/3, 1/3]
uniform_row_loss = math.log(3)
uniform_row_gradient = (-2 / 3, 1 / 3, 1 / 3)
# lab 02: 7 predictions, 2 borders
packed_zero_predictions = 2
# lab 03: scores 10/√2 and 0
scaled_query_weight = 1 / (1 + math.exp(-10 / math.sqrt(2)))
# lab 04: 4 + 3 positions; 2 (K, V) · 2 layers · 2 heads · 7 · 4 · 8 bytes
cache_length_after_step_3 = 7
lab_cache_bytes = 2 * 2 * 2 * 7 * 4 * 8
# lab 06: margin m = 1 > 0, so a larger β·m lowers −log σ(β·m); ∂L/∂π_w = −β·σ(−β·m)
dpo_loss_when_beta_doubles = "falls"
_g = -0.5 / (1 + math.exp(0.5))
dpo_gradient_at_point = (_g, -_g)
# lab 07: (1 − 1/8)/√(7/64) = √7; for ρ = 5, ρÂ = −10 < c·Â = −6
lone_success_advantage = math.sqrt(7)
dual_clip_value = -6.0
# lab 08
kl_by_hand = 0.9 * math.log(1.8) + 0.1 * math.log(0.4)
# lab 09: β = 1 − (0.2 + 0.3); E = 1 + α + α² + α³ with α = 0.5
rejection_probability = 0.5
tokens_per_target_call = 1 + 0.5 + 0.25 + 0.125
# lab 09: E = Σ_{j=0..k} α^j = (1 − α^{k+1}) / (1 − α) at α = 0.8, k = 4
tokens_at_general_alpha = (1 - 0.8**5) / (1 - 0.8)
# lab 10: (7e9 + 8 · 2·32·8192·8·128) bytes / 1e12 B/s, in ms
quantised_batch8_ms = (7e9 + 8 * 2 * 32 * 8192 * 8 * 128) / 1e12 * 1000
# lab 11: rank means (1/2 − 1)/1 and (1/2·7 − 1)/7
moved_token_naive_average = (-0.5 + 2.5 / 7) / 2
# lab 13
doubling_factor = 2**2
# lab 08: q puts mass on the third outcome, which p rules out: KL(q ‖ p) is infinite
finite_direction = "pq"
