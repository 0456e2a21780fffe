"""Issue 28 item 4, typed configs with one source of defaults: the ``trainer`` and ``mix`` groups are typed (a wrong
type fails at composition, one line), the ranges live on the dataclasses, the ELMo settings travel as one
ElmoSettings object, and all of it leaves the composed configs (run identity, results.json's config) exactly as
they were. Issue 35 item 2 moved the one source of each default from the YAML to its dataclass: every head's
HeadConfig, the trainer group's EpochScaling and the root's Runtime; the YAML files only override, and no head class
has a Python default that competes with its HeadConfig."""
from __future__ import annotations

import dataclasses
import inspect
import json
import re
import subprocess
import typing

import pytest
import torch
import yaml
from omegaconf import OmegaConf

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import default_of
from elmo_bench.data.data_config import DataConfig
from elmo_bench.engine.config_check import check_head
from elmo_bench.engine.config_schema import MIX_KEYS, head_schema, mix_schema, runtime_schema, trainer_schema
from elmo_bench.engine.experiment import build_head
from elmo_bench.engine.head_configs import head_config
from elmo_bench.engine.run_config import Runtime, check_run
from elmo_bench.engine.trainer_config import EpochScaling, TrainerConfig
from elmo_bench.modules.token_embedders import TaskEmbedder
from elmo_bench.records.elmo_settings import TASK_ELMO_DEFAULTS, ElmoSettings, effective_settings
from elmo_bench.tasks.coref.model import CorefHead
from elmo_bench.tasks.ner.model import NerHead
from elmo_bench.tasks.ner.task import NerTask
from elmo_bench.tasks.pos.model import LinearTagger
from elmo_bench.tasks.registry import config_files
from elmo_bench.tasks.snli.model import Esim
from elmo_bench.tasks.squad.model import BidafSelfAttention
from elmo_bench.tasks.srl.model import SrlHead
from elmo_bench.tasks.sst.model import BCN
from tests.config_snapshot import GOLDEN, snapshot
from tests.conftest import REPO
from tests.warm_python import run_python

HEADS = {"ner": NerHead, "pos": LinearTagger, "snli": Esim, "squad": BidafSelfAttention, "srl": SrlHead, "sst": BCN,
         "coref": CorefHead}
#: YAML head keys that the task, not the head class, reads (SquadTask.build_head: decoding; CorefTask: n_genres)
TASK_READ = {"squad": {"max_span_length"}, "coref": {"use_genres"}}


def _yaml(path) -> dict:
    return yaml.safe_load(path.read_text())


def test_the_composed_configs_are_the_ones_before_the_schemas():
    """52 command lines (every task x head/budget presets, every experiment, table2/3 variants, mix, trainer and
    head overrides), resolved, compared as JSON text with the snapshot that the code before the typed configs wrote
    (commit 67edbc7): same keys, same order, same int/float."""
    golden = json.loads(GOLDEN.read_text())
    now = snapshot()
    assert list(now) == list(golden)
    changed = [command for command in golden if json.dumps(now[command]) != json.dumps(golden[command])]
    assert not changed, f"composed configs changed: {changed}"


def _run_py(tmp_path, *overrides: str) -> subprocess.CompletedProcess:
    return run_python(["run.py", "task=ner", "data=ner_sample", "logger=disabled",
                       f"paths.results_dir={tmp_path}", *overrides], cwd=REPO,
                      timeout=300)


