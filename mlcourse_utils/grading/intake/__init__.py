"""What `mlcourse grade` reads: archives, the roster, submissions, their times."""
