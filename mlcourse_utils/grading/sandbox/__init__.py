"""One student's isolated run: isolation, cgroups, the image, the runner, its channel."""
