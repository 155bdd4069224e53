"""Hidden suite of the compatible_batcher kata."""
