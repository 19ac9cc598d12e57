"""The worked answer of page 07-13's prediction (one request among many)."""

# At 8 blocks the pool is full at step 3, when req-late is still waiting: the running request
# admitted last, req-long, gives its blocks back.
first_preemption_at_capacity_8 = ["req-long", 3]
