"""What people read: feedback pages, manual-grading pages, the class report."""
