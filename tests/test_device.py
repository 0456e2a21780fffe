"""``device`` and ``amp``: resolution (auto → the CPU here; CUDA where there is none → one line, exit 2), the
forward pass under autocast, a whole engine run in bf16 and fp16 on the CPU, and static checks that every tensor the
heads, losses and modules create at forward time follows the module's device (so a GPU run cannot meet a CPU tensor).
"""
from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import pytest
import torch

from elmo_bench.base.device import arithmetic, autocast, cpu_model, normalise_amp, resolve_device
from elmo_bench.base.errors import ConfigError
from elmo_bench.commands import main as cli
from elmo_bench.engine.collate import Collator
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.engine.loop import TaskModel
from elmo_bench.modules.token_embedders import TaskEmbedder, WordVocabulary
from elmo_bench.tasks.registry import registered
from tests.conftest import REPO, needs_fixtures
from tests.engine_helpers import TINY, compose_run
from tests.tiny_task.task import TinyTask, read_tsv
from tests.warm_python import run_python

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present: the missing-CUDA error cannot occur")
has_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU on this machine")


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(registered(), "tiny", TINY)


def test_auto_and_cpu_resolve_and_bad_specs_name_the_key():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    for bad in ("gpu", "cuda:x", "CUDA", "meta", 0, None):
        with pytest.raises(ConfigError, match=r"^config: device expected one of auto, cpu, cuda, cuda:N, found"):
            resolve_device(bad)
    assert normalise_amp(False) == "off" and normalise_amp("bf16") == "bf16"  # YAML's bare off is False
    with pytest.raises(ConfigError, match=r"^config: amp expected one of off, bf16, fp16, found 'fp8'$"):
        normalise_amp("fp8")


@no_cuda
@pytest.mark.parametrize("spec", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_where_there_is_none_is_one_line(spec):
    with pytest.raises(ConfigError) as caught:
        resolve_device(spec)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"config: device={spec} asks for CUDA, but ")
    assert message.endswith("use device=cpu or device=auto")


@has_cuda
def test_cuda_resolves_where_a_gpu_is_present():
    assert resolve_device("cuda").type == "cuda"
    with pytest.raises(ConfigError, match="names GPU 99"):
        resolve_device("cuda:99")


