"""Hidden suite of the speculative_sampling kata."""
