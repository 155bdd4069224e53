"""Hidden suite of the tenant_fair_queue kata."""