@no_cuda
def test_run_py_with_device_cuda_fails_with_one_line_and_exit_2(tmp_path):
    done = run_python(["run.py", "device=cuda", "logger=disabled", "progress=false",
                       f"paths.results_dir={tmp_path}"], cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: config: device=cuda asks for CUDA"), done.stderr
    assert not list(tmp_path.rglob("results.json"))


@no_cuda
@pytest.mark.parametrize("command", [["embed", "--input", "x.txt", "--output", "y.hdf5"], ["perplexity", "--input", "x"]])
def test_embed_and_perplexity_take_device(command, capsys):
    assert cli.main([*command, "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: config: --device=cuda asks for CUDA"), err
    assert cli.main([*command, "--device", "tpu"]) == 2
    assert "--device expected one of auto, cpu, cuda, cuda:N, found 'tpu'" in capsys.readouterr().err


def _tiny_model(amp: str) -> tuple[TaskModel, Collator, list]:
    torch.manual_seed(0)
    task = TinyTask()
    train = read_tsv(REPO / "tests/tiny_task/samples/train.tsv")
    vocab = WordVocabulary(sorted({w for e in train for w in e["tokens"]}))
    embedder = TaskEmbedder(torch.randn(len(vocab), 8), True, None)
    return TaskModel(embedder, task.build_head({}, {"tokens": embedder.input_dim}, 0), amp=amp), \
        Collator(task, vocab, None), train


@pytest.mark.parametrize("amp, dtype", [("off", torch.float32), ("bf16", torch.bfloat16), ("fp16", torch.float16)])
def test_the_forward_pass_runs_in_the_amp_dtype(amp, dtype):
    model, collator, train = _tiny_model(amp)
    output = model(collator(train[:4]))
    assert output["logits"].dtype == dtype  # the head's linear layer ran under autocast
    assert output["loss"].dtype == torch.float32  # cross_entropy autocasts to fp32
    assert torch.isfinite(output["loss"])


def test_autocast_off_is_a_no_op_and_the_model_reports_its_device():
    model, _, _ = _tiny_model("off")
    assert model.device == torch.device("cpu")
    with autocast(torch.device("cpu"), "off"):
        assert not torch.is_autocast_enabled("cpu")
    with autocast(torch.device("cpu"), "bf16"):
        assert torch.is_autocast_enabled("cpu")


@needs_fixtures
@pytest.mark.parametrize("amp", ["bf16", "fp16"])
def test_an_engine_run_on_cpu_with_amp_is_finite_and_records_device_and_amp(tmp_path, tiny, amp):
    run_dir = tmp_path / "run"
    results = run_experiment(run_config(compose_run(tmp_path, "device=cpu", f"amp={amp}", "trainer.max_epochs=2")), run_dir)
    assert results["device"] == {"requested": "cpu", "used": "cpu", "name": "cpu", "amp": amp}
    saved = json.loads((run_dir / "results.json").read_text())
    assert saved["device"]["amp"] == amp and saved["config"]["amp"] == amp
    assert all(math.isfinite(h["loss"]) for h in saved["history"])
    assert all(math.isfinite(v) for split in saved["metrics"].values() for v in split.values())
    checkpoint = torch.load(run_dir / "checkpoint.pt", weights_only=True)
    assert (checkpoint["scaler"] is not None) == (amp == "fp16")  # fp16 scales the loss, bf16 does not
    assert all(t.dtype == torch.float32 for t in checkpoint["model"].values() if t.is_floating_point())


@needs_fixtures
def test_amp_is_part_of_the_run_identity_and_device_is_not(tmp_path, tiny):
    run_dir = tmp_path / "run"
    first = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    assert first["device"]["requested"] == "auto" and first["device"]["amp"] == "off"
    again = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1", "device=cpu")), run_dir)  # skipped: same run
    assert again["metrics"] == first["metrics"]
    with pytest.raises(ConfigError, match=r'\(amp: "off" → "bf16"\)'):
        run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1", "amp=bf16")), run_dir)
    # a run directory made before the amp key existed equals amp=off
    record = run_dir / "run.json"
    stored = json.loads(record.read_text())
    del stored["identity"]["amp"], stored["identity"]["trainer.rho"], stored["identity"]["trainer.eps"]
    record.write_text(json.dumps(stored))
    assert run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)["metrics"] == first["metrics"]


# ---- static checks over the code that runs inside forward passes ------------------------------------------------

FORWARD_CODE = [*sorted((REPO / "tasks").glob("*/model.py")), *sorted((REPO / "tasks").glob("*/decode.py")),
                *sorted((REPO / "tasks").glob("*/task.py")), *sorted((REPO / "tasks").glob("*/metric.py")),
                REPO / "tasks/ner/crf.py", *sorted((REPO / "elmo_bench/modules").glob("*.py")),
                REPO / "elmo_bench/modules/elmo.py", REPO / "elmo_bench/modules/token_embedders.py", REPO / "elmo_bench/data/batch.py",
                REPO / "elmo_bench/bilm/model.py", REPO / "elmo_bench/bilm/lstm.py",
                REPO / "elmo_bench/bilm/token_encoder.py"]
FACTORIES = {"zeros", "ones", "arange", "tensor", "full", "empty", "eye", "rand", "randn", "randint", "linspace",
             "as_tensor", "from_numpy"}
#: functions that build tensors on the CPU on purpose (each says why)
CPU_ON_PURPOSE = {
    "__init__": "parameters and buffers: nn.Module.to moves them",
    "targets": "gold tensors of a batch, built on the CPU with the collator and moved by Batch.to",
    "bio_constraints": "BIO masks built once, registered as CRF buffers (moved with the module) or used on the CPU",
    "decode_batch": "SRL decoding moves the logits to the CPU first (logits.detach().float().cpu())",
    "build_glove": "the GloVe table, wrapped in nn.Embedding (moved with the module)",
}


def _factory_calls_without_device(path: Path, root: Path = REPO) -> list[str]:
    tree = ast.parse(path.read_text())
    found = []

    def visit(node: ast.AST, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == "torch"
                    and child.func.attr in FACTORIES and function not in CPU_ON_PURPOSE and function != "<module>"
                    and not any(k.arg == "device" for k in child.keywords)):
                found.append(f"{path.relative_to(root)}:{child.lineno} torch.{child.func.attr} in {function}()")
            visit(child, name)

    visit(tree, "<module>")
    return found


def test_tensors_made_inside_forward_code_follow_the_device():
    offenders = [hit for path in FORWARD_CODE for hit in _factory_calls_without_device(path)]
    assert not offenders, "tensors created without device= (they land on the CPU under a GPU run):\n" + "\n".join(offenders)


def test_the_static_check_catches_a_cpu_tensor(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("import torch\nclass H:\n    def __init__(self):\n        self.w = torch.zeros(3)\n"
                      "    def forward(self, x):\n        return x + torch.arange(3)\n")
    assert _factory_calls_without_device(sample, tmp_path) == ["m.py:6 torch.arange in forward()"]


#: the one place the meta device is meant: meta.meta_model builds a model from its config.json alone (plan's
#: parameter counts, issue 46 item 8; the max_memory check and plan's per-device placement, issue 58 item 3), with no
#: memory and no weights read; nothing computed there reaches a run
META_ALLOWED = {"elmo_bench/encoders/transformers/meta.py"}


def test_production_code_never_uses_the_meta_device_or_hard_coded_cuda():
    meta = re.compile(r"""device\(\s*["']meta|device\s*=\s*["']meta|\.to\(\s*["']meta|\.cuda\(\)""")
    sources = [*(REPO / "elmo_bench").rglob("*.py"), *(REPO / "tasks").rglob("*.py"), REPO / "run.py"]
    offenders = [f"{p.relative_to(REPO)}:{i}" for p in sources for i, line in enumerate(p.read_text().splitlines(), 1)
                 if meta.search(line) and not (str(p.relative_to(REPO)) in META_ALLOWED and ".cuda()" not in line)]
    assert not offenders, offenders


@no_cuda
def test_pretraining_asking_for_cuda_is_one_line_too():
    from elmo_bench.pretrain.pretrain_config import PretrainConfig
    from elmo_bench.pretrain.train import Trainer

    with pytest.raises(ConfigError, match=r"^config: pretrain.device=cuda:1 asks for CUDA, but .*pretrain.device=auto$"):
        Trainer(PretrainConfig.of({"device": "cuda:1"}))


def test_arithmetic_records_the_threads_kernels_and_builds_that_fix_a_cpu_runs_last_bits():
    before = torch.get_num_threads()
    try:
        for threads in (1, 2):
            torch.set_num_threads(threads)
            assert arithmetic()["threads"] == threads
    finally:
        torch.set_num_threads(before)
    record = arithmetic()
    assert record["torch"] == torch.__version__
    assert record["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert record["mkl"] is None or record["mkl"] in torch.__config__.show()
    json.dumps(record)                                        # plain JSON, no path
    assert not any(isinstance(v, str) and v.startswith("/") for v in record.values())


def test_cpu_model_is_procs_model_name_family_model_and_stepping():
    info = Path("/proc/cpuinfo")
    if not info.exists() or "model name" not in info.read_text():
        pytest.skip("no /proc/cpuinfo model name here")
    first = info.read_text().split("\n\n")[0].splitlines()
    field = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in first)}
    assert cpu_model() == (f"{field['model name']} (family {field['cpu family']}, model {field['model']}, "
                           f"stepping {field['stepping']})")
