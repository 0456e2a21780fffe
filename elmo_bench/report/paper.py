"""The ELMo paper's published numbers (Peters et al. 2018), shown beside ours and always labelled "paper".

Only values we are sure of are listed; anything not here shows as missing.
"""
from __future__ import annotations

#: Table 1 (test sets): the paper's "our baseline" and "ELMo + baseline" columns; metric names as in our tasks
TABLE1: dict[str, dict[str, float | str]] = {
    "squad": {"metric": "F1", "baseline": 81.1, "elmo": 85.8},
    "snli": {"metric": "accuracy", "baseline": 88.0, "elmo": 88.7},
    "srl": {"metric": "F1", "baseline": 81.4, "elmo": 84.6},
    "coref": {"metric": "average F1", "baseline": 67.2, "elmo": 70.4},
    "ner": {"metric": "F1", "baseline": 90.15, "elmo": 92.22},
    "sst": {"metric": "accuracy", "baseline": 51.4, "elmo": 54.7},
}
TABLE1_ORDER = ("squad", "snli", "srl", "coref", "ner", "sst")

#: Table 2 (dev sets): baseline, last layer only, all layers with lambda 1 and lambda 0.001
TABLE2: dict[str, dict[str, float]] = {
    "squad": {"baseline": 80.8, "last_only": 84.7, "lambda_1": 85.0, "lambda_0.001": 85.2},
    "snli": {"baseline": 88.1, "last_only": 89.1, "lambda_1": 89.3, "lambda_0.001": 89.5},
    "srl": {"baseline": 81.6, "last_only": 84.1, "lambda_1": 84.6, "lambda_0.001": 84.8},
}

#: Table 3 (dev sets): ELMo at the input only, at input and output, at the output only
TABLE3: dict[str, dict[str, float]] = {
    "squad": {"input": 85.1, "both": 85.6, "output": 84.8},
    "snli": {"input": 88.9, "both": 89.5, "output": 88.7},
    "srl": {"input": 84.7, "both": 84.3, "output": 80.9},
}

#: Table 5 (all-words fine-grained WSD F1, Raganato et al. 2017 framework): biLM first / second biLSTM layer,
#: which are layers 1 and 2 in our numbering (layer 0 = the context-free token layer)
TABLE5_BILM: dict[int, float] = {1: 67.4, 2: 69.0}
TABLE5_WORDNET_FIRST_SENSE = 65.9

#: Table 6 (PTB WSJ test POS accuracy): biLM first / second biLSTM layer = our layers 1 and 2
TABLE6_BILM: dict[int, float] = {1: 97.3, 2: 96.8}

#: Table 1's "previous SOTA" column (the system the paper compares against, and its number)
TABLE1_PREVIOUS_SOTA: dict[str, tuple[str, float]] = {
    "squad": ("Liu et al. (2017)", 84.4),
    "snli": ("Chen et al. (2017)", 88.6),
    "srl": ("He et al. (2017)", 81.7),
    "coref": ("Lee et al. (2017)", 67.2),
    "ner": ("Peters et al. (2017)", 91.93),
    "sst": ("McCann et al. (2017)", 53.7),
}
#: the ± the paper prints in Table 1 (standard deviation over five seeds): its +ELMo column, and NER's previous SOTA
#: (as printed there: SNLI ±0.17, NER ±0.10, SST-5 ±0.5)
TABLE1_ELMO_PM: dict[str, str] = {"snli": "0.17", "ner": "0.10", "sst": "0.5"}
TABLE1_PREVIOUS_SOTA_PM: dict[str, str] = {"ner": "0.19"}

#: Table 5's other rows (all-words WSD F1 on Raganato et al.'s ALL): CoVe's first / second layer in our layer
#: numbering (1, 2), and the supervised systems the paper lists
TABLE5_COVE: dict[int, float] = {1: 59.4, 2: 64.7}
TABLE5_OTHERS: dict[str, float] = {"Raganato et al. (2017a)": 69.9, "Iacobacci et al. (2016)": 70.1}

#: Table 6's other rows (PTB WSJ test accuracy): CoVe's first / second layer, and the supervised taggers
TABLE6_COVE: dict[int, float] = {1: 93.3, 2: 92.8}
TABLE6_OTHERS: dict[str, float] = {"Collobert et al. (2011)": 97.3, "Ma and Hovy (2016)": 97.6,
                                   "Ling et al. (2015)": 97.8}

#: Table 7: biLM perplexity on each task's text before -> after fine-tuning the biLM on that task's training text;
#: keyed by our task names (CoNLL-2003 = ner, SQuAD = its contexts)
TABLE7: dict[str, tuple[str, float, float]] = {
    "snli": ("SNLI", 72.1, 16.8),
    "ner": ("CoNLL-2003", 103.2, 46.3),
    "squad": ("SQuAD (context)", 99.1, 43.5),
    "sst": ("SST", 131.5, 78.6),
}
TABLE7_ORDER = ("snli", "ner", "squad", "sst")
