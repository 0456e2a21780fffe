"""biLM pretraining the bilm-tf way (corpus, vocabulary, sampled softmax, loop, export), held-out
perplexity, fine-tuning on task text and the task-adapted biLMs of the paper's section 3.4."""
