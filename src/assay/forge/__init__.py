"""forge."""
