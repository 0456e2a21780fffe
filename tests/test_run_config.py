"""Issue 35 item 1: one frozen, typed RunConfig made at the door (engine.config_door.run_config), the overlay rule
applied once (mix over the task's elmo block, the trainer group over the task's trainer block, presets), each part
validating itself with the door's one-line errors; ``elmo-bench config`` prints it."""
from __future__ import annotations

import dataclasses
import json

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf, open_dict

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.commands.main import main
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.run_config import MixPart, RunConfig, Runtime, Training, check_run
from elmo_bench.engine.trainer_config import TrainerConfig
from elmo_bench.records.elmo_settings import canonical_mix
from tests.conftest import REPO

register_resolvers()


def _compose(*overrides: str):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=list(overrides))
    with open_dict(cfg):
        cfg.data.name = cfg.data.get("name") or "x"
    return cfg


def test_the_mix_overrides_the_tasks_elmo_block_where_set_and_the_task_value_stays_elsewhere():
    run = run_config(_compose("task=ner", "mix.dropout=0.25"))
    # conf/task/ner.yaml: lambda 0.1, layer_norm true, gamma_init 0.25, dropout 0.5 (replaced by the mix's 0.25)
    assert (run.task.elmo.dropout, run.task.elmo.l2_coef, run.task.elmo.layer_norm, run.task.elmo.gamma_init,
            run.task.elmo.placement, run.task.elmo.mode) == (0.25, 0.1, True, 0.25, "input", "learned")
    # a key neither sets: ElmoSettings' default (conf/task/sst.yaml sets no gamma_init)
    assert run_config(_compose("task=sst")).task.elmo.gamma_init == 1.0


def test_the_trainer_group_overrides_the_tasks_trainer_block_and_presets_compose_first():
    run = run_config(_compose("task=ner", "trainer.lr=0.002"))
    settings = run.task.training.settings
    assert (settings.lr, settings.batch_size, settings.max_epochs, settings.optimizer) == (0.002, 32, 10, "adam")
    assert settings.eval_batch_size == TrainerConfig().eval_batch_size  # set by neither: the dataclass's default
    cpu = run_config(_compose("task=ner", "budget=cpu"))  # conf/budget_preset/cpu_ner.yaml
    assert (cpu.data.fraction, cpu.task.training.settings.max_epochs, cpu.task.training.settings.min_epochs,
            cpu.task.training.settings.batch_size) == (0.1, 60, 8, 16)
    paper = run_config(_compose("task=ner", "head=paper"))  # conf/head_preset/paper_ner.yaml
    assert list(paper.task.head["lstm_hidden"]) == [200, 100]


def test_the_trainer_for_a_fraction_scales_epochs_and_patience():
    run = run_config(_compose("task=ner", "trainer.max_epochs=4", "trainer.patience=2", "trainer.scale_epochs=true",
                              "trainer.max_scaled_epochs=15", "progress=false"))
    tenth = run.trainer(0.1)
    assert (tenth.max_epochs, tenth.patience, tenth.progress) == (13, 7, False)  # ceil(4/sqrt(0.1)); ceil(2*13/4)
    assert run.task.training.settings.max_epochs == 4  # the RunConfig itself is unchanged


@pytest.mark.parametrize("overrides", [["task=ner"], ["task=srl", "head=paper", "budget=cpu"],
                                       ["experiment=table2", "task=snli", "variant=last_only"],
                                       ["task=pos", "embedder=elmo", "mix=layer", "mix.layer=2"]])
def test_the_resolved_config_is_the_composed_one_key_for_key(overrides):
    """run.json's config and run identity's input: exactly what OmegaConf resolves (order included)."""
    cfg = _compose(*overrides)
    run = run_config(cfg)
    expected = OmegaConf.to_container(cfg, resolve=True)
    assert json.dumps(run.config()) == json.dumps(expected)
    assert run.config() is not run.config()  # a copy: the frozen RunConfig's own stays as made


