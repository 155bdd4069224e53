"""Hidden suite of the inference_router kata."""
