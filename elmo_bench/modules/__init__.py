"""Neural components over encoder layers and shared by the task heads: Elmo (elmo.py) and its ScalarMix (scalar_mix.py), the
glove / elmo / glove_elmo token embedders, CRF/Viterbi, BIO constraints, masked RNNs, char CNN, dropout."""
