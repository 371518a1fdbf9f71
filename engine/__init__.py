"""The engine: drives one scheduler and one runner step by step and records every step as a Frame."""
