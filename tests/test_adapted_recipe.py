"""bilm=adapted's recipe is written once, on AdaptedRecipe (elmo_bench/pretrain/adapted_recipe.py, torch-free): the
adapter's DEFAULT_RECIPE is made from it, and conf/bilm/adapted.yaml places the node generated from it at
``bilm.recipe`` instead of writing the values. The composed config of bilm=adapted (and so the run identity of an
adapted run, and the adapted model's cache key) is what it was when the YAML wrote the recipe; a wrong type fails at
composition; each field has PretrainConfig's type and range for the same key (the recipe becomes one)."""
from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import typing

import pytest
import yaml
from hydra.errors import ConfigCompositionException

from elmo_bench.base.errors import ConfigError
from elmo_bench.pretrain.adapted_recipe import AdaptedRecipe
from elmo_bench.pretrain.pretrain_config import PretrainConfig
from tests.config_snapshot import GOLDEN, composed
from tests.conftest import REPO
from tests.warm_python import run_python

#: the recipe conf/bilm/adapted.yaml wrote before it was generated (bilm-tf's settings, one epoch: Table 7)
RECIPE = {"epochs": 1, "batch_size": 64, "unroll_steps": 20, "num_sampled": 1024, "dropout": 0.1,
          "optimizer": "adagrad", "lr": 0.2, "initial_accumulator": 1.0, "grad_clip": 10.0, "seed": 0, "threads": 1}
#: the whole bilm group of ``bilm=adapted`` as it composed then (the checkout's root as <REPO>)
ADAPTED = {"name": "adapted", "base_dir": "<REPO>/elmo_bench/resources/bilm",
           "options": "<REPO>/elmo_bench/resources/bilm/options.json",
           "weights": "<REPO>/elmo_bench/resources/bilm/weights.hdf5", "recipe": RECIPE}


def test_the_recipe_is_written_once_and_the_adapter_takes_it():
    from elmo_bench.pretrain.adapted_bilm import DEFAULT_RECIPE

    assert json.dumps(AdaptedRecipe().mapping()) == json.dumps(DEFAULT_RECIPE) == json.dumps(RECIPE)
    config = yaml.safe_load((REPO / "conf" / "bilm" / "adapted.yaml").read_text())
    assert "recipe" not in config  # no value written in the YAML
    assert config["defaults"] == ["_self_", "/bilm_schema/recipe@recipe"]  # after _self_: recipe stays the last key


def test_bilm_adapted_composes_as_before():
    """The whole composed config of ``task=ner bilm=adapted`` is the golden ``task=ner`` one with the adapted bilm
    group, compared as JSON text (keys, order, int vs float): run identity, made from it, is unchanged."""
    golden = json.loads(GOLDEN.read_text())["task=ner"]
    assert json.dumps(composed(["task=ner", "bilm=adapted"])) == json.dumps({**golden, "bilm": ADAPTED})
    small = composed(["task=ner", "bilm=adapted", "bilm.recipe.batch_size=4", "bilm.recipe.epochs=null"])["bilm"]
    assert json.dumps(small["recipe"]) == json.dumps({**RECIPE, "batch_size": 4, "epochs": None})


@pytest.mark.parametrize("override", ["bilm.recipe.lr=abc", "bilm.recipe.batch_size=x", "bilm.recipe.batch_size=1.5",
                                      "bilm.recipe.lr=null", "bilm.recipe.seed=null"])
def test_a_wrong_recipe_type_fails_at_composition(override):
    with pytest.raises(ConfigCompositionException, match=f"Error merging override {override.replace('.', '[.]')}"):
        composed(["task=ner", "bilm=adapted", override])


def test_run_py_says_so_in_one_line(tmp_path):
    done = run_python(["run.py", "task=ner", "data=ner_sample", "logger=disabled", "bilm=adapted",
                       f"paths.results_dir={tmp_path}", "bilm.recipe.lr=abc"], cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.strip() == ("error: Error merging override bilm.recipe.lr=abc (Value 'abc' of type 'str' could "
                                   "not be converted to Float)")


def test_each_field_has_the_pretrain_type_and_range_of_its_key():
    recipe_hints, pretrain_hints = typing.get_type_hints(AdaptedRecipe), typing.get_type_hints(PretrainConfig)
    pretrain = {spec.name: spec for spec in dataclasses.fields(PretrainConfig)}
    for spec in dataclasses.fields(AdaptedRecipe):
        assert recipe_hints[spec.name] == pretrain_hints[spec.name], spec.name
        assert spec.metadata.get("range") == pretrain[spec.name].metadata.get("range"), spec.name
    assert sum("range" in spec.metadata for spec in dataclasses.fields(AdaptedRecipe)) == 10  # all but optimizer


@pytest.mark.parametrize("change, message", [
    ({"lr": 0}, "config: bilm.recipe.lr expected a number > 0, found 0"),
    ({"dropout": 1.0}, "config: bilm.recipe.dropout expected a number >= 0 and < 1, found 1.0"),
    ({"batch_size": 0}, "config: bilm.recipe.batch_size expected an integer >= 1, found 0"),
    ({"optimizer": "sgd"}, "config: bilm.recipe.optimizer expected one of ['adagrad', 'adam'], found 'sgd'"),
    ({"optimizer": 3}, "config: bilm.recipe.optimizer expected str, found 3"),
])
def test_a_recipe_out_of_range_is_one_config_error(change, message):
    with pytest.raises(ConfigError) as error:
        AdaptedRecipe(**change)
    assert str(error.value) == message


def test_the_recipe_module_imports_no_torch():
    code = "import sys, elmo_bench.pretrain.adapted_recipe; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


@pytest.mark.parametrize("override, message", [
    ("bilm.recipe.lr=0", "config: bilm.recipe.lr expected a number > 0, found 0.0"),
    ("bilm.recipe.optimizer=sgd", "config: bilm.recipe.optimizer expected one of ['adagrad', 'adam'], found 'sgd'"),
])
def test_the_door_refuses_a_recipe_out_of_range_before_anything_is_read(override, message):
    """The typed RunConfig checks the recipe (RunConfig.of → Bilm), not the adapter when it builds the model."""
    from elmo_bench.engine.run_config import RunConfig

    with pytest.raises(ConfigError) as error:
        RunConfig.of(composed(["task=ner", "bilm=adapted", override]))
    assert str(error.value) == message
    RunConfig.of(composed(["task=ner", "bilm=adapted"]))   # the default recipe passes
