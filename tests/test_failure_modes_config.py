"""Issue 45, config, tasks and files: what a hostile new user's config, task plug-ins and full disks get now: one
``error:`` line and exit 2 (or a warning naming the broken plug-in), never a silently wrong run or a traceback.
Each test below failed before its fix; real tiny files are written in tmp_path."""
from __future__ import annotations

import errno
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import needs_fixtures

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.main import main
from tests.conftest import REPO
from tests.engine_helpers import compose_run


def _one_line(capsys) -> str:
    """The one ``error:`` line a refused command printed (and nothing on stdout)."""
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err[-2000:]
    assert captured.out == ""
    return lines[0]


# 1. mix.layer with a mode that takes no layer: refused at the door, not a learned mix trained as one layer
@pytest.mark.parametrize("mix", ["learned", "average", "top"])
def test_a_layer_given_to_a_mix_that_takes_none_is_refused_at_the_door(capsys, mix):
    assert main(["config", "task=edge_pos", "embedder=elmo", f"mix={mix}", "mix.layer=1"]) == 2
    assert _one_line(capsys) == (f"error: config: mix.layer=1 is used by mix=layer and mix=cumulative only, not by "
                                 f"mix={mix} (mode {mix}): drop mix.layer, or choose mix=layer")


def test_the_shipped_presets_that_leave_the_layer_null_still_pass(capsys):
    assert main(["config", "--format", "json", "experiment=probe_pos", "row=learned"]) == 0
    assert main(["config", "--format", "json", "task=edge_pos", "embedder=elmo", "mix=learned"]) == 0
    assert main(["config", "--format", "json", "task=edge_pos", "embedder=elmo", "mix=layer", "mix.layer=2"]) == 0
    capsys.readouterr()


# 2. a negative layer at the door; one past the encoder's top where its layers are known
def test_a_negative_layer_is_refused_at_the_door(capsys):
    assert main(["config", "task=edge_pos", "embedder=elmo", "mix=layer", "mix.layer=-1"]) == 2
    assert _one_line(capsys) == "error: config: mix.layer expected an integer >= 0, found -1"


def test_a_layer_past_the_shipped_bilms_top_is_refused_by_elmo_bench_config(capsys):
    assert main(["config", "task=edge_pos", "embedder=elmo", "mix=layer", "mix.layer=3"]) == 2
    assert _one_line(capsys) == ("error: config: mix=layer expected mix.layer in 0..2 (the encoder has 3 layers), "
                                 "found 3")


def test_a_layer_past_the_encoders_top_is_refused_by_plan(capsys):
    assert main(["plan", "task=edge_pos", "data=edge_pos_sample", "embedder=elmo", "bilm=fixture", "mix=layer",
                 "mix.layer=3", "--device", "cpu", "--sample-batches", "1"]) == 2
    assert _one_line(capsys) == ("error: config: mix=layer expected mix.layer in 0..2 (the encoder has 3 layers), "
                                 "found 3")


@needs_fixtures
def test_a_layer_past_the_encoders_top_is_refused_by_a_run_before_it_trains(tmp_path):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment

    cfg = compose_run(tmp_path, "task=edge_pos", "data=edge_pos_sample", "embedder=elmo", "mix=layer",
                      "mix.layer=3", tiny=False)
    with pytest.raises(ConfigError, match=r"^config: mix=layer expected mix.layer in 0..2 \(the encoder has 3 "
                                          r"layers\), found 3$"):
        run_experiment(run_config(cfg), tmp_path / "run")
    assert not (tmp_path / "run" / "results.json").exists()


