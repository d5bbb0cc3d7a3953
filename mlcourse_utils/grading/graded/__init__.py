"""The graded folder (OUT) and its data: results, gradebook, reasons, late policy."""
