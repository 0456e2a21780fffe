"""Issue 35, the pretrain group: one typed PretrainConfig (elmo_bench/pretrain/pretrain_config.py) holds every key's
type, default and range; ``pretrain/schema`` is generated from it, the presets override it, and each preset composes
to the values it composed to before (tests/golden/pretrain_presets.json, written by the code before the change,
commit 676a0a6, and checked by hand against conf/pretrain/*.yaml)."""
from __future__ import annotations

import ast
import dataclasses
import json

import pytest
import yaml
from omegaconf import OmegaConf

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.main import main
from elmo_bench.commands.pretrain import compose_pretrain
from elmo_bench.engine.config_schema import pretrain_schema
from elmo_bench.pretrain.pretrain_config import PretrainConfig, PretrainModel
from tests.conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "pretrain_presets.json"
#: keys a preset lacked before, which it now has from the schema: the value the code used for an absent key then
#: (direction_threads ``or 1``, init_dir ``or`` the shipped biLM) or a key its command does not read (finetune-lm
#: takes model and vocab_file from init_dir, and reads neither work_dir, min_count nor max_vocab)
ADDED = {"default": {"init_dir": None}, "shipped_v1": {"direction_threads": 1, "init_dir": None},
         "tiny": {"work_dir": "<repo>/lm_work", "direction_threads": 1, "init_dir": None},
         "finetune": {"work_dir": "<repo>/lm_work", "vocab_file": None, "min_count": 3, "max_vocab": 20000,
                      "model": dataclasses.asdict(PretrainModel()), "direction_threads": 1}}
for _added in ADDED.values():  # issue 57: pretrain.series_dir (null: no series), in every preset since
    _added["series_dir"] = None


def _composed(preset: str) -> dict:
    text = json.dumps(compose_pretrain([f"pretrain={preset}"]).mapping()).replace(str(REPO), "<repo>")
    return json.loads(text)


@pytest.mark.parametrize("preset", ["default", "finetune", "shipped_v1", "tiny"])
def test_each_preset_composes_to_its_values_before_the_schema(preset):
    before = json.loads(GOLDEN.read_text())[preset]
    now = _composed(preset)
    assert json.dumps({key: now[key] for key in before}) == json.dumps(before)  # same values, same int/float
    added = {key: value for key, value in now.items() if key not in before}
    assert json.loads(json.dumps(added)) == json.loads(json.dumps(ADDED[preset]))
    assert set(now) == {spec.name for spec in dataclasses.fields(PretrainConfig)}


def test_the_finetune_command_composes_the_finetune_preset():
    assert compose_pretrain([], default="finetune") == compose_pretrain(["pretrain=finetune"])


def test_the_defaults_are_the_v2_recipe_and_default_yaml_agrees():
    """The code read log_every 50, threads 1, dropout 0.0, min_count 1 for an absent key, default.yaml set 25, 2,
    0.1, 3; no composed config lacked them, so the YAML's values won and are the dataclass's defaults now.
    default.yaml restates the recipe with its comments: every value it writes is the dataclass's."""
    defaults = PretrainConfig()
    assert (defaults.log_every, defaults.threads, defaults.dropout, defaults.min_count) == (25, 2, 0.1, 3)
    written = yaml.safe_load((REPO / "conf" / "pretrain" / "default.yaml").read_text())
    assert written.pop("defaults") == ["schema", "_self_"]
    schema = OmegaConf.to_container(pretrain_schema(), resolve=False)
    assert written == {key: schema[key] for key in written}
    assert set(schema) - set(written) == {"init_dir"}
    assert defaults.out_dir == "lm_work/run_v2" and defaults.train_files[0] == "lm_work/novels.train.txt"


def test_every_preset_takes_the_schema_first():
    for path in sorted((REPO / "conf" / "pretrain").glob("*.yaml")):
        assert yaml.safe_load(path.read_text())["defaults"] == ["schema", "_self_"], path.name