# 3. a plateau schedule's minimum rate above the starting rate: zero epochs trained, the untrained head reported
def test_a_minimum_rate_above_the_learning_rate_is_refused_at_the_door(capsys):
    assert main(["config", "task=edge_pos", "embedder=elmo", "trainer.lr_plateau_min_lr=0.01"]) == 2
    assert _one_line(capsys) == ("error: config: trainer.lr_plateau_min_lr=0.01 is above trainer.lr=0.0001: training "
                                 "would stop before its first epoch (lower trainer.lr_plateau_min_lr or raise "
                                 "trainer.lr)")
    assert main(["config", "--format", "json", "task=edge_pos", "embedder=elmo", "trainer.lr=0.01",
                 "trainer.lr_plateau_min_lr=0.01"]) == 0  # equal: the first epoch trains
    capsys.readouterr()


# 4 and 5. task plug-ins: a clash of names, a broken folder or entry point, a folder without config.py
@pytest.fixture
def user_tasks(tmp_path, monkeypatch):
    """A folder of user task packages on elmo_bench.tasks' path (as if under tasks/), the registry rescanned with
    it, and rescanned without it afterwards; ``add(folder, config_text)`` writes one package there."""
    import elmo_bench.tasks as tasks_package
    from elmo_bench.tasks import registry

    root = tmp_path / "user_tasks"
    root.mkdir()
    monkeypatch.setattr(tasks_package, "__path__", [*tasks_package.__path__, str(root)])
    registry.registered.cache_clear()

    def add(folder: str, config: str | None) -> None:
        (root / folder).mkdir()
        (root / folder / "__init__.py").write_text("")
        if config is not None:
            (root / folder / "config.py").write_text(config)
        registry.registered.cache_clear()

    yield add
    registry.registered.cache_clear()
    for name in [m for m in sys.modules if m.startswith("elmo_bench.tasks.user45_")]:
        del sys.modules[name]


DECLARE = "from elmo_bench.tasks.declaration import TaskDeclaration\nTASK = TaskDeclaration({name!r}, {target!r})\n"


def test_a_user_folder_declaring_a_shipped_name_is_one_line_naming_both(user_tasks, capsys):
    from elmo_bench.tasks import registry

    user_tasks("user45_myner", DECLARE.format(name="ner", target=".task:MyNer"))
    expected = (r"^task name 'ner' is declared by two packages: elmo_bench\.tasks\.ner \(.*tasks/ner\) and "
                r"elmo_bench\.tasks\.user45_myner \(.*user_tasks/user45_myner\); rename one")
    with pytest.raises(ConfigError, match=expected):
        registry.declaration("ner")
    assert registry.declaration("pos").package == "elmo_bench.tasks.pos"   # the other tasks keep working
    assert re.search(expected[1:], capsys.readouterr().err)                # and the scan said so
    assert main(["config", "task=ner"]) == 2
    assert re.match(expected, _one_line(capsys)[len("error: "):])


