"""Hidden suite of the sync_batch_scheduler kata."""
