"""Catch: csuite's continuing Catch (catch falling balls with a paddle; balls keep coming)."""
