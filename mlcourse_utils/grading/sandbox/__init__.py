"""One student's isolated run: isolation, its root, cgroups, the image, the runner, its channel."""