@pytest.mark.parametrize("override, expected", [
    ("trainer.batch_size=abc", "Error merging override trainer.batch_size=abc (Value 'abc' of type 'str' could not "
                               "be converted to Integer)"),
    ("mix.dropout=high", "Error merging override mix.dropout=high (Value 'high' of type 'str' could not be "
                         "converted to Float)"),
    ("trainer.lr=-1", "config: trainer.lr expected a number > 0, found -1.0"),
    ("mix.dropout=1.5", "config: mix.dropout expected a number >= 0 and < 1 or null, found 1.5"),
    ("task.head.lstm_hidden=abc", "Error merging override task.head.lstm_hidden=abc (Invalid value assigned: str is "
                                  "not a ListConfig, list or tuple.)"),
    ("task.head.lstm_hidden=[100,x]", "Error merging override task.head.lstm_hidden=[100,x] (Value 'x' of type 'str' "
                                      "could not be converted to Integer)"),
    ("task.head.dropout=x", "Error merging override task.head.dropout=x (Value 'x' of type 'str' could not be "
                            "converted to Float)"),
    ("task.head.constrain_decoding=maybe", "Error merging override task.head.constrain_decoding=maybe (Value 'maybe' "
                                           "is not a valid bool (type str))"),
    ("task.head.char_width=0", "config: task.head.char_width expected an integer >= 1, found 0"),
    ("data.fraction=abc", "Error merging override data.fraction=abc (Value 'abc' of type 'str' could not be "
                          "converted to Float)"),
    ("data.fraction=0", "config: data.fraction expected a number > 0 and <= 1, found 0.0"),
    # the cap's one default is EpochScaling's 50; null no longer falls back to a second 50 in code
    ("trainer.max_scaled_epochs=null", "config: trainer.max_scaled_epochs expected an integer >= 1, found None"),
    # issue 35 item 2: the keys whose defaults moved into a dataclass stay typed at composition
    ("trainer.max_scaled_epochs=x", "Error merging override trainer.max_scaled_epochs=x (Value 'x' of type 'str' "
                                    "could not be converted to Integer)"),
    ("trainer.scale_epochs=maybe", "Error merging override trainer.scale_epochs=maybe (Value 'maybe' is not a valid "
                                   "bool (type str))"),
    ("threads=abc", "Error merging override threads=abc (Value 'abc' of type 'str' could not be converted to "
                    "Integer)"),
    ("threads=-1", "config: threads expected an integer >= 0, found -1"),
    # a task's own trainer: and elmo: blocks are typed key by key (TrainerConfig's and ElmoSettings' types)
    ("task.trainer.lr=abc", "Error merging override task.trainer.lr=abc (Value 'abc' of type 'str' could not be "
                            "converted to Float)"),
    ("task.trainer.batch_size=x", "Error merging override task.trainer.batch_size=x (Value 'x' of type 'str' could "
                                  "not be converted to Integer)"),
    ("task.elmo.dropout=x", "Error merging override task.elmo.dropout=x (Value 'x' of type 'str' could not be "
                            "converted to Float)"),
])
def test_a_wrong_type_or_range_is_one_line_before_anything_runs(tmp_path, override, expected):
    done = _run_py(tmp_path, override)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip() == f"error: {expected}"
    assert not list(tmp_path.rglob("results.json")) and not list(tmp_path.rglob("run.json"))  # nothing ran


def test_the_schemas_hold_exactly_the_keys_of_their_yaml_files():
    """A schema key the YAML lacks would add a key to every resolved config (and to run identities). The trainer
    YAML sets TrainerConfig's keys to null (the task's own value); EpochScaling's keys, each with its one default,
    come from the schema only."""
    trainer = {k: v for k, v in _yaml(REPO / "conf/trainer/default.yaml").items() if k != "defaults"}
    scaling = [spec.name for spec in dataclasses.fields(EpochScaling)]
    assert scaling == ["scale_epochs", "max_scaled_epochs"]
    assert list(trainer_schema()) == list(trainer) + scaling
    assert set(trainer.values()) == {None} and not set(trainer) & set(scaling)
    assert {k: trainer_schema()[k] for k in scaling} == {"scale_epochs": False, "max_scaled_epochs": 50}
    assert list(trainer) == [name for name in typing.get_type_hints(TrainerConfig) if name != "progress"]
    for path in sorted((REPO / "conf/mix").glob("*.yaml")):
        assert [k for k in _yaml(path) if k != "defaults"] == list(MIX_KEYS) == list(mix_schema()), path
        assert _yaml(path)["defaults"] == ["schema", "_self_"], path


