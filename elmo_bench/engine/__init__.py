"""One supervised experiment, task-agnostic: assembly (experiment.py), the training loop (loop.py), collate,
run identity and resume, training-data fractions, re-evaluation of a finished run, wandb logging."""
