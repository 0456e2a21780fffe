"""tests/hydra_speedup.py changes no composition: configs that use interpolated defaults (the probe budgets and
presets, experiments, sweeps' fixed parts) and plain ones compose to the same YAML with Hydra's own map and with the
one built only where read."""
from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from elmo_bench.commands.compose import compose_job
from tests import hydra_speedup

JOBS = [["task=ner"], ["task=srl", "embedder=elmo", "mix=learned"], ["probe=structural", "budget=cpu"],
        ["probe=mdl", "budget=cpu", "probe_set=suite"], ["experiment=probe_suite", "probe=pos_controls"],
        ["experiment=table1", "task=snli"], ["task=edge_dep", "encoder=transformers", "encoder.path=bert-base-cased"]]


@pytest.mark.parametrize("job", JOBS, ids=[" ".join(j) for j in JOBS])
def test_the_lazy_choice_map_composes_what_hydra_composes(job):
    hydra_speedup.uninstall()
    try:
        plain = OmegaConf.to_yaml(compose_job(job, files=False, check=False))
    finally:
        hydra_speedup.install()
    assert OmegaConf.to_yaml(compose_job(job, files=False, check=False)) == plain
    assert "probe" not in job[0] or "max_train_sentences" in plain      # an interpolated default was applied