def test_each_runtime_default_is_written_once_in_its_dataclass():
    """Issue 35 item 2: seed, cache, max_segment, threads, device, amp and progress have their defaults in Runtime
    only; runtime_schema carries them (in the order the composed config always had), conf/config.yaml takes it just
    before its own keys and sets none of them, so an experiment (after ``_self_``) and the command line still win."""
    from tests.config_snapshot import composed

    root = _yaml(REPO / "conf/config.yaml")
    keys = [spec.name for spec in dataclasses.fields(Runtime)]
    assert keys == ["seed", "cache", "max_segment", "threads", "device", "amp", "progress", "shard_sentences"]
    assert not set(keys) & set(root)
    assert root["defaults"][-3:] == ["runtime_schema", "_self_", {"experiment": None}]
    defaults = {spec.name: spec.default for spec in dataclasses.fields(Runtime)}
    assert dict(runtime_schema()) == defaults == {"seed": 1, "cache": True, "max_segment": 256, "threads": 1,
                                                  "device": "auto", "amp": "off", "progress": True,
                                                  "shard_sentences": 0}
    config = composed(["task=ner"])
    assert {k: config[k] for k in keys} == defaults
    assert list(config)[list(config).index("encoder") + 1:][:len(keys)] == keys  # where conf/config.yaml had them
    overridden = composed(["task=ner", "seed=3", "threads=2", "amp=bf16", "cache=false"])
    assert (overridden["seed"], overridden["threads"], overridden["amp"], overridden["cache"]) == (3, 2, "bf16", False)


def test_elmo_settings_one_object_with_the_defaults_written_once():
    assert TASK_ELMO_DEFAULTS == {"placement": "input", "lambda": 0.0, "layer_norm": False, "gamma_init": 1.0,
                                  "dropout": 0.5}
    settings = ElmoSettings.from_config({"placement": "both", "lambda": 0.1, "dropout": 0.2},
                                        {"mode": "learned", "lambda": None, "dropout": 0.25, "gamma_init": 0.5})
    # mix override (dropout, gamma_init) over the task's (placement, lambda) over the default (layer_norm)
    assert settings == ElmoSettings(placement="both", l2_coef=0.1, layer_norm=False, gamma_init=0.5, dropout=0.25,
                                    mode="learned", layer_index=None)
    assert list(settings.record()) == ["placement", "l2_coef", "layer_norm", "gamma_init", "dropout", "mode",
                                       "layer_index"]
    assert effective_settings({}, {}) == TASK_ELMO_DEFAULTS
    with pytest.raises(ConfigError, match=r"config: elmo.dropout expected a number >= 0 and < 1, found 1.5"):
        ElmoSettings(dropout=1.5)
    with pytest.raises(ConfigError, match=r"config: ELMo placement expected one of"):
        ElmoSettings(placement="middle")


def test_the_token_embedder_takes_the_settings_whole():
    settings = ElmoSettings(placement="both", l2_coef=0.1, layer_norm=True, gamma_init=0.25, dropout=0.3)
    embedder = TaskEmbedder(None, False, settings, 3, 4)
    assert embedder.elmo.names == ["input", "output"] and embedder.settings is settings
    assert [m.gamma.item() for m in embedder.elmo.mixes] == [0.25, 0.25]
    assert embedder.elmo.dropout.p == 0.3
    assert embedder.input_dim == 4 and embedder.output_dim == 4
    glove_only = TaskEmbedder(torch.zeros(5, 2), False, None)
    assert glove_only.elmo is None and glove_only.input_dim == 2 and glove_only.output_dim == 0


@pytest.mark.parametrize("task", sorted(HEADS))
def test_no_head_default_competes_with_its_head_config(task):
    """Each head value has one source (issue 35 item 2, superseding issue 28's "the YAML is the one source"): its
    HeadConfig's default. The task's YAML sets no head value, and every HeadConfig default the head class takes
    is a parameter without a Python default (no second value in the model); every parameter HeadConfig does not
    default keeps the class's (the task or a preset sets it: PRESET_ONLY)."""
    assert "head" not in _yaml(config_files("task")[task])
    cls = head_config(task)
    parameters = inspect.signature(HEADS[task].__init__).parameters
    keys = [spec.name for spec in dataclasses.fields(cls)]
    twins = {k: parameters[k].default for k in _defaults(cls) if k in parameters
             and parameters[k].default is not inspect.Parameter.empty}
    assert not twins, f"{HEADS[task].__name__} defaults that {task}'s HeadConfig also sets: {twins}"
    assert set(keys) - set(parameters) <= TASK_READ.get(task, set())


