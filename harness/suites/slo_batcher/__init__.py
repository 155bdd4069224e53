"""Hidden suite of the slo_batcher kata."""
