"""Hidden suite of the padded_attention kata."""
