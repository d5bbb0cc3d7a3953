"""Grading a class: batch, progress, merge, a notebook's session, analysis, references, release."""
