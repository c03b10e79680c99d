"""DancingCatch-v0: csuite's continuing Catch whose observation cells are swapped now and then."""