def test_no_task_yaml_sets_a_head_value():
    """Every task's YAML, the edge tasks' too, leaves its head to its HeadConfig; the composed head is the
    dataclass's defaults (the edge heads: jiant's 256, 256, 0.3)."""
    from tests.config_snapshot import composed

    paths = sorted(config_files("task").values())
    assert len(paths) >= 13 and not [p.name for p in paths if "head" in _yaml(p)]
    assert composed(["task=edge_dep"])["task"]["head"] == {"proj_dim": 256, "hidden_dim": 256, "dropout": 0.3}


def test_a_head_setting_the_yaml_leaves_out_is_one_config_error():
    task = NerTask()
    task.fit_labels({"train": [{"tokens": ["a"], "tags": ["B-PER"]}]})
    with pytest.raises(ConfigError, match=r"config: task.head of task 'ner' does not fit its head: .*'constrain_decoding'"):
        build_head(task, {"char_dim": 4, "char_filters": 5, "char_width": 3, "lstm_hidden": [8], "dropout": 0.1},
                   {"tokens": 6}, 0)


def _defaults(cls) -> dict:
    """A HeadConfig's defaults, as the default config holds them (PRESET_ONLY keys left out)."""
    return {spec.name: default_of(spec) for spec in dataclasses.fields(cls)
            if spec.name not in getattr(cls, "PRESET_ONLY", ())}


@pytest.mark.parametrize("task", sorted(HEADS))
def test_each_task_head_schema_holds_its_head_config_defaults(task):
    """``task_schema/<task>`` (tasks/<task>/config.py HeadConfig) holds the HeadConfig's fields with their defaults,
    in order, without PRESET_ONLY; the task's YAML takes it first; the default composed head is exactly it;
    its head preset sets only HeadConfig keys (PRESET_ONLY: the preset's extras); each key is a parameter of the
    head class or read by the task."""
    from tests.config_snapshot import composed

    config = _yaml(config_files("task")[task])
    assert config["defaults"] == [f"/task_schema/{task}@_here_", "_self_"]
    assert not {"name", "default_data"} & set(config)   # name: the declaration's (task_schema); default_data: gone
    assert composed([f"task={task}"])["task"]["name"] == task
    cls = head_config(task)
    schema = OmegaConf.to_container(head_schema(cls))
    head = composed([f"task={task}"])["task"]["head"]
    assert json.dumps(schema) == json.dumps(_defaults(cls)) == json.dumps(head)
    assert None not in schema.values()  # every key the default config has, a default (null would be no value)
    preset = _yaml(config_files("head_preset")[f"paper_{task}"])["head"]
    keys = [spec.name for spec in dataclasses.fields(cls)]
    assert set(preset) <= set(keys) and set(keys) == set(schema) | set(getattr(cls, "PRESET_ONLY", ()))
    parameters = inspect.signature(HEADS[task].__init__).parameters
    assert set(keys) - set(parameters) <= TASK_READ.get(task, set())


def test_a_list_default_is_a_fresh_copy():
    """A list default (ner's lstm_hidden) is copied for each use: changing one copy leaves the default."""
    spec = next(spec for spec in dataclasses.fields(head_config("ner")) if spec.name == "lstm_hidden")
    first = default_of(spec)
    first.append(7)
    assert default_of(spec) == [100, 100]


