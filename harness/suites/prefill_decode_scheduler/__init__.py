"""Hidden suite of the prefill_decode_scheduler kata (a package, so helpers import relatively)."""
