"""`elmo-bench report`: the paper's tables and figures from the results.json files of finished runs."""
