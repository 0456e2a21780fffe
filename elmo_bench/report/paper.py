"""The ELMo paper's published numbers for its probes (Peters et al. 2018: Tables 5 and 6, WSD and POS by biLM
layer), shown beside ours and always labelled "paper". The tasks' numbers (Tables 1, 2, 3 and 7) are declared by
the tasks themselves (tasks/<name>/config.py) and reach the report through task_declarations.json
(elmo_bench.report.declared). Only values we are sure of are listed; anything not here shows as missing.
"""
from __future__ import annotations

#: Table 5 (all-words fine-grained WSD F1, Raganato et al. 2017 framework): biLM first / second biLSTM layer,
#: which are layers 1 and 2 in our numbering (layer 0 = the context-free token layer)
TABLE5_BILM: dict[int, float] = {1: 67.4, 2: 69.0}
TABLE5_WORDNET_FIRST_SENSE = 65.9

#: Table 6 (PTB WSJ test POS accuracy): biLM first / second biLSTM layer = our layers 1 and 2
TABLE6_BILM: dict[int, float] = {1: 97.3, 2: 96.8}

#: Table 5's other rows (all-words WSD F1 on Raganato et al.'s ALL): CoVe's first / second layer in our layer
#: numbering (1, 2), and the supervised systems the paper lists
TABLE5_COVE: dict[int, float] = {1: 59.4, 2: 64.7}
TABLE5_OTHERS: dict[str, float] = {"Raganato et al. (2017a)": 69.9, "Iacobacci et al. (2016)": 70.1}

#: Table 6's other rows (PTB WSJ test accuracy): CoVe's first / second layer, and the supervised taggers
TABLE6_COVE: dict[int, float] = {1: 93.3, 2: 92.8}
TABLE6_OTHERS: dict[str, float] = {"Collobert et al. (2011)": 97.3, "Ma and Hovy (2016)": 97.6,
                                   "Ling et al. (2015)": 97.8}
