"""Builds from source of systems no registry offers (invoke byo)."""
