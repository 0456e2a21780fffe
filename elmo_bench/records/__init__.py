"""The files a run leaves behind and the report reads back: results.json, lm_adaptation.json, the ELMo
settings a record implies, and the early-stopping rule its dev curve replays. Imports base only."""
