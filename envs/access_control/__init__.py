"""AccessControl-v0: csuite's access-control queuing task (Sutton and Barto, Example 10.2)."""
