"""head=paper and experiment=paper_table1: every paper-size head builds on CPU with exactly the parameter count that
its preset's comment computes by hand, submodule by submodule; the presets compose with task=X and leave the
CPU-sized defaults alone; the paper experiment selects the full data, the GloVe file and the custom biLM."""
from __future__ import annotations

import ast
import operator
import re
from functools import lru_cache
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.bilm.public import PUBLIC_OPTIONS
from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.data.batch import Batch
from elmo_bench.engine.experiment import load_task
from elmo_bench.tasks.registry import config_files, registered

REPO = Path(__file__).resolve().parents[1]
CONF = REPO / "conf"
TABLE1_TASKS = ("squad", "snli", "srl", "coref", "ner", "sst")
register_resolvers()

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}


def arithmetic(expr: str) -> int:
    """The value of an integer expression of + - * and parentheses (the hand arithmetic of a preset comment)."""
    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Expression):
            return value(node.body)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        raise ValueError(f"not integer arithmetic: {ast.dump(node)}")
    return value(ast.parse(expr, mode="eval"))


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def parse_counts(path: Path) -> tuple[dict[str, int], dict[str, tuple[str, int]], int]:
    """A preset's ``# counted with: k=v ...``, its ``#   submodule: arithmetic = N`` lines and ``#   total: N``."""
    text = path.read_text(encoding="utf-8")
    built = re.search(r"^# counted with: (.+)$", text, re.M)
    assert built, f"{path.name}: no '# counted with:' line"
    settings = {k: int(v) for k, v in (item.split("=") for item in built.group(1).split())}
    block = text[text.index("# params by submodule:"):]
    parts = {m.group(1): (m.group(2), _number(m.group(3)))
             for m in re.finditer(r"^#   ([\w.\-]+): (.+) = ([\d,]+)$", block, re.M)}
    total = re.search(r"^#   total: ([\d,]+)$", block, re.M)
    assert parts and total, f"{path.name}: no submodule lines or no total"
    return settings, parts, _number(total.group(1))


def _compose(overrides: list[str], hydra_cfg: bool = False):
    """The composed config (read-only, cached: the tests compose the same few configs many times)."""
    return _composed(tuple(overrides), hydra_cfg)


@lru_cache(maxsize=None)
def _composed(overrides: tuple[str, ...], hydra_cfg: bool):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        cfg = compose(config_name="config", overrides=list(overrides), return_hydra_config=hydra_cfg)
    OmegaConf.set_readonly(cfg, True)
    return cfg


