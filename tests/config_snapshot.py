"""The composed configs that tests/test_typed_configs.py compares with tests/golden/composed_configs.json: the
resolved config (``OmegaConf.to_container``) of a few command lines, with the machine's roots replaced by
placeholders. Run as a script to rewrite the golden file (only when a config change is meant to show)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from elmo_bench.base.paths import DATA_ROOT, REPO
from elmo_bench.commands.hydra_setup import register_resolvers

GOLDEN = Path(__file__).resolve().parent / "golden" / "composed_configs.json"
COMMANDS: list[list[str]] = [
    [f"task={task}", *extra] for task in ("ner", "sst", "snli", "squad", "srl", "coref", "pos")
    for extra in ([], ["head=paper"], ["budget=cpu"], ["head=paper", "budget=cpu", "embedder=glove"])
] + [
    ["experiment=quickstart"], ["experiment=table1"], ["experiment=table2"], ["experiment=table3"],
    ["experiment=sample_efficiency"], ["experiment=probe_pos"], ["experiment=paper_table1"],
    ["task=ner", "mix=layer", "mix.layer=0"], ["task=ner", "mix=top"], ["task=ner", "mix=average"],
    ["task=ner", "mix.dropout=0.25", "mix.lambda=0.001", "mix.gamma_init=1.0", "mix.placement=both"],
    ["task=ner", "mix.layer_norm=false", "trainer=quick"],
    ["task=ner", "trainer.lr=0.002", "trainer.batch_size=8", "trainer.max_epochs=3", "trainer.min_epochs=2",
     "trainer.patience=2", "trainer.scale_epochs=true", "trainer.max_scaled_epochs=20", "trainer.rho=0.9"],
    ["task=srl", "head=paper", "trainer.rho=0.5", "trainer.grad_clip=null"],
    ["experiment=table2", "task=srl", "variant=lambda_1"], ["experiment=table2", "variant=baseline"],
    ["experiment=table2", "task=snli", "variant=last_only"], ["experiment=table3", "mix.placement=output"],
    ["task=pos", "embedder=elmo", "mix=layer", "mix.layer=2"], ["task=sst", "head=paper", "budget=cpu",
                                                                 "trainer.lr=0.01", "trainer.optimizer=adadelta"],
    ["task=coref", "head=paper", "task.head.max_antecedents=100", "mix.lambda=1.0", "mix.layer_norm=true"],
    ["task=squad", "data=squad", "trainer.weight_decay=0.01", "trainer.eval_batch_size=16", "mix.gamma_init=0.5"],
    # issue 38: edge probing (jiant's plateau halving of the lr in the task's trainer block)
    ["task=edge_pos", "embedder=elmo"], ["task=edge_srl", "embedder=elmo", "budget=cpu", "mix=cumulative",
                                         "mix.layer=1"],
]


def composed(overrides: list[str]) -> dict[str, Any]:
    """The resolved config of ``python run.py OVERRIDES`` (without Hydra's own node), roots as placeholders."""
    register_resolvers()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=overrides)
    text = json.dumps(OmegaConf.to_container(cfg, resolve=True))
    return json.loads(text.replace(str(DATA_ROOT), "<DATA_ROOT>").replace(str(REPO), "<REPO>"))


def snapshot() -> dict[str, Any]:
    return {" ".join(overrides): composed(overrides) for overrides in COMMANDS}


if __name__ == "__main__":
    GOLDEN.write_text(json.dumps(snapshot(), indent=1, sort_keys=False) + "\n")
    print(f"wrote {GOLDEN}", file=sys.stderr)
