"""The README and docs/*.md are tested: every fenced shell command is checked without running its job, every
relative link and image resolves, every Python example imports (the marked ones run). The rules are in
tests/doc_commands.py's docstring; the quickstart table is checked in tests/test_readme_quickstart.py."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from elmo_bench.bilm.default import DEFAULT_WEIGHTS
from tests.doc_commands import (
    DOC_FILES,
    EXAMPLE_MODULES,
    NEEDS_MARK,
    REPO,
    RUN_MARK,
    SHELL,
    DocCommand,
    check_command,
    check_link,
    check_snippet,
    dotted_names,
    fenced_blocks,
    links,
    python_snippets,
    resolve_dotted,
    shell_blocks,
    shell_commands,
)


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(REPO)) for p in paths]


@pytest.mark.parametrize("doc", DOC_FILES, ids=_ids(DOC_FILES))
def test_documented_commands_check(doc: Path) -> None:
    failures, kinds = [], Counter()
    for command in shell_commands(doc):
        try:
            kinds[check_command(command)] += 1
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)


def test_the_docs_have_commands_of_every_kind() -> None:
    """A collector that silently found nothing would pass the test above."""
    commands = [c for doc in DOC_FILES for c in shell_commands(doc)]
    heads = Counter(c.words[0] if c.words[0] != "python" else f"python {c.words[1]}" for c in commands)
    assert len(commands) > 100 and heads["python run.py"] >= 30 and heads["elmo-bench"] >= 30, heads
    readme = [" ".join(c.words) for c in shell_commands(REPO / "README.md")]
    assert readme[:6] == ["pip install -e .", "python run.py", "python -m venv --clear .venv", ". .venv/bin/activate",
                          "pip install -q -e .[dev]", "python -m pytest -n 2"]


@pytest.mark.parametrize("doc", DOC_FILES, ids=_ids(DOC_FILES))
def test_every_block_leads_with_a_command_a_fresh_clone_runs(doc: Path) -> None:
    """A reader copies a block's first line: unless the block is marked as a whole (``<!-- docs-run: needs ... -->``:
    a GPU guide's runs), it needs nothing beyond the README's setup offline; alternatives (hub names, your own
    files, a GPU) come after it, marked ``# needs: ...``. No placeholder clone URL either."""
    for (_, _, before), block in zip(fenced_blocks(doc, SHELL), shell_blocks(doc), strict=True):
        if block and not NEEDS_MARK.match(before):
            assert not block[0].needs, f"{block[0].where()}: a block's leading command is marked: {block[0].needs}"
    assert "ELMO_BENCH_URL" not in doc.read_text(encoding="utf-8")


def test_the_runner_runs_the_docs_tests_commands() -> None:
    """scripts/run_documented_commands.py runs exactly the commands this test checks (one extractor), the README
    first, and marks what it will not run."""
    runner = _runner()
    assert runner.shell_commands is shell_commands and runner.documents([]) == DOC_FILES
    assert runner.documents(["docs/probes.md"]) == [REPO / "README.md", REPO / "docs" / "probes.md"]
    readme = shell_commands(REPO / "README.md")
    gpu = [c for c in readme if c.words[:3] == ("python", "run.py", "task=srl")]
    assert readme[0].words == ("pip", "install", "-e", ".") and gpu[0].needs == "a GPU"
    assert runner.must_finish(readme[1]) and not runner.must_finish(gpu[0])   # the quickstart: guides use its runs
    quickstart_only = [c for c in readme if not runner.skipped_readme(c, "quickstart")]
    assert quickstart_only == [c for c in readme if runner.must_finish(c)]     # --readme quickstart: those alone
    assert quickstart_only[0].words == ("python", "run.py") and len(quickstart_only) < len(readme) / 5
    assert not any(runner.skipped_readme(c, "all") for c in readme)
    assert not any(runner.skipped_readme(c, "quickstart") for c in shell_commands(REPO / "docs" / "probes.md"))
    outcome = runner.run_one(readme[4], REPO, 1.0, "quickstart")            # pip: skipped before anything runs
    assert (outcome.status, outcome.detail) == ("skip", "not run: --readme quickstart")
    assert [runner.run_one(c, REPO, 1.0).status for c in readme[2:5]] == ["setup"] * 3  # venv, activate, pip


