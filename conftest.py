# Loads the grader for every pytest run in this repository; it stays inert outside katas/.
pytest_plugins = ["harness.plugin"]