def _prepared_task(name: str, settings: dict[str, int]):
    """The task with label vocabularies of the sizes the count assumes (invented labels: only their number matters)."""
    task = load_task(registered()[name].resolved_target())
    labels = settings.get("labels")
    if name == "ner":  # O + B-/I- per entity type
        task.fit_labels({"train": [{"tags": [f"B-T{k}" for k in range((labels - 1) // 2)]}]})
    elif name == "srl":
        task.fit_labels({"train": [{"tags": [f"B-ARG{k}" for k in range((labels - 1) // 2)]}]})
    elif name == "coref":
        task.fit_labels({"train": [{"genre": f"g{k}"} for k in range(settings["genres"])]})
    if labels is not None and hasattr(task, "labels"):
        assert len(task.labels) == labels, f"{name}: {len(task.labels)} labels, the count assumes {labels}"
    return task


def _members(prefix: str) -> list[str]:
    """'layers.1-7' → ['layers.1', ..., 'layers.7']; anything else → [prefix]."""
    ranged = re.fullmatch(r"(.+)\.(\d+)-(\d+)", prefix)
    if not ranged:
        return [prefix]
    return [f"{ranged.group(1)}.{k}" for k in range(int(ranged.group(2)), int(ranged.group(3)) + 1)]


@pytest.mark.parametrize("name", TABLE1_TASKS)
def test_paper_head_parameter_count_matches_the_hand_count(name: str) -> None:
    settings, parts, total = parse_counts(config_files("head_preset")[f"paper_{name}"])
    for part, (expr, written) in parts.items():
        assert arithmetic(expr) == written, f"paper_{name}.yaml, {part}: {expr} is {arithmetic(expr):,}, not {written:,}"
    assert sum(v for _, v in parts.values()) == total, f"paper_{name}.yaml: the submodules do not add up to the total"

    cfg = _compose([f"task={name}", "head=paper"])
    head_cfg = OmegaConf.to_container(cfg.task.head, resolve=True)
    task = _prepared_task(name, settings)
    head = task.build_head(head_cfg, {f: settings["input_dim"] for f in task.text_fields}, settings["elmo_output_dim"])
    counted: dict[str, int] = {}
    for param_name, param in head.named_parameters():
        owner = [p for p in parts for m in _members(p) if param_name == m or param_name.startswith(m + ".")]
        assert len(owner) == 1, f"{name}: parameter {param_name} is counted by {owner or 'no line'}"
        counted[owner[0]] = counted.get(owner[0], 0) + param.numel()
    assert {p: v for p, (_, v) in parts.items()} == counted
    assert sum(p.numel() for p in head.parameters()) == total


def test_every_task_has_a_paper_preset_and_head_paper_composes_with_it() -> None:
    tasks = sorted(config_files("task"))
    assert sorted(name.removeprefix("paper_") for name in config_files("head_preset")) == tasks == sorted(registered())
    for name in tasks:
        cfg = _compose([f"task={name}", "head=paper"], hydra_cfg=True)
        assert cfg.task.name == name and cfg.hydra.runtime.choices["head_preset@task"] == f"paper_{name}"
        assert "head" not in cfg                                      # head=paper adds no key of its own


@pytest.mark.parametrize("name, key, cpu, paper", [
    ("srl", "layers", 4, 8), ("srl", "hidden", 100, 300), ("coref", "max_antecedents", 50, 250),
    ("coref", "hidden", 100, 200), ("coref", "char_cnn", True, True), ("coref", "use_speakers", False, True), ("snli", "hidden_dim", 100, 300),
    ("ner", "lstm_hidden", [100, 100], [200, 100]), ("squad", "hidden_dim", 45, 90), ("sst", "encoder_hidden", 100, 300),
])
def test_cpu_heads_stay_the_default(name: str, key: str, cpu, paper) -> None:
    default = OmegaConf.to_container(_compose([f"task={name}"]).task, resolve=True)
    sized = OmegaConf.to_container(_compose([f"task={name}", "head=paper"]).task, resolve=True)
    assert default["head"][key] == cpu and sized["head"][key] == paper
    assert default["elmo"] == sized["elmo"]                           # the paper's ELMo settings either way


@pytest.mark.parametrize("name, optimizer, lr, batch", [
    ("squad", "adadelta", 1.0, 45), ("snli", "adam", 0.0004, 32), ("srl", "adadelta", 1.0, 80),
    ("coref", "adam", 0.001, 1), ("ner", "adam", 0.001, 32), ("sst", "adam", 0.0001, 32)])
def test_paper_optimisers(name: str, optimizer: str, lr: float, batch: int) -> None:
    trainer = _compose([f"task={name}", "head=paper"]).task.trainer
    assert (trainer.optimizer, trainer.lr, trainer.batch_size) == (optimizer, lr, batch)


def test_paper_table1_sweep_data_glove_and_biLM() -> None:
    extra = ["paths.glove=/data/glove.840B.300d.txt", "bilm.options=/data/o.json", "bilm.weights=/data/w.hdf5"]
    cfg = _compose(["experiment=paper_table1", *extra], hydra_cfg=True)
    params = [f"{k}={v}" for k, v in cfg.hydra.sweeper.params.items()]
    jobs = BasicSweeper.split_arguments(OverridesParser.create().parse_overrides(params), None)[0]
    assert len(jobs) == 6 * 2 * 5
    assert {o.split("=")[1] for job in jobs for o in job if o.startswith("task=")} == set(TABLE1_TASKS)
    assert OmegaConf.to_container(cfg.hydra.sweep, resolve=False)["dir"] == "${paths.results_dir}/paper_table1"
    data = {"squad": "squad", "snli": "snli", "srl": "conll2012_srl", "coref": "conll2012_coref", "ner": "conll2003",
            "sst": "sst"}
    for name, dataset in data.items():
        job = _compose(["experiment=paper_table1", f"task={name}", "embedder=glove_elmo", *extra], hydra_cfg=True)
        resolved = {k: OmegaConf.to_container(job[k], resolve=True) for k in ("data", "embedder", "bilm")}
        assert resolved["data"]["name"] == dataset
        assert job.hydra.runtime.choices["head_preset@task"] == f"paper_{name}"
        assert resolved["embedder"]["glove_source"] == "file"
        assert resolved["embedder"]["glove_path"] == "/data/glove.840B.300d.txt"
        assert resolved["bilm"] == {"name": "custom", "options": "/data/o.json", "weights": "/data/w.hdf5"}
    srl = _compose(["experiment=paper_table1", "task=srl", *extra]).task
    assert (srl.head.layers, srl.head.hidden, srl.trainer.optimizer) == (8, 300, "adadelta")


def test_glove_path_is_not_part_of_a_run_name() -> None:
    cfg = _compose(["task=ner", "head=paper", "paths.glove=/a/very/long/glove.840B.300d.txt"], hydra_cfg=True)
    assert "paths.glove" in cfg.hydra.job.config.override_dirname.exclude_keys


def test_paper_coref_head_uses_chars_speakers_and_genre() -> None:
    """The paper's coref features at their paper sizes on an invented two-sentence document: the speaker and genre
    embeddings reach the antecedent scores (changing either changes them), the char CNN reads the char ids."""
    torch.manual_seed(0)
    task = _prepared_task("coref", {"genres": 7})
    head_cfg = OmegaConf.to_container(_compose(["task=coref", "head=paper"]).task.head, resolve=True)
    head = task.build_head(head_cfg, {"tokens": 12}, 0).eval()
    n = 9
    embedded = {"tokens": torch.randn(1, n, 12)}
    mask = {"tokens": torch.ones(1, n, dtype=torch.bool)}
    chars = {"tokens": torch.randint(1, 262, (1, n, 50))}
    base = {"sentence_ids": torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1, 1]]),
            "speaker_ids": torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1, 1]]), "genre": torch.tensor([2])}

    def scores(targets: dict, char_ids: dict = chars) -> torch.Tensor:
        with torch.no_grad():
            return head(Batch.of(embedded, mask, chars=char_ids, targets=targets))["antecedent_scores"]

    reference = scores(base)
    assert torch.equal(reference, scores(dict(base)))                           # deterministic in eval mode
    assert not torch.allclose(reference, scores({**base, "speaker_ids": torch.zeros(1, n, dtype=torch.long)}))
    assert not torch.allclose(reference, scores({**base, "genre": torch.tensor([5])}))
    assert not torch.allclose(reference, scores(base, {"tokens": torch.randint(1, 262, (1, n, 50))}))
    with pytest.raises(ValueError, match="built with a character CNN but the batch has no chars"):
        head(Batch.of(embedded, mask, chars={}, targets=base))


def test_public_elmo_options_give_the_1024_dims_the_counts_assume() -> None:
    """The paper's biLM (options of elmo_2x4096_512_2048cnn_2xhighway, as published with the weights): 2 x 512
    projections = the 1024-d ELMo vectors every count above adds to GloVe's 300."""
    options = BiLMOptions.from_dict(PUBLIC_OPTIONS, "elmo_2x4096_512_2048cnn_2xhighway_options.json")
    assert (options.output_dim, options.n_filters, options.n_layers) == (1024, 2048, 2)
    for name in TABLE1_TASKS:
        settings, _, _ = parse_counts(config_files("head_preset")[f"paper_{name}"])
        assert settings["input_dim"] == 300 + options.output_dim
        assert settings["elmo_output_dim"] in (0, options.output_dim)
