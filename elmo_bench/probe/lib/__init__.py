"""The probes' shared methods, one module per method (linear and batched softmax fits, classifiers and their
regimen, streamed moments, layer choice, control labels, features, UD and CoNLL-U reading, progress). Declares no
probe and names none: each probe folder imports what it uses from here."""