def test_the_runner_passes_fails_stops_and_skips(tmp_path) -> None:
    """Each outcome of a run, on commands of a tiny doc: pass, fail (with the exit code), limit (stopped at the
    timeout), needs (not run) and setup (pip: not run); the documented environment prefix reaches the command."""
    runner = _runner()
    doc = _doc(tmp_path, "```bash\nFOO=bar python -c \"import os, sys; sys.exit(os.environ['FOO'] != 'bar')\"\n"
                         "python -c \"import sys; sys.exit(3)\"\npython -c \"import time; time.sleep(60)\"\n"
                         "python -c \"print(1)\"  # needs: a GPU\npip install -e .\n```\n")
    outcomes = [runner.run_one(c, tmp_path, timeout=2) for c in shell_commands(doc)]
    assert [o.status for o in outcomes] == ["pass", "fail", "limit", "needs", "setup"], outcomes
    assert outcomes[1].detail.startswith("exit 3") and outcomes[2].seconds < 20 and outcomes[3].detail == "a GPU"
    seen: list = []
    for outcome in outcomes:             # a failure after the stopped command may read what it did not finish
        seen.append(runner.after_a_stop(outcome, seen))
    assert [o.status for o in seen] == ["pass", "fail", "limit", "needs", "setup"]    # the failure came first
    late = runner.after_a_stop(outcomes[1], seen)
    assert late.status == "after" and late.detail == f"{outcomes[1].detail}; after {outcomes[2].command.where()} " \
                                                      "was stopped"
    other = runner.Outcome(DocCommand(tmp_path / "other.md", 1, ("false",)), "fail", 0.1, "exit 1")
    assert runner.after_a_stop(other, seen).status == "fail"                         # another document's stop


