"""WindyCatch-v0: csuite's continuing Catch with a wind that shifts falling balls sideways."""