def test_a_run_config_is_frozen():
    run = run_config(_compose("task=ner"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.runtime.seed = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.task = run.task  # type: ignore[misc]


def test_the_canonical_mix_replaces_the_mix_and_the_elmo_settings_follow():
    run = run_config(_compose("task=ner", "mix=cumulative", "mix.layer=0"))
    assert run.task.elmo.mode == "cumulative"
    canonical = run.with_mix(canonical_mix(run.mix.mix, 3))
    assert (canonical.task.elmo.mode, canonical.task.elmo.layer_index) == ("layer", 0)
    assert canonical.config()["mix"] == {**run.config()["mix"], "name": "layer", "mode": "layer", "layer": 0}
    assert run.task.elmo.mode == "cumulative"  # the original is untouched


@pytest.mark.parametrize("make, message", [
    (lambda: Runtime(seed=-1), "config: seed expected an integer >= 0, found -1"),
    (lambda: Runtime(seed=2**32), "config: seed expected an integer <= 4294967295 (numpy's seed range), found "
                                  "4294967296"),
    (lambda: Runtime(seed=1, max_segment=0), "config: max_segment expected an integer >= 1, found 0"),
    (lambda: Runtime(seed=1, cache="yes"), "config: cache expected true or false, found 'yes'"),
    (lambda: Training(TrainerConfig(batch_size=0)), "config: trainer.batch_size expected an integer >= 1, found 0"),
    (lambda: Training(TrainerConfig(), max_scaled_epochs=0),
     "config: trainer.max_scaled_epochs expected an integer >= 1, found 0"),
    (lambda: MixPart({"mode": "best"}, {}), "config: mix.mode expected one of"),
    (lambda: MixPart({"mode": "learned", "placement": "middle"}, {}), "config: mix.placement expected one of"),
    (lambda: MixPart({"mode": "learned"}, {"dropout": 1.0}),
     "config: task.elmo.dropout expected a number >= 0 and < 1"),
])
def test_each_part_validates_itself_with_the_doors_line(make, message):
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        make()


def test_the_first_error_is_the_one_the_door_always_named():
    """Runtime before data before trainer before mix before head, as check_run always checked them."""
    config = OmegaConf.to_container(_compose("task=ner", "seed=-1", "data.fraction=2", "trainer.batch_size=0"),
                                    resolve=True)
    with pytest.raises(ConfigError, match="^config: seed expected"):
        RunConfig.of(config)
    config["seed"] = 1
    with pytest.raises(ConfigError, match="^config: data.fraction expected"):
        RunConfig.of(config)
    config["data"]["fraction"] = 1.0
    with pytest.raises(ConfigError, match="^config: trainer.batch_size expected"):
        RunConfig.of(config)
    with pytest.raises(ConfigError, match="^config: trainer.batch_size expected"):
        check_run(config, {**TrainerConfig().__dict__, "batch_size": 0})


def test_elmo_bench_config_prints_every_effective_value(capsys):
    assert main(["config", "task=ner", "mix.dropout=0.25", "trainer.lr=0.002", "--format", "json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    shown = json.loads(lines[0])
    assert shown["overrides"] == ["task=ner", "mix.dropout=0.25", "trainer.lr=0.002"]
    assert (shown["task"]["elmo"]["dropout"], shown["task"]["elmo"]["l2_coef"]) == (0.25, 0.1)
    assert (shown["task"]["trainer"]["lr"], shown["task"]["trainer"]["batch_size"]) == (0.002, 32)
    assert shown["task"]["trainer"]["max_scaled_epochs"] == 50 and shown["runtime"]["max_segment"] == 256
    assert shown["data"]["max_overlap"] == 0.25 and shown["encoder"]["spec"]["kind"] == "bilm"
    assert main(["config", "task=ner", "mix.dropout=0.25", "trainer.lr=0.002"]) == 0  # YAML: the same values
    assert yaml.safe_load(capsys.readouterr().out) == shown


def test_elmo_bench_config_prints_one_document_per_job_of_a_sweep(capsys):
    assert main(["config", "task=ner", "seed=1,2", "--format", "json"]) == 0
    seeds = [json.loads(line)["runtime"]["seed"] for line in capsys.readouterr().out.splitlines()]
    assert seeds == [1, 2]
    assert main(["config", "task=ner", "seed=1,2"]) == 0
    assert [doc["runtime"]["seed"] for doc in yaml.safe_load_all(capsys.readouterr().out)] == [1, 2]


def test_elmo_bench_config_without_a_task_is_the_quickstart_as_run_py(capsys):
    assert main(["config", "--format", "json"]) == 0
    jobs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert jobs and all(job["choices"]["experiment"] == "quickstart" for job in jobs)


def test_elmo_bench_config_refuses_a_bad_value_in_one_line(capsys):
    assert main(["config", "task=ner", "trainer.batch_size=0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == "error: config: trainer.batch_size expected an integer >= 1, found 0"
    assert main(["config", "task=ner", "+trainer.max_epoch=3"]) == 2
    assert "unknown key trainer.max_epoch" in capsys.readouterr().err


def test_a_hand_made_config_without_a_group_is_one_line():
    config = OmegaConf.to_container(_compose("task=ner"), resolve=True)
    del config["embedder"]
    with pytest.raises(ConfigError, match=r"^config: expected the embedder group with the keys name, glove, elmo, "
                                          r"found None$"):
        RunConfig.of(config)


def _yaml(path):
    return yaml.safe_load(path.read_text())


def test_each_default_of_the_run_parts_is_written_once_in_its_dataclass():
    """Issue 35 item 2: RunConfig's field defaults fill what an older run.json lacks, and they are the only place
    those defaults are written: conf/config.yaml and conf/trainer/default.yaml set none of Runtime's and the epoch
    scaling's (their schemas carry them into every composed run)."""
    from elmo_bench.engine.trainer_config import EpochScaling

    root = _yaml(REPO / "conf" / "config.yaml")
    composed = OmegaConf.to_container(_compose("task=ner"), resolve=True)
    for spec in dataclasses.fields(Runtime):
        assert spec.name not in root and composed[spec.name] == spec.default, spec.name
    trainer = _yaml(REPO / "conf" / "trainer" / "default.yaml")
    for spec in dataclasses.fields(Training):
        if spec.default is not dataclasses.MISSING:
            assert spec.name not in trainer and composed["trainer"][spec.name] == spec.default, spec.name
            assert getattr(EpochScaling(), spec.name) == spec.default, spec.name


def _restated(values: dict, cls: type) -> list[str]:
    """The keys of a group option that write a value equal to the dataclass's default (a second copy of it)."""
    defaults = {spec.name: spec.default for spec in dataclasses.fields(cls) if spec.default is not dataclasses.MISSING}
    return [key for key, value in values.items() if key in defaults and value == defaults[key]
            and type(value) is type(defaults[key])]


def test_the_embedder_and_logger_options_set_only_what_makes_them_that_option():
    """Embedder's and Logger's defaults are written once, on the dataclasses: each conf/embedder and conf/logger
    option takes its group's schema (generated from the dataclass) first and sets only the fields without a default
    (an embedder's name, glove, elmo; a logger's mode), never a value equal to a default."""
    from elmo_bench.engine.run_config import Embedder, Logger

    for group, cls in (("embedder", Embedder), ("logger", Logger)):
        required = [spec.name for spec in dataclasses.fields(cls) if spec.default is dataclasses.MISSING]
        for path in sorted((REPO / "conf" / group).glob("*.yaml")):
            values = _yaml(path)
            assert values.pop("defaults") == ["schema", "_self_"], path.name
            assert set(values) <= {spec.name for spec in dataclasses.fields(cls)}, path.name
            assert list(values) == required, path.name
            assert not _restated(values, cls), (path.name, _restated(values, cls))
    assert _restated({"glove_source": "kumo", "glove_path": None, "glove": True, "glove_trainable": 0}, Embedder) \
        == ["glove_source", "glove_path"]  # the guard sees a restated default (0 is no bool False)


EMBEDDERS = {  # the embedder group as it composed when each YAML wrote every value (tests/golden has three)
    "glove": {"name": "glove", "glove": True, "elmo": False},
    "elmo": {"name": "elmo", "glove": False, "elmo": True},
    "glove_elmo": {"name": "glove_elmo", "glove": True, "elmo": True},
}


@pytest.mark.parametrize("option", sorted(EMBEDDERS))
def test_an_embedder_option_composes_as_before(option):
    group = OmegaConf.to_container(_compose("task=ner", f"embedder={option}"), resolve=True)["embedder"]
    expected = {**EMBEDDERS[option], "glove_source": "kumo", "glove_path": None, "glove_trainable": False}
    assert json.dumps(group) == json.dumps(expected)  # keys, order, values


@pytest.mark.parametrize("option", ["disabled", "offline", "online"])
def test_a_logger_option_composes_as_before(option):
    group = OmegaConf.to_container(_compose("task=ner", f"logger={option}"), resolve=True)["logger"]
    assert json.dumps(group) == json.dumps({"mode": option, "project": "elmo_bench"})
    assert OmegaConf.to_container(_compose("task=ner"), resolve=True)["logger"]["mode"] == "offline"


@pytest.mark.parametrize("override", ["embedder.glove=maybe", "embedder.glove_trainable=sometimes",
                                      "embedder.elmo=abc"])
def test_a_wrong_embedder_type_fails_at_composition(override):
    from hydra.errors import ConfigCompositionException

    with pytest.raises(ConfigCompositionException, match=f"Error merging override {override}"):
        _compose("task=ner", override)


def test_the_pretrain_check_reads_dropout_and_seed_as_the_presets_set_them():
    """check_pretrain fell back on dropout 0.0 and seed 0 for an absent key; every preset (and bilm=adapted's
    recipe) sets both, so the fallbacks were never used. The default is now written once, on PretrainConfig
    (conf/pretrain/default.yaml's 0.1 and 0), and a null is refused with check_pretrain's message."""
    from elmo_bench.commands.pretrain import compose_pretrain
    from elmo_bench.pretrain.pretrain_config import PretrainConfig

    for preset in sorted((REPO / "conf" / "pretrain").glob("*.yaml")):
        assert {"dropout", "seed"} <= set(_yaml(preset)), preset.name
    from elmo_bench.pretrain.adapted_recipe import AdaptedRecipe  # bilm=adapted's recipe, its defaults written there

    assert {"dropout", "seed"} <= {spec.name for spec in dataclasses.fields(AdaptedRecipe)}
    composed = compose_pretrain(["pretrain=tiny"]).mapping()
    assert PretrainConfig.of(composed).dropout == 0.0
    absent = {key: value for key, value in composed.items() if key not in ("dropout", "seed")}
    assert (PretrainConfig.of(absent).dropout, PretrainConfig.of(absent).seed) == (0.1, 0)
    assert (_yaml(REPO / "conf" / "pretrain" / "default.yaml")["dropout"], PretrainConfig().dropout) == (0.1, 0.1)
    with pytest.raises(ConfigError, match=r"^config: pretrain.dropout expected a number >= 0 and < 1, found None$"):
        PretrainConfig.of({**composed, "dropout": None})
    with pytest.raises(ConfigError, match=r"^config: pretrain.seed expected an integer >= 0 and <= 4294967295, "
                                          r"found None$"):
        PretrainConfig.of({**composed, "seed": None})


def test_a_config_without_the_encoder_group_is_the_default_options_encoder():
    """A run.json from before the encoder group (or a group without its kind) is the biLM: EncoderPart's one
    default, which is the kind of the default ``encoder`` option (conf/config.yaml; the option each kind declares,
    elmo_bench.encoders.kinds), the one kind that declares itself the default."""
    from elmo_bench.encoders.kinds import default_kind, encoder_kinds, option_node
    from elmo_bench.encoders.settings import check_encoder_settings

    option = next(entry["encoder"] for entry in _yaml(REPO / "conf" / "config.yaml")["defaults"]
                  if isinstance(entry, dict) and "encoder" in entry)
    assert option_node(encoder_kinds()[option])["kind"] == default_kind().name == "bilm"
    config = OmegaConf.to_container(_compose("task=ner"), resolve=True)
    composed = RunConfig.of(config).encoder
    del config["encoder"]
    older = RunConfig.of(config)
    assert older.encoder.kind == "bilm" and dict(older.encoder.spec) == {"kind": "bilm"}
    assert older.config() == config                        # the resolved config (run identity's input) as stored
    assert composed.kind == "bilm" and composed.spec["kind"] == "bilm"
    config["encoder"] = {"cache_dtype": "fp32"}           # a group without its kind
    assert dict(RunConfig.of(config).encoder.spec) == {"kind": "bilm", "cache_dtype": "fp32"}
    with pytest.raises(ConfigError, match=r"^config: encoder.kind expected one of .*, found None$"):
        check_encoder_settings({"path": "x"})             # a bare spec names its kind (every caller sets it)
    from elmo_bench.encoders.settings import DEFAULT_CACHE_DTYPE  # what an older config lacks: each option's value

    assert {option_node(kind)["cache_dtype"] for kind in encoder_kinds().values()} == {DEFAULT_CACHE_DTYPE}
