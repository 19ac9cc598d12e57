"""Answers to the predict and derive exercises, worked out by hand (the checker compares each
with what the real kernels and runtimes compute)."""

import math

# page 04: 1·4·64·64 = 16384 normals, four per block
philox_blocks_for_latent = 16384 // 4
# page 05: ε_u + w(ε_c − ε_u) = ε_c + (w − 1)(ε_c − ε_u), w = 5
cfg_other_convention = 5 - 1
cfg_scale_one = "conditional"
# page 06: x̂₀ = (1 − √0.75)/0.5, z₁ = 0.8·x̂₀ + 0.6·1 (and the mirror image)
_x0 = (1 - math.sqrt(0.75)) / 0.5
x0_fed_as_epsilon = (0.8 * _x0 + 0.6, -(0.8 * _x0 + 0.6))
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
# page 04: the counter is recorded with the first latent
counter_offset_first_event = "d01"
# lab 08: q puts mass on the third outcome, which p rules out: KL(q ‖ p) is infinite
finite_direction = "pq"
