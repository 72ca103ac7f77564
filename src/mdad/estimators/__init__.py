"""Estimators of a target's pool accuracy from a sample of its answers."""
