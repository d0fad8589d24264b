"""Experimental APIs of Determined: ``determined.experimental.core_v2`` (detached mode)."""
