"""Engines that run a kata's reference solution on a real model (the ToyLM), end to end."""