@pytest.mark.parametrize("override,message", [
    ("pretrain.batch_size=abc", "Value 'abc' of type 'str' could not be converted to Integer"),
    ("pretrain.model.lstm_dim=big", "Value 'big' of type 'str' could not be converted to Integer"),
    ("pretrain.model.filters=abc", "str is not a ListConfig, list or tuple"),
    ("pretrain.shuffle=maybe", "Value 'maybe' is not a valid bool"),
])
def test_a_wrong_type_fails_at_composition_in_one_line(override, message, capsys):
    assert main(["pretrain", "pretrain=tiny", override]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and override in lines[0] and message in lines[0], lines


@pytest.mark.parametrize("key,value,message", [
    ("lr", 0, "pretrain.lr expected a number > 0, found 0"),
    ("batch_size", 0, "pretrain.batch_size expected an integer >= 1, found 0"),
    ("unroll_steps", 2.5, "pretrain.unroll_steps expected an integer >= 1, found 2.5"),
    ("num_sampled", None, "pretrain.num_sampled expected an integer >= 1, found None"),
    ("dropout", 1.0, "pretrain.dropout expected a number >= 0 and < 1, found 1.0"),
    ("grad_clip", 0, "pretrain.grad_clip expected a number > 0 or null, found 0"),
    ("initial_accumulator", -1, "pretrain.initial_accumulator expected a number >= 0 or null, found -1"),
    ("max_tokens", 0, "pretrain.max_tokens expected an integer >= 1 or null, found 0"),
    ("max_train_seconds", 0, "pretrain.max_train_seconds expected a number > 0 or null, found 0"),
    ("epochs", 0, "pretrain.epochs expected an integer >= 1 or null, found 0"),
    ("seed", 2**32, "pretrain.seed expected an integer >= 0 and <= 4294967295, found 4294967296"),
    ("threads", 0, "pretrain.threads expected an integer >= 1, found 0"),
    ("direction_threads", 3, "pretrain.direction_threads expected an integer >= 1 and <= 2, found 3"),
    ("log_every", 0, "pretrain.log_every expected an integer >= 1, found 0"),
    ("min_count", -1, "pretrain.min_count expected an integer >= 0, found -1"),
    ("max_vocab", 0, "pretrain.max_vocab expected an integer >= 1 or null, found 0"),
    ("checkpoint_every_steps", -1, "pretrain.checkpoint_every_steps expected an integer >= 0 or null, found -1"),
    ("checkpoint_every_s", -5, "pretrain.checkpoint_every_s expected an integer >= 0 or null, found -5"),
    ("optimizer", "sgd", "pretrain.optimizer expected one of ['adagrad', 'adam'], found 'sgd'"),
    ("shuffle", "yes", "pretrain.shuffle expected bool, found 'yes'"),
    ("out_dir", None, "pretrain.out_dir expected str, found None"),
    ("train_files", [1], "pretrain.train_files expected list, found (1,)"),
])
def test_a_wrong_value_is_one_line_naming_the_key(key, value, message):
    with pytest.raises(ConfigError) as error:
        PretrainConfig.of({key: value})
    assert str(error.value) == f"config: {message}"


def test_the_model_part_and_unknown_keys_are_checked_too():
    with pytest.raises(ConfigError, match=r"^config: pretrain.model.lstm_dim expected int, found '512'$"):
        PretrainConfig.of({"model": {"lstm_dim": "512"}})
    with pytest.raises(ConfigError, match=r"^config: unknown key pretrain.max_tokenz \(known keys: .*max_tokens"):
        PretrainConfig.of({"max_tokenz": 3})
    with pytest.raises(ConfigError, match=r"^config: unknown key pretrain.model.lstm_size "):
        PretrainConfig.of({"model": {"lstm_size": 3}})


def test_a_mapping_takes_the_defaults_and_resolves_the_work_dir():
    cfg = PretrainConfig.of({"work_dir": "/scratch/lm", "train_files": "one.txt", "model": {"filters": [[1, 4]]}})
    assert cfg.train_files == ("one.txt",) and cfg.heldout_files == ("/scratch/lm/ptb.valid.txt",
                                                                     "/scratch/lm/novels.heldout.txt")
    assert cfg.out_dir == "/scratch/lm/run_v2" and cfg.log_file == "/scratch/lm/run_v2/train_log.jsonl"
    assert cfg.model.filters == ((1, 4),) and cfg.model.lstm_dim == 512
    assert PretrainConfig.of(cfg.mapping()) == cfg  # the plain form round-trips (a subprocess's JSON)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.lr = 1.0  # type: ignore[misc]


def test_a_single_path_on_the_command_line_is_a_one_item_list():
    assert compose_pretrain(["pretrain=tiny", "pretrain.train_files=a.txt"]).train_files == (str(REPO / "a.txt"),)


def test_what_options_json_records_of_the_training_keys_is_unchanged():
    """The stored form: options.json's bilm-tf training keys, as the dict config wrote them."""
    from elmo_bench.pretrain.language_model import make_options, training_extra

    cfg = compose_pretrain(["pretrain=tiny"])
    assert training_extra(cfg, 25) == {"n_tokens_vocab": 25, "unroll_steps": 6, "batch_size": 8,
                                       "n_negative_samples_batch": 16, "dropout": 0.0, "all_clip_norm_val": 10.0}
    options = make_options(cfg.model)
    assert options.filters == ((1, 8), (2, 8), (3, 16)) and options.lstm_dim == 32 and options.cell_clip == 3.0


#: ``.get`` receivers in elmo_bench/pretrain/ that are not configuration: the environment, a checkpoint's payload,
#: counts and indexes, dataclass field metadata
NOT_CONFIG = {"os.environ", "payload", "type_index", "counts", "self.index", "spec.metadata"}


def test_no_pretrain_module_reads_configuration_with_get():
    found = []
    for path in sorted((REPO / "elmo_bench" / "pretrain").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
                receiver = ast.unparse(node.func.value)
                if receiver not in NOT_CONFIG:
                    found.append(f"{path.name}:{node.lineno} {receiver}.get")
    assert not found, found
