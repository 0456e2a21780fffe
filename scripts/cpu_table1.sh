#!/usr/bin/env bash
# Table 1 on this project's CPU budget: each task's baseline and +ELMo with the same data and budget.
# Usage: scripts/cpu_table1.sh [embedder ...]   (default: glove glove_elmo); results under results/cpu_table1/.
# The budgets below are what the README's numbers used (2-core CPU, one thread per run).
set -euo pipefail
cd "$(dirname "$0")/.."
embedders=("${@:-glove glove_elmo}")
embedders=$(echo ${embedders[@]} | tr ' ' ',')
common="logger=disabled progress=false threads=1 hydra.sweep.dir=results/cpu_table1"
declare -A budget=(
  [ner]="trainer.max_epochs=4"
  [sst]="data.fraction=0.1 trainer.max_epochs=6 trainer.lr=0.001"
  [snli]="trainer.max_epochs=5"
  [squad]="data.fraction=0.5 trainer.max_epochs=2"
  [srl]="data.fraction=0.1 trainer.max_epochs=3"
  [coref]="trainer.max_epochs=6"
)
for task in ${TASKS:-ner sst snli squad srl coref}; do
  python run.py -m task=$task embedder=$embedders ${budget[$task]} $common
done
