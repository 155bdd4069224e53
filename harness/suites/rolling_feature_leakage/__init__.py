"""Hidden suite of the rolling_feature_leakage kata."""
