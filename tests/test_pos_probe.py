"""The POS probe: a tag planted in one layer is found in that layer; the engine runs task=pos end to end."""
from __future__ import annotations

import numpy as np
import torch

from elmo_bench.engine.collate import Collator
from elmo_bench.engine.loop import TaskModel, TrainerConfig, evaluate, fit
from elmo_bench.modules.token_embedders import TaskEmbedder
from elmo_bench.records.elmo_settings import ElmoSettings
from elmo_bench.tasks.pos.model import LinearTagger
from elmo_bench.tasks.pos.task import PosTask
from tests.conftest import REPO, needs_fixtures
from tests.helpers_heads import call

TAGS = ["A", "B", "C", "D"]
LAYERS, DIM = 3, 8


class PlantedLayers:
    """(L+1, n, dim) per sentence: layer 1 holds the tag as a scaled one-hot plus noise, the others only noise."""

    def __init__(self, examples, seed):
        rng = np.random.default_rng(seed)
        self.arrays = []
        for ex in examples:
            array = rng.normal(0, 1, (LAYERS, len(ex["tokens"]), DIM)).astype(np.float32)
            for t, tag in enumerate(ex["tags"]):
                array[1, t, TAGS.index(tag)] += 4.0
            self.arrays.append(array)

    def get(self, index):
        return self.arrays[index]


def _examples(n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        tags = [TAGS[k] for k in rng.integers(0, 4, size=int(rng.integers(3, 8)))]
        out.append({"id": f"s{i}", "tokens": [f"w{j}" for j in range(len(tags))], "tags": tags, "_index": i})
    return out


def test_planted_signal_is_found_in_its_layer(tmp_path):
    torch.manual_seed(0)
    train, dev = _examples(80, 1), _examples(30, 2)
    sources = {"train": {"tokens": PlantedLayers(train, 3)}, "dev": {"tokens": PlantedLayers(dev, 4)}}
    accuracy = {}
    for layer in range(LAYERS):
        task = PosTask()
        task.fit_labels({"train": train})
        embedder = TaskEmbedder(None, False, ElmoSettings(mode="layer", layer_index=layer, dropout=0.0), LAYERS, DIM)
        model = TaskModel(embedder, task.build_head({"bias": True}, {"tokens": embedder.input_dim}, embedder.output_dim))
        cfg = TrainerConfig(lr=0.05, batch_size=16, max_epochs=8, patience=8, grad_clip=None, progress=False)
        fit(model, task, train, dev, Collator(task, None, sources["train"]), Collator(task, None, sources["dev"]),
            cfg, tmp_path / f"layer{layer}", seed=1)
        accuracy[layer] = evaluate(model, task, dev, Collator(task, None, sources["dev"]), 64)[0]["accuracy"]
    assert max(accuracy, key=accuracy.get) == 1, accuracy
    assert accuracy[1] > 95 and accuracy[0] < 50 and accuracy[2] < 50, accuracy


def test_head_loss_ignores_padding_and_unseen_tags():
    head = LinearTagger(2, 3, bias=True)
    with torch.no_grad():
        head.proj.weight.copy_(torch.tensor([[1.0, 0, 0], [0, 1.0, 0]]))
        head.proj.bias.zero_()
    x = torch.tensor([[[2.0, 0, 0], [0, 2.0, 0], [9.0, 9.0, 9.0]]])
    mask = torch.tensor([[True, True, False]])
    out = call(head, {"tokens": x}, {"tokens": mask}, {"tokens": None}, None, {"tags": torch.tensor([[0, -100, 1]])})
    expected = -torch.log_softmax(torch.tensor([2.0, 0.0]), 0)[0]  # only the first token counts
    assert torch.allclose(out["loss"], expected)
    assert out["predicted"].tolist() == [[0, 1, -1]]
    task = PosTask()
    task.labels = ["NN", "VB"]
    assert task.decode(out, [{"tokens": ["a", "b"]}]) == [["NN", "VB"]]
    assert task.targets([{"tokens": ["a", "b"], "tags": ["VB", "XX"]}])["tags"].tolist() == [[1, -100]]
    assert task.metric([["NN", "VB"]], [{"tags": ["NN", "XX"]}]) == {"accuracy": 50.0}


@needs_fixtures
def test_engine_runs_pos_on_one_layer(tmp_path):
    from hydra import compose, initialize_config_dir

    from elmo_bench.commands.hydra_setup import register_resolvers
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment

    register_resolvers()
    rows = ["1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_", "2\tdog\tdog\tNOUN\tNN\t_\t3\tnsubj\t_\t_",
            "3\truns\trun\tVERB\tVBZ\t_\t0\troot\t_\t_"]
    sample = tmp_path / "s.conllu"
    sample.write_text(("\n".join(rows) + "\n\n") * 6)
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[
            "task=pos", "data=default_pos", "embedder=elmo", "mix=layer", "mix.layer=2", "bilm=fixture",
            "logger=disabled", "progress=false", f"paths.cache_dir={tmp_path / 'cache'}", "trainer.max_epochs=1",
            f"data.train={sample}", f"data.dev={sample}", f"data.test={sample}",
            "data.allow_identical_splits=true"])  # one sample file for every split, on purpose
    result = run_experiment(run_config(cfg), tmp_path / "run")
    assert result["task"] == "pos" and 0.0 <= result["metrics"]["test"]["accuracy"] <= 100.0
    assert result["mixes"]["input"]["weights"] == [0.0, 0.0, 1.0] and result["elmo"]["dropout"] == 0.0
