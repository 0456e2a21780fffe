"""MDL online codelength (Voita & Titov 2020): config.py declares it."""
