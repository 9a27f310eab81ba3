"""The gazetteer: names that general models miss, grown by people and agents (pure: no database)."""
