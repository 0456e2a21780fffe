"""The ``elmo-bench probe-*`` aliases keep their contract now that they are generated from the probe declarations
(issue 55 item 3): the same flags (each taking a value or not, its choices, whether it is required), the same run
for every sample command line (settings, seed, run-time keys, encoder) and the same printed JSON keys as the
hand-written parsers gave (tests/golden/probe_aliases.json, captured before; tests/probe_alias_contract.py)."""
from __future__ import annotations

import json

import pytest

from tests.conftest import needs_fixtures
from tests.probe_alias_contract import ALIASES, ARGV, GOLDEN, composed, flag_contract, parser_of, printed_keys

GOLD = json.loads(GOLDEN.read_text())
#: what a user sees of a flag (its ``sets``, the namespace attribute, and the stored constant are the parser's own)
SEEN = ("takes_value", "choices", "required")
#: the one setting the hand-written probe-wsd always passed as a path (its --wordnet-work default) where the
#: generated command, like run.py, leaves the setting null, which the probe reads as that very directory
#: (elmo_bench/probe/wsd/probe.py): the same run; only its identity's probe.wordnet_work reads null now
NULL_WAS = {("probe-wsd", "wordnet_work"): "<cache>/nltk_data"}


@pytest.mark.parametrize("command", ALIASES)
def test_each_alias_takes_todays_flags(command):
    found = {flag: {k: v[k] for k in SEEN} for flag, v in flag_contract(parser_of(command)).items()}
    before = {flag: {k: v[k] for k in SEEN} for flag, v in GOLD["flags"][command].items()}
    assert sorted(found) == sorted(before)
    assert found == before


@pytest.mark.parametrize("command, index", [(c, i) for c, lines in ARGV.items() for i in range(len(lines))])
def test_each_command_line_composes_todays_run(command, index):
    found = composed(command, ARGV[command][index])
    for (alias, setting), path in NULL_WAS.items():
        if alias == command and found["settings"][setting] is None:
            found["settings"][setting] = path
    assert found == GOLD["composed"][command][index]


@needs_fixtures
def test_each_alias_prints_todays_keys(tmp_path):
    assert printed_keys(tmp_path) == GOLD["printed"]
