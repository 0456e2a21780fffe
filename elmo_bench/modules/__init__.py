"""Neural components shared by the task heads."""