@pytest.mark.parametrize("task", sorted(HEADS))
def test_the_head_ranges_are_the_dataclass_ranges(task):
    """check_head reads the HeadConfig's ``ranged`` fields: a value below each stated bound is one line naming the
    key (a list item by its index); the defaults and its preset's values pass."""
    cls = head_config(task)
    check_head(_defaults(cls), cls)
    check_head(_yaml(config_files("head_preset")[f"paper_{task}"])["head"], cls)
    for spec in dataclasses.fields(cls):
        rule = spec.metadata.get("range")
        if rule is None:
            continue
        bad = rule.low - 1 if rule.low is not None else "x"
        is_list = typing.get_origin(typing.get_type_hints(cls)[spec.name].__args__[0]) is list
        value, where = ([1, bad], f"task.head.{spec.name}[1]") if is_list else (bad, f"task.head.{spec.name}")
        with pytest.raises(ConfigError, match=rf"^config: {re.escape(where)} expected "):
            check_head({spec.name: value}, cls)


def test_a_head_preset_adds_its_extra_keys_and_their_ranges_hold():
    """coref's preset adds char_dim / char_filters / char_widths (PRESET_ONLY, not in the default head): the head
    node takes them at composition, and their ranges (HeadConfig) are checked like the others."""
    from tests.config_snapshot import composed

    head = composed(["task=coref", "head=paper"])["task"]["head"]
    assert list(head)[-3:] == ["char_dim", "char_filters", "char_widths"] and head["char_widths"] == [3, 4, 5]
    assert "char_dim" not in composed(["task=coref"])["task"]["head"]
    with pytest.raises(ConfigError,
                       match=r"^config: task.head.char_widths\[1\] expected an integer >= 1, found 'x'$"):
        check_head({**head, "char_widths": [3, "x"]}, head_config("coref"))


def test_every_dataset_sets_the_typed_data_keys():
    """Each data option (the tasks' conf/data/) that is not an alias of another sets every DataConfig key but the
    run-wide ones (set by none: DataConfig's defaults, conf/config.yaml's data_defaults) and merges ``schema`` after
    itself (its ``???`` values keep the file's values and key order, its types apply)."""
    keys = [spec.name for spec in dataclasses.fields(DataConfig) if spec.name not in DataConfig.RUN_WIDE]
    checked = 0
    for path in config_files("data").values():
        config = _yaml(path)
        if config is None:      # default_None.yaml: a probe run's null task's data (issue 56), empty by design
            continue
        if config["defaults"][-1] == "_self_":  # an alias: defaults [<dataset>, _self_]
            continue
        assert config["defaults"] == ["_self_", "schema"], path
        assert set(keys) <= set(config), (path, set(keys) - set(config))
        assert not set(DataConfig.RUN_WIDE) & set(config), path
        checked += 1
    assert checked >= 10


def test_a_data_range_comes_from_the_dataclass():
    with pytest.raises(ConfigError, match=r"^config: data.fraction expected a number > 0 and <= 1, found 1.5$"):
        check_run({"seed": 1, "data": {"fraction": 1.5}, "mix": {"mode": "learned"}}, {})


def test_the_run_wide_data_defaults_are_written_once_in_the_dataclass():
    """data.allow_identical_splits and data.max_overlap: no file under conf/ sets them; every composed run has
    them with DataConfig's defaults (conf/config.yaml's data_defaults), typed (a wrong type fails at composition)."""
    from tests.config_snapshot import composed

    for path in sorted((REPO / "conf").rglob("*.yaml")):
        assert not set(DataConfig.RUN_WIDE) & set(_keys(_yaml(path))), path
    defaults = DataConfig()
    for overrides in (["task=ner"], ["task=squad", "data=squad_sandbox"], ["experiment=table2"]):
        data = composed(overrides)["data"]
        assert (data["allow_identical_splits"], data["max_overlap"]) == (False, 0.25) == (
            defaults.allow_identical_splits, defaults.max_overlap)
    assert composed(["task=ner", "data.max_overlap=0.5"])["data"]["max_overlap"] == 0.5
    with pytest.raises(Exception, match="max_overlap"):
        composed(["task=ner", "data.max_overlap=abc"])


def _keys(tree: object) -> list[str]:
    """Every key of a YAML tree, at any depth (its last part)."""
    if not isinstance(tree, dict):
        return []
    return [k for key, value in tree.items() for k in [str(key), *_keys(value)]]