BROKEN = {
    "import": ("import nosuch\n", r"config\.py: the task plug-in elmo_bench\.tasks\.user45_import does not import "
                                  r"\(ModuleNotFoundError: No module named 'nosuch'\)$"),
    "syntax": ("TASK = (\n", r"config\.py: the task plug-in elmo_bench\.tasks\.user45_syntax does not import "
                             r"\(SyntaxError: .* at .*user45_syntax/config\.py:1\)$"),
    "int": ("TASK = 42\n", r"config\.py: TASK is a int; expected a TaskDeclaration$"),
    "noconfig": (None, r"user45_noconfig: a task folder without config\.py \(expected config\.py with TASK = "
                       r"TaskDeclaration\(\.\.\.\), elmo_bench\.tasks\.declaration\)$"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_user_task_folder_is_named_and_the_shipped_tasks_keep_working(user_tasks, capsys, kind):
    from elmo_bench.tasks import registry

    config, expected = BROKEN[kind]
    user_tasks(f"user45_{kind}", config)
    assert {"ner", "pos", "edge_pos"} <= set(registry.registered())
    assert re.search(r"^warning: .*" + expected[:-1] + r"; skipped$", capsys.readouterr().err, re.M)
    with pytest.raises(ConfigError, match=expected):
        registry.declaration(f"user45_{kind}")
    assert main(["config", "--format", "json", "task=ner"]) == 0
    capsys.readouterr()
    assert main(["config", f"task=user45_{kind}"]) == 2   # not Hydra's "Could not find 'task/user45_...'"
    assert re.search(expected, _one_line(capsys))


def test_a_task_whose_target_names_no_class_is_one_line_and_the_others_still_score(user_tasks, capsys):
    from elmo_bench.commands.main import file_scorers
    from elmo_bench.engine.experiment import load_task

    user_tasks("user45_target", DECLARE.format(name="user45_target", target=".task:NoSuchTask"))
    with pytest.raises(ConfigError, match=r"^task 'user45_target': its target elmo_bench\.tasks\.user45_target\.task:"
                                          r"NoSuchTask cannot be loaded \(ModuleNotFoundError: "):
        load_task("user45_target")
    scorers = file_scorers()
    assert "ner" in scorers and "user45_target" not in scorers
    assert "warning: task 'user45_target': its target" in capsys.readouterr().err


def test_a_broken_entry_point_is_named_and_the_shipped_tasks_keep_working(monkeypatch, capsys):
    from importlib.metadata import EntryPoint

    from elmo_bench.tasks import registry

    points = [EntryPoint("nowhere", "user45_no_such_module.config:TASK", registry.ENTRY_POINT_GROUP),
              EntryPoint("tiny", "tests.tiny_task.config:TASK", registry.ENTRY_POINT_GROUP)]
    monkeypatch.setattr(registry, "entry_points", lambda group: points if group == registry.ENTRY_POINT_GROUP else [])
    registry.registered.cache_clear()
    try:
        assert {"ner", "tiny"} <= set(registry.registered())
        line = ("entry point nowhere = user45_no_such_module.config:TASK (elmo_bench.tasks) does not load "
                "(ModuleNotFoundError: No module named 'user45_no_such_module')")
        assert f"warning: {line}; skipped" in capsys.readouterr().err
        with pytest.raises(ConfigError, match=re.escape(line)):
            registry.declaration("nowhere")
    finally:
        registry.registered.cache_clear()


# 6. a full disk: the documented no-space line naming the path (a cache entry was a SIGBUS, a checkpoint torch's
# "unexpected pos", an atomic write "a file: No space left")
@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs (root only: skipped elsewhere, with the reason), unmounted afterwards."""
    where = tmp_path / "tiny_disk"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a 64k tmpfs here (needs root): {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=True)  # lazy: a file a failed writer left open


NO_SPACE = ("{path}: No space left on device (no space left on the device): choose another location (run.py: "
            "paths.results_dir=..., hydra.run.dir=..., paths.cache_dir=...; a command: its output flag)")


def test_a_full_disk_while_building_a_cache_entry_is_the_no_space_line(full_disk):
    script = ("import sys; from tests.test_cache_guards import ValueEncoder; "
              "from elmo_bench.commands.guard import guarded; from elmo_bench.encoders.cache import ActivationCache; "
              "Wide = type('Wide', (ValueEncoder,), {'dim': 512}); "   # 200 words x 2 layers x 512 x 4 bytes: 800 KB
              "cache = ActivationCache(sys.argv[1], Wide(width=512), progress=False, dtype='fp32'); "
              "guarded(lambda: cache.layers([[f'w{i}' for i in range(200)]]), debug=False)")
    done = subprocess.run([sys.executable, "-c", script, str(full_disk)], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])   # was -7: SIGBUS, no message
    lines = done.stderr.strip().splitlines()
    entry = re.escape(str(full_disk)) + r"/v2-values-[^ :/]+-fp32"           # the entry, not its temporary
    assert len(lines) == 1 and re.fullmatch("error: " + entry + re.escape(NO_SPACE.format(path="")), lines[0]), lines
    assert list(full_disk.iterdir()) == []                                  # the temporary entry is gone


def test_a_full_disk_while_writing_a_checkpoint_is_the_no_space_line(full_disk):
    import torch

    from elmo_bench.base import checkpoints
    from elmo_bench.commands.guard import one_line

    path = full_disk / "run" / "best.pt"
    with pytest.raises(OSError) as raised:                      # was RuntimeError: ... unexpected pos
        checkpoints.save(path, {"weights": torch.zeros(100_000)})
    assert one_line(raised.value) == NO_SPACE.format(path=path)
    assert not path.exists() and [p.name for p in path.parent.iterdir()] == []


def test_a_write_error_without_a_file_names_the_file_written(tmp_path, monkeypatch):
    from elmo_bench.base.atomic import atomic_write_text
    from elmo_bench.commands.guard import one_line

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")  # what write() raises: no filename
    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError) as raised:
        atomic_write_text(tmp_path / "results.json", "{}")
    assert one_line(raised.value) == NO_SPACE.format(path=tmp_path / "results.json")   # was "a file: No space ..."


# 7. misleading messages
def test_a_cache_entry_that_is_a_file_is_named_so_before_the_encoder_runs(tmp_path):
    from elmo_bench.base.integrity import IntegrityError
    from elmo_bench.encoders.cache import ActivationCache
    from tests.test_cache_guards import SENTENCES, ValueEncoder

    class Counting(ValueEncoder):
        calls = 0

        def layers(self, sentences):
            Counting.calls += 1
            return super().layers(sentences)

    cache = ActivationCache(tmp_path, Counting(), progress=False)
    entry = tmp_path / cache.key(SENTENCES)
    entry.write_text("a user's file")
    with pytest.raises(IntegrityError, match=r"^" + re.escape(f"{entry}: a file, not an activation cache entry (a "
                                                              f"directory); not this program's, so it is left as it "
                                                              f"is: remove or move it, or choose another "
                                                              f"paths.cache_dir") + "$"):   # was "(permissions?)"
        cache.layers(SENTENCES)
    assert entry.read_text() == "a user's file" and Counting.calls == 0


FINISHED = next((REPO / "docs" / "results").rglob("results.json"))


def test_evaluate_on_a_run_that_trained_no_epoch_says_so(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text(json.dumps({"identity": {"seed": 1}, "config": {"seed": 1}}))
    record = json.loads(FINISHED.read_text())
    record["epochs"] = {"best": None, "history": [], "run": 0, "stopped_by": "min_lr"}
    (run_dir / "results.json").write_text(json.dumps(record))
    assert main(["evaluate", str(run_dir)]) == 2                                   # was "deleted or moved"
    assert _one_line(capsys) == (f"error: {run_dir}: no best.pt: the run trained no epoch (results.json: "
                                 f"epochs.run 0, stopped by min_lr), so it never saved a model and its scores are "
                                 f"an untrained head's; train it again with settings that train")


def test_a_run_directory_of_another_program_is_named_so_not_a_different_configuration(tmp_path):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text('{"name": "another tool"}')
    (run_dir / "checkpoint.pt").write_bytes(b"another tool's weights")
    cfg = compose_run(tmp_path, "task=ner", "data=ner_sample", "embedder=glove", tiny=False)
    with pytest.raises(ConfigError, match="^" + re.escape(            # was "made by a different configuration"
            f"{run_dir / 'run.json'}: holds no run identity, so it is no run.json written by run.py (another "
            f"program's directory?); refusing to resume or reuse {run_dir}: choose another directory "
            f"(hydra.run.dir=...) or move it away") + "$"):
        run_experiment(run_config(cfg), run_dir)
    assert (run_dir / "checkpoint.pt").read_bytes() == b"another tool's weights"


def _hdf5(path: Path, index: dict, **datasets) -> Path:
    import h5py
    import numpy as np

    with h5py.File(path, "w") as out:
        out.create_dataset("0", data=np.ones((2, 3, 4), dtype=np.float32))
        for name, data in datasets.items():
            out.create_dataset(name, data=data)
        stored = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        stored[0] = json.dumps(index)
    return path


def test_hdf5_a_sentence_whose_dataset_is_missing_is_not_called_missing_from_the_index(tmp_path):
    from elmo_bench.base.errors import DataError
    from elmo_bench.encoders.hdf5 import Hdf5Encoder

    path = _hdf5(tmp_path / "made.hdf5", {"a b c": "0", "x y": "7"})
    with pytest.raises(DataError, match="^" + re.escape(          # was "sentence 'x y' is not in sentence_to_index"
            f"encoder=hdf5: {path}: sentence_to_index maps sentence 'x y' to dataset '7', which the file does not "
            f"hold") + "$"):
        Hdf5Encoder(path).layers([["x", "y"]])


def test_hdf5_a_mapping_to_a_dataset_that_is_no_layer_array_is_one_line(tmp_path):
    import numpy as np

    from elmo_bench.base.errors import DataError
    from elmo_bench.encoders.hdf5 import Hdf5Encoder

    path = _hdf5(tmp_path / "made.hdf5", {"a b c": "0", "x y": "sentence_to_index", "p q": "flat"},
                 flat=np.ones(5, dtype=np.float32))
    encoder = Hdf5Encoder(path)
    for words, found in ((["x", "y"], "a dataset of shape (1,) and type object"),   # was a traceback
                         (["p", "q"], "a dataset of shape (5,) and type float32")):
        with pytest.raises(DataError, match="^" + re.escape(
                f"encoder=hdf5: {path}: sentence_to_index maps sentence {' '.join(words)!r} to "
                f"{'sentence_to_index' if words[0] == 'x' else 'flat'!r}, which is no layer array (numbers shaped "
                f"(layers, tokens, dim) or (tokens, dim)): found {found}") + "$"):
            encoder.layers([words])
    with pytest.raises(DataError, match="which is no layer array"):              # the first entry: at open
        Hdf5Encoder(_hdf5(tmp_path / "first.hdf5", {"x y": "sentence_to_index"}))


def test_hdf5_a_mapping_whose_values_are_ints_says_so_not_found_dict(tmp_path):
    from elmo_bench.base.errors import DataError
    from elmo_bench.encoders.hdf5 import Hdf5Encoder

    path = _hdf5(tmp_path / "made.hdf5", {"a b c": 0})
    with pytest.raises(DataError, match="^" + re.escape(                          # was "(found dict)"
            f"encoder=hdf5: {path}: sentence_to_index maps sentences to dataset names (strings); found int 0 for "
            f"sentence 'a b c'") + "$"):
        Hdf5Encoder(path)


def test_plan_with_a_cpu_rate_and_measure_cpu_refuses_the_pair_rather_than_drop_one(capsys):
    assert main(["plan", "task=ner", "--measure-cpu", "--cpu-gflops", "5"]) == 2   # was the flag ignored, garbled
    assert _one_line(capsys) == ("error: elmo-bench plan: --cpu-gflops 5 and --measure-cpu both set the head's CPU "
                                 "rate (given by hand, or timed here); give one (see elmo-bench plan --help)")


# 8. encoder.random_init / encoder.random_seed: keys of the encoder group (docs/probes.md's spelling works in run.py)
@pytest.fixture(scope="module")
def tiny_bert():
    pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")
    from tests.hf_tiny import tiny_models

    return tiny_models()["bert"]


def _pos_transformers(tmp_path: Path, model: Path, *overrides: str):
    from tests.test_encoder_six_tasks import _pos

    return compose_run(tmp_path, *_pos(tmp_path), "embedder=elmo", "encoder=transformers", f"encoder.path={model}",
                       "trainer.max_epochs=1", "data.allow_identical_splits=true", *overrides, tiny=False)


def test_a_random_transformer_runs_through_run_py_keys(tmp_path, tiny_bert):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment

    trained = run_experiment(run_config(_pos_transformers(tmp_path, tiny_bert)), tmp_path / "trained")
    random = run_experiment(run_config(_pos_transformers(tmp_path, tiny_bert, "encoder.random_init=all",
                                                         "encoder.random_seed=3")), tmp_path / "random")
    assert random["config"]["encoder"]["random_init"] == "all" and random["config"]["encoder"]["random_seed"] == 3
    assert trained["config"]["encoder"]["random_init"] is None
    assert random["encoder"]["random_init"] == "all" and random["encoder"]["random_seed"] == 3
    assert "random_init" not in trained["encoder"]
    assert random["metrics"]["test"] != trained["metrics"]["test"]         # other layers: other numbers


@pytest.mark.parametrize(("override", "line"), [
    ("encoder.random_init=lstm", "error: config: encoder.random_init='lstm' is not available for "
                                 "encoder=transformers (encoder=transformers: all; the biLM: bilm=random "
                                 "bilm.random_init=all|lstm)"),
    ("encoder.random_seed=-1", "error: config: encoder.random_seed expected an integer >= 0 or null, found -1"),
])
def test_a_random_init_the_encoder_cannot_draw_is_refused_at_the_door(tmp_path, capsys, override, line):
    assert main(["config", "task=pos", "embedder=elmo", "encoder=transformers", f"encoder.path={tmp_path}",
                 override]) == 2
    assert _one_line(capsys) == line


def test_an_existing_transformers_runs_identity_is_unchanged_by_the_new_null_keys(tmp_path, tiny_bert):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.live_identity import identity
    from elmo_bench.engine.run_identity import check_run_dir
    from elmo_bench.engine.run_records import RUN_FILE

    run = run_config(_pos_transformers(tmp_path, tiny_bert))
    current = identity(run, None, "ast:x")
    assert current["encoder.random_init"] is None and current["encoder.random_seed"] is None
    before = {k: v for k, v in current.items() if k not in ("encoder.random_init", "encoder.random_seed")}
    run_dir = tmp_path / "old"
    run_dir.mkdir()
    (run_dir / RUN_FILE).write_text(json.dumps({"identity": before, "config": run.config()}))
    (run_dir / "checkpoint.pt").write_bytes(b"")                           # computed: its identity is compared
    assert check_run_dir(run_dir, current, run) is False                   # resumed, not "a different configuration"
    random = run_config(_pos_transformers(tmp_path, tiny_bert, "encoder.random_init=all"))
    with pytest.raises(ConfigError, match=r"made by a different configuration \(encoder.random_init: null → \"all\""):
        check_run_dir(run_dir, identity(random, None, "ast:x"), random)


def test_evaluate_on_another_programs_directory_says_so_not_that_the_run_has_not_trained(tmp_path, capsys):
    (tmp_path / "run.json").write_text('{"name": "another tool"}')
    assert main(["evaluate", str(tmp_path)]) == 2           # was "no best.pt (the run has not finished an epoch ...)"
    assert _one_line(capsys) == (f"error: {tmp_path / 'run.json'}: holds no 'config' object; expected a run.json "
                                 f"written by run.py")


def test_a_user_folder_declaring_ner_leaves_probe_runs_alone(user_tasks, capsys):
    """Issue 56 item 6: a probe run composes no task (every probe option sets ``task`` to null), so the clash of a
    user folder declaring a shipped task's name is no probe run's business; a task run still gets the clash line."""
    from elmo_bench.commands.compose import compose_job, job_run
    from elmo_bench.engine.probe_config import ProbeRunConfig

    user_tasks("user45_probener", DECLARE.format(name="ner", target=".task:MyNer"))
    for probe in ("structural", "ridge", "conditional", "amnesic_lm"):
        overrides = [f"probe={probe}", *(["probe.erasers=runs/erasure"] if probe == "amnesic_lm" else [])]
        cfg = compose_job(overrides, check=False)
        assert "task" not in cfg and cfg.choices["task"] is None, probe
        assert isinstance(job_run(overrides, check=False, files=False), ProbeRunConfig)
    assert main(["plan", "probe=structural", "probe.data_dir=/nonexistent/ud", "--format", "json"]) == 0
    capsys.readouterr()
    assert main(["config", "task=ner"]) == 2
    assert "is declared by two packages" in _one_line(capsys)
