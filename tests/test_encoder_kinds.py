"""Issue 35 item 3, encoder kinds: each module of elmo_bench.encoders declares its kind (``ENCODER_KIND``) and
build_encoder finds it by a scan; a new kind is a new module and no edit of build.py."""
from __future__ import annotations

import sys

import pytest

import elmo_bench.encoders as encoders_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders import kinds
from elmo_bench.encoders.build import build_encoder

PLANTED = '''
from elmo_bench.encoders.kinds import EncoderKind


class Constant:
    num_layers, dim = 2, 3


ENCODER_KIND = EncoderKind("planted", lambda spec, amp="off": Constant())
'''


def test_the_shipped_kinds_are_found_in_their_modules():
    found = kinds.encoder_kinds()
    assert list(found) == ["bilm", "hdf5", "manylangs", "python", "transformers"]
    assert found["bilm"].build is None                      # built from the bilm group by its callers
    with pytest.raises(ConfigError, match="encoder=hdf5 needs encoder.path"):
        build_encoder({"kind": "hdf5"})
    with pytest.raises(ConfigError, match=r"expected one of hdf5, manylangs, python, transformers here .*'bilm'"):
        build_encoder({"kind": "bilm"})


def test_a_new_module_declaring_a_kind_is_found(tmp_path, monkeypatch):
    (tmp_path / "planted.py").write_text(PLANTED)
    monkeypatch.setattr(encoders_package, "__path__", [*encoders_package.__path__, str(tmp_path)])
    kinds.encoder_kinds.cache_clear()
    try:
        assert "planted" in kinds.encoder_kinds()
        assert build_encoder({"kind": "planted"}).dim == 3
    finally:
        sys.modules.pop("elmo_bench.encoders.planted", None)
        kinds.encoder_kinds.cache_clear()