def _runner():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("run_documented_commands",
                                                  REPO / "scripts" / "run_documented_commands.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module               # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("doc", DOC_FILES, ids=_ids(DOC_FILES))
def test_relative_links_and_images_resolve(doc: Path) -> None:
    for line, target in links(doc):
        check_link(doc, line, target)


def test_the_readme_links_every_guide() -> None:
    targets = {target for _, target in links(REPO / "README.md")}
    assert {f"docs/{p.name}" for p in (REPO / "docs").glob("*.md")} <= targets


@pytest.mark.parametrize("doc", DOC_FILES, ids=_ids(DOC_FILES))
def test_python_examples(doc: Path) -> None:
    for snippet in python_snippets(doc):
        if snippet.run and not DEFAULT_WEIGHTS.exists():
            pytest.skip("the shipped biLM (elmo_bench/resources/bilm) is absent")
        check_snippet(snippet)


def test_the_bilm_api_example_runs() -> None:
    """docs/bilm.md's Python API example is the one marked to run (imports from the moved modules included)."""
    marked = [s for s in python_snippets(REPO / "docs" / "bilm.md") if s.run]
    assert len(marked) == 1 and "from elmo_bench.modules.elmo import Elmo" in marked[0].code


@pytest.mark.parametrize("doc", [*DOC_FILES, REPO / "conf" / "README_SCHEMA.md"],
                         ids=_ids([*DOC_FILES, REPO / "conf" / "README_SCHEMA.md"]))
def test_module_paths_named_in_the_docs_exist(doc: Path) -> None:
    """``elmo_bench.x.y`` and ``elmo_bench.x.y:Name`` in the text name a module or attribute that exists (the
    package's modules moved once already)."""
    for line, name in dotted_names(doc):
        if not name.startswith(EXAMPLE_MODULES):
            assert resolve_dotted(name) is not None, f"{doc.name}:{line}: {name}"


def test_a_moved_module_path_fails(tmp_path) -> None:
    doc = _doc(tmp_path, "The mixes: `elmo_bench.mix`; `.elmo_bench.lock` and `elmo_bench.lm_adaptation/1` are no modules.\n")
    assert dotted_names(doc) == [(1, "elmo_bench.mix")]
    with pytest.raises(AttributeError):
        resolve_dotted("elmo_bench.mix")                     # moved to elmo_bench.modules.elmo


# ---------------------------------------------------------------------------------------- the checks can fail

def _doc(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "guide.md"
    path.write_text(body, encoding="utf-8")
    return path


def _failures(path: Path) -> list[str]:
    out = []
    for command in shell_commands(path):
        try:
            check_command(command)
        except AssertionError as exc:
            out.append(str(exc))
    return out


def test_continuations_comments_chains_and_env_prefixes(tmp_path) -> None:
    doc = _doc(tmp_path, "text\n\n```bash\n# a comment line\nHF_HOME=/x WANDB_MODE=offline python run.py task=ner \\\n"
                         "    seed=2   # the seed\npip install -e . && elmo-bench report results/ --out r/; cd /tmp\n```\n")
    assert [(c.line, c.words) for c in shell_commands(doc)] == [
        (5, ("python", "run.py", "task=ner", "seed=2")), (7, ("pip", "install", "-e", ".")),
        (7, ("elmo-bench", "report", "results/", "--out", "r/")), (7, ("cd", "/tmp"))]
    assert _failures(doc) == []
    assert [c.env for c in shell_commands(doc)] == [("HF_HOME=/x", "WANDB_MODE=offline"), (), (), ()]


def test_needs_marks_on_a_line_and_on_a_block(tmp_path) -> None:
    doc = _doc(tmp_path, "```bash\npython run.py\npython run.py device=cuda \\\n    amp=bf16  # needs: a GPU\n```\n\n"
                         "<!-- docs-run: needs a SLURM cluster -->\n```bash\npython run.py -m experiment=table1\n```\n")
    assert [(c.line, c.needs) for c in shell_commands(doc)] == [(2, ""), (3, "a GPU"), (9, "a SLURM cluster")]
    assert [len(b) for b in shell_blocks(doc)] == [2, 1]


@pytest.mark.parametrize("command, says", [
    ("python run.py task=ner trainer.max_epoch=3", "max_epoch"),                  # a typo: Hydra refuses the key
    ("python run.py task=ner +trainer.max_epoch=3", "max_epoch"),                 # added key read by nothing
    ("python run.py trainer.batch_size=0", "trainer.batch_size"),                 # the quickstart, a range check
    ("python run.py -m task=ner,nope embedder=glove", "nope"),                    # a later value of a sweep
    ("python run.py task=ner seed=1,2", "without -m"),
    ("python run.py -m experiment=table1 hydra/launcher=slurm hydra.launcher.partitio=gpu", "partitio"),
    ("elmo-bench report results/ --formt md", "refused"),
    ("elmo-bench plan experiment=paper_table1 task=nope", "nope"),
    ("python -m elmo_bench pretrain pretrain.max_tokenz=3", "max_tokenz"),
    ("elmo-bench probe-everything", "no subcommand"),
    ("python -m pytest tests/test_no_such_file.py", "no such test path"),
    ("python scripts/no_such_script.py", "no such script"),
    ("OUT=x scripts/no_such_check.sh", "no executable script"),
    ("pip install -e \".[gpu-extra]\"", "no extra"),
    ("make all", "no rule"),
    (". ./run.py", "bin/activate"),
])
def test_a_bad_documented_command_fails(tmp_path, command, says) -> None:
    failures = _failures(_doc(tmp_path, f"```bash\n{command}\n```\n"))
    assert len(failures) == 1 and failures[0].startswith(f"{tmp_path / 'guide.md'}:2: ") and says in failures[0], \
        failures


def test_a_broken_link_or_anchor_fails(tmp_path) -> None:
    (tmp_path / "other.md").write_text("# Other guide\n\n## The `plan` command\n")
    doc = _doc(tmp_path, "[ok](other.md#the-plan-command) ![img](missing.png) [bad](other.md#nothing) "
                         "[web](https://example.org) `[code](nowhere.md)`\n")
    found = links(doc)
    assert [t for _, t in found] == ["other.md#the-plan-command", "missing.png", "other.md#nothing",
                                     "https://example.org"]
    assert check_link(doc, 1, found[0][1]) and not check_link(doc, 1, found[3][1])
    for target, says in ((found[1][1], "does not exist"), (found[2][1], "no heading #nothing")):
        with pytest.raises(AssertionError, match=says):
            check_link(doc, 1, target)


def test_a_python_example_with_a_moved_import_fails(tmp_path) -> None:
    doc = _doc(tmp_path, "```python\nfrom elmo_bench.mix import ScalarMix\n```\n\n" + RUN_MARK +
               "\n```python\nassert 1 + 1 == 3\n```\n")
    stale, wrong = python_snippets(doc)
    assert not stale.run and wrong.run
    with pytest.raises(ModuleNotFoundError):
        check_snippet(stale)
    with pytest.raises(AssertionError):
        check_snippet(wrong)


def test_the_doc_command_names_its_place() -> None:
    command = DocCommand(REPO / "README.md", 7, ("python", "run.py", "task=nope"))
    with pytest.raises(AssertionError, match=r"^README.md:7: python run.py task=nope"):
        check_command(command)
