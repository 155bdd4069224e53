"""Hidden suite of the paged_kv_cache kata."""
