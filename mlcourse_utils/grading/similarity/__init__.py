"""Answers alike beyond renaming: fingerprints, pairs and their report."""
