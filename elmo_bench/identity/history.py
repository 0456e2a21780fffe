"""Every compatibility rule for records written by older versions of this project, in one place: nothing else in
the code names an old form. Each rule says what older records hold and what today's identity holds instead.

Rules on a flat identity (``dotted.key: value``):
- :data:`ADDED_DEFAULTS`: keys added to the config after run directories existed, with the value that reproduces
  the old behaviour (a stored identity without the key equals one that holds this value);
- :data:`REMOVED_KEYS`: keys older identities held and that are no longer part of one;
- :data:`LEGACY_CODE` and :data:`SAME_NUMBERS`: the task-code hashes older run directories recorded (``code.task``,
  before plug-ins carried a version) mapped onto the code hashes the committed manifest lists under a version
  (elmo_bench.identity.manifest): such a run is a run of that version;
- a stored ``code.task`` / ``code.probe`` hash becomes ``plugin.task`` / ``plugin.probe`` (``name@version``) through
  the manifest (:func:`version_of_code`), and an identity without ``encoder.plugin`` is of version 1 of its
  encoder kind (:func:`encoder_plugin`; a record that names no version: :func:`plugin_before_versions`); a
  record or identity that names no encoder kind is the biLM's (:data:`LEGACY_KIND`); the task-code hash run directories recorded before the AST hash is computed by
  :func:`source_bytes_hash`.

Rules on a whole record or run directory:
- an entry added to results.json's ``encoder`` section names, with the value older records implied, the encoder
  they name without it (:data:`IMPLIED_ENCODER_ENTRIES`, :func:`without_implied_entries`);
- a results.json written before run.json existed is compared on the keys both identities hold, its task's code
  left to git (:data:`OLDER_RESULTS_SKIP`, :func:`older_results_compared`);
- a run directory named before issue 45 spelled a path as written where today's names it by content
  (:func:`older_names_by_content`, :func:`older_run_dir`).
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Callable, Mapping

#: the encoder kind of every record and identity written before encoder kinds existed (they name none): the biLM
LEGACY_KIND = "bilm"
#: keys added to the config after run directories already existed → the value that gives the old behaviour
ADDED_DEFAULTS: dict[str, Any] = {"amp": "off", "trainer.rho": None, "trainer.eps": None, "encoder.kind": LEGACY_KIND,
                                   "encoder.cache_dtype": "fp16",
                                   # issue 36: random-encoder baselines (bilm=random, encoder.random_init=all)
                                   "bilm.random_init": None, "bilm.random_seed": None,
                                   "encoder.random_init": None, "encoder.random_seed": None,
                                   # issue 38: jiant's plateau halving of the lr (the edge tasks set it)
                                   "trainer.lr_plateau_factor": None, "trainer.lr_plateau_patience": None,
                                   "trainer.lr_plateau_threshold": None, "trainer.lr_plateau_min_lr": None,
                                   # issue 46: large models (encoder=transformers)
                                   "encoder.layers": None, "encoder.dtype": "float32", "encoder.max_tokens": None,
                                   "shard_sentences": 0,  # issue 46: sharded cache entries
                                   # issue 47: amnesic probing inside the forward pass (off)
                                   "encoder.erase.concept": None, "encoder.erase.layer": None,
                                   "encoder.erase.control": "none", "encoder.erase.seed": 0,
                                   "encoder.erase.path": None}
#: keys earlier versions had in every composed config and read nowhere: dropped from a stored identity before
#: comparing (``task.default_data``: each task YAML named a dataset that conf/config.yaml's ``data: default_<task>``
#: chose anyway; removed in issue 35; ``encoder.path``: recorded until issue 45, the model's location, which
#: ``encoder.hash`` stands for by content)
REMOVED_KEYS = ("task.default_data", "encoder.path")
#: source-bytes hashes that run directories recorded before the AST hash (each shipped task, and tests/tiny_task,
#: at git a076744, the last commit with the bytes hash) → the AST hash (imports in file order) of the task code
#: that behaves the same. Issue 35 changed no number of a task: it added the declarations, split coref's and
#: squad's longest reader functions into helpers, moved SST's phrase rule into SstTask.own_text and made
#: SquadTask's unreachable answer_offsets fallback the run default. Followed on through ``SAME_NUMBERS``.
LEGACY_CODE: dict[str, str] = {
    "54535befcbd2d15c": "ast:b58427b2e7353bb3",  # tasks/coref
    "2c37de0ed42a45f1": "ast:7d823cc813fcbb83",  # tasks/ner
    "59b9a441091f06a1": "ast:813c6ef5c2d42c04",  # tasks/pos
    "61899abab67661af": "ast:7693022e1cf244c2",  # tasks/snli
    "13613dda9678d454": "ast:f43fa74c1e1217e2",  # tasks/squad
    "20d5ec9a154ff1c5": "ast:d373bfff1350ed2c",  # tasks/srl
    "4e305fb6db0afcaf": "ast:6b0841eb91ec838d",  # tasks/sst
    "9823499ed8b843fb": "ast:5bf96ebfecba8592",  # tests/tiny_task
}
#: AST hashes run directories recorded → the AST hash of a later version of the same task that gives the same
#: numbers (chains are followed):
#: - sst ``6b0841eb…`` → ``a3187b73…`` (git 49a838e, issue 34): SstTask.example_key counts only roots as text shared
#:   between splits: which runs the overlap check refuses, never a number;
#: - every task at git c53501e → at git 559e30b (issue 35): the hash ignores the order of a block of imports, and
#:   pos, srl, sst and squad read their own data keys typed (the same defaults); coref pops ``use_genres`` with
#:   None for absent (falsy, as False was). tests/test_code_identity.py recomputes each pair from the two commits;
#: - the six edge tasks at git 559e30b → with the task code they reuse in their hash (no code changed).
SAME_NUMBERS: dict[str, str] = {
    "ast:6b0841eb91ec838d": "ast:a3187b7328d5d535",  # tasks/sst, issue 34's example_key
    # git c53501e → 559e30b, issue 35 (above)
    "ast:b58427b2e7353bb3": "ast:321c89a7a23d6ade",  # tasks/coref
    "ast:cfdf9ba9e0e50fef": "ast:8f3d53a119824ec0",  # tasks/edge_chunk
    "ast:ce038dab22dc353f": "ast:28cf2c95e789d8f1",  # tasks/edge_coref
    "ast:6ab59560ac08f64b": "ast:098beef51e081ae9",  # tasks/edge_dep
    "ast:2f494c5a2cdfce35": "ast:182e9b6bfa258a85",  # tasks/edge_ner
    "ast:d8bdfcdf9c7bf237": "ast:a7657fecefa5d364",  # tasks/edge_pos
    "ast:4fed835270e72da5": "ast:9961a79cc8f12629",  # tasks/edge_srl
    "ast:7d823cc813fcbb83": "ast:72110faaf87f9e68",  # tasks/ner
    "ast:813c6ef5c2d42c04": "ast:337868f8475f0870",  # tasks/pos
    "ast:7693022e1cf244c2": "ast:7dd1c7c413ce14d6",  # tasks/snli
    "ast:f43fa74c1e1217e2": "ast:e41630e993e456b9",  # tasks/squad
    "ast:d373bfff1350ed2c": "ast:befa330b98c1e479",  # tasks/srl
    "ast:a3187b7328d5d535": "ast:92b4d251ffa75e09",  # tasks/sst
    "ast:5bf96ebfecba8592": "ast:a257d0ef1081d820",  # tests/tiny_task
    # git 559e30b → the reused task code in the hash (above)
    "ast:8f3d53a119824ec0": "ast:69bc5f123b81b180",  # tasks/edge_chunk
    "ast:28cf2c95e789d8f1": "ast:7eb9a5dc800d7ff1",  # tasks/edge_coref
    "ast:098beef51e081ae9": "ast:15e217a9cf9096e3",  # tasks/edge_dep
    "ast:182e9b6bfa258a85": "ast:b420cde07317a013",  # tasks/edge_ner
    "ast:a7657fecefa5d364": "ast:379797db419435c3",  # tasks/edge_pos
    "ast:9961a79cc8f12629": "ast:a83067e999385081",  # tasks/edge_srl
}
#: the identity keys of the plug-ins' versions (``name@version``) and the code-hash keys older identities held
PLUGIN_KEYS = {"task": "code.task", "probe": "code.probe"}
#: the encoder kind's version key; identities before versions lack it (version 1 of the run's kind)
ENCODER_PLUGIN = "encoder.plugin"


def successors(recorded: str) -> list[str]:
    """The code hashes that give the numbers of ``recorded`` (itself first), through ``LEGACY_CODE`` and
    ``SAME_NUMBERS``."""
    chain = [recorded]
    while (after := LEGACY_CODE.get(chain[-1]) or SAME_NUMBERS.get(chain[-1])) is not None and after not in chain:
        chain.append(after)
    return chain


def version_of_code(recorded: str, versions: Mapping[str, int]) -> int | None:
    """The version whose manifest lines list ``recorded`` or a hash it is followed by (``successors``); None when
    no version does (code of an unrecorded version: a different identity)."""
    for code in successors(recorded):
        if code in versions:
            return versions[code]
    return None


def plugin_before_versions(name: Any) -> str:
    """``name@1``: the plug-in ``name`` as a record or identity written before plug-ins carried a version names
    it (none; every plug-in was at version 1 then). Today's records name each plug-in's version (``plugins``)."""
    return f"{name}@1"


def encoder_plugin(flat: Mapping[str, Any]) -> str:
    """``encoder.plugin`` of an identity written before encoder kinds carried a version: version 1 of its kind."""
    return plugin_before_versions(flat.get("encoder.kind", LEGACY_KIND))


#: entries of results.json's ``encoder`` section recorded since they were added, with the value a record written
#: before then implied by leaving them out (``dtype``: recorded since issue 46, float32 before it)
IMPLIED_ENCODER_ENTRIES: dict[str, Any] = {"dtype": "float32"}


def without_implied_entries(encoder: Mapping[str, Any]) -> dict[str, Any]:
    """An encoder section less each entry that holds the value older records implied
    (:data:`IMPLIED_ENCODER_ENTRIES`): a float32 encoder recorded since issue 46 (``dtype: float32``) and one
    recorded before it (no ``dtype``) are one encoder; any other dtype stays in."""
    return {k: v for k, v in encoder.items() if not (k in IMPLIED_ENCODER_ENTRIES and v == IMPLIED_ENCODER_ENTRIES[k])}


def source_bytes_hash(root: Path) -> str:
    """The task-code hash run directories recorded before the AST hash (elmo_bench.engine.code_identity.code_hash):
    sha256 of the bytes of every ``.py`` file below ``root``, 16 hex digits. Today's code hashed this way is still
    accepted for them while it is byte for byte what they ran; ``LEGACY_CODE`` maps the shipped tasks' last bytes
    hashes onto AST hashes."""
    digest = hashlib.sha256()
    for source in sorted(root.rglob("*.py")):
        digest.update(str(source.relative_to(root)).encode() + b"\0" + source.read_bytes())
    return digest.hexdigest()[:16]


#: identity keys never compared for a results.json written before run.json: it recorded no hash of its task's
#: code; whether that code changed since is git's answer instead, over the commit the record holds
#: (elmo_bench.engine.run_identity.code_changed_since)
OLDER_RESULTS_SKIP = ("code.task", "plugin.task")


def older_results_compared(stored: Mapping[str, Any], current: Mapping[str, Any]) -> tuple[dict[str, Any],
                                                                                           dict[str, Any]]:
    """Two canonical identities narrowed to what a run directory holding a results.json but no run.json (written
    before run.json existed) can be compared on. Such a directory records no identity, only the config its run
    resolved: the stored side is today's identity of that config (elmo_bench.engine.run_records.read_results),
    which lacks every key added to the config since (beyond ``ADDED_DEFAULTS``) and may hold keys read nowhere
    today. Today's run.json holds the identity itself, compared key by key. So only the keys both hold are
    compared, less :data:`OLDER_RESULTS_SKIP`."""
    shared = (set(stored) & set(current)) - set(OLDER_RESULTS_SKIP)
    return {k: stored[k] for k in shared}, {k: current[k] for k in shared}


def older_names_by_content(key: str, value: str) -> bool:
    """Which override values run-directory names made before issue 45 spelled by their content: none. They spelled
    every value as written, a model's or data file's path included (``encoder.path=/abs/models/foo`` became
    ``encoder.path=_abs_models_foo``, a value past 40 characters shortened as any value is). Today's names spell a
    path by its label instead (its name and a hash of its content: elmo_bench.commands.hydra_setup.path_label,
    chosen by ``names_a_path``), so a moved model keeps its run directory and no machine's path is in a name."""
    return False


def older_run_dir(output_dir: Path, run_name: Callable[..., str]) -> Path | None:
    """The directory a run had under the names before issue 45 (:func:`older_names_by_content`) when that name
    differs from today's; None when the two are one name, and when ``output_dir`` does not end with today's name
    (hydra.run.dir or hydra.sweep.subdir chose it). The engine resumes the run there when its identity matches
    (elmo_bench.engine.run_identity.choose_run_dir). ``run_name(by_content=...)`` is the run's name below its
    results directory (elmo_bench.commands.hydra_setup.sweep_path with the run's overrides and config bound):
    naming runs belongs to the commands layer, above this one, so the caller passes it in and only the rule of
    the older names lives here."""
    new, old = run_name(), run_name(by_content=older_names_by_content)
    if new == old or not output_dir.as_posix().endswith("/" + new):
        return None
    return Path(output_dir.as_posix()[: -len(new)] + old)
