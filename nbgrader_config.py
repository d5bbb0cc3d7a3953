"""nbgrader configuration: instructor notebooks in solutions/, student notebooks in exercises/."""

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
# In the course folder itself (git-ignored): plain `nbgrader generate_assignment` works in a
# fresh clone, where no _build/ exists yet.
c.CourseDirectory.db_url = "sqlite:///gradebook.db"
c.CourseDirectory.course_id = "probabilistic-ml"
# Student versions of notebooks carry no outputs, so regeneration is deterministic.
c.ClearOutput.enabled = True
# Instructor-only references that hidden tests compare with (solutions/NAME/instructor_reference.py)
# are never copied into the student release.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            "instructor_reference.py"]
