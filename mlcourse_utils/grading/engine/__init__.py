"""Grading a class: the batch, one notebook's session, analysis, references, release."""
