"""Named entity recognition on CoNLL-2003 (reader, CRF head, conlleval metric)."""
