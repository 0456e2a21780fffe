"""Run identity: the one rule set that says when two runs compute the same numbers (resume: elmo_bench.engine; the
report's seeds and row blocks: elmo_bench.report). ``rules`` holds what is and is not part of an identity,
``history`` every compatibility rule for records of older versions, ``code_hash`` the behaviour hash of a plug-in's
code and ``manifest`` the committed versions of the plug-ins."""
