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
# page 04: the counter is recorded with the first latent
counter_offset_first_event = "d01"
