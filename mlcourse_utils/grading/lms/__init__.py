"""What goes back to the LMS: grade files and the feedback zip (Canvas, Moodle)."""
